import FoundationEssentials
import Threads
import Glibc

/// Runs one job's verb. The CLI supplies it, so a recipe's options are parsed,
/// checked and run by the same code as `avtool VERB …`.
public protocol JobRunner: Sendable {
    /// Checks the job's options the way the verb's command line does.
    func check(_ job: Job) throws(JobFailure)
    /// Runs the job; `progress` gets 0…1.
    /// - Returns: the verb's one-line summary.
    func run(_ job: Job, overwrite: Bool, progress: @escaping @Sendable (Double) -> Void) throws(JobFailure) -> String
    /// Verbs whose encoder already uses every core (transcode).
    func usesAllCores(_ verb: String) -> Bool
    /// True once the user asked to stop (a signal).
    var isCancelled: Bool { get }
    /// Removes the temporaries killed earlier runs left in `output`'s folder (never a live writer's).
    func removeStaleTemporaries(for output: String)
}

public struct JobFailure: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var interrupted: Bool
    /// The option the message is about (`--crf`), to point at its recipe line.
    public var option: String?
    /// The error's code (an AVERROR), kept in the ledger.
    public var code: Int32?
    /// The kind of failure, as the verbs' `--json` errors name it
    /// (`MediaError.Category`: `not-found`, `unsupported`, `invalid-option`…).
    public var category: String

    public init(message: String, interrupted: Bool = false, option: String? = nil, code: Int32? = nil,
                category: String) {
        self.message = message
        self.interrupted = interrupted
        self.option = option
        self.code = code
        self.category = category
    }

    public var description: String { message }
}

/// A job with what the ledger and the files say about it.
public struct PlannedJob: Sendable {
    public var job: Job
    public var decision: JobDecision
}

extension Array where Element == Job {
    /// Decides for each job (in this shard) whether to run it, from the ledger's
    /// record of its output (`Ledger.record`) and the files as they are now.
    public func planned(ledger entries: [LedgerEntry], force: Bool, shard: Shard?) -> [PlannedJob] {
        let byOutput = Dictionary(grouping: entries, by: \.output)
        return filter { shard?.contains($0) ?? true }.map { job in
            let output = FileSignature.of(job.firstOutput)
            return PlannedJob(job: job, decision: .decide(job: job, last: Ledger.record(byOutput[job.output] ?? [], output: output),
                                                          inputs: job.inputs.map(FileSignature.of),
                                                          output: output, force: force))
        }
    }
}

/// How one job ended.
public struct JobResult: Sendable {
    public enum Status: String, Sendable, Encodable { case done, failed, interrupted, skipped, notRun = "not_run" }
    public var job: Job
    public var status: Status
    public var seconds: Double
    /// The verb's summary, the error, or why it was skipped.
    public var detail: String
    /// A failed or interrupted job's kind of failure (`JobFailure.category`).
    public var category: String?
}

/// What the scheduler tells its observer: from worker threads, one call at a time.
public enum BatchEvent: Sendable {
    case started(Job, running: [Job])
    case progress(done: Int, total: Int, running: [(job: Job, fraction: Double)], eta: Double?)
    case finished(JobResult, done: Int, total: Int)
}

/// Runs planned jobs on a pool of threads. Each job holds some of the pool's
/// capacity while it runs: one unit for stream-copy verbs, the whole pool
/// for verbs whose encoder uses every core (unless `-j` was given), so a
/// transcode runs alone while copies run side by side.
public final class Scheduler: @unchecked Sendable {
    public struct Settings: Sendable {
        /// `-j N`; nil picks from the cores and the verbs.
        public var jobs: Int?
        public var failFast = false
        public var shard: Shard?
        public init(jobs: Int? = nil) { self.jobs = jobs }
    }

    /// Stream copy is I/O-bound: twice the cores, at least 2, at most 8.
    public static var defaultCopyParallelism: Int {
        min(8, max(2, 2 * ProcessInfo.processInfo.activeProcessorCount))
    }

    let runner: JobRunner
    let ledger: Ledger
    let settings: Settings
    private let observer: @Sendable (BatchEvent) -> Void
    private let observing = Condition()

    private let cond = Condition()
    private var running: [Int: (job: Job, fraction: Double)] = [:]
    private var results: [JobResult] = []
    private var stopping = false
    private let clock = ContinuousClock()

    public init(runner: JobRunner, ledger: Ledger, settings: Settings,
                observer: @escaping @Sendable (BatchEvent) -> Void) {
        self.runner = runner
        self.ledger = ledger
        self.settings = settings
        let observing = self.observing
        self.observer = { event in observing.withLock { observer(event) } }
    }

