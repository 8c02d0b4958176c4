import FileNames
import ArgumentParser
import Batch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Media

struct BatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Run a YAML recipe of jobs (\(Recipe.verbs.joined(separator: ", "))) in parallel, resumably.",
        discussion: """
            A recipe (version: 1) has per-verb defaults and a list of steps; each step names a verb, \
            its inputs by glob (merge: 'video' and 'audio' patterns paired by {name}), an output \
            template ({dir}, {stem}, {ext}, {name}) and options spelled as the verb's flags \
            (crf: 24, no-faststart: true). Relative paths are relative to the recipe's directory \
            (or --base). Everything is checked before any job runs: unknown keys and bad values \
            name the recipe line, missing inputs are listed, two jobs writing one output are \
            refused, and each job's options go through the verb's own command-line checks.

            Globs are the shell's (*, ?, [..], {a,b}; * stays in one folder); ** as a whole \
            part of the path matches any depth of folders (library/**/*.mov). A pattern that \
            matches far fewer files than lie below its folder with a name like its last part \
            gets a warning. An example recipe:

              version: 1
              defaults:
                transcode: {crf: 26, preset: fast}
              steps:
                - verb: transcode          # one job per file; {dir} {stem} {ext} {name}
                  inputs: library/**/*.mov
                  output: hevc/{dir}/{stem}.mp4
                - verb: cut
                  inputs: rec/*.mp4
                  output: clips/{stem}.mp4
                  options: {from: "0:10", to: "0:25", mode: exact}
                - verb: merge              # pairs rec/take1.mp4 with rec/take1.m4a
                  video: rec/{name}.mp4
                  audio: rec/{name}.m4a
                  output: merged/{name}.mp4

            A failed job's entry (ledger: error_category; --json: code) names its kind of \
            failure as the verbs' --json errors do: not-found, unsupported, invalid-option...

            A ledger (JSON Lines; .avtool-ledger.jsonl in the outputs' common directory, or \
            'ledger:' / --ledger) records every finished job. A job whose output exists and whose \
            ledger entry shows the same inputs (size and mtime), options and output is skipped; \
            --force redoes it. An output the ledger does not know is never replaced without --force. \
            A killed batch (even SIGKILL) run again finishes the rest: outputs appear only when \
            complete, and temporaries a killed run left are removed.

            Parallelism: stream-copy jobs run side by side (twice the cores, at most 8); a \
            transcode runs alone because x265 already uses every core. -j N runs N jobs of any verb.

            --shard K/N (0 <= K < N, as SLURM_ARRAY_TASK_ID) runs one of N disjoint parts of the \
            jobs and writes its own ledger beside the main one; --merge-ledgers folds them in. \
            A transcode with 'chunks: N' runs whole on one machine; sharded, its N chunks are \
            spread over the shards like files (in OUT.chunks, or 'chunk-dir:') and \
            --merge-ledgers joins them once every shard has ended.
            """
    )

    @Argument(help: "The recipe file (YAML).", completion: .file())
    var recipe: String

    @Option(name: [.customShort("j"), .long], help: "How many jobs run at once (default: by cores and verbs).")
    var jobs: Int?

    @Flag(help: "Print the expanded jobs and what would be skipped, and run nothing.")
    var dryRun = false

    @Flag(help: "Redo jobs that are up to date, and replace outputs the ledger does not know.")
    var force = false

    @Flag(help: "Stop starting jobs after the first failure.")
    var failFast = false

    @Option(help: "The ledger file (default: the recipe's 'ledger:', else .avtool-ledger.jsonl in the outputs' common directory).", completion: .file())
    var ledger: String?

    @Option(help: "Run only part K of N (0 <= K < N) of the jobs, e.g. 3/8.")
    var shard: String?

    @Option(help: "The directory relative paths in the recipe start from (default: the recipe's directory).", completion: .directory)
    var base: String?

    @Flag(help: "Fold the shards' ledgers into the main ledger, then exit.")
    var mergeLedgers = false

    @OptionGroup var reporting: ReportingOptions

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("'--jobs' must be at least 1") }
        if let shard, Shard(shard) == nil {
            throw ValidationError("'--shard' \(shard) is not K/N with 0 <= K < N (e.g. 0/4)")
        }
        if mergeLedgers && (dryRun || shard != nil) {
            throw ValidationError("'--merge-ledgers' cannot be used with '--dry-run' or '--shard'")
        }
    }

    func run() throws {
        reporting.applyLogLevel()
        let (whole, ledgerPath) = try prepare()
        let shard = self.shard.flatMap(Shard.init)
        // Sharded, a chunked transcode's chunks are spread like files; the
        // joins run once every shard has ended (--merge-ledgers).
        let jobs = shard != nil ? BatchChunks.distributed(whole) : whole

        if mergeLedgers {
            let l = try open(ledgerPath)
            do {
                let n = try l.mergeShards()
                if !reporting.quiet { Terminal.error("avtool: merged \(n) entries into \(quoted(Paths.display(ledgerPath)))") }
            } catch { throw fail(error.description, status: 1) }
            let joins = BatchChunks.joins(whole)
            if !joins.isEmpty { try execute(joins, ledgerPath: ledgerPath, shard: nil, ledger: l) }
            return
        }

        let writePath = shard.map { Ledger.shardPath(of: ledgerPath, shard: $0) } ?? ledgerPath
        try execute(jobs, ledgerPath: ledgerPath, shard: shard, ledger: nil, writePath: writePath)
    }

    /// Plans `jobs` against the ledger and runs them (or prints the plan),
    /// recording into `ledger` (else the one at `writePath`).
    private func execute(_ jobs: [Job], ledgerPath: String, shard: Shard?, ledger given: Ledger?,
                         writePath: String? = nil) throws {
        let entries: [LedgerEntry], bad: Int
        do { (entries, bad) = try Ledger.read(ledgerPath) } catch { throw fail(error.description, status: 1) }
        if bad > 0 && !reporting.quiet {
            Terminal.error("avtool: warning: \(bad) line(s) of the ledger \(quoted(Paths.display(ledgerPath))) are not entries; ignored")
        }
        let plan = jobs.planned(ledger: entries, force: force, shard: shard)
        if dryRun { return printPlan(plan) }
        if !reporting.quiet && !reporting.json {
            // Why each job is left alone, as --dry-run says it.
            for p in plan {
                if case .skip(let reason) = p.decision { Terminal.error("skip  \(p.job.title)  (\(reason))") }
            }
        }

        Signals.install()
        for dir in Set(plan.filter(\.decision.runs).map { Paths.directory(of: $0.job.output) }) {
            try makeDirectory(dir)
        }
        let writePath = writePath ?? ledgerPath
        try makeDirectory(Paths.directory(of: writePath))
        let ledger = try given ?? open(writePath)

        var settings = Scheduler.Settings(jobs: self.jobs)
        settings.failFast = failFast
        settings.shard = shard
        let display = BatchDisplay(quiet: reporting.quiet || reporting.json || reporting.progress != nil,
                                   json: reporting.progressJSON())
        let started = ContinuousClock.now
        let results = Scheduler(runner: VerbRunner(), ledger: ledger, settings: settings, observer: display.show).run(plan)
        display.finish(ok: !Cancellation.shared.isCancelled && !results.contains { $0.status == .failed })
        let summary = BatchSummary(results: results, seconds: (ContinuousClock.now - started).seconds,
                                   ledger: writePath, shard: shard?.description)
        if reporting.json {
            Terminal.output(jsonText(summary))
        } else if !reporting.quiet {
            Terminal.error(summary.text)
        }
        if Cancellation.shared.isCancelled {
            let sig = Cancellation.shared.reason
            Terminal.error("avtool: interrupted (\(Signals.name(sig))); finished jobs are kept, unfinished ones left no output")
            throw ExitCode(sig > 0 ? 128 + sig : 130)
        }
        if summary.failed > 0 { throw ExitCode.failure }
    }

    /// Reads, expands and checks the recipe; every problem found is printed
    /// (file:line: …) before the exit.
    private func prepare() throws -> ([Job], String) {
        guard let data = Paths.contents(of: recipe) else {
            throw fail("could not read the recipe \(quoted(recipe)): \(String(cString: strerror(errno)))", status: 2)
        }
        let (read, found) = Recipe.read(yaml: String(decoding: data, as: UTF8.self), file: recipe)
        guard let parsed = read else {
            for p in found { Terminal.error("avtool: error: \(p)") }
            throw ExitCode(2)
        }
        let root = base ?? Paths.directory(of: recipe)
        // Every mistake is listed at once, before any job runs: the steps'
        // and defaults' own, inputs that match nothing, and the options of
        // every step (of steps whose inputs match nothing too).
        var problems: [(line: Int, text: String)] = found.map { ($0.line ?? 0, "\($0)") }
        let jobs: [Job]
        do {
            jobs = try parsed.jobs(base: root)
        } catch {
            problems += error.problems.map { ($0.line ?? 0, $0.description) }
            jobs = error.jobs
        }
        let ledgerPath = ledger ?? parsed.ledger.map { Paths.join(root, $0) }
            ?? Paths.join(Self.commonDirectory(jobs.map { Paths.directory(of: $0.output) }), ".avtool-ledger.jsonl")
        try refuseOutputsOverBatchFiles(jobs, ledger: ledgerPath)
        let expanded = Set(jobs.map(\.step))
        let standIns = parsed.standIns(for: Set(parsed.steps.map(\.number)).subtracting(expanded), base: root)
        if !reporting.quiet {
            for w in parsed.sparsePatterns(base: root, outputs: (jobs + standIns).map(\.output)) {
                Terminal.error("avtool: warning: \(w)")
            }
        }
        // Each job's options through the verb's own parser and checks.
        var seen = Set<String>()
        let runner = VerbRunner()
        for job in jobs + standIns {
            do {
                try runner.check(job)
            } catch {
                // The verb's parser stops at its first problem: each option
                // alone too, so every wrong one is named.
                var alone = job
                for o in job.options {
                    alone.options = [o]
                    if o.name == "to" || o.name == "duration", let from = job.options.first(where: { $0.name == "from" }) {
                        alone.options.insert(from, at: 0)
                    }
                    do { try runner.check(alone) } catch { report(error, job) }
                }
                report(error, job)
            }
        }
        func report(_ error: JobFailure, _ job: Job) {
            let line = error.option.flatMap { name in job.options.first { $0.name == name }?.line } ?? job.line
            let text = "\(recipe):\(line): step \(job.step) (\(job.verb)): \(error.message)"
            if seen.insert(text).inserted { problems.append((line, text)) }
        }
        guard problems.isEmpty else {
            for p in problems.enumerated().sorted(by: { ($0.element.line, $0.offset) < ($1.element.line, $1.offset) }) {
                Terminal.error("avtool: error: \(p.element.text)")
            }
            throw ExitCode(2)
        }
        return (jobs, ledgerPath)
    }

    /// No job may write over the recipe, the ledger or a shard ledger, not even with --force.
    private func refuseOutputsOverBatchFiles(_ jobs: [Job], ledger: String) throws {
        let kept = [(recipe, "the recipe"), (ledger, "the ledger")]
        for job in jobs {
            for output in Set([job.output, job.firstOutput]) {
                let clash = kept.first { Paths.sameFile(output, $0.0) }?.1
                    ?? (Ledger.isShardLedger(output, of: ledger) ? "a shard ledger" : nil)
                guard let clash else { continue }
                throw fail("\(recipe):\(job.line): step \(job.step) (\(job.verb)): the output \(quoted(Paths.display(output))) is \(clash); choose another output", status: 2)
            }
        }
    }

    static func commonDirectory(_ dirs: [String]) -> String {
        guard var common = dirs.first?.split(separator: "/", omittingEmptySubsequences: false) else { return "." }
        for d in dirs.dropFirst() {
            let parts = d.split(separator: "/", omittingEmptySubsequences: false)
            var n = 0
            while n < common.count, n < parts.count, common[n] == parts[n] { n += 1 }
            common = Array(common[..<n])
        }
        let joined = common.joined(separator: "/")
        return joined.isEmpty ? (dirs.first?.hasPrefix("/") == true ? "/" : ".") : joined
    }

    private func open(_ path: String) throws -> Ledger {
        do { return try Ledger(path: path) } catch { throw fail(error.description, status: 1) }
    }

    private func makeDirectory(_ dir: String) throws {
        if let why = FileBytes.makeDirectories(dir) {
            throw fail("could not create the output directory \(quoted(Paths.display(dir))): \(why)", status: 1)
        }
    }

    private func fail(_ message: String, status: Int32) -> ExitCode {
        Terminal.error("avtool: error: \(message)")
        return ExitCode(status)
    }

    private func printPlan(_ plan: [PlannedJob]) {
        if reporting.json {
            Terminal.output(jsonText(plan.map(PlanLine.init)))
            return
        }
        for p in plan {
            switch p.decision {
            case .run(let reason, _): Terminal.output("run   \(p.job.title)  (\(reason))")
            case .skip(let reason): Terminal.output("skip  \(p.job.title)  (\(reason))")
            }
        }
        let n = plan.filter(\.decision.runs).count
        Terminal.output("\(plan.count) job(s): \(n) to run, \(plan.count - n) to skip")
    }
}

