import Loudness
import Media
import Pipeline
import Sync

/// Keyframe-mode cut: the packets of `[from, to)` copied byte for byte.
/// Video starts at the keyframe at or before `from` (found by seeking, then
/// checked: with reordered frames a keyframe found by its DTS can be shown
/// after `from`); in MP4/MOV the output timeline starts at `from`, so the
/// frames before it decode but are not shown and the audio, one frame of
/// pre-roll included, is trimmed to the sample by the edit lists the muxer
/// writes; elsewhere it starts at the keyframe. What each track keeps is
/// the core's `CutSelection`.
public func cut(input inputPath: String, output outputPath: String, options: CutOptions,
                cancellation: Cancellation = .shared,
                progress: ((CutProgress) -> Void)? = nil) throws(MediaError) -> CutReport {
    let container = try resolveContainer(options.container, output: outputPath)
    if options.dryRun {
        return try previewCut(input: inputPath, output: outputPath, options: options, container: container,
                              cancellation: cancellation)
    }
    if let target = options.loudness {
        return try cutWithLoudness(target, input: inputPath, output: outputPath, options: options, container: container,
                                   cancellation: cancellation, progress: progress)
    }
    if options.keep.count > 1 {
        return try cutRanges(input: inputPath, output: outputPath, options: options, container: container,
                             cancellation: cancellation, progress: progress)
    }
    var options = options
    if let only = options.keep.first {
        options.from = only.from
        options.to = only.to
        options.keep = []
    }
    if let to = options.to, to <= options.from {
        throw MediaError.invalidOption("'to' must be after 'from'", options: ["to", "from"])
    }
    let source = try CutSource(path: inputPath, container: container, streams: options.streams, operation: "could not cut",
                               cancellation: cancellation)
    if let length = source.input.duration, Timestamp(options.from) >= length {
        throw MediaError.invalidOption("'from' \(fixed(options.from.seconds, 3)) s is past the end of '\(inputPath)' (\(fixed(length.seconds, 3)) s)",
                                       options: ["from"])
    }
    let part = try source.write(PartSpec(from: source.absolute(options.from), to: options.to.map(source.absolute), split: false,
                                         mode: options.mode, audioHead: true),
                                to: outputPath, container: container, options: options, progress: progress)
    var report = CutReport(
        input: inputPath, output: outputPath, container: container.name, from: options.from.seconds,
        to: options.to?.seconds, keyframe: part.keyframe.map { $0.seconds - source.origin.seconds }, startsAtFrom: part.startsAtFrom,
        start: part.start.seconds - source.origin.seconds,
        streams: source.streamReports(part.result), dropped: source.plan.dropped,
        warnings: [part.result.tagWarning(container: container)].compactMap { $0 } + source.plan.warnings + part.warnings)
    if let k = part.keyframe, !part.startsAtFrom {
        report.warnings.append("\(container.name) has no edit lists: the output starts at the keyframe \(fixed(source.absolute(options.from).seconds - k.seconds, 3)) s before --from")
    }
    report.mode = options.mode
    report.reencoded = part.reencoded.map {
        ReencodedStretchReport(from: $0.from.seconds - source.origin.seconds, to: $0.to.seconds - source.origin.seconds, frames: $0.frames)
    }
    report.parameterSets = part.parameterSets
    report.audioStart = part.audioStart
    report.outputBytes = part.result.outputBytes
    report.elapsedSeconds = part.result.elapsed.seconds
    return report
}

