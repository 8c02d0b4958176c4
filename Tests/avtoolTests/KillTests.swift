import Foundation
import Testing

/// SIGKILL (the OOM killer, a time limit's last word) at any moment of a
/// writing verb leaves the output folder as it was: outputs have no name
/// until they are complete (an unnamed file, `O_TMPFILE`), so nothing is
/// left to sweep; an output being replaced is intact until the new one
/// takes its name; a rerun writes what an uninterrupted run writes.
@Suite("kills")
struct KillTests {
    /// A writing job: its arguments, given the folder of its inputs (made
    /// once per test) and the folder its outputs go to.
    enum Job: String, CaseIterable, CustomTestStringConvertible {
        case transcode, merge, concat, fillSilence = "fill-silence", remux, bulkRemux = "remux-bulk"
        case cut, cutExact = "cut-exact", split, repair, batch, chunkTask = "chunk-task", chunked
        var testDescription: String { rawValue }

        /// Inputs the job reads besides the fixtures, made in `inputs`.
        func prepare(_ inputs: Scratch) throws {
            switch self {
            case .repair:
                let source = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
                _ = try RepairTests.unfinished(source, percent: 70, in: inputs)
            case .batch:
                let source = try Fixtures.path("clicks_video.mp4")
                for n in 1...3 { try FileManager.default.copyItem(atPath: source, toPath: inputs.path("clip\(n).mp4")) }
            default: break
            }
        }

        func arguments(_ inputs: Scratch, into out: String) throws -> [String] {
            let video = try Fixtures.path("clicks_video.mp4")
            switch self {
            case .transcode: return ["transcode", video, out + "/out.mov", "--preset", "ultrafast"]
            case .merge: return ["merge", video, try Fixtures.path("clicks_audio.m4a"), out + "/out.mov"]
            case .concat: return ["concat", try Fixtures.path("clicks_seg1.mp4"), try Fixtures.path("clicks_seg2.mp4"), out + "/out.mp4"]
            case .fillSilence: return ["fill-silence", try Fixtures.path("clicks_audio_gap.m4a"), out + "/out.m4a"]
            case .remux: return ["remux", video, out + "/out.mkv"]
            case .bulkRemux: return ["remux", video, out + "/out.mp4"]
            case .cut: return ["cut", video, out + "/out.mp4", "--from", "1.3", "--to", "7.7"]
            case .cutExact: return ["cut", video, out + "/out.mp4", "--from", "1.3", "--to", "7.7", "--mode", "exact"]
            case .split: return ["split", video, out + "/part-{n}.mp4", "--every", "3"]
            case .repair:
                return ["repair", inputs.path("unfinished.mp4"), out + "/out.mp4",
                        "--reference", try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")]
            case .batch:
                let recipe = inputs.path("recipe-\(UUID().uuidString).yaml")
                try """
                    version: 1
                    steps:
                      - verb: transcode
                        inputs: ["clip*.mp4"]
                        output: \(out)/{stem}.mov
                        options:
                          preset: ultrafast
                      - verb: remux
                        inputs: ["clip*.mp4"]
                        output: \(out)/{stem}.mkv
                    """.write(toFile: recipe, atomically: true, encoding: .utf8)
                return ["batch", recipe, "--base", inputs.url.path]
            case .chunkTask:
                return ["transcode", video, "--chunk", "1/2", "--chunk-dir", out + "/chunks", "--preset", "ultrafast"]
            case .chunked: return ["transcode", video, out + "/out.mov", "--chunks", "2", "--preset", "ultrafast"]
            }
        }

        /// What a rerun adds to replace outputs that exist.
        var overwrite: [String] { self == .batch || self == .chunkTask ? [] : ["--overwrite"] }
    }

    /// When the kill comes: after a delay, or where the run stops itself
    /// (`AVTOOL_STOP_AT`): before an output's index is written, before an
    /// output takes its name.
    enum Moment: String, CaseIterable, CustomTestStringConvertible {
        case start, middle, index, commit
        var testDescription: String { rawValue }
    }

