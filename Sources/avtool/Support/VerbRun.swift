import Media

/// A report a writing verb returns: JSON for `--json`, warnings and a
/// one-line summary for people.
protocol VerbReport: Encodable {
    var warnings: [String] { get }
    var summary: String { get }
}

extension ReportingOptions {
    /// The life of a verb that writes a file: FFmpeg's log level, signal
    /// handling, a progress line on stderr, a failure as one line and an
    /// exit status, then the report. `output` brings the `--timeout` clock.
    func perform<R: VerbReport>(with output: OutputOptions? = nil, _ work: (ProgressLine) throws(MediaError) -> R) throws {
        applyLogLevel()
        Signals.install()
        output?.armTimeout()
        let line = ProgressLine(quiet: quiet)
        let report = try reportingFailures { () throws(MediaError) in
            defer { line.finish() }
            return try work(line)
        }
        if json {
            Terminal.output(jsonText(report))
        } else if !quiet {
            for w in report.warnings { Terminal.error("avtool: warning: \(w)") }
            Terminal.error(report.summary)
        }
    }
}
