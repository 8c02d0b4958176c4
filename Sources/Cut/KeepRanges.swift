import Concat
import Media
import Pipeline
import Sync

/// One range `--keep` asks for, from the recording's start.
public struct CutRange: Sendable, Equatable {
    public var from: Duration
    public var to: Duration

    public init(from: Duration, to: Duration) {
        self.from = from
        self.to = to
    }

    /// `0:10-0:25,1:00-1:30`: ranges as `FROM-TO`, comma-separated; nil
    /// when one is not two times with the second after the first.
    public static func parseList(_ text: String) -> [CutRange]? {
        var ranges: [CutRange] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let ends = item.split(separator: "-", omittingEmptySubsequences: false)
            guard ends.count == 2, let a = parsePosition(String(ends[0]).trimmed), let b = parsePosition(String(ends[1]).trimmed),
                  b > a else { return nil }
            ranges.append(CutRange(from: a, to: b))
        }
        return ranges.isEmpty ? nil : ranges
    }
}

extension String {
    /// Without leading and trailing spaces.
    var trimmed: String { String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
}

/// What `--keep` did with each range.
public struct KeptRangeReport: Sendable, Codable, Equatable {
    public var from: Double
    public var to: Double?
    /// Where the range's output starts, from the recording's start: the
    /// frame shown at `from` (exact), or its keyframe.
    public var start: Double
    public var reencodedFrames: Int
    /// The keyframe at or before `from`.
    public var keyframe: Double?
    /// Exact mode, `--dry-run`: where copying resumes (the first clean
    /// keyframe after the start); nil when the whole range is re-encoded.
    public var copiedFrom: Double?
}

/// Several ranges into one output: each range is cut on its own (keyframe
/// mode: from its keyframe; exact: from the frame shown at `from`) into a
/// temporary part beside the output, and the parts are joined by the
/// concat engine, which lays each part's audio to its video to the sample
/// (copied where whole codec frames fit, else re-encoded), so sync restarts
/// at every joint. The temporaries never outlive the run.
func cutRanges(input inputPath: String, output outputPath: String, options: CutOptions, container: Container,
               cancellation: Cancellation, progress: ((CutProgress) -> Void)?) throws(MediaError) -> CutReport {
    let began = ContinuousClock.now
    // The output is checked (directory, not the input, overwrite) before any work.
    let target = try StagedOutput(target: outputPath, overwrite: options.overwrite, inputs: [inputPath])
    target.discard()
    let source = try CutSource(path: inputPath, container: container, streams: options.streams, operation: "could not cut",
                               cancellation: cancellation)
    let length = source.input.duration?.microseconds
    var temporaries: [StagedOutput] = []
    defer { for t in temporaries { t.discard() } }
    var ranges: [KeptRangeReport] = []
    var warnings: [String] = source.plan.warnings
    var emptyInAll: [String]?
    var partOptions = options
    partOptions.overwrite = true
    partOptions.edits = MetadataEdits()
    for (k, r) in options.keep.enumerated() {
        if let length, Timestamp(r.from).value >= length {
            throw MediaError.invalidOption("range \(k + 1) starts at \(fixed(r.from.seconds, 3)) s, past the end of '\(inputPath)' (\(fixed(Double(length) / 1e6, 3)) s)",
                                           options: ["keep"])
        }
        // Named: the part writer stages its own output and replaces this one by name.
        let staged = try StagedOutput(target: "\(outputPath).range\(k + 1)", overwrite: true, inputs: [inputPath],
                                      named: true, counted: false)
        temporaries.append(staged)
        let spec = PartSpec(from: source.absolute(r.from), to: source.absolute(r.to), split: false, mode: options.mode,
                            startAtKeyframe: options.mode == .keyframe)
        let part = try source.write(spec, to: staged.temporary, container: container, options: partOptions) { p in
            progress?(CutProgress(fraction: (Double(k) + (p.fraction ?? 0)) / Double(options.keep.count + 1), position: p.position))
        }
        let start = part.start.seconds - source.origin.seconds
        ranges.append(KeptRangeReport(from: r.from.seconds, to: r.to.seconds, start: start,
                                      reencodedFrames: part.reencoded.reduce(0) { $0 + $1.frames }))
        // Said once for the joined output: the tags the parts lost (each the same), and
        // the tracks no range holds a packet of (a track empty in one part is the others').
        if k == 0, let w = part.result.tagWarning(container: container) { warnings.insert(w, at: 0) }
        emptyInAll = emptyInAll.map { $0.filter(part.result.emptyTracks.contains) } ?? part.result.emptyTracks
        let empty = part.result.emptyTrackWarning(container: container)
        warnings += part.warnings.filter { $0 != empty }.map { "range \(k + 1): \($0)" }
        if options.mode == .keyframe, start < r.from.seconds - 0.0005 {
            warnings.append("range \(k + 1) starts at the keyframe at \(fixed(start, 3)) s, \(fixed(r.from.seconds - start, 3)) s before \(fixed(r.from.seconds, 3)) s (--mode exact starts it there)")
        }
    }
    var assembly = AssemblyOptions()
    assembly.container = container
    assembly.edits = options.edits
    assembly.faststart = options.faststart
    assembly.overwrite = options.overwrite
    let joined = try concat(temporaries.map(\.temporary), output: outputPath, options: assembly, cancellation: cancellation) { p in
        progress?(CutProgress(fraction: (Double(options.keep.count) + (p.fraction ?? 0)) / Double(options.keep.count + 1),
                              position: p.position))
    }
    if let w = MuxResult.emptyTrackWarning(emptyInAll ?? [], container: container) { warnings.append(w) }
    // What the join says of its parts, each named by its range.
    warnings += joined.warnings.map { w in
        temporaries.enumerated().reduce(w) { w, t in
            let (k, part) = t
            let named = w.hasPrefix("segment \(k + 1):") ? "range \(k + 1):" + w.dropFirst("segment \(k + 1):".count) : w
            return named.replacing(part.temporary, with: "range \(k + 1)")
        }
    }
    var report = CutReport(input: inputPath, output: outputPath, container: container.name, from: options.keep[0].from.seconds,
                           to: options.keep.last?.to.seconds, keyframe: nil, startsAtFrom: options.mode == .exact,
                           start: ranges.first?.start ?? 0, streams: [], dropped: source.plan.dropped, warnings: warnings)
    report.mode = options.mode
    report.ranges = ranges
    report.joints = joined.jointsSeconds
    let asked = options.keep.reduce(0.0) { $0 + ($1.to.seconds - $1.from.seconds) }
    report.askedSeconds = asked
    report.outputSeconds = joined.durationSeconds
    if let held = joined.durationSeconds, held - asked > 0.5 {
        // Said first and plainly: the file is longer than what was asked.
        report.warnings.insert("the output holds \(fixed(held, 1)) s for the \(fixed(asked, 1)) s asked (\(fixed(held - asked, 1)) s more): "
            + "in keyframe mode each range starts at the keyframe before it; --mode exact starts each at the time asked", at: 0)
    }
    report.audio = joined.audioMode.map { m in joined.reencodeReason.map { "\(m) (\($0))" } ?? m }
    report.packets = joined.videoPackets + joined.audioPackets
    report.outputBytes = joined.outputBytes
    report.elapsedSeconds = (ContinuousClock.now - began).seconds
    return report
}