/// The cut brought to a loudness target (`--loudness`): written whole into
/// a hidden file beside the output, measured there, its audio re-encoded
/// with the plan's gain into the output, the rest copied.
private func cutWithLoudness(_ target: LoudnessTarget, input inputPath: String, output outputPath: String, options: CutOptions,
                             container: Container, cancellation: Cancellation,
                             progress: ((CutProgress) -> Void)?) throws(MediaError) -> CutReport {
    let began = ContinuousClock.now
    var plain = options
    plain.loudness = nil
    plain.container = container
    plain.overwrite = true
    let written = try writeNormalized(output: outputPath, target: target, overwrite: options.overwrite, inputs: [inputPath],
                                      audioBitRate: nil, named: true, cancellation: cancellation,
                                      progress: progress.map { progress in { p in progress(CutProgress(fraction: p.fraction, position: p.position)) } }
    ) { staged throws(MediaError) in
        try cut(input: inputPath, output: staged.temporary, options: plain, cancellation: cancellation, progress: progress)
    }
    var report = written.0
    report.output = outputPath
    report.loudness = written.1.streams
    report.audio = ([report.audio].compactMap { $0 } + ["re-encoded for loudness: brought to \(target.summary), measured on the cut"])
        .joined(separator: "; ")
    report.outputBytes = written.1.outputBytes
    report.warnings += written.1.warnings
    report.elapsedSeconds = (ContinuousClock.now - began).seconds
    return report
}

/// One part to write: `[from, to)` in microseconds on the input's own
/// timeline; `split` parts hold each packet of the input once (see
/// `CutSelection`) and start at their keyframe.
struct PartSpec {
    var from: Timestamp
    var to: Timestamp?
    var split: Bool
    /// The first part of a split keeps everything before its end.
    var first = false
    var mode = CutMode.keyframe
    /// Start at the keyframe even where an edit list could hide the frames before `from`.
    var startAtKeyframe = false
    /// Without edit lists, re-encode the audio frames around the start so
    /// it starts at the sample (`AudioHead`); a joined part leaves that to the concat engine.
    var audioHead = false
}

/// What writing one part did.
struct WrittenPart {
    var result: MuxResult
    /// The PTS (µs, input timeline) of the first keyframe kept.
    var keyframe: Timestamp?
    /// Where the part's timeline starts (µs, input timeline).
    var start: Timestamp
    var startsAtFrom: Bool
    var warnings: [String]
    /// Exact mode: each re-encoded stretch (µs, input timeline) and its frame count.
    var reencoded: [(from: Timestamp, to: Timestamp, frames: Int)] = []
    var parameterSets: String?
    /// How each audio track starts: trimmed by an edit list, re-encoded
    /// around the start, or from the whole packet holding it.
    var audioStart: String?
}

/// An opened input with the streams a cut or split keeps, and the part
/// writer both use: seek to the keyframe, read through a `PacketSource`
/// until every track's `CutSelection` has ended, write through a
/// `MuxSession`.
final class CutSource {
    let input: InputFile
    let plan: StreamPlan
    /// The earliest start of the kept streams: where the recording's time 0 is.
    let origin: Timestamp
    let video: InputStream?
    let cancellation: Cancellation
    let operation: String

    /// `operation` begins its errors: "could not cut" or "could not split".
    init(path: String, container: Container, streams: StreamSelection, operation: String,
         cancellation: Cancellation) throws(MediaError) {
        input = try InputFile(path: path, cancellation: cancellation)
        plan = try planStreams(input, container: container, selection: streams, operation: operation)
        self.operation = operation
        let first = plan.kept.compactMap(\.startTime).min() ?? .zero(.microseconds)
        guard let micros = first.microseconds else {
            throw MediaError.invalid(operation, path: path, message: "its start time \(first) is out of reach")
        }
        origin = Timestamp(micros, .microseconds)
        video = plan.kept.first { $0.mediaType == .video && !$0.isAttachedPicture }
        self.cancellation = cancellation
    }

    /// A time from the recording's start, on the input's timeline (µs).
    func absolute(_ d: Duration) -> Timestamp { Timestamp(origin.value &+ Timestamp(d).value, .microseconds) }

    func streamReports(_ result: MuxResult) -> [RemuxStreamReport] {
        plan.kept.enumerated().map {
            RemuxStreamReport(inputIndex: $1.index, outputIndex: $0, type: $1.mediaType, codec: $1.reportedCodec,
                              packets: result.packets[$0], bytes: result.payloadBytes[$0], corrections: result.corrections[$0])
        }
    }