/// A job as `--dry-run --json` prints it.
private struct PlanLine: Encodable {
    var step: Int
    var verb: String
    var inputs: [String]
    var output: String
    var arguments: [String]
    var action: String
    var reason: String

    init(_ p: PlannedJob) {
        step = p.job.step
        verb = p.job.verb
        inputs = p.job.inputs
        output = p.job.output
        arguments = [p.job.verb] + p.job.arguments
        switch p.decision {
        case .run(let r, _): (action, reason) = ("run", r)
        case .skip(let r): (action, reason) = ("skip", r)
        }
    }
}

/// Runs a job by parsing `avtool VERB ARGUMENTS` with the CLI's own parser
/// (so its validation runs) and calling the verb's work in this process.
struct VerbRunner: JobRunner {
    private func command(_ job: Job, overwrite: Bool) throws(JobFailure) -> any WritingVerb {
        // A negative value is a value (`offset: -0.5s`), as on the command line.
        var options = ArgumentHabits.joiningNegativeValues(job.options.flatMap(\.arguments))
        if overwrite && !job.options.contains(where: { $0.name == "overwrite" }) { options.append("--overwrite") }
        // Options first, then `--`, so no file name is read as a flag.
        let argv = [job.verb] + options + ["--"] + job.files
        let parsed: ParsableCommand
        do {
            parsed = try Avtool.parseAsRoot(argv)
        } catch {
            let message = Avtool.message(for: error)
            // The option the message names first.
            let named = job.options.compactMap { (o: OptionSetting) -> (String, String.Index)? in
                message.firstRange(of: "'--\(o.name)'").map { (o.name, $0.lowerBound) }
            }
            let option = named.min { $0.1 < $1.1 }?.0 ?? job.options.first { message.contains("--\($0.name)") }?.name
            throw JobFailure(message: message, option: option, category: MediaError.Category.invalidOption.rawValue)
        }
        guard let verb = parsed as? any WritingVerb else {
            throw JobFailure(message: "\(quoted(job.verb)) cannot run in a batch", category: MediaError.Category.unsupported.rawValue)
        }
        return verb
    }

