import FileNames
import ArgumentParser
import Glibc
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
    func perform(with output: OutputOptions? = nil, _ work: (ProgressLine) throws(MediaError) -> any VerbReport) throws {
        applyLogLevel()
        Signals.install()
        output?.armTimeout()
        let line = ProgressLine(quiet: quiet, json: progressJSON())
        let report: any VerbReport
        do {
            report = try reportingFailures(json: json) { () throws(MediaError) in
                defer { line.finish() }
                return try work(line)
            }
        } catch {
            line.json?.end(ok: false)
            throw error
        }
        line.json?.end(ok: true)
        if json {
            Terminal.output(jsonText(report))
        } else if !quiet {
            for w in report.warnings { Terminal.error("avtool: warning: \(w)") }
            Terminal.error(report.summary)
        }
    }
}

/// Where a verb reports how far it is: the terminal's progress line, or a
/// batch job's share of the batch's progress.
protocol ProgressSink {
    /// - Parameters:
    ///   - fraction: 0…1 if known.
    ///   - position: media seconds done.
    ///   - detail: a few words more (frames encoded).
    func update(fraction: Double?, position: Double?, detail: String)
    /// The work entered a phase of its own (`quality-search`, then `encode`):
    /// `--progress json` lines carry it as `phase` from then on.
    func begin(phase: String)
}

extension ProgressSink {
    func begin(phase: String) {}
}

extension ProgressLine: ProgressSink {
    func begin(phase: String) { json?.update(fraction: nil, position: nil, more: ["phase": phase]) }
}

/// A verb that writes one output file. Its work is separate from its
/// printing so that `avtool batch` runs the same parsed, validated command.
protocol WritingVerb: ParsableCommand {
    var reporting: ReportingOptions { get }
    var outputOptions: OutputOptions { get set }
    func work(_ progress: any ProgressSink) throws(MediaError) -> any VerbReport
}

extension WritingVerb {
    /// On a terminal, an output that exists is replaced if the user says so
    /// (`y` to the question); elsewhere (a pipe, a script, `--json`) it is
    /// refused unless `--overwrite`, as the error says.
    func run() throws {
        var verb = self
        let ask = !outputOptions.overwrite && !reporting.json && isatty(0) == 1 && isatty(2) == 1
        try reporting.perform(with: outputOptions) { line throws(MediaError) in
            do throws(MediaError) {
                return try verb.workChoosingOthersFiles(line)
            } catch {
                guard ask, error.remedy == .overwrite, let path = error.path, Self.confirmReplacing(path) else { throw error }
                verb.outputOptions.overwrite = true
                return try verb.workChoosingOthersFiles(line)
            }
        }
    }

    /// `work` with `--replace-others-files`'s choice in force (`OthersFiles.current`) for the outputs it writes.
    func workChoosingOthersFiles(_ progress: any ProgressSink) throws(MediaError) -> any VerbReport {
        let result = OthersFiles.$current.withValue(outputOptions.othersFiles) {
            Result { () throws(MediaError) -> any VerbReport in try work(progress) }
        }
        return try result.get()
    }

    /// Asks on the terminal whether to replace `path`; yes only for y or yes.
    static func confirmReplacing(_ path: String) -> Bool {
        Terminal.status("avtool: \(quoted(path)) exists; replace it? [y/N] ")
        guard let answer = readLine() else {
            Terminal.status("\n")
            return false
        }
        return ["y", "yes"].contains(answer.split(separator: " ").joined().lowercased())
    }
}
