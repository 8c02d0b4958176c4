import FileNames
import ArgumentParser
import Batch
import Concat
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Media
import Pipeline
import Probe
import Sync
import Transcode

/// Options merge, concat and fill-silence share.
struct SyncOptions: ParsableArguments {
    @Option(help: "How far a packet may land from its own timestamp: gaps and overlaps up to this are jitter, absorbed by laying packets back to back (never adding up: each packet is held within it of its own timestamp), larger ones filled with silence or trimmed; the report gives the largest shift. Default: 20 ms for fill-silence and merge (half of EBU R37's 40 ms audio-early allowance), 1 ms for concat's joints and for merge --sync-by-audio's drift; 0 places every sample by its timestamp.")
    var tolerance: Parsed<DurationKind>?

    @Option(name: .customLong("audio-bitrate"), help: "AAC bit rate if the audio must be re-encoded (default: the input's).")
    var audioBitrate: Parsed<BitRateKind>?

    @Flag(name: .customLong("no-data"),
          help: "Leave out the video file's data and subtitle tracks (telemetry, timed metadata, timecode, chapter text). By default each is kept where the container holds it (mp4/mov hold them all) and named in a warning where it does not.")
    var noData = false

    @OptionGroup var loudness: LoudnessTargetOptions

    func validate() throws {
        if let tolerance, tolerance.value == nil {
            throw ValidationError("'--tolerance' \(tolerance.text) is not a duration like 2ms or 0.01s")
        }
        if let audioBitrate, audioBitrate.value == nil {
            throw ValidationError("'--audio-bitrate' \(audioBitrate.text) is not a bit rate like 128k")
        }
        // Ranges too, as the verb would refuse them: a recipe's are all listed before any job.
        var o = AssemblyOptions()
        apply(to: &o)
        do { try o.validate() } catch { throw ValidationError(error.commandLineMessage) }
    }

    func apply(to o: inout AssemblyOptions) {
        o.tolerance = tolerance?.value
        o.audioBitRate = audioBitrate?.value
        o.data = !noData
        o.loudness = loudness.target
    }
}

private func assemblyOptions(_ c: ContainerOptions, _ out: OutputOptions, _ s: SyncOptions) -> AssemblyOptions {
    var o = AssemblyOptions()
    o.container = c.container
    o.faststart = !c.noFaststart
    o.edits = (try? c.tagging.edits()) ?? MetadataEdits()  // checked by validate()
    o.overwrite = out.overwrite
    s.apply(to: &o)
    return o
}

struct MergeCommand: WritingVerb {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Put a separately recorded video and audio into one file, in sync.",
        discussion: """
            Video comes from VIDEO and audio from AUDIO (.m4a/AAC, MP3, WAV/PCM, or another video \
            file's audio), both stream-copied. --align start (default) puts each file's first frame \
            and first audible sample (after AAC priming) at 0, as two recordings started together; \
            --align timestamps keeps the files' own timestamps (one shared clock). --offset moves \
            the audio later (120ms) or earlier (-0.5s).
            --end video (default) makes the output as long as the video: short audio is padded with \
            silence, long audio is cut; shortest cuts the longer track; longest keeps both whole.
            Gaps inside the audio are filled with exactly the missing samples of silence and \
            overlaps trimmed (--no-fill to keep them). Silence is made as frames of the audio's own \
            codec so the real audio is not re-encoded; when that cannot keep every sample within \
            --tolerance of its place, the audio is re-encoded once and the report says why.
            --sync-by-audio finds the offset itself, as 'avtool sync' does, by matching AUDIO against \
            VIDEO's own audio: AUDIO replaces the camera's audio (--keep-original-audio keeps that \
            as a second track). When AUDIO's clock drifts enough that a constant offset would leave \
            the ends of the overlap more than half of --tolerance out of sync, AUDIO is resampled \
            once to VIDEO's clock (and re-encoded); otherwise it is stream-copied at the offset that \
            best fits the whole overlap. Unclear matches are refused.
            The report (--json, or the summary) gives the offset applied, the silence inserted and \
            where, samples trimmed, and the output's A/V start skew and end difference.
            """
    )

    @Argument(help: "The video recording.", completion: .file()) var video: String
    @Argument(help: "The audio recording.", completion: .file()) var audio: String
    @Argument(help: "The output file (mp4, mov, mkv, …).", completion: .file()) var output: String

    @Option(help: "How to align: start (first frame and first sample at 0) or timestamps (keep the files' clocks).")
    var align: MergeAlignment = .start

    @Option(help: "Move the audio later (e.g. 120ms) or earlier (-0.5s).")
    var offset: Parsed<OffsetKind>?

    @Option(help: "Where the output ends: video, shortest, longest.")
    var end: EndPolicy = .video

    @Flag(help: "Keep gaps and overlaps inside the audio as they are.")
    var noFill = false

    @Flag(help: "Find the offset (and clock drift) by matching AUDIO against VIDEO's own audio.")
    var syncByAudio = false

    @Flag(help: "Also keep VIDEO's own audio, as a second (not default) audio track.")
    var keepOriginalAudio = false

    @OptionGroup var sync: SyncOptions
    @OptionGroup var containerOptions: ContainerOptions
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var reporting: ReportingOptions

    func validate() throws {
        if let offset, offset.value == nil {
            if let d = parseDuration(offset.text) {
                let n = offset.text.trimmingPrefix("+")
                throw ValidationError("'--offset' \(offset.text) has no unit: write \(n)ms or \(n)s (\(n) would be read as \(fixed(d.seconds, 3)) seconds)")
            }
            throw ValidationError("'--offset' \(offset.text) is not a duration like 120ms, -0.5s or 1.25s")
        }
        if syncByAudio && offset != nil {
            throw ValidationError("'--sync-by-audio' and '--offset' cannot be used together")
        }
        if syncByAudio && align != .start {
            throw ValidationError("'--sync-by-audio' and '--align timestamps' cannot be used together")
        }
    }

    func work(_ line: any ProgressSink) throws(MediaError) -> any VerbReport {
        var o = assemblyOptions(containerOptions, outputOptions, sync)
        o.end = end
        o.fill = !noFill
        let shift = offset?.value ?? .zero
        return try merge(video: video, audio: audio, output: output, alignment: align, offset: shift,
                         syncByAudio: syncByAudio, keepOriginalAudio: keepOriginalAudio, options: o) { p in
            line.update(fraction: p.fraction, position: p.position, detail: "")
        }
    }
}

