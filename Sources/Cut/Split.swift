import Media
import Pipeline
import Sync

/// Where a split puts its part boundaries.
public enum SplitPoints: Sendable, Equatable {
    /// A part every so long.
    case every(Duration)
    /// At these times from the start.
    case at([Duration])
    /// Parts of at most this many bytes (each starting on a keyframe, or a
    /// frame in exact mode; a single GOP larger than this makes a larger part).
    case size(Int64)
    /// A part per chapter.
    case chapters
}

/// A byte count as users write it: `2GB`, `700M`, `1.5GiB`, `4000000`.
/// K, M, G, T (with or without B) count in powers of 1000; Ki, Mi, Gi, Ti
/// (KiB, …) in powers of 1024. Nil for anything else or for 0.
public func parseByteCount(_ text: String) -> Int64? {
    var t = text.trimmed
    var multiplier: Double = 1
    if t.hasSuffix("B") || t.hasSuffix("b") { t.removeLast() }
    let binary = t.hasSuffix("i") || t.hasSuffix("I")
    if binary { t.removeLast() }
    if let last = t.last, let power = ["k": 1, "m": 2, "g": 3, "t": 4][last.lowercased()] {
        t.removeLast()
        multiplier = pow(binary ? 1024 : 1000, Double(power))
    } else if binary {
        return nil
    }
    guard let n = Double(t), n > 0, n.isFinite, n * multiplier < 9e18 else { return nil }
    return Int64(n * multiplier)
}

private func pow(_ base: Double, _ exponent: Double) -> Double {
    var r = 1.0
    for _ in 0..<Int(exponent) { r *= base }
    return r
}

public struct SplitOptions: Sendable, Equatable {
    /// The output containers; `nil` means from the pattern's extension.
    public var container: Container?
    public var points: SplitPoints = .every(.seconds(60))
    public var streams = StreamSelection()
    public var edits = MetadataEdits()
    public var faststart = true
    public var overwrite = false
    /// Only find the parts (keyframe times); write nothing.
    public var dryRun = false
    /// Keyframe: parts start on keyframes, every packet copied. Exact: parts
    /// start at the frame shown at each point, the partial GOPs re-encoded.
    public var mode = CutMode.keyframe

    public init() {}
}

/// Options as data (a request body, a recipe): keys are the properties'
/// names; the points as one of `every` (seconds), `at` (seconds),
/// `size` (bytes) or `chapters: true`; a key left out keeps its default.
/// Metadata edits are not carried.
extension SplitOptions: Codable {
    private enum CodingKeys: String, CodingKey {
        case container, every, at, size, chapters, streams, faststart, overwrite, dryRun, mode
    }

    public init(from decoder: any Swift.Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        container = try c.decodeIfPresent(Container.self, forKey: .container)
        if let s = try c.decodeIfPresent(Double.self, forKey: .every) { points = .every(.seconds(s)) }
        if let s = try c.decodeIfPresent([Double].self, forKey: .at) { points = .at(s.map { .seconds($0) }) }
        if let b = try c.decodeIfPresent(Int64.self, forKey: .size) { points = .size(b) }
        if try c.decodeIfPresent(Bool.self, forKey: .chapters) == true { points = .chapters }
        streams = try c.decodeIfPresent(StreamSelection.self, forKey: .streams) ?? streams
        faststart = try c.decodeIfPresent(Bool.self, forKey: .faststart) ?? faststart
        overwrite = try c.decodeIfPresent(Bool.self, forKey: .overwrite) ?? overwrite
        dryRun = try c.decodeIfPresent(Bool.self, forKey: .dryRun) ?? dryRun
        mode = try c.decodeIfPresent(CutMode.self, forKey: .mode) ?? mode
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(container, forKey: .container)
        switch points {
        case .every(let d): try c.encode(d.seconds, forKey: .every)
        case .at(let times): try c.encode(times.map(\.seconds), forKey: .at)
        case .size(let bytes): try c.encode(bytes, forKey: .size)
        case .chapters: try c.encode(true, forKey: .chapters)
        }
        try c.encode(streams, forKey: .streams)
        try c.encode(faststart, forKey: .faststart)
        try c.encode(overwrite, forKey: .overwrite)
        try c.encode(dryRun, forKey: .dryRun)
        try c.encode(mode, forKey: .mode)
    }
}

