import ArgumentParser
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
            handler name and metadata keys are shown too.
            """
    )

    @Argument(help: "The media file to inspect.", completion: .file())
    var input: String

    @Flag(help: "Print the report as JSON (sorted snake_case keys) on stdout.")
    var json = false

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
            try probe(path: input, gapTolerance: gapTolerance)
        }
        Terminal.output(json ? jsonText(report) : report.text)
    }
}