    func check(_ job: Job) throws(JobFailure) {
        _ = try command(job, overwrite: false)
    }

    func run(_ job: Job, overwrite: Bool, progress: @escaping @Sendable (Double) -> Void) throws(JobFailure) -> String {
        let verb = try command(job, overwrite: overwrite)
        do {
            let report = try Signals.wakeable { () throws(MediaError) in try verb.workChoosingOthersFiles(JobProgress(report: progress)) }
            return ([report.summary] + report.warnings.map { "warning: \($0)" }).joined(separator: "; ")
        } catch MediaError.interrupted {
            throw JobFailure(message: "interrupted", interrupted: true, code: MediaError.interrupted.code,
                             category: MediaError.interrupted.category.rawValue)
        } catch {
            throw JobFailure(message: error.commandLineText, code: error.code, category: error.category.rawValue)
        }
    }

    func usesAllCores(_ verb: String) -> Bool { verb == "transcode" }

    var isCancelled: Bool { Cancellation.shared.isCancelled }

    func removeStaleTemporaries(for output: String) {
        // Only those whose writer is gone: shards of one recipe may write into one folder at once.
        StagedOutput.sweepFolder(of: output)
    }
}

private struct JobProgress: ProgressSink {
    let report: @Sendable (Double) -> Void
    func update(fraction: Double?, position: Double?, detail: String) {
        if let fraction { report(fraction) }
    }
}

