import FileNames
import ArgumentParser
import Cut
import Media
import Pipeline
import Probe
import Remux
import Sync

struct CutCommand: WritingVerb {
    static let configuration = CommandConfiguration(
        commandName: "cut",
        abstract: "Keep a part of a recording: --from T, --to T or --duration D; copied, or frame-exact with --mode exact.",
        discussion: """
            Times are from the start of the recording: 90, 90s, 1.5m, 250ms, 1:30 or 1:30.250 \
            (minutes:seconds), 1:02:03.5 (hours:minutes:seconds).

            Every packet is copied byte for byte. Video starts at the keyframe at or before \
            --from. In MP4/MOV the output still starts exactly at --from: an edit list hides the \
            frames from the keyframe on (they decode but are not shown), and the audio — whole \
            packets, one of them before --from so the first one heard decodes fully — is \
            trimmed to the sample the same way. The output starts where the frame shown at \
            --from starts (within one frame before it), so every player keeps the audio on it. Other containers have no edit lists: the output \
            starts at the keyframe, and the report says how far before --from that is; their \
            audio (AAC-LC, PCM) starts at the output's start to the sample: the frames around it \
            are decoded and encoded again on the source's frame grid, silent before it, and the \
            source's packets are copied from two frames on. At the \
            end, video keeps every frame shown before --to (and the frames they refer to); audio \
            keeps every packet that starts before --to.

            --mode exact (H.264, HEVC, all-intra video) starts the video at the frame shown at --from in every \
            container: the frames from there to the next clean keyframe (IDR; for HEVC also a \
            CRA, whose RASL frames are re-encoded with them) are decoded and encoded again with \
            the source's codec, size, pixel format, colour, profile and level (libx264, \
            libx265; no B-frames), and everything after is copied. When a frame shown before \
            --to refers to one shown after it, the last GOP is re-encoded up to --to too. H.264 \
            keeps its avc1 sample entry: the new frames' SPS/PPS get an id of their own beside \
            the source's. HEVC keeps its hvc1 sample entry in MP4/MOV: the new frames get a \
            second hvc1 sample description holding x265's parameter sets (in MKV they carry \
            them in band). Video whose every frame is a keyframe \
            (MJPEG, ProRes, DNxHD, PNG…) is copied from the frame shown at --from, nothing \
            re-encoded. The report lists each re-encoded stretch.

            Tags, chapters, rotation and cover art are kept, as in remux.
            """
    )

    @Argument(help: "The input media file.", completion: .file())
    var input: String

    @Argument(help: "The output file; its extension picks the container.", completion: .file())
    var output: String

    @Option(help: "Where the kept part starts (default: the start).")
    var from: Parsed<TimeKind>?

    @Option(help: "Where it ends (default: the end).")
    var to: Parsed<TimeKind>?

    @Option(help: "How long it is (instead of --to).")
    var duration: Parsed<TimeKind>?

    @Option(help: "Several ranges joined into one output, FROM-TO comma-separated (e.g. 0:10-0:25,1:00-1:30); instead of --from/--to.")
    var keep: Parsed<RangesKind>?

    @Option(help: "keyframe: copy every packet, video from the keyframe before --from; exact: re-encode the frames up to the next keyframe so the video starts at --from.")
    var mode: CutMode = .keyframe

    @Flag(help: "Show where each range will start (its keyframe; in exact mode, where copying resumes) and write nothing.")
    var dryRun = false

    @Flag(help: "Leave out video streams.")
    var noVideo = false

    @OptionGroup var loudness: LoudnessTargetOptions
    @OptionGroup var containerOptions: ContainerOptions
    @OptionGroup var drops: StreamDropOptions
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var reporting: ReportingOptions

    func validate() throws {
        for (name, value) in [("from", from), ("to", to), ("duration", duration)] {
            guard let value, value.value == nil else { continue }
            if value.text.hasPrefix("-") {
                throw ValidationError("'--\(name)' \(value.text) is negative: times count from the recording's start, and a duration is more than 0")
            }
            throw ValidationError("'--\(name)' \(value.text) is not a time like 90, 1:30, 1:30.250, 90s or 250ms")
        }
        if to != nil && duration != nil { throw ValidationError("give '--to' or '--duration', not both") }
        if let to, let end = to.value, end <= (from?.value ?? .zero) {
            throw ValidationError("'--to' \(to.text) must be after '--from' \(from?.text ?? "0")")
        }
        if let keep {
            guard from == nil && to == nil && duration == nil else {
                throw ValidationError("give '--keep' or '--from'/'--to'/'--duration', not both")
            }
            guard keep.value != nil else {
                throw ValidationError("'--keep' \(keep.text) is not a list of ranges like 0:10-0:25,1:00-1:30 (each end after its start)")
            }
        } else if from == nil && to == nil && duration == nil {
            throw ValidationError("give the part to keep: '--from', '--to', '--duration' or '--keep'")
        }
        if duration?.value == .zero { throw ValidationError("'--duration' must be more than 0") }
    }