    /// `destination`: where the part goes when not simply a file at `outputPath` (a split's part, named with the others).
    func write(_ spec: PartSpec, to outputPath: String, destination: MuxDestination? = nil, container: Container,
               options: CutOptions, progress: ((CutProgress) -> Void)?) throws(MediaError) -> WrittenPart {
        let found = try seekStart(spec.from)
        // Without edit lists the output starts where its video does. With
        // them, at the start of the frame shown at `from`: FFmpeg's demuxer
        // shows a frame an edit starts inside of from the edit's start, which
        // would put the video ahead of the audio by that part of a frame.
        let editList = container.isISOBMFF && !spec.split && !spec.startAtKeyframe
        let exact = spec.mode == .exact && video != nil
        let start = spec.first ? origin : (editList || exact ? (found?.frame ?? spec.from) : (found?.keyframe ?? spec.from))
        // (Video whose every frame is a keyframe starts at the frame asked with none re-encoded: no coding.)
        let coding = try exact ? video.flatMap { v throws(MediaError) in try StretchCoding.forExactCut(v, container: container) } : nil
        let partPlan = try partPlan(spec, start: start, editList: editList)
        // A part from the recording's start is read from a new opening, not a
        // seek: the demuxer seeks a track whose samples share one time (a
        // GoPro's `fdsc`: all at 0) to the middle of them.
        let reader = spec.first || spec.from <= origin
            ? try InputFile(path: input.path, cancellation: cancellation, packetsOnly: true, sameAs: input) : input
        var source = try PacketSource(reader, kept: plan.kept, salvage: false, operation: operation)
        let session = try openSession(partPlan, to: spec.to, outputPath: outputPath, destination: destination,
                                      container: container, options: options, coding: coding)
        let spliced = coding.map { c in
            let j = plan.kept.firstIndex { $0.index == video?.index }!
            return (track: j, coding: c, from: spec.first ? partPlan.tracks[j].from : (found?.frameTicks ?? partPlan.tracks[j].from))
        }
        let part = try PartWriters(session: session, plan: partPlan, kept: plan.kept, spliced: spliced)
        let length = spec.to.map { $0.seconds - start.seconds } ?? input.duration.map { $0.seconds - (start.seconds - origin.seconds) }
        try runTracks(&source, into: part.writers, cancellation: cancellation, untilEnded: true, progress: progress.map { progress in
            { progress(CutProgress(fraction: length.map { min(max(session.position / max($0, 0.001), 0), 1) }, position: session.position)) }
        })
        // A recording's video or audio missing from the part: not a cut of it, and nothing is named.
        for (j, s) in plan.kept.enumerated() where session.plans[j].packets == 0 && [.video, .audio].contains(s.mediaType) {
            throw MediaError.invalid(operation, path: input.path, stream: s.index,
                                     message: "no \(s.mediaType.rawValue) packet lies in the range",
                                     remedy: .drop(s.mediaType == .video ? .video : .audio))
        }
        let result = try session.finish()
        var written = WrittenPart(result: result, keyframe: found?.keyframe, start: start,
                                  startsAtFrom: editList || spec.split || exact,
                                  warnings: [result.emptyTrackWarning(container: container)].compactMap { $0 })
        if let splicer = part.splicer, let tb = video?.timeBase {
            written.reencoded = splicer.stretches.compactMap { s in
                guard let a = Timestamp(s.from, tb).microseconds, let b = Timestamp(s.until, tb).microseconds else { return nil }
                return (Timestamp(a, .microseconds), Timestamp(b, .microseconds), s.frames)
            }
            written.parameterSets = splicer.stretches.isEmpty ? nil : coding?.parameterSets
        }
        if plan.kept.contains(where: { $0.mediaType == .audio }) && !spec.split && !spec.first {
            written.audioStart = audioStart(part, editList: editList, audioHead: spec.audioHead)
            if !editList && spec.audioHead {
                for r in part.headRefusals {
                    written.warnings.append("\(container.name) has no edit lists and \(r): the audio starts with the whole packet that holds the start")
                }
            }
        }
        return written
    }