/// The end of a batch: counts, every job's outcome, and the failures.
struct BatchSummary: Encodable {
    struct Line: Encodable {
        var verb: String
        var inputs: [String]
        var output: String
        var status: JobResult.Status
        var seconds: Double
        var detail: String
        /// A failed job's kind of failure, as the verbs' `--json` errors name it (`unsupported`, `not-found`…).
        var code: String?
    }

    var done: Int
    var failed: Int
    var skipped: Int
    var notRun: Int
    var interrupted: Int
    var seconds: Double
    var ledger: String
    var shard: String?
    var jobs: [Line]

    init(results: [JobResult], seconds: Double, ledger: String, shard: String?) {
        func count(_ s: JobResult.Status) -> Int { results.filter { $0.status == s }.count }
        done = count(.done)
        failed = count(.failed)
        skipped = count(.skipped)
        notRun = count(.notRun)
        interrupted = count(.interrupted)
        self.seconds = seconds
        self.ledger = ledger
        self.shard = shard
        jobs = results.map { Line(verb: $0.job.verb, inputs: $0.job.inputs, output: $0.job.output,
                                  status: $0.status, seconds: $0.seconds, detail: $0.detail,
                                  code: $0.status == .failed || $0.status == .interrupted ? $0.category : nil) }
    }

    var text: String {
        var s = "batch: \(done) done, \(failed) failed, \(skipped) skipped"
        if interrupted > 0 { s += ", \(interrupted) interrupted" }
        if notRun > 0 { s += ", \(notRun) not started" }
        s += " in \(fixed(seconds, 2)) s; ledger \(quoted(Paths.display(ledger)))"
        for j in jobs where j.status == .failed {
            s += "\n  failed: \(j.verb) → \(Paths.display(j.output)): \(j.detail)" + (j.code.map { " (\($0))" } ?? "")
        }
        return s
    }
}
