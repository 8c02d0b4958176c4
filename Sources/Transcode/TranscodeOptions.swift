import Media
import Pipeline
import Sync

/// How the video bit rate is chosen.
public enum RateControl: Sendable, Hashable {
    /// Constant quality (x265 CRF, 0–51; lower is better).
    case crf(Double)
    /// Average bit rate in bits per second.
    case bitrate(Int64)
    /// Bits per pixel per frame: bit rate = bpp × width × height × fps, the
    /// way iOS recorders size theirs.
    case bitsPerPixel(Double)
}

public struct TranscodeOptions: Sendable, Equatable {
    public var container: Container?
    /// Tag, creation-time and rotation changes made as the output is written.
    public var edits = MetadataEdits()
    public var rate: RateControl = .crf(TranscodeOptions.defaultCRF)
    /// Encode to a quality instead of a CRF given: the CRF (each chunk's,
    /// with chunks) found from sample encodes measured against the source
    /// (`transcode --quality`); `rate` is then not used.
    public var quality: QualityTarget?
    /// With `quality`: the whole output measured against the source as it is encoded.
    public var verifyQuality = false
    /// x265's trade of speed for compression.
    public var preset = Preset.medium
    /// x265's tuning for a kind of picture or a use.
    public var tune: Tune?
    /// Extra `key=value:key=value` passed to x265.
    public var x265Params: String?
    /// Frames between keyframes; `nil` means 3 seconds of frames.
    public var keyframeInterval: Int?
    /// Main10 (yuv420p10le) instead of Main (yuv420p).
    public var tenBit = false
    /// Dolby Vision carried (each picture's RPU, the configuration record)
    /// where the encode keeps it valid; `false` drops it (`--no-dolby-vision`).
    public var dolbyVision = true
    /// An SDR rendering of HDR video: tone-mapped to BT.709, 8-bit unless
    /// `tenBit`, no HDR metadata left (`ToneMapSettings`).
    public var sdr = false
    /// The tone-mapping curve of `sdr`.
    public var toneMap: ToneMapOperator = .hable
    /// Output size; `nil` keeps the input's.
    public var size: FrameSize?
    /// Output frame rate; `nil` passes timestamps through (VFR stays VFR).
    public var frameRate: Rational?
    public var audio: AudioMode = .auto
    /// AAC bit rate for all channels; `nil` is 64 kb/s per channel.
    public var audioBitRate: Int64?
    /// Audio brought to this loudness (re-encoded in its own family unless
    /// `audio` names a codec), as `avtool loudness` plans it, in the same pass.
    public var loudness: LoudnessTarget?
    public var streams = StreamSelection()
    public var start: StartPolicy = .zero
    public var faststart = true
    public var overwrite = false
    /// Keep every complete packet of a damaged or cut-off input (instead of
    /// refusing it) and report what was lost.
    public var salvage = false
    /// Chunks: give a chunk's decoder the stream's first packet before its
    /// seek (tests turn it off to reach the decode-from-the-start fallback).
    package var primeChunkDecoder = true

    /// x265's CRF scale: 24 keeps fine detail at about half the size of
    /// H.264 at its default quality.
    public static let defaultCRF = 24.0
    /// The presets' names, fastest first.
    public static let presets = Preset.allCases.map(\.rawValue)
    /// The tunes' names.
    public static let tunes = Tune.allCases.map(\.rawValue)

    /// x265's presets, fastest (and largest) first; their names are x265's.
    public enum Preset: String, Sendable, Hashable, CaseIterable, Codable {
        case ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow, placebo
    }

    /// x265's tunes; their names are x265's.
    public enum Tune: String, Sendable, Hashable, CaseIterable, Codable {
        /// For the best PSNR (turns off psycho-visual optimisations).
        case psnr
        /// For the best SSIM.
        case ssim
        /// Keeps film grain.
        case grain
        /// No frame reordering or look-ahead: the lowest latency.
        case zerolatency
        /// Cheaper to decode.
        case fastdecode
        /// For animation.
        case animation
    }

    public init() {}

