import ArgumentParser
import Loudness
import Media
import Probe

struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Show what is in a media file: streams, timing, A/V start skew and audio gaps.",
        discussion: """
            Reads every packet once (memory stays flat), so packet counts, start offsets and audio \
            gaps are measured, not guessed from headers. Rotation is in degrees counter-clockwise, \
            as ffprobe reports it. The A/V skew compares the presentation start of the main video \
            and audio streams (audio priming excluded); positive means audio starts later. \
            An HDR video's format is named (Dolby Vision profile, compatibility and level; HDR10+, \
            found by decoding its first frames; HDR10 (PQ); HLG) with its mastering display and \
            light levels; for MP4/MOV, an MV-HEVC stream's views and each data track's kind, \
            handler name and metadata keys are shown too. With '--loudness', each audio stream is \
            decoded whole and measured by ITU-R BS.1770-4 / EBU R128 (gated): integrated loudness \
            (LUFS), loudness range (LU), true peak (dBTP, 4× oversampled) and sample peak (dBFS); \
            a stream quieter than the absolute gate (-70 LUFS) is said to be gated out.
            """
    )

    @Argument(help: "The media file to inspect.", completion: .file())
    var input: String

    @Flag(help: "Print the report as JSON (sorted snake_case keys) on stdout.")
    var json = false

    @Flag(help: "Also measure each audio stream's loudness (EBU R128): integrated, range, true and sample peak.")
    var loudness = false

    @Option(help: "Treat timestamp jumps up to this many audio samples as rounding, not gaps (default: the larger of one time-base tick and 1 ms).")
    var gapTolerance: Int64?

    @Flag(name: .shortAndLong, help: "Also print FFmpeg's own warnings on stderr.")
    var verbose = false

    func validate() throws {
        if let t = gapTolerance, t < 0 { throw ValidationError("'--gap-tolerance' must not be negative") }
    }

    func run() throws {
        (verbose ? LibraryLogLevel.warning : .quiet).apply()
        Signals.install()
        let report = try reportingFailures(json: json) { () throws(MediaError) in
            var report = try probe(path: input, gapTolerance: gapTolerance)
            if loudness {
                for m in try measureLoudness(path: input) {
                    if let i = report.streams.firstIndex(where: { $0.index == m.stream }) {
                        report.streams[i].loudness = m.figures
                    }
                }
            }
            return report
        }
        Terminal.output(json ? jsonText(report) : report.text)
    }
}