struct ConcatCommand: WritingVerb {
    static let configuration = CommandConfiguration(
        commandName: "concat",
        abstract: "Join segments end to end, timestamps continuous, A/V in sync at every joint.",
        discussion: """
            Each segment starts where the previous one's video ended. Within a segment the audio \
            keeps its own offset to the video; a segment whose audio is shorter than its video gets \
            silence to the video's end, longer audio is cut there, so sync restarts at every joint \
            and never drifts. AAC priming of later segments is not replayed at the joints. \
            Video is stream-copied, so the segments must share codec, size, pixel format and codec \
            configuration; a mismatch is an error naming the segment and parameter. Audio is copied \
            when every joint falls on a whole codec frame within --tolerance, otherwise re-encoded \
            once (the report says so). Files of audio alone (voice memos, podcast segments, \
            audiobook chapters: .m4a, .mka, .webm, .mp3, .wav, ...) are joined each at the sample \
            where the one before ends, every packet copied; they must share audio codec, rate and \
            channel count. Segments are opened one at a time, so thousands can be joined (a few \
            files are open at once, whatever their number).
            """
    )

    @Argument(help: "The segments, in order, then the output file.", completion: .file())
    var paths: [String] = []

    @Option(help: "A file listing the segments, one path per line (blank lines and # comments ignored).", completion: .file())
    var list: String?

    @OptionGroup var sync: SyncOptions
    @OptionGroup var containerOptions: ContainerOptions
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var reporting: ReportingOptions

    func validate() throws {
        if list == nil && paths.count < 3 {
            throw ValidationError("give at least two segments and an output (or --list FILE and an output)")
        }
        if list != nil && paths.count != 1 {
            throw ValidationError("with --list, give only the output file")
        }
    }

    func segments() throws(MediaError) -> [String] {
        guard let list else { return Array(paths.dropLast()) }
        guard let data = Paths.contents(of: list) else {
            throw MediaError.invalid("could not read the segment list", path: list, message: String(cString: strerror(errno)))
        }
        let text = String(decoding: data, as: UTF8.self)
        let dir = list.contains("/") ? String(list[..<list.lastIndex(of: "/")!]) : "."
        return text.split(separator: "\n").map { line in
            String(line.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
        }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
            .map { $0.hasPrefix("/") ? String($0) : dir + "/" + $0 }
    }

    func work(_ line: any ProgressSink) throws(MediaError) -> any VerbReport {
        let inputs = try segments()
        let o = assemblyOptions(containerOptions, outputOptions, sync)
        return try concat(inputs, output: paths.last!, options: o) { p in
            line.update(fraction: p.fraction, position: p.position, detail: "")
        }
    }
}

struct FillSilenceCommand: WritingVerb {
    static let configuration = CommandConfiguration(
        commandName: "fill-silence",
        abstract: "Fill gaps in a file's audio with silence so A/V stays in sync.",
        discussion: """
            Finds the places where the audio's timestamps jump beyond --tolerance and fills each \
            with exactly the missing samples of silence (overlaps are trimmed); with \
            --to-video-end a short audio tail is padded to the video's end too. A file with audio \
            only (an .m4a with a hole) works the same way. Video is stream-copied; the audio is copied with silent frames of its own codec when they fit \
            every gap to the sample, else re-encoded once. Reports what it did.
            """
    )