public struct SplitPart: Sendable, Codable {
    public let number: Int
    public let output: String
    /// Where the part starts and ends, in seconds from the recording's start
    /// (a keyframe); the last part's end is the recording's.
    public let start: Double
    public let end: Double?
    public var packets = 0
    public var outputBytes: Int64 = 0
    /// Exact mode: the frames re-encoded at the part's start and end.
    public var reencodedFrames = 0
}

public struct SplitReport: Sendable, Codable {
    public let input: String
    public let container: String
    public var parts: [SplitPart]
    public var dryRun: Bool
    public var warnings: [String] = []
    public var elapsedSeconds: Double = 0
}

/// Splits a recording into parts without re-encoding: each part starts on
/// a keyframe (the last at or before each point asked for), holds every
/// packet of its stretch once — video from its keyframe to the next part's
/// in decode order, audio by where each packet starts — so concatenating
/// the parts gives back the input's packets and its sync. `pattern` names
/// the parts with `{n}` (1, 2, …).
public func split(input inputPath: String, pattern: String, options: SplitOptions,
                  cancellation: Cancellation = .shared,
                  progress: ((CutProgress) -> Void)? = nil) throws(MediaError) -> SplitReport {
    guard pattern.contains("{n}") else {
        throw MediaError.invalidOption("the output pattern '\(pattern)' has no {n} for the part number", options: [])
    }
    let began = ContinuousClock.now
    func name(_ n: Int) -> String { pattern.split(separator: "{n}", omittingEmptySubsequences: false).joined(separator: String(n)) }
    let container = try resolveContainer(options.container, output: name(1))
    let source = try CutSource(path: inputPath, container: container, streams: options.streams, operation: "could not split",
                               cancellation: cancellation)
    let length = source.input.duration?.microseconds
    let asked: [Int64]
    switch options.points {
    case .every(let d):
        let step = Timestamp(d).value
        guard step > 0 else { throw MediaError.invalidOption("'every' must be more than 0", options: ["every"]) }
        guard let length else {
            throw MediaError.invalid("could not split", path: inputPath, message: "its duration is unknown; give --at")
        }
        asked = Array(stride(from: step, to: length, by: Int64.Stride(step)))
    case .at(let times):
        asked = times.map { Timestamp($0).value }.sorted()
    case .chapters:
        asked = source.input.chapterStarts.map { $0.value - source.origin.value }.filter { $0 > 0 }
        guard !asked.isEmpty else {
            throw MediaError.invalid("could not split", path: inputPath,
                                     message: source.input.chapterCount == 0 ? "it has no chapters" : "it has only one chapter")
        }
    case .size:
        asked = []
    }
    var sizeNote: String?
    let starts: [Timestamp]
    if case .size(let limit) = options.points {
        (starts, sizeNote) = try sizedPartStarts(source, limit: limit, everyFrame: options.mode == .exact)
    } else {
        starts = try partStarts(source, asked: asked.map { source.origin.value + $0 }, everyFrame: options.mode == .exact)
    }

    var parts: [SplitPart] = []
    for (k, start) in starts.enumerated() {
        let end = k + 1 < starts.count ? starts[k + 1] : nil
        parts.append(SplitPart(number: k + 1, output: name(k + 1),
                               start: start.seconds - source.origin.seconds,
                               end: end.map { $0.seconds - source.origin.seconds }))
    }
    var report = SplitReport(input: inputPath, container: container.name, parts: parts, dryRun: options.dryRun,
                             warnings: source.plan.warnings)
    if let sizeNote { report.warnings.append(sizeNote) }
    if case .size = options.points {
    } else if starts.count < asked.count + 1 {
        report.warnings.append("\(asked.count + 1 - starts.count) point(s) fell in the same \(options.mode == .exact ? "frame" : "stretch between keyframes") as another (or before the first): \(starts.count) parts")
    }
    guard !options.dryRun else { return report }
    var cutOptions = CutOptions()
    cutOptions.edits = options.edits
    cutOptions.faststart = options.faststart
    cutOptions.overwrite = options.overwrite
    // Every part's name checked before the first is written.
    let names = Set(parts.map(\.output))
    if names.count < parts.count || names.contains(inputPath) {
        throw MediaError.invalidOption("the output pattern '\(pattern)' names the input or one file twice", options: [])
    }
    // The parts take their names together once the last is written, every
    // name checked first: a split that fails or is killed leaves none of
    // them. (Past 256 parts, each holding a descriptor until then, each is
    // named when written.)
    let together = parts.count <= 256
    var staged: [StagedOutput] = []
    if together {
        for p in parts { staged.append(try StagedOutput(target: p.output, overwrite: options.overwrite, inputs: [inputPath])) }
    }
    for k in parts.indices {
        let spec = PartSpec(from: starts[k], to: k + 1 < starts.count ? starts[k + 1] : nil,
                            split: true, first: k == 0, mode: options.mode)
        let part = together ? staged[k] : nil
        let written = try source.write(spec, to: parts[k].output, destination: part.map { .part($0) },
                                       container: container, options: cutOptions) { p in
            progress?(CutProgress(fraction: (Double(k) + (p.fraction ?? 0)) / Double(parts.count), position: p.position))
        }
        parts[k].packets = written.result.packets.reduce(0, +)
        parts[k].outputBytes = written.result.outputBytes
        parts[k].reencodedFrames = written.reencoded.reduce(0) { $0 + $1.frames }
        report.warnings += written.warnings.map { "part \(k + 1): \($0)" }
        // Every part gets the same tags: what the container cannot hold is said once.
        if k == 0, let w = written.result.tagWarning(container: container) { report.warnings.insert(w, at: 0) }
    }
    for part in staged { try part.commit() }
    report.parts = parts
    report.elapsedSeconds = (ContinuousClock.now - began).seconds
    return report
}