    /// Seeks to where the part's reading starts: the keyframe shown at or
    /// before `from` (returned), or without video a second before `from`.
    private func seekStart(_ from: Timestamp) throws(MediaError) -> (keyframe: Timestamp, frame: Timestamp, frameTicks: Int64)? {
        let found = try seekToKeyframe(input, stream: video, at: from, operation: operation)
        if video == nil, let s = plan.kept.first, let tb = s.timeBase {
            // Without video, any packet can start: seek a second early (the
            // selection drops what is before), or to the start.
            guard (KeyframeSearch.target(withoutVideo: from, timeBase: tb).map { input.seek(stream: s.index, toKeyframeBefore: $0) } ?? false)
                || input.seek(stream: s.index, toKeyframeBefore: s.startTime?.value ?? 0) else {
                throw MediaError.invalid(operation, path: input.path, stream: s.index, message: "the input cannot be seeked")
            }
        }
        return found
    }

    /// How the audio starts, in words for the report.
    private func audioStart(_ part: PartWriters, editList: Bool, audioHead: Bool) -> String? {
        if editList { return "whole packets copied; the edit list starts the audio at the first sample" }
        guard audioHead else { return nil }
        let done = part.heads.filter(\.reencoded).map { h in
            let resumed = h.rejoin.flatMap { r in h.stream.timeBase.map { Timestamp(r, $0).seconds - origin.seconds } }
            let how = h.stream.codecName.hasPrefix("pcm_") ? "trimmed to the start" : "silent before the start"
            return "stream #\(h.stream.index): \(h.frames) \(h.stream.codecName) frame(s) re-encoded (\(how))"
                + (resumed.map { ", copied from \(fixed($0, 3)) s" } ?? "")
        }
        return done.isEmpty ? "whole packets copied (the audio starts on a frame boundary)" : done.joined(separator: "; ")
    }
}

/// `--dry-run`: where each range will start — the keyframe before it, the
/// output's start, and in exact mode where copying resumes (the first clean
/// keyframe after the start) — found by seeking and reading the video's
/// packets, nothing written.
func previewCut(input inputPath: String, output outputPath: String, options: CutOptions, container: Container,
                cancellation: Cancellation) throws(MediaError) -> CutReport {
    let ranges = options.keep.isEmpty ? [CutRange(from: options.from, to: options.to ?? .seconds(Int64.max / 2_000_000))] : options.keep
    if let to = options.to, options.keep.isEmpty, to <= options.from {
        throw MediaError.invalidOption("'to' must be after 'from'", options: ["to", "from"])
    }
    let source = try CutSource(path: inputPath, container: container, streams: options.streams, operation: "could not cut",
                               cancellation: cancellation)
    let coding = try options.mode == .exact ? source.video.flatMap { v throws(MediaError) in try StretchCoding.forExactCut(v, container: container) } : nil
    var previews: [KeptRangeReport] = []
    for r in ranges {
        let from = source.absolute(r.from)
        let to = options.keep.isEmpty && options.to == nil ? nil : source.absolute(r.to)
        let found = try seekToKeyframe(source.input, stream: source.video, at: from, operation: source.operation)
        let editList = container.isISOBMFF && (options.keep.isEmpty || options.mode == .exact)
        let start = options.mode == .exact || editList ? (found?.frame ?? from) : (found?.keyframe ?? from)
        var preview = KeptRangeReport(from: r.from.seconds, to: to == nil ? nil : r.to.seconds,
                                      start: start.seconds - source.origin.seconds, reencodedFrames: 0)
        preview.keyframe = found.map { $0.keyframe.seconds - source.origin.seconds }
        if options.mode == .exact, source.video?.isIntraOnly == true { preview.copiedFrom = preview.start }
        if let coding, let v = source.video, let tb = v.timeBase, let f = found {
            // The first clean keyframe after the start, before the end.
            let packet = try Packet()
            while try source.input.read(into: packet) {
                guard packet.streamIndex == v.index, let pts = packet.timing.pts ?? packet.timing.dts else { continue }
                let beforeEnd = to.map { Timestamp(pts, tb) < $0 } ?? true
                if !beforeEnd && packet.isKeyframe { break }
                if packet.isKeyframe, pts > f.frameTicks, beforeEnd,
                   packet.withData({ coding.nal.pictureKind($0) }) == .cleanStart {
                    preview.copiedFrom = Timestamp(pts, tb).seconds - source.origin.seconds
                    break
                }
            }
        }
        previews.append(preview)
    }
    var report = CutReport(input: inputPath, output: outputPath, container: container.name, from: ranges[0].from.seconds,
                           to: options.keep.isEmpty ? options.to?.seconds : ranges.last?.to.seconds,
                           keyframe: previews[0].keyframe, startsAtFrom: options.mode == .exact || container.isISOBMFF,
                           start: previews[0].start, streams: [], dropped: source.plan.dropped, warnings: source.plan.warnings)
    report.mode = options.mode
    report.ranges = previews
    report.dryRun = true
    return report
}

