import Glibc
import FoundationEssentials
import Threads
import Media
import Pipeline
import Sync

/// What every chunk of one chunked transcode shares, written first into the
/// chunk directory (`manifest.json`): the source, the video stream, the
/// core's `ChunkPlan`, and the encoder's settings as one line (the chunks'
/// fingerprint). Every task computes it from the same file and options and
/// must find the same one there.
public struct ChunkManifest: Codable, Equatable, Sendable {
    public var format = 1
    /// The source as the tasks name it (an absolute path on a cluster's shared filesystem).
    public var source: String
    public var sourceBytes: Int64
    public var videoStream: Int
    /// The chunks asked for: the tasks and files. The plan may have fewer
    /// (a video with fewer keyframes); the chunks past it are empty.
    public var chunks: Int
    /// The video's time base (the chunks' timestamps are on it), `num/den`.
    public var timeBase: String
    public var plan: ChunkPlan
    /// The video encoder's settings and version: chunks encoded otherwise do not join.
    public var settings: String
    /// The choices the settings came from, for the join.
    public var choices: VideoChoices

    public var count: Int { chunks }
}

/// The options that decide how the video is encoded (and so must be the
/// same in every chunk).
public struct VideoChoices: Codable, Equatable, Sendable {
    public var crf: Double?
    public var bitRate: Int64?
    public var bitsPerPixel: Double?
    public var preset: String
    public var tune: String?
    public var x265Params: String?
    public var keyframeInterval: Int?
    public var tenBit: Bool
    public var width: Int?
    public var height: Int?
    /// `--sdr` and its curve; `--no-dolby-vision` (absent in older ledgers: off).
    public var sdr: ToneMapOperator?
    public var noDolbyVision: Bool?
    /// `--quality` (absent in older ledgers: none).
    public var quality: QualityTarget?

    public init(_ o: TranscodeOptions) {
        switch o.rate {
        case .crf(let c): crf = c
        case .bitrate(let b): bitRate = b
        case .bitsPerPixel(let b): bitsPerPixel = b
        }
        preset = o.preset.rawValue
        tune = o.tune?.rawValue
        x265Params = o.x265Params
        keyframeInterval = o.keyframeInterval
        tenBit = o.tenBit
        width = o.size?.width
        height = o.size?.height
        sdr = o.sdr ? o.toneMap : nil
        noDolbyVision = o.dolbyVision ? nil : true
        quality = o.quality
    }

    /// `options` with these choices in place of its own.
    public func applied(to options: TranscodeOptions) -> TranscodeOptions {
        var o = options
        o.rate = crf.map { .crf($0) } ?? bitRate.map { .bitrate($0) } ?? bitsPerPixel.map { .bitsPerPixel($0) } ?? o.rate
        o.preset = TranscodeOptions.Preset(rawValue: preset) ?? o.preset
        o.tune = tune.flatMap(TranscodeOptions.Tune.init(rawValue:))
        o.x265Params = x265Params
        o.keyframeInterval = keyframeInterval
        o.tenBit = tenBit
        o.size = width.flatMap { w in height.map { FrameSize(width: w, height: $0) } }
        o.sdr = sdr != nil
        if let sdr { o.toneMap = sdr }
        o.dolbyVision = noDolbyVision != true
        o.quality = quality
        return o
    }
}

/// A chunk's ledger entry, written beside it once it is complete
/// (`chunk-0003-of-0008.json`): its presence with the manifest's settings
/// is what marks the chunk done, so a rerun encodes only the others.
public struct ChunkRecord: Codable, Sendable {
    public var number: Int
    public var count: Int
    /// The chunk's file, in the chunk directory.
    public var file: String
    public var bytes: Int64
    public var frames: Int
    /// The first frame's and the chunk's bounds, on the video's time base.
    public var firstPTS: Int64?
    public var lower: Int64?
    public var upper: Int64?
    public var settings: String
    /// The encoder's parameter sets, hex: every chunk's must be the same.
    public var extradata: String
    public var elapsedSeconds: Double
    public var host: String
}

/// What one chunk task did.
public struct ChunkReport: Sendable, Codable {
    public var input: String
    public var directory: String
    public var number: Int
    public var count: Int
    /// `encoded`, or `done-before` when the ledger already held it.
    public var status: String
    public var frames: Int
    public var startSeconds: Double?
    public var endSeconds: Double?
    public var outputBytes: Int64
    public var elapsedSeconds: Double
    /// The chunk's keyframe was no clean entry point (its pictures decoded
    /// damaged after a seek): it was decoded from the file's start.
    public var decodedFromStart = false
    public var warnings: [String] = []
}

