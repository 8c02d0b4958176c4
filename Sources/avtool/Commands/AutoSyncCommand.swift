import FileNames
import ArgumentParser
import Concat
import Media
import Pipeline
import Sync

struct AutoSyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Find where a separate audio recording belongs against a video's own audio, and its clock drift.",
        discussion: """
            Compares AUDIO with VIDEO's own audio track (the camera's microphone) by cross-correlation: \
            a coarse search over every possible offset on a downsampled, band-limited signal, then \
            windows across the whole overlap at full rate, each refined between samples and fitted \
            to a line by least squares, disagreeing windows rejected. Prints the offset (where \
            AUDIO's first sample belongs relative to VIDEO's first frame: what merge's --offset \
            takes), the drift of AUDIO's clock in ppm, and a confidence score; writes nothing. \
            'avtool merge VIDEO AUDIO OUT --sync-by-audio' uses the same estimate. When the \
            recordings do not clearly match (silence, different scenes, too little overlap) it \
            says so and exits non-zero instead of guessing.
            """
    )

    @Argument(help: "The video recording, with its own audio track.", completion: .file()) var video: String
    @Argument(help: "The separate audio recording of the same scene.", completion: .file()) var audio: String

    @Flag(help: "Print the report as JSON (sorted snake_case keys) on stdout.")
    var json = false

    @Flag(name: .shortAndLong, help: "Print nothing on stderr except errors (no progress).")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Also print FFmpeg's own warnings on stderr.")
    var verbose = false

    func run() throws {
        (verbose ? LibraryLogLevel.warning : .quiet).apply()
        Signals.install()
        let line = ProgressLine(quiet: quiet)
        let report = try reportingFailures(json: json) { () throws(MediaError) in
            defer { line.finish() }
            return try estimateSync(video: video, audio: audio) { f in
                line.update(fraction: f, position: nil)
            }
        }
        Terminal.output(json ? jsonText(report) : report.text)
    }
}

extension AudioSyncReport {
    var text: String {
        func signed(_ v: Double, _ digits: Int) -> String { (v >= 0 ? "+" : "") + fixed(v, digits) }
        var s = "\(quoted(audio)) against \(quoted(video)):\n"
        s += "  offset \(signed(offsetMilliseconds, 3)) ms (AUDIO's first sample relative to VIDEO's first frame; merge --offset \(fixed(offsetMilliseconds, 3))ms)\n"
        s += "  drift \(signed(driftPPM, 2)) ppm ± \(fixed(driftErrorPPM, 2)) (AUDIO's clock runs \(driftPPM >= 0 ? "fast" : "slow"); "
        s += "\(fixed(abs(driftPPM) * overlapSeconds / 1000, 2)) ms over the \(fixed(overlapSeconds, 1)) s overlap)\n"
        s += "  confidence \(fixed(confidence, 2)): \(windowsAgreeing) of \(windows) windows agree within \(fixed(residualMilliseconds, 3)) ms RMS, median peak ratio \(fixed(medianPeakRatio, 1))\n"
        s += "  in \(fixed(elapsedSeconds, 2)) s"
        return s
    }
}