    /// Every file under `dir`, hidden ones included, as paths relative to it.
    static func listing(_ dir: String) -> Set<String> {
        let names = (try? FileManager.default.subpathsOfDirectory(atPath: dir)) ?? []
        return Set(names)
    }

    /// A process's state letter from /proc (`T` when stopped), nil once it is gone.
    static func state(_ pid: Int32) -> Character? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(close, offsetBy: 2)...].first
    }

    /// The outputs of an uninterrupted run of each job (name → bytes).
    nonisolated(unsafe) static var references: [Job: [String: Data]] = [:]
    static let referenceLock = NSLock()

    static func outputs(_ dir: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in listing(dir) where !name.hasPrefix(".") && !name.contains("/.") {
            let path = dir + "/" + name
            if !FileManager.default.isDirectory(path) && !name.hasSuffix(".json") {
                result[name] = try Data(contentsOf: URL(fileURLWithPath: path))
            }
        }
        return result
    }

    static func reference(_ job: Job, _ inputs: Scratch) throws -> [String: Data] {
        referenceLock.lock()
        defer { referenceLock.unlock() }
        if let known = references[job] { return known }
        let out = try Scratch()
        let run = try Tool.avtool(try job.arguments(inputs, into: out.url.path))
        try #require(run.status == 0, "\(run)")
        let made = try outputs(out.url.path)
        references[job] = made
        return made
    }

    /// What a kill may leave: whole outputs finished before it (a batch's
    /// finished jobs and its ledger, a chunk task's manifest and complete
    /// chunks), never a temporary or a part of a file.
    static func expectOnlyWholeFiles(_ new: Set<String>, in dir: String, _ context: String) throws {
        for name in new {
            let path = dir + "/" + name
            let base = (name as NSString).lastPathComponent
            if FileManager.default.isDirectory(path) { continue }
            if base == ".avtool-ledger.jsonl" { continue }
            #expect(!base.hasPrefix("."), "\(context) left \(name)")
            if base.hasSuffix(".json") {
                let data = try Data(contentsOf: URL(fileURLWithPath: path))
                #expect((try? JSONSerialization.jsonObject(with: data)) != nil, "\(context): \(name) is a part of a record")
            } else if base.hasSuffix(".packets") {
                // A chunk is named only with its record, which gives its size.
                let record = path.replacingOccurrences(of: ".packets", with: ".json")
                let data = try Data(contentsOf: URL(fileURLWithPath: record))
                let bytes = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["bytes"] as? Int
                let st = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
                #expect(bytes != nil && bytes == st, "\(context): \(name) is not a whole chunk")
            } else if !base.hasPrefix(".") {
                let check = try Tool.run("ffprobe", ["-v", "error", path])
                #expect(check.status == 0, "\(context): \(name) is not a whole file: \(check)")
            }
        }
    }

    /// `named`: with `AVTOOL_NAMED_TEMPORARIES=1`, where the kill leaves a
    /// named temporary that the rerun must sweep, and say so.
    static func killAndRerun(_ job: Job, at moment: Moment, under base: URL? = nil, named: Bool = false) throws {
        let inputs = try Scratch()
        try job.prepare(inputs)
        let scratch = try Scratch(under: base)
        let out = scratch.url.path
        let arguments = try job.arguments(inputs, into: out)
        let expected = try reference(job, inputs)
        let before = listing(out)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Tool.avtool)
        p.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        switch moment {
        case .index, .commit: environment["AVTOOL_STOP_AT"] = moment.rawValue
        default: break
        }
        if named { environment["AVTOOL_NAMED_TEMPORARIES"] = "1" }
        p.environment = environment
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        switch moment {
        case .start: Thread.sleep(forTimeInterval: 0.05)
        case .middle: Thread.sleep(forTimeInterval: 0.4)
        case .index, .commit:
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline, let s = state(p.processIdentifier), s != "T", p.isRunning { usleep(2000) }
        }
        let stopped = state(p.processIdentifier) == "T"
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        let context = "\(job.rawValue) killed at \(moment.rawValue)"
        if moment == .index || moment == .commit {
            // Every job commits a file; a chunk task writes no index.
            #expect(stopped || (moment == .index && job == .chunkTask), "\(context): the run never got there")
        }
        if p.terminationReason == .uncaughtSignal {
            let new = listing(out).subtracting(before)
            // Only a batch (its finished jobs, its ledger) and a chunk task (its manifest, whole
            // chunks) keep what they finished: every other verb's outputs, split's parts among them,
            // take their names together at the end.
            if job != .batch && job != .chunkTask && !named { #expect(new.isEmpty, "\(context) left \(new)") }
            try expectOnlyWholeFiles(named ? new.filter { !($0 as NSString).lastPathComponent.hasPrefix(".") || $0.hasSuffix(".jsonl") } : new,
                                     in: out, context)
        }
        // A rerun succeeds, leaves nothing hidden, and writes what an uninterrupted run writes.
        if named {
            let left = listing(out).subtracting(before).filter { ($0 as NSString).lastPathComponent.hasPrefix(".") }
            #expect(!left.subtracting([".avtool-ledger.jsonl"]).isEmpty, "\(context): the kill left no named temporary")
            Thread.sleep(forTimeInterval: 1.1)  // the sweep's margin for a writer that has not locked yet
        }
        let again = try Tool.run(Tool.avtool, arguments + job.overwrite, environment: environment.filter { $0.key != "AVTOOL_STOP_AT" })
        #expect(again.status == 0, "\(context): \(again)")
        #expect(again.stderr.contains("that killed runs left in") == named, "\(context): \(again.stderr)")
        let hidden = listing(out).filter { ($0 as NSString).lastPathComponent.hasPrefix(".") }
        #expect(hidden.subtracting([".avtool-ledger.jsonl"]).isEmpty, "\(context): \(hidden)")
        let made = try outputs(out)
        #expect(Set(made.keys) == Set(expected.keys), "\(context)")
        for (name, data) in made where expected[name] != data {
            // Matroska files carry random UIDs: there the packets are compared.
            if name.hasSuffix(".mkv"), let other = expected[name] {
                let scratch = try Scratch()
                try other.write(to: scratch.url.appendingPathComponent("expected.mkv"))
                if try packetHashes(out + "/" + name) == packetHashes(scratch.path("expected.mkv")) { continue }
            }
            Issue.record("\(context): the rerun's \(name) differs from an uninterrupted run's")
        }
    }

    /// Every packet's hash, size and timing (ffmpeg's framemd5 of a copy).
    static func packetHashes(_ path: String) throws -> String {
        let r = try Tool.run("ffmpeg", ["-v", "error", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"])
        try #require(r.status == 0, "\(r)")
        return r.stdout
    }

    @Test(arguments: Job.allCases, Moment.allCases)
    func aKillLeavesNothingBehind(job: Job, at moment: Moment) throws {
        try Self.killAndRerun(job, at: moment)
    }

    /// The same on a tmpfs (`/dev/shm`), whose unnamed files work otherwise.
    @Test(arguments: Job.allCases, [Moment.index, .commit])
    func onATmpfs(job: Job, at moment: Moment) throws {
        let mounts = (try? String(contentsOfFile: "/proc/mounts", encoding: .utf8)) ?? ""
        let tmpfs = mounts.split(separator: "\n").contains { $0.split(separator: " ").dropFirst().prefix(2) == ["/dev/shm", "tmpfs"] }
        guard tmpfs, access("/dev/shm", W_OK) == 0 else {
            try Test.cancel("no writable tmpfs at /dev/shm")
        }
        try Self.killAndRerun(job, at: moment, under: URL(fileURLWithPath: "/dev/shm"))
    }

    /// Without unnamed files, the named temporaries (a chunked transcode's
    /// working directory among them) a kill leaves are swept by the rerun.
    @Test(arguments: [Job.transcode, .split, .batch, .chunkTask, .chunked])
    func namedTemporariesAreSweptByTheRerun(job: Job) throws {
        try Self.killAndRerun(job, at: .commit, named: true)
    }

    /// A merge blocked on its AUDIO: a FIFO fed two thirds of a stream and
    /// kept open, so the run is mid-way, its output staged, for as long as
    /// the test needs. Returns the process and the FIFO's writer.
    static func blockedMerge(_ scratch: Scratch, output: String, fifo: String, extra: [String] = [],
                             environment: [String: String]? = nil) throws -> (Process, FileHandle) {
        try #require(mkfifo(scratch.path(fifo), 0o600) == 0)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Tool.avtool)
        p.arguments = ["merge", try Fixtures.path("clicks_video.mp4"), scratch.path(fifo), scratch.path(output)] + extra
        if let environment { p.environment = environment }
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        let feed = try Data(contentsOf: URL(fileURLWithPath: try Fixtures.path("h264_aac.ts")))
        let writer = try #require(FileHandle(forWritingAtPath: scratch.path(fifo)))
        writer.write(feed.prefix(feed.count * 2 / 3))
        Thread.sleep(forTimeInterval: 1.0)
        return (p, writer)
    }

    static func stop(_ p: Process, _ writer: FileHandle) {
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        try? writer.close()
    }

    /// An output being replaced (`--overwrite`) stays as it was when the
    /// run is killed before the new one is complete.
    @Test func aKilledReplacementLeavesTheOldOutputIntact() throws {
        let scratch = try Scratch()
        let old = Data("an older output".utf8)
        try old.write(to: URL(fileURLWithPath: scratch.path("out.mkv")))
        let (p, writer) = try Self.blockedMerge(scratch, output: "out.mkv", fifo: "audio.ts", extra: ["--overwrite"])
        #expect(p.isRunning, "the merge did not wait for its audio: the kill tests nothing")
        Self.stop(p, writer)
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.path("out.mkv"))) == old)
        #expect(Self.listing(scratch.url.path) == ["out.mkv", "audio.ts"])
    }

    /// Where unnamed files are not used (`AVTOOL_NAMED_TEMPORARIES=1`, as on
    /// filesystems without them), a killed run's hidden temporary is removed
    /// by the next run into that folder, which says so; a live writer's is not.
    @Test func theNextRunSweepsAKilledRunsTemporaryButNotALiveOnes() throws {
        let scratch = try Scratch()
        var environment = ProcessInfo.processInfo.environment
        environment["AVTOOL_NAMED_TEMPORARIES"] = "1"
        let (live, w2) = try Self.blockedMerge(scratch, output: "live.mkv", fifo: "a2.ts", environment: environment)
        defer { Self.stop(live, w2) }
        let (killed, w1) = try Self.blockedMerge(scratch, output: "killed.mkv", fifo: "a1.ts", environment: environment)
        Self.stop(killed, w1)
        let left = Self.listing(scratch.url.path).filter { $0.hasPrefix(".killed.mkv.avtool-") }
        try #require(left.count == 1, "the named temporary a kill leaves: \(Self.listing(scratch.url.path))")
        let alive = Self.listing(scratch.url.path).filter { $0.hasPrefix(".live.mkv.avtool-") }
        try #require(alive.count == 1 && live.isRunning, "\(Self.listing(scratch.url.path))")
        // A temporary younger than a second may be one whose writer has not locked it yet: not swept.
        Thread.sleep(forTimeInterval: 1.1)
        let run = try Tool.run(Tool.avtool, ["remux", try Fixtures.path("clicks_video.mp4"), scratch.path("next.mkv")],
                               environment: environment)
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.contains("removed 1 temporary that killed runs left in"), "\(run.stderr)")
        #expect(run.stderr.contains(left.first!), "\(run.stderr)")
        let now = Self.listing(scratch.url.path)
        #expect(!now.contains(left.first!), "\(now)")
        #expect(now.contains(alive.first!), "a live writer's temporary was removed: \(now)")
    }
}