/// What a join adds to the transcode report.
public struct ChunkJoin: Sendable, Codable {
    public var count: Int
    /// Where each chunk after the first starts, in output seconds.
    public var seamsSeconds: [Double]
    public var framesPerChunk: [Int]
    /// The chunks' encoding times (their tasks' own), summed.
    public var encodeSeconds: Double
    /// The join's own time.
    public var joinSeconds: Double
}

/// The chunk directory's files.
public enum ChunkFiles {
    public static let manifest = "manifest.json"
    static func name(_ number: Int, of count: Int) -> String {
        "chunk-" + padded(number) + "-of-" + padded(count)
    }
    /// Chunk `number`'s packets (`chunk-0003-of-0008.packets`).
    public static func media(_ number: Int, of count: Int) -> String { name(number, of: count) + ".packets" }
    static func record(_ number: Int, of count: Int) -> String { name(number, of: count) + ".json" }
    private static func padded(_ n: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }
}

// MARK: Planning

/// The manifest a chunked transcode of `input` in `count` chunks has,
/// computed from the file (its keyframes) and the video choices.
func chunkManifest(input: InputFile, count: Int, options: TranscodeOptions,
                   cancellation: Cancellation) throws(MediaError) -> (ChunkManifest, VideoPlan, Media.InputStream) {
    guard count >= 1 && count <= 4096 else {
        throw MediaError.invalidOption("'chunks' must be between 1 and 4096", options: ["chunks"])
    }
    if options.frameRate != nil {
        throw MediaError.invalidOption("--fps cannot be combined with chunks: a constant rate is made over the whole file",
                                       options: ["fps", "chunks"])
    }
    if options.salvage {
        throw MediaError.invalidOption("--salvage cannot be combined with chunks", options: ["salvage", "chunks"])
    }
    let v = try mainVideo(input)
    let times = try PresentationTimes(of: v, cancellation: cancellation)
    guard let start = times.start, let end = times.end else {
        throw MediaError.invalid("could not transcode", path: input.path, stream: v.index,
                                 message: "the video stream has no packets")
    }
    let plan = ChunkPlan(keyframes: times.times, start: start, end: end, count: count)
    let video = try VideoPlan(v, options: options, globalHeader: true, cancellation: cancellation)
    let tb = v.timeBase!
    // The source by its absolute path: tasks and the join may start elsewhere.
    let source = URL(fileURLWithPath: input.path).standardizedFileURL.path
    let manifest = ChunkManifest(source: source, sourceBytes: input.size ?? 0, videoStream: v.index, chunks: count,
                                 timeBase: "\(tb.numerator)/\(tb.denominator)", plan: plan,
                                 settings: chunkSettings(video.settings, quality: options.quality),
                                 choices: VideoChoices(options))
    return (manifest, video, v)
}

/// The output's container, one chunks can be joined into: MP4, MOV or
/// Matroska, which keep the parameter sets in the header.
func chunkedContainer(_ options: TranscodeOptions, output: String, operation: String) throws(MediaError) -> Container {
    let container = try resolveContainer(options.container, output: output)
    guard container.isISOBMFF || container.muxer == "matroska" else {
        throw MediaError.invalid(operation, path: output,
                                 message: "chunks join into MP4, MOV or Matroska (their parameter sets are in the header), not \(container.name)",
                                 hint: "write .mp4, .mov or .mkv")
    }
    return container
}

/// The video stream a transcode encodes.
func mainVideo(_ input: InputFile) throws(MediaError) -> Media.InputStream {
    guard let v = input.streams.first(where: { $0.mediaType == .video && !$0.isAttachedPicture }), v.timeBase != nil else {
        throw MediaError.invalid("could not transcode", path: input.path, message: "no video stream to encode")
    }
    return v
}

/// The encoder's settings as one line: what must match between chunks.
func settingsLine(_ s: VideoEncoderSettings) -> String {
    var parts = [s.codec + (LibraryVersions.x265.map { " " + $0 } ?? ""),
                 "\(s.width)x\(s.height)", s.pixelFormat,
                 "tb=\(s.timeBase.numerator)/\(s.timeBase.denominator)"]
    if let f = s.frameRate { parts.append("fps=\(f.numerator)/\(f.denominator)") }
    if let a = s.sampleAspectRatio { parts.append("sar=\(a.numerator):\(a.denominator)") }
    parts += s.options.map { "\($0.0)=\($0.1)" }
    if let dv = s.dolbyVision { parts.append("dolby-vision=\(dv.name)") }
    return parts.joined(separator: " ")
}

/// The settings the chunks of a directory share: the encoder's, and with
/// `--quality` the target (each chunk's CRF is its own search's, so chunks
/// are alike when they were searched for the same target).
func chunkSettings(_ s: VideoEncoderSettings, quality q: QualityTarget?) -> String {
    settingsLine(s) + (q.map { " quality=\($0.metric.rawValue):\($0.value) crf-range=\($0.minCRF)-\($0.maxCRF)" } ?? "")
}
