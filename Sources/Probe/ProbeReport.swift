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