    @Argument(help: "The file to repair.", completion: .file()) var input: String
    @Argument(help: "The repaired output file.", completion: .file()) var output: String

    @Flag(help: "Also pad audio that ends before the video with silence to the video's end.")
    var toVideoEnd = false

    @OptionGroup var sync: SyncOptions
    @OptionGroup var containerOptions: ContainerOptions
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var reporting: ReportingOptions

    func work(_ line: any ProgressSink) throws(MediaError) -> any VerbReport {
        let o = assemblyOptions(containerOptions, outputOptions, sync)
        return try fillSilence(input: input, output: output, toVideoEnd: toVideoEnd, options: o) { p in
            line.update(fraction: p.fraction, position: p.position, detail: "")
        }
    }
}

extension AssemblyReport: VerbReport {
    var summary: String {
        var s = "wrote \(quoted(output)) (\(container)):"
        if let videoCodec {
            s += " video \(videoCodec) copied"
            if videoFramesReencoded > 0 {
                let (n, m) = (trimmedStartsReencoded, trimmedEndsReencoded)
                let starts = n > 0 ? "\(n) trimmed segment\(n == 1 ? " starts" : "s start")" : nil
                let ends = m > 0 ? "\(m) trimmed segment\(m == 1 ? " ends" : "s end")" : nil
                s += " (\(videoFramesReencoded) frames re-encoded where \([starts, ends].compactMap { $0 }.joined(separator: " and ")))"
            }
        }
        if let audioCodec, let audioMode {
            s += "\(videoCodec == nil ? "" : ",") audio \(audioCodec) \(audioMode)"
            if let reencodeReason { s += " (\(reencodeReason))" }
            if audioMode == "copied", silentFramesAdded == 0, audioFramesReencoded == 0, audioPackets > 0 {
                s += " (all \(audioPackets) packets as they were)"
            }
            if silentFramesAdded > 0 { s += " (\(silentFramesAdded) silent frame\(silentFramesAdded == 1 ? "" : "s") added)" }
            if audioFramesReencoded > 0 {
                let n = audioStretchesReencoded
                s += ", \(audioFramesReencoded) of \(audioPackets) frames re-encoded around \(n) joint\(n == 1 ? "" : "s")"
            }
        }
        if let originalAudioCodec { s += ", original audio \(originalAudioCodec) copied as a second track" }
        s += loudnessSummary(loudness)
        if let e = autoSync {
            s += "; synced by audio: drift \(fixed(e.driftPPM, 2)) ppm, confidence \(fixed(e.confidence, 2))"
        }
        if let ms = offsetMilliseconds, let n = offsetSamples { s += "; offset \(fixed(ms, 2)) ms (\(n) samples)" }
        if let ms = startSetAsideMilliseconds {
            s += " (the audio's own start, \(fixed(ms, 2)) ms \(ms < 0 ? "before" : "after") the video's by its timestamps, "
                + "set aside by --align start; --align timestamps keeps it)"
        }
        if silenceInsertedSamples > 0 {
            s += "; \(silenceInsertedSamples) samples of silence in \(repairs.filter { $0.samples > 0 }.count) place(s)"
        }
        if samplesTrimmed > 0 { s += "; \(samplesTrimmed) samples trimmed" }
        if largestShiftSamples > 0 {
            s += "; packets moved at most \(largestShiftSamples) samples (\(fixed(largestShiftMilliseconds, 1)) ms) from their timestamps"
        }
        if jointsSeconds.count > 1, videoCodec == nil, jointsSamples.count == jointsSeconds.count {
            // Audio alone: each joint to the sample, where the segment before ended.
            s += "; joints at " + zip(jointsSamples, jointsSeconds).map { "sample \($0) (\(fixed($1, 3)) s)" }.joined(separator: ", ")
        } else if jointsSeconds.count > 1 {
            s += "; joints at " + jointsSeconds.map { fixed($0, 2) + " s" }.joined(separator: ", ")
        }
        if let k = skew {
            s += "; A/V start skew \(k.startSamples.map { "\($0) samples" } ?? "\(k.startMicroseconds) µs")"
            s += ", end difference \(k.endSamples.map { "\($0) samples" } ?? "\(k.endMicroseconds) µs")"
        }
        s += "; \(formatBytes(outputBytes)) in \(fixed(elapsedSeconds, 2)) s"
        return s
    }
}

extension MergeAlignment: ExpressibleByArgument {}
extension EndPolicy: ExpressibleByArgument {}
