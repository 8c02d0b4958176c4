import ArgumentParser
import Batch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Media

/// The batch's lines on stderr: one per finished job, and (on a terminal)
/// a status line with jobs done, running and the ETA.
final class BatchDisplay: Sendable {
    private let quiet: Bool
    private let live: Bool
    private let lastDraw = Locked<ContinuousClock.Instant?>(nil)

    /// `--progress json`: the batch's percent and each running job's, and a line per job started and finished.
    private let json: ProgressJSON?

    init(quiet: Bool, json: ProgressJSON? = nil) {
        self.quiet = quiet
        self.json = json
        live = !quiet && Terminal.stderrIsTerminal
    }

    var show: @Sendable (BatchEvent) -> Void { { [self] in handle($0) } }

    private func handle(_ event: BatchEvent) {
        if let json { report(event, json) }
        guard !quiet else { return }
        switch event {
        case .started:
            break
        case .progress(let done, let total, let running, let eta):
            guard live else { return }
            let now = ContinuousClock.now
            let draw = lastDraw.withLock { last -> Bool in
                if let l = last, now - l < .milliseconds(200) { return false }
                last = now
                return true
            }
            guard draw else { return }
            var line = "batch \(done)/\(total) done, \(running.count) running"
            if let first = running.first {
                line += ": " + Paths.display(first.job.output) + " \(Int(first.fraction * 100))%"
                if running.count > 1 { line += " +\(running.count - 1)" }
            }
            if let eta { line += ", ETA \(ProgressLine.clockText(eta))" }
            Terminal.status("\r\u{1B}[K" + line)
        case .finished(let r, let done, let total):
            if live { Terminal.status("\r\u{1B}[K") }
            var line = "[\(done)/\(total)] \(r.status.rawValue.padding(6)) \(r.job.title) (\(fixed(r.seconds, 2)) s)"
            if r.status != .done { line += ": \(r.detail)" }
            Terminal.error(line)
        }
    }

    func finish(ok: Bool) {
        if live { Terminal.status("\r\u{1B}[K") }
        json?.end(ok: ok)
    }

    private func report(_ event: BatchEvent, _ json: ProgressJSON) {
        switch event {
        case .started(let job, _):
            json.event(BatchJobLine(status: "started", output: job.output))
        case .progress(let done, let total, let running, _):
            let overall = total > 0 ? (Double(done) + running.reduce(0) { $0 + $1.fraction }) / Double(total) : 1
            let jobs = running.map { BatchProgress.Job(output: $0.job.output, percent: ProgressJSON.rounded($0.fraction * 100, 2)) }
            json.update(fraction: overall, position: nil, more: BatchProgress(done: done, total: total, jobs: jobs))
        case .finished(let r, let done, let total):
            json.event(BatchJobLine(status: r.status.rawValue, output: r.job.output,
                                    seconds: ProgressJSON.rounded(r.seconds, 3), detail: r.detail, done: done, total: total))
            json.update(fraction: total > 0 ? Double(done) / Double(total) : 1, position: nil,
                        more: BatchProgress(done: done, total: total, jobs: []))
        }
    }
}

private extension String {
    func padding(_ n: Int) -> String { count >= n ? self : self + String(repeating: " ", count: n - count) }
}