/// The parts' starts (input timeline) for points asked in microseconds:
/// the core's `PartStarts` over the video's keyframes (with `everyFrame`,
/// its frames), exactly as shown.
private func partStarts(_ source: CutSource, asked: [Int64], everyFrame: Bool) throws(MediaError) -> [Timestamp] {
    var boundaries: [Timestamp] = []
    if let v = source.video, let tb = v.timeBase {
        boundaries = try PresentationTimes(of: v, everyFrame: everyFrame, cancellation: source.cancellation).times.map {
            Timestamp($0, tb)
        }
    }
    return PartStarts.starts(origin: source.origin, boundaries: boundaries, asked: asked.map { Timestamp($0, .microseconds) })
}

/// Part starts for parts of at most `limit` bytes: each part ends at the
/// last keyframe (or frame) at which the bytes read since its start (every
/// stream's packets, in file order: what the part will hold) still fit,
/// less 2 % for the container. A GOP larger than that on its own makes a
/// larger part, which the returned note names.
private func sizedPartStarts(_ source: CutSource, limit: Int64, everyFrame: Bool) throws(MediaError) -> ([Timestamp], String?) {
    guard let v = source.video, let tb = v.timeBase else {
        throw MediaError.invalid("could not split", path: source.input.path,
                                 message: "--size needs a video stream to place the parts on its keyframes")
    }
    let file = try InputFile(path: source.input.path, cancellation: source.cancellation,
                             packetsOnly: source.input.timingsNeedNoProbe, sameAs: source.input)
    let kept = Set(source.plan.kept.map(\.index))
    file.discardAll(except: kept)
    let budget = limit - limit / 50
    var starts = [source.origin]
    var partStartBytes: Int64 = 0
    var bytes: Int64 = 0
    var lastFit: (at: Timestamp, bytes: Int64)?
    var oversized = 0
    let packet = try Packet()
    while try file.read(into: packet) {
        defer { bytes += Int64(packet.size) }
        guard kept.contains(packet.streamIndex) else { continue }
        guard packet.streamIndex == v.index, packet.isKeyframe || everyFrame, let pts = packet.timing.pts ?? packet.timing.dts
        else { continue }
        let at = Timestamp(pts, tb)
        guard at > starts.last! else { continue }
        if bytes - partStartBytes > budget {
            // Ending the part here makes it too big: end it at the last boundary that fit.
            if let fit = lastFit, fit.at > starts.last! {
                starts.append(fit.at)
                partStartBytes = fit.bytes
            }
            if bytes - partStartBytes > budget {
                // One stretch between boundaries holds more than the budget.
                oversized += 1
                starts.append(at)
                partStartBytes = bytes
                lastFit = nil
                continue
            }
        }
        lastFit = (at, bytes)
    }
    if bytes - partStartBytes > budget, let fit = lastFit, fit.at > starts.last! {
        starts.append(fit.at)
        if bytes - fit.bytes > budget { oversized += 1 }
    }
    let note = oversized > 0 ? "\(oversized) part(s) are larger than the size asked: a stretch between keyframes holds more than that on its own" : nil
    return (starts, note)
}