    var options: CutOptions {
        var o = CutOptions()
        o.container = containerOptions.container
        o.from = from?.value ?? .zero
        o.to = to?.value ?? duration?.value.map { o.from + $0 }
        drops.apply(to: &o.streams)
        o.streams.video = !noVideo
        o.faststart = !containerOptions.noFaststart
        o.edits = (try? containerOptions.tagging.edits()) ?? MetadataEdits()  // checked by validate()
        o.overwrite = outputOptions.overwrite
        o.mode = mode
        o.keep = keep?.value ?? []
        o.dryRun = dryRun
        o.loudness = loudness.target
        return o
    }

    func work(_ line: any ProgressSink) throws(MediaError) -> any VerbReport {
        try cut(input: input, output: output, options: options) { p in
            line.update(fraction: p.fraction, position: p.position, detail: "")
        }
    }
}

extension CutMode: ExpressibleByArgument {}

extension CutReport: VerbReport {
    var summary: String {
        if dryRun, let ranges {
            var s = "would cut \(quoted(input)) → \(quoted(output)) (\(container), \(mode.rawValue) mode):"
            for (k, r) in ranges.enumerated() {
                s += "\n  \(k + 1): \(fixed(r.from, 3))–\(r.to.map { fixed($0, 3) } ?? "end") s"
                s += r.keyframe.map { ", keyframe at \(fixed($0, 3)) s" } ?? ""
                s += ", output from \(fixed(r.start, 3)) s"
                if mode == .exact {
                    s += r.copiedFrom.map { "; re-encoded to \(fixed($0, 3)) s, copied from there (the last GOP re-encoded too if a frame before the end refers to one after it)" }
                        ?? "; no clean keyframe in the range: re-encoded throughout"
                }
            }
            return s
        }
        if let ranges, let joints {
            var s = "cut \(ranges.count) ranges of \(quoted(input)) → \(quoted(output)) (\(container)): "
            if let held = outputSeconds, let asked = askedSeconds { s += "\(fixed(held, 1)) s for \(fixed(asked, 1)) s asked, " }
            s += "\(packets ?? 0) packets, "
            s += "\(formatBytes(outputBytes)) in \(fixed(elapsedSeconds, 2)) s; audio \(audio ?? "none")"
            for (k, r) in ranges.enumerated() {
                s += "\n  \(k + 1): \(fixed(r.from, 3))–\(r.to.map { fixed($0, 3) } ?? "end") s from \(fixed(r.start, 3)) s"
                if k < joints.count { s += ", at \(fixed(joints[k], 3)) s in the output" }
                if r.reencodedFrames > 0 { s += ", \(r.reencodedFrames) frames re-encoded" }
            }
            return s + loudnessSummary(loudness)
        }
        let packets = streams.reduce(0) { $0 + $1.packets }
        var s = "cut \(quoted(input)) \(fixed(from, 3))–\(to.map { fixed($0, 3) } ?? "end") s → \(quoted(output)) (\(container)): "
        s += "\(packets) packets, \(formatBytes(outputBytes)) in \(fixed(elapsedSeconds, 2)) s"
        if mode == .exact {
            let frames = reencoded.reduce(0) { $0 + $1.frames }
            s += frames == 0 ? "; exact: nothing re-encoded (the range starts on a clean keyframe, or every frame is one)"
                : "; exact: \(frames) frames re-encoded (" + reencoded.map { "\(fixed($0.from, 3))–\(fixed($0.to, 3)) s" }.joined(separator: ", ")
                    + "), parameter sets \(parameterSets ?? "")"
        } else if let k = keyframe {
            s += startsAtFrom ? "; video from the keyframe at \(fixed(k, 3)) s, shown from \(fixed(start, 3)) s (the frame at --from; edit list)"
                : "; starts at the keyframe at \(fixed(k, 3)) s"
        }
        if let audioStart { s += "; audio: \(audioStart)" }
        return s + loudnessSummary(loudness)
    }
}