extension CutSource {
    /// The `timecode` tags (the video's, which an MP4/MOV timecode track is
    /// written from, and the file's) moved on by the frames from the
    /// video's start to `start`, so the output's first frame keeps the
    /// label it had; a user's own `timecode` edit comes after and wins.
    func shiftedTimecodes(start: Timestamp) -> [MetadataEdits.Tag] {
        guard let v = video, let rate = v.averageFrameRate ?? v.realFrameRate, let videoStart = v.startTime,
              let frames = frameCount(from: videoStart, to: start, rate: rate), frames != 0 else { return [] }
        func shifted(_ text: String?) -> String? {
            text.flatMap { Timecode($0, rate: rate) }.map { $0.adding(frames: frames).description }
        }
        var tags: [MetadataEdits.Tag] = []
        for (j, s) in plan.kept.enumerated() where s.mediaType == .video {
            if let t = shifted(s.tag("timecode")) { tags.append(.init(streams: .index(j), key: "timecode", value: t)) }
        }
        if let t = shifted(input.metadata.first { $0.key == "timecode" }?.value) {
            tags.append(.init(streams: nil, key: "timecode", value: t))
        }
        return tags
    }
}

/// Seeks so the next video packet read is a keyframe shown at or before
/// `at`, and returns its PTS and that of the frame shown at `at`, on the
/// video's time base (nil without video). The core's `KeyframeSearch` says
/// where to seek again when a seek lands on a keyframe shown after `at`.
private func seekToKeyframe(_ input: InputFile, stream: InputStream?, at: Timestamp,
                            operation: String) throws(MediaError) -> (keyframe: Timestamp, frame: Timestamp, frameTicks: Int64)? {
    guard let stream, let tb = stream.timeBase else {
        return nil
    }
    let fail = MediaError.invalid(operation, path: input.path, stream: stream.index,
                                  message: "no keyframe at or before the start could be found")
    var search: KeyframeSearch
    do {
        search = try KeyframeSearch(at: at, timeBase: tb)
    } catch {
        throw MediaError.invalid(operation, path: input.path, stream: stream.index, message: error.description)
    }
    let first = stream.startTime?.value ?? 0
    let packet = try Packet()
    // Before the first keyframe a seek fails: start from the beginning.
    func seek() -> Bool {
        input.seek(stream: stream.index, toKeyframeBefore: search.target) || input.seek(stream: stream.index, toKeyframeBefore: first)
    }
    for _ in 0..<12 {
        guard seek() else { throw fail }
        var found: (pts: Int64, dts: Int64?)?
        while found == nil, try input.read(into: packet) {
            guard packet.streamIndex == stream.index else { continue }
            let t = packet.timing
            guard packet.isKeyframe, let pts = t.pts ?? t.dts else { continue }
            found = (pts, t.dts)
        }
        guard let k = found else { throw fail }
        guard search.reaches(k.pts) || search.target <= first else {
            search.stepBack(from: k)
            continue
        }
        // The frame shown at `at`: the latest PTS at or before it, among
        // the packets up to the first decoded after it (no later one can
        // be shown earlier).
        var shown = k.pts
        while try input.read(into: packet) {
            guard packet.streamIndex == stream.index else { continue }
            let t = packet.timing
            if let pts = t.pts, pts > shown, search.reaches(pts) { shown = pts }
            if let dts = t.dts ?? t.pts, !search.reaches(dts) { break }
        }
        guard seek() else { throw fail }
        // Exact, in the stream's time base: a part that starts at this
        // keyframe and the part before that ends at it meet on one tick.
        return (Timestamp(k.pts, tb), Timestamp(shown, tb), shown)
    }
    throw fail
}