    /// The checks on option values, before any work, with messages that
    /// quote the options by name.
    public func validate() throws(MediaError) {
        // Options are quoted by name ('crf'); the command line adds its dashes.
        func bad(_ m: String) -> MediaError {
            .invalidOption(m, options: ["crf", "bitrate", "bpp", "preset", "tune", "keyint", "size", "fps",
                                        "audio-bitrate", "audio", "x265-params"].filter { m.contains("'\($0)") })
        }
        if toneMap != .hable && !sdr { throw .invalidOption("'tone-map' applies to 'sdr' only", options: ["tone-map", "sdr"]) }
        if loudness != nil && audio == .copy { throw bad("'loudness' re-encodes the audio: it cannot be used with 'audio' copy") }
        switch rate {
        case .crf(let c) where !(0...51).contains(c): throw bad("'crf' must be between 0 and 51")
        case .bitrate(let b) where b < 1000: throw bad("'bitrate' must be at least 1k")
        case .bitsPerPixel(let b) where !(b > 0 && b <= 24): throw bad("'bpp' must be above 0 and at most 24")
        default: break
        }
        if let q = quality, let problem = q.problem {
            throw .invalidOption(problem, options: ["quality", "min-crf", "max-crf"].filter { problem.contains("'\($0)'") })
        }
        if verifyQuality && quality == nil { throw .invalidOption("'verify-quality' goes with 'quality'", options: ["verify-quality", "quality"]) }
        if let k = keyframeInterval, k < 1 { throw bad("'keyint' must be at least 1") }
        if let s = size {
            // -1 for one side keeps the aspect ratio.
            func ok(_ v: Int) -> Bool { v == -1 || (2...16384).contains(v) }
            guard ok(s.width), ok(s.height), s.width > 0 || s.height > 0 else {
                throw bad("'size' sides must be between 2 and 16384, or -1 for one of them")
            }
        }
        if let r = frameRate {
            let fps = Double(r.numerator) / Double(r.denominator)
            guard r.numerator > 0, r.denominator > 0, fps >= 1, fps <= 1000 else {
                throw bad("'fps' must be between 1 and 1000 frames per second")
            }
        }
        if audioBitRate != nil, audio == .copy || audio == .pcm {
            throw bad("'audio-bitrate' applies to AAC, not to 'audio \(audio.rawValue)'")
        }
        if let b = audioBitRate, b < AACBitRate.minimumPerChannel {
            throw bad("'audio-bitrate' must be at least \(AACBitRate.minimumPerChannel / 1000)k per channel")
        }
        if let p = x265Params {
            for pair in p.split(separator: ":") where !pair.contains("=") && !pair.isEmpty {
                throw bad("'x265-params' wants key=value pairs separated by ':', not '\(pair)'")
            }
        }
    }
}

/// A picture size in pixels; -1 for one side keeps the input's aspect ratio.
public struct FrameSize: Sendable, Hashable, Codable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// `1280x720`.
    public var description: String { "\(width)x\(height)" }
}

/// Options as data, for a request body or a recipe: the keys are the
/// properties' names; one of `crf`, `bitrate` (bits per second) and
/// `bitsPerPixel` gives the rate control; `container` is a name (`mp4`,
/// `mkv`); `frameRate` is `30000/1001` or a number; `size` is
/// `{"width": 1280, "height": -1}`; `quality` is a number or a level's name
/// (`high`), with `qualityMetric`, `minCRF`, `maxCRF` and `verifyQuality`
/// beside it. A key left out keeps its default.
/// Metadata edits are not carried.
extension TranscodeOptions: Codable {
    private enum CodingKeys: String, CodingKey {
        case container, crf, bitrate, bitsPerPixel, preset, tune, x265Params, keyframeInterval, tenBit, size, frameRate
        case audio, audioBitRate, loudness, streams, start, faststart, overwrite, salvage
        case dolbyVision, sdr, toneMap
        case quality, qualityMetric, minCRF, maxCRF, verifyQuality
    }

