import Media
import Sync

/// Everything `avtool probe` tells about a file. Encoded as JSON with sorted
/// snake_case keys, so the output is stable.
public struct ProbeReport: Sendable, Codable {
    public var file: String
    public var format: String
    public var formatLongName: String?
    public var size: Int64?
    public var durationSeconds: Double?
    public var startSeconds: Double?
    public var bitRate: Int64?
    public var tags: [String: String]
    public var chapters: Int
    public var streams: [StreamReport]
    public var sync: SyncReport?
    /// What is missing when the file is cut off ("only 146 of 300 video and
    /// 230 of 469 audio packets are in the file"), by its index, fragments
    /// or Matroska segment size.
    public var cutOff: String? = nil
}

public struct StreamReport: Sendable, Codable {
    public var index: Int
    public var type: MediaType
    public var codec: String
    public var codecLongName: String?
    public var profile: String?
    public var codecTag: String?
    public var timeBase: String?
    /// Presentation start (priming excluded for audio), seconds.
    public var startSeconds: Double?
    public var durationSeconds: Double?
    /// Packets counted by reading the whole stream.
    public var packets: Int
    /// Packets the demuxer flagged damaged or cut short.
    public var corruptPackets: Int
    /// Frame count the container declares, if any.
    public var declaredFrames: Int64?
    public var bitRate: Int64?
    public var language: String?
    public var isDefault: Bool
    public var isAttachedPicture: Bool
    public var firstPTS: Int64?
    public var firstDTS: Int64?
    public var tags: [String: String]
    public var video: VideoReport?
    public var audio: AudioReport?
    /// A timed-metadata or other data track of an MP4/MOV file, as its
    /// sample description names it (libavformat calls a `mebx` track's
    /// codec "none").
    public var data: DataTrackReport? = nil
    /// An audio stream's loudness (`probe --loudness`), measured by decoding it whole.
    public var loudness: LoudnessFigures? = nil
}

public struct VideoReport: Sendable, Codable {
    public var width: Int
    public var height: Int
    public var frameRate: String?
    public var frameRateValue: Double?
    public var averageFrameRate: String?
    public var sampleAspectRatio: String?
    public var pixelFormat: String?
    public var colorRange: String?
    public var colorPrimaries: String?
    public var colorTransfer: String?
    public var colorSpace: String?
    /// Degrees, as ffprobe reports the display matrix (counter-clockwise).
    public var rotation: Double?
    /// HDR video: its format and metadata; nil for SDR.
    public var hdr: HDRReport? = nil
    /// More than one view: MV-HEVC's second layer, a stereo pair (MP4/MOV).
    public var views: ViewsReport? = nil
}

public struct HDRReport: Sendable, Codable {
    /// The format in the words players and shops use: "Dolby Vision 8.4
    /// (HLG-compatible), level 2", "HDR10+", "HDR10 (PQ)", "HLG"; both
    /// of Dolby Vision and HDR10+ joined by " + ".
    public var format: String
    public var dolbyVision: DolbyVisionReport?
    /// Whether the first decoded frames carry HDR10+ dynamic metadata
    /// (SMPTE ST 2094-40); nil when no frame was decoded.
    public var hdr10Plus: Bool?
    /// HDR10 static metadata, from the container or else from the first
    /// decoded frame (SEI).
    public var masteringDisplay: MasteringDisplayReport?
    public var contentLight: ContentLightReport?
}

/// The Dolby Vision configuration record (`dvcC`/`dvvC`).
public struct DolbyVisionReport: Sendable, Codable {
    public var version: String
    public var profile: Int
    public var level: Int
    /// What a player without Dolby Vision shows: 0 none, 1 HDR10, 2 SDR, 4 HLG, 6 HDR10 (Ultra HD Blu-ray).
    public var compatibilityID: Int
    public var rpuPresent: Bool
    public var elPresent: Bool
    public var blPresent: Bool
}

/// SMPTE ST 2086: chromaticities as [x, y], luminance in cd/m².
public struct MasteringDisplayReport: Sendable, Codable {
    public var red: [Double]?
    public var green: [Double]?
    public var blue: [Double]?
    public var whitePoint: [Double]?
    public var minLuminance: Double?
    public var maxLuminance: Double?
}

/// CTA-861.3 content light levels in cd/m².
public struct ContentLightReport: Sendable, Codable {
    public var maxCLL: Int
    public var maxFALL: Int
}

public struct ViewsReport: Sendable, Codable {
    /// "MV-HEVC" for a layered HEVC entry (`lhvC`); nil when only the
    /// stereo box says there are views.
    public var coding: String?
    /// Views the stream codes (its layers); nil when not layered.
    public var count: Int?
    /// The views are a left and a right eye (`vexu`/`eyes`/`stri`).
    public var stereo: Bool
    public var heroEye: String?
    public var eyeViewsReversed: Bool
}

public struct DataTrackReport: Sendable, Codable {
    /// The sample entry type: `mebx`, `gpmd`, `tmcd`, `fdsc`…
    public var kind: String
    public var handlerName: String?
    /// A `mebx` track's metadata keys (`com.apple.quicktime.video-orientation`…).
    public var keys: [String]?
}

public struct AudioReport: Sendable, Codable {
    public var sampleRate: Int32
    public var channels: Int
    public var channelLayout: String?
    public var sampleFormat: String?
    public var frameSize: Int
    /// Encoder delay: samples the decoder drops at the start (AAC priming).
    public var primingSamples: Int64
    /// Samples counted from the packets.
    public var samples: Int64
}

/// The A/V relation of the main video and audio streams, and audio gaps.
public struct SyncReport: Sendable, Codable {
    public var videoStream: Int?
    public var audioStream: Int?
    public var skew: AVSkew?
    public var gaps: [GapReport]
    public var gapCount: Int
    public var gapSamples: Int64
    public var overlapSamples: Int64
    public var toleranceSamples: Int64?
}

public struct GapReport: Sendable, Codable {
    public var stream: Int
    /// Where the audio should have continued, seconds.
    public var atSeconds: Double
    /// Samples from the start of the track.
    public var atSample: Int64
    /// Missing samples (> 0) or overlapping samples (< 0).
    public var samples: Int64
    public var milliseconds: Double
}