struct SplitCommand: WritingVerb {
    static let configuration = CommandConfiguration(
        commandName: "split",
        abstract: "Split a recording into parts without re-encoding: --every D, --at T1,T2,…, --size 2GB or --chapters.",
        discussion: """
            PATTERN names the parts with {n} for the part number, from 1: 'take-{n}.mp4'. Each \
            part starts on a keyframe — the last one at or before each point — and holds every \
            packet of its stretch once, byte for byte: video from its keyframe to the next part's, \
            audio by where each packet starts (a part's audio may begin a fraction of a frame after \
            its video; the container records the offset to the sample). 'avtool concat' of the \
            parts gives back the input's packets and its sync. --dry-run lists the parts and their \
            keyframe times without writing.

            --size makes parts of at most that many bytes (2GB, 700MB, 4GiB: K, M, G count in \
            1000s, Ki, Mi, Gi in 1024s), each ending at the last keyframe that keeps it within the \
            size, with 2 % left for the container; a stretch between keyframes larger than the size \
            makes a larger part, and the report says so. --chapters makes a part per chapter.

            --mode exact starts each part at the frame shown at its point (H.264, HEVC; see \
            'avtool cut --help'): the frames from there to the next clean keyframe, and an open \
            GOP at the part's end, are re-encoded, the rest copied; each frame is in exactly one \
            part, so 'avtool concat' of the parts gives back the input's frames and its sync.
            """
    )

    @Argument(help: "The input media file.", completion: .file())
    var input: String

    @Argument(help: "The parts' names, with {n} for the part number (its extension picks the container).", completion: .file())
    var pattern: String

    @Option(help: "A part every so long (e.g. 10m, 90s, 1:00:00).")
    var every: Parsed<TimeKind>?

    @Option(help: "Split points, comma-separated (e.g. 1:30,4:00.5).")
    var at: Parsed<TimeListKind>?

    @Option(help: "Parts of at most this size (e.g. 2GB, 700MB, 4GiB).")
    var size: Parsed<ByteCountKind>?

    @Flag(help: "A part per chapter.")
    var chapters = false

    @Flag(help: "List the parts (start and end keyframe times) and write nothing.")
    var dryRun = false

    @Option(help: "keyframe: parts start on keyframes, every packet copied; exact: parts start at the frame shown at each point.")
    var mode: CutMode = .keyframe

    @Flag(help: "Leave out video streams.")
    var noVideo = false

    @OptionGroup var containerOptions: ContainerOptions
    @OptionGroup var drops: StreamDropOptions
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var reporting: ReportingOptions

    func validate() throws {
        guard [every != nil, at != nil, size != nil, chapters].filter({ $0 }).count == 1 else {
            throw ValidationError("give one of '--every', '--at', '--size' or '--chapters'")
        }
        if let size, size.value == nil {
            throw ValidationError("'--size' \(size.text) is not a size like 2GB, 700MB or 4GiB")
        }
        if let every, (every.value ?? .zero) <= .zero {
            throw ValidationError("'--every' \(every.text) is not a length like 10m, 90s or 1:30")
        }
        if let at, at.value == nil {
            let bad = at.text.split(separator: ",", omittingEmptySubsequences: false).first { TimeKind.parse(String($0)) == nil }
            throw ValidationError("'--at' \(bad ?? "") is not a time like 90, 1:30, 1:30.250, 90s or 250ms")
        }
        if !pattern.contains("{n}") { throw ValidationError("PATTERN \(quoted(pattern)) has no {n} for the part number") }
    }

    var options: SplitOptions {
        var o = SplitOptions()
        o.container = containerOptions.container
        if let d = every?.value { o.points = .every(d) }
        if let times = at?.value { o.points = .at(times) }
        if let n = size?.value { o.points = .size(n) }
        if chapters { o.points = .chapters }
        drops.apply(to: &o.streams)
        o.streams.video = !noVideo
        o.faststart = !containerOptions.noFaststart
        o.edits = (try? containerOptions.tagging.edits()) ?? MetadataEdits()  // checked by validate()
        o.overwrite = outputOptions.overwrite
        o.dryRun = dryRun
        o.mode = mode
        return o
    }

    func work(_ line: any ProgressSink) throws(MediaError) -> any VerbReport {
        try split(input: input, pattern: pattern, options: options) { p in
            line.update(fraction: p.fraction, position: nil, detail: "")
        }
    }
}

extension SplitReport: VerbReport {
    var summary: String {
        let list = parts.map { p in
            "  \(p.number): \(fixed(p.start, 3))–\(p.end.map { fixed($0, 3) } ?? "end") s → \(quoted(p.output))"
                + (dryRun ? "" : ", \(p.packets) packets, \(formatBytes(p.outputBytes))")
                + (p.reencodedFrames > 0 ? ", \(p.reencodedFrames) frames re-encoded" : "")
        }
        let head = dryRun ? "would split \(quoted(input)) into \(parts.count) parts (\(container)):"
            : "split \(quoted(input)) into \(parts.count) parts (\(container)) in \(fixed(elapsedSeconds, 2)) s:"
        return ([head] + list).joined(separator: "\n")
    }
}