    public init(from decoder: any Swift.Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if let name = try c.decodeIfPresent(String.self, forKey: .container) {
            guard let container = Container(named: name) else {
                throw DecodingError.dataCorruptedError(forKey: .container, in: c, debugDescription: "unknown container '\(name)'")
            }
            self.container = container
        }
        if let v = try c.decodeIfPresent(Double.self, forKey: .crf) { rate = .crf(v) }
        if let v = try c.decodeIfPresent(Int64.self, forKey: .bitrate) { rate = .bitrate(v) }
        if let v = try c.decodeIfPresent(Double.self, forKey: .bitsPerPixel) { rate = .bitsPerPixel(v) }
        preset = try c.decodeIfPresent(Preset.self, forKey: .preset) ?? preset
        tune = try c.decodeIfPresent(Tune.self, forKey: .tune)
        x265Params = try c.decodeIfPresent(String.self, forKey: .x265Params)
        keyframeInterval = try c.decodeIfPresent(Int.self, forKey: .keyframeInterval)
        tenBit = try c.decodeIfPresent(Bool.self, forKey: .tenBit) ?? tenBit
        size = try c.decodeIfPresent(FrameSize.self, forKey: .size)
        if c.contains(.frameRate), try !c.decodeNil(forKey: .frameRate) {
            let text: String
            if let t = try? c.decode(String.self, forKey: .frameRate) { text = t } else {
                text = try c.decode(Double.self, forKey: .frameRate).description
            }
            guard let r = Self.parseFrameRate(text) else {
                throw DecodingError.dataCorruptedError(forKey: .frameRate, in: c, debugDescription: "'\(text)' is not a frame rate")
            }
            frameRate = r
        }
        audio = try c.decodeIfPresent(AudioMode.self, forKey: .audio) ?? audio
        audioBitRate = try c.decodeIfPresent(Int64.self, forKey: .audioBitRate)
        loudness = try c.decodeIfPresent(LoudnessTarget.self, forKey: .loudness)
        streams = try c.decodeIfPresent(StreamSelection.self, forKey: .streams) ?? streams
        start = try c.decodeIfPresent(StartPolicy.self, forKey: .start) ?? start
        faststart = try c.decodeIfPresent(Bool.self, forKey: .faststart) ?? faststart
        overwrite = try c.decodeIfPresent(Bool.self, forKey: .overwrite) ?? overwrite
        salvage = try c.decodeIfPresent(Bool.self, forKey: .salvage) ?? salvage
        dolbyVision = try c.decodeIfPresent(Bool.self, forKey: .dolbyVision) ?? dolbyVision
        sdr = try c.decodeIfPresent(Bool.self, forKey: .sdr) ?? sdr
        toneMap = try c.decodeIfPresent(ToneMapOperator.self, forKey: .toneMap) ?? toneMap
        try decodeQuality(c)
    }