    /// Runs every job whose decision is `.run`; the rest are reported skipped.
    /// - Returns: one result per job, in the jobs' order.
    public func run(_ plan: [PlannedJob]) -> [JobResult] {
        let capacity = settings.jobs ?? Self.defaultCopyParallelism
        let pool = WorkerPool(capacity: capacity, stackSize: 8 << 20)
        let toRun = plan.enumerated().filter { $0.element.decision.runs }
        let total = toRun.count
        let start = clock.now

        for (index, planned) in toRun {
            let weight = settings.jobs == nil && runner.usesAllCores(planned.job.verb) ? capacity : 1
            let started = pool.start(weight: weight, unless: { [self] in runner.isCancelled || cond.withLock { stopping } }) { [self] in
                let now: [Job] = cond.withLock {
                    running[index] = (planned.job, 0)
                    return running.values.map(\.job)
                }
                observer(.started(planned.job, running: now))
                let result = execute(planned, index: index, total: total, start: start)
                cond.lock()
                running[index] = nil
                results.append(result)
                let stop = result.status == .interrupted || (settings.failFast && result.status == .failed)
                if stop { stopping = true }
                let done = results.count
                cond.unlock()
                if stop { pool.stop() }
                // Reported before the job's units return, so `run` ends after every report.
                observer(.finished(result, done: done, total: total))
            }
            guard started else { break }
        }
        // Wait for the jobs already started.
        pool.wait()
        var byOutput: [String: JobResult] = [:]
        for r in results { byOutput[r.job.output] = r }
        return plan.map { p in
            if let r = byOutput[p.job.output] { return r }
            if case .skip(let why) = p.decision { return JobResult(job: p.job, status: .skipped, seconds: 0, detail: why) }
            return JobResult(job: p.job, status: .notRun, seconds: 0,
                             detail: runner.isCancelled ? "not started: the batch was interrupted" : "not started: an earlier job failed (--fail-fast)")
        }
    }

    private func execute(_ planned: PlannedJob, index: Int, total: Int, start: ContinuousClock.Instant) -> JobResult {
        let job = planned.job
        let began = clock.now
        guard case .run(_, let overwrite) = planned.decision else {
            return JobResult(job: job, status: .skipped, seconds: 0, detail: "")
        }
        let inputs = job.inputs.map { FileSignature.of($0) ?? FileSignature(path: $0, size: -1, mtimeNs: 0) }
        runner.removeStaleTemporaries(for: job.firstOutput)
        var status: JobResult.Status
        var detail: String
        var code: Int32?
        var category: String?
        do {
            detail = try runner.run(job, overwrite: overwrite) { [self] fraction in
                report(index: index, fraction: fraction, total: total, start: start)
            }
            status = .done
        } catch {
            status = error.interrupted ? .interrupted : .failed
            detail = error.message
            code = error.code
            category = error.category
        }
        let seconds = (clock.now - began).seconds
        // The ledger says done only for an output that exists now.
        let output = status == .done ? FileSignature.of(job.firstOutput) : nil
        if status == .done, output == nil {
            status = .failed
            detail = "the verb finished but '\(Paths.display(job.firstOutput))' does not exist"
            category = "io-error"
        }
        let entryStatus: LedgerEntry.Status = switch status {
        case .done: .done
        case .interrupted: .interrupted
        default: .failed
        }
        do {
            try ledger.append(LedgerEntry(job: job, inputs: inputs, outputFile: output, status: entryStatus,
                                          seconds: seconds, error: status == .done ? nil : detail,
                                          errorCode: status == .done ? nil : code, errorCategory: status == .done ? nil : category,
                                          shard: settings.shard?.description))
        } catch {
            if status == .done { (status, category) = (.failed, "io-error") }
            detail += "; \(error)"
        }
        return JobResult(job: job, status: status, seconds: seconds, detail: detail, category: category)
    }

    private func report(index: Int, fraction: Double, total: Int, start: ContinuousClock.Instant) {
        cond.lock()
        running[index]?.fraction = min(max(fraction, 0), 1)
        let done = results.count
        let now = running.sorted { $0.key < $1.key }.map(\.value)
        cond.unlock()
        // Jobs done per second so far, counting the running ones' fractions.
        let progressed = Double(done) + now.reduce(0) { $0 + $1.fraction }
        let elapsed = (clock.now - start).seconds
        let eta = progressed > 0.05 && elapsed > 1 ? elapsed * (Double(total) - progressed) / progressed : nil
        observer(.progress(done: done, total: total, running: now, eta: eta))
    }
}

extension Duration {
    var seconds: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) / 1e18
    }
}