    /// `quality` is a number or a level's name (`high`), on `qualityMetric`'s scale.
    private mutating func decodeQuality(_ c: KeyedDecodingContainer<CodingKeys>) throws {
        let metric = try c.decodeIfPresent(QualityMetric.self, forKey: .qualityMetric) ?? .ssim
        if c.contains(.quality), try !c.decodeNil(forKey: .quality) {
            let text: String
            if let t = try? c.decode(String.self, forKey: .quality) { text = t } else {
                text = String(try c.decode(Double.self, forKey: .quality))
            }
            guard let q = QualityTarget(text, metric: metric) else {
                throw DecodingError.dataCorruptedError(forKey: .quality, in: c,
                                                       debugDescription: "'\(text)' is not a quality: a number or one of \(QualityTarget.Level.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            quality = q
            quality?.minCRF = try c.decodeIfPresent(Double.self, forKey: .minCRF) ?? q.minCRF
            quality?.maxCRF = try c.decodeIfPresent(Double.self, forKey: .maxCRF) ?? q.maxCRF
        }
        verifyQuality = try c.decodeIfPresent(Bool.self, forKey: .verifyQuality) ?? verifyQuality
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(container?.name, forKey: .container)
        switch rate {
        case .crf(let v): try c.encode(v, forKey: .crf)
        case .bitrate(let v): try c.encode(v, forKey: .bitrate)
        case .bitsPerPixel(let v): try c.encode(v, forKey: .bitsPerPixel)
        }
        try c.encode(preset, forKey: .preset)
        try c.encodeIfPresent(tune, forKey: .tune)
        try c.encodeIfPresent(x265Params, forKey: .x265Params)
        try c.encodeIfPresent(keyframeInterval, forKey: .keyframeInterval)
        try c.encode(tenBit, forKey: .tenBit)
        try c.encodeIfPresent(size, forKey: .size)
        try c.encodeIfPresent(frameRate?.description, forKey: .frameRate)
        try c.encode(audio, forKey: .audio)
        try c.encodeIfPresent(audioBitRate, forKey: .audioBitRate)
        try c.encodeIfPresent(loudness, forKey: .loudness)
        try c.encode(streams, forKey: .streams)
        try c.encode(start, forKey: .start)
        try c.encode(faststart, forKey: .faststart)
        try c.encode(overwrite, forKey: .overwrite)
        try c.encode(salvage, forKey: .salvage)
        try c.encode(dolbyVision, forKey: .dolbyVision)
        try c.encode(sdr, forKey: .sdr)
        try c.encode(toneMap, forKey: .toneMap)
        if let q = quality {
            try c.encode(q.value, forKey: .quality)
            try c.encode(q.metric, forKey: .qualityMetric)
            try c.encode(q.minCRF, forKey: .minCRF)
            try c.encode(q.maxCRF, forKey: .maxCRF)
        }
        if verifyQuality { try c.encode(true, forKey: .verifyQuality) }
    }
}

extension TranscodeOptions {
    /// A preset by its name; an unknown name is an error that lists them.
    public static func preset(named name: String) throws(MediaError) -> Preset {
        guard let p = Preset(rawValue: name) else {
            throw MediaError.invalidOption("unknown 'preset' \(name); one of \(presets.joined(separator: ", "))", options: ["preset"])
        }
        return p
    }

    /// A tune by its name; an unknown name is an error that lists them.
    public static func tune(named name: String) throws(MediaError) -> Tune {
        guard let t = Tune(rawValue: name) else {
            throw MediaError.invalidOption("unknown 'tune' \(name); one of \(tunes.joined(separator: ", "))", options: ["tune"])
        }
        return t
    }

    /// A frame rate as written on the command line or in a recipe: `30`,
    /// `30000/1001`, or a decimal (`29.97`, `23.976` and `59.94` mean the
    /// NTSC rates 30000/1001, 24000/1001, 60000/1001).
    public static func parseFrameRate(_ text: String) -> Rational? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 2 {
            guard let n = Int32(parts[0]), let d = Int32(parts[1]), n > 0, d > 0 else { return nil }
            return Rational(n, d)
        }
        guard parts.count == 1, let v = Double(text), v.isFinite, v > 0, v <= 10_000 else { return nil }
        for ntsc: Int32 in [24, 30, 48, 60, 120, 240] {
            let exact = Double(ntsc) * 1000 / 1001
            if abs(v - exact) < 0.006 { return Rational(ntsc * 1000, 1001) }
        }
        let milli = Int32((v * 1000).rounded())
        guard milli > 0 else { return nil }
        func gcd(_ a: Int32, _ b: Int32) -> Int32 { b == 0 ? a : gcd(b, a % b) }
        let g = gcd(milli, 1000)
        return Rational(milli / g, 1000 / g)
    }

    /// A bit rate such as `4M`, `800k`, `128000`.
    public static func parseBitRate(_ s: String) -> Int64? {
        let lower = s.lowercased()
        let (digits, scale): (Substring, Double) = lower.hasSuffix("m") ? (lower.dropLast(), 1e6)
            : lower.hasSuffix("k") ? (lower.dropLast(), 1e3) : (Substring(lower), 1)
        guard let v = Double(digits), v > 0, v * scale < 1e10 else { return nil }
        return Int64(v * scale)
    }
}

/// How audio streams are written.
public enum AudioMode: String, Sendable, CaseIterable, Codable {
    /// Copied when the container holds the codec, else encoded to AAC.
    case auto
    /// Always copied; a codec the container cannot hold is an error.
    case copy
    /// Encoded to AAC-LC.
    case aac
    /// Encoded to 16-bit little-endian PCM (what iOS writes in MOV).
    case pcm

    var encoderName: String? {
        switch self {
        case .aac: "aac"
        case .pcm: "pcm_s16le"
        case .auto, .copy: nil
        }
    }
}

/// What happened to one audio stream.
public struct AudioOutcome: Sendable, Codable, Equatable {
    public var stream: Int
    /// `copy` or the encoder's name.
    public var action: String
    public var codec: String
    public var sampleRate: Int32?
    public var bitRate: Int64?
    /// Samples of silence written where the input's audio had gaps.
    public var silenceInserted: Int64 = 0
    /// Doubled samples dropped where the input's audio overlapped itself.
    public var samplesTrimmed: Int64 = 0
    /// The input's codec, when encoded.
    public var from: String?
    /// Why it was encoded when nothing asked for it: the container cannot hold the input's codec.
    public var reason: String?
}
