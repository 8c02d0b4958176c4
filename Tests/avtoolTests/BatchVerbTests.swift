import Foundation
import Testing

/// `avtool batch` end to end: the example recipes on generated samples, each
/// output checked against the same verb run on its own; skipping, forcing,
/// failures, kills and shards checked through the ledger and the files.
@Suite("batch", .serialized)
struct BatchVerbTests {
    /// The sample tree of `recipes/make-samples.sh` in a scratch directory.
    func samples() throws -> Scratch {
        let s = try Scratch()
        try Fixtures.batchSamples(in: s)
        return s
    }

    func recipe(_ name: String) -> String { Tool.repo.appendingPathComponent("recipes/\(name)").path }

    struct Summary: Decodable {
        struct Line: Decodable {
            var verb: String
            var inputs: [String]
            var output: String
            var status: String
            var detail: String
        }
        var done: Int
        var failed: Int
        var skipped: Int
        var notRun: Int
        var interrupted: Int
        var jobs: [Line]
    }

    func summary(_ r: Run) throws -> Summary {
        let d = JSONDecoder()
        d.keyDecodingStrategy = .convertFromSnakeCase
        return try d.decode(Summary.self, from: r.data)
    }

    /// Ledger lines as dictionaries; fails the test on a line that is not JSON.
    func ledger(_ path: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.isEmpty || text.hasSuffix("\n"))
        return try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "bad line: \(line)")
        }
    }

    /// Every file under `dir`, relative.
    func files(_ dir: String) -> [String] {
        (FileManager.default.enumerator(atPath: dir)?.allObjects as? [String] ?? [])
            .filter { !FileManager.default.isDirectory(dir + "/" + $0) }.sorted()
    }

    @Test(arguments: [("ios-recordings.yaml", 5, "out/.avtool-ledger.jsonl"),
                      ("remux-to-mp4.yaml", 3, "out/mp4/.avtool-ledger.jsonl")])
    func exampleRecipeMatchesTheVerbsRunAlone(name: String, jobs: Int, ledgerPath: String) throws {
        let s = try samples()
        let r = try Tool.avtool(["batch", recipe(name), "--base", s.url.path, "--json"])
        #expect(r.status == 0, "\(r)")
        let sum = try summary(r)
        #expect(sum.done == jobs && sum.failed == 0, "\(r)")
        // Each output equals what the verb writes on its own, packet for packet.
        let entries = try ledger(s.path(ledgerPath))
        #expect(entries.count == jobs)
        for e in entries {
            let verb = try #require(e["verb"] as? String)
            var args = try #require(e["arguments"] as? [String])
            let output = try #require(e["output"] as? String)
            let alone = s.path("alone-" + URL(fileURLWithPath: output).lastPathComponent)
            args[args.firstIndex(of: output)!] = alone
            let direct = try Tool.avtool([verb] + args + ["-q"])
            #expect(direct.status == 0, "\(direct)")
            let a = try PacketList(output), b = try PacketList(alone)
            #expect(!a.packets.isEmpty)
            #expect(a.payloads == b.payloads, "\(output)")
            #expect(a.packets.map(\.pts) == b.packets.map(\.pts), "\(output)")
        }
        // Run again: everything up to date, nothing appended.
        let again = try Tool.avtool(["batch", recipe(name), "--base", s.url.path, "--json"])
        #expect(again.status == 0, "\(again)")
        #expect(try summary(again).skipped == jobs, "\(again)")
        #expect(try ledger(s.path(ledgerPath)).count == jobs)
        // --force redoes them all.
        let forced = try Tool.avtool(["batch", recipe(name), "--base", s.url.path, "--json", "--force"])
        #expect(try summary(forced).done == jobs, "\(forced)")
        #expect(try ledger(s.path(ledgerPath)).count == 2 * jobs)
    }

    @Test func hevcArchiveRecipeWritesHEVCInMOV() throws {
        let s = try samples()
        let r = try Tool.avtool(["batch", recipe("hevc-archive.yaml"), "--base", s.url.path])
        #expect(r.status == 0, "\(r)")
        for (input, output) in [("archive/2019/birthday.mp4", "out/hevc/archive/2019/birthday.mov"),
                                ("archive/2020/portrait.mp4", "out/hevc/archive/2020/portrait.mov")] {
            let p = try FFprobe(s.path(output), countPackets: true)
            let i = try FFprobe(s.path(input), countPackets: true)
            #expect(p.format["format_name"] as? String == "mov,mp4,m4a,3gp,3g2,mj2")
            let v = try #require(p.streams.first { $0["codec_type"] as? String == "video" })
            let iv = try #require(i.streams.first { $0["codec_type"] as? String == "video" })
            #expect(v["codec_name"] as? String == "hevc")
            #expect(v["codec_tag_string"] as? String == "hvc1")
            #expect(FFprobe.int(v, "nb_read_packets") == FFprobe.int(iv, "nb_read_packets"))
            // Audio copied, packet for packet.
            #expect(try PacketList(s.path(output)).payloads[1] == PacketList(s.path(input)).payloads[1])
        }
        #expect(r.stderr.contains("[2/2] done"), "\(r)")
    }

    @Test func dryRunListsJobsAndWritesNothing() throws {
        let s = try samples()
        let r = try Tool.avtool(["batch", recipe("ios-recordings.yaml"), "--base", s.url.path, "--dry-run"])
        #expect(r.status == 0, "\(r)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("run   merge ") }.count == 3, "\(r)")
        #expect(lines.filter { $0.hasPrefix("run   fill-silence ") }.count == 2, "\(r)")
        #expect(r.stdout.contains("take2.mp4 + \(s.path("rec/take2.m4a")) → \(s.path("out/merged/take2.mp4"))"), "\(r)")
        #expect(lines.last == "5 job(s): 5 to run, 0 to skip")
        #expect(!fileExists(s.path("out")))
        // After a run, the dry run says why each job would be skipped or run.
        _ = try Tool.avtool(["batch", recipe("ios-recordings.yaml"), "--base", s.url.path, "-q"])
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -60)],
                                              ofItemAtPath: s.path("rec/take1.m4a"))
        let j = try Tool.avtool(["batch", recipe("ios-recordings.yaml"), "--base", s.url.path, "--dry-run", "--json"])
        let plan = try #require(try JSONSerialization.jsonObject(with: j.data) as? [[String: Any]])
        let byOutput = Dictionary(uniqueKeysWithValues: plan.map { ($0["output"] as! String, $0) })
        #expect(byOutput[s.path("out/merged/take1.mp4")]?["reason"] as? String == "inputs changed")
        #expect(byOutput[s.path("out/merged/take2.mp4")]?["reason"] as? String == "up to date")
        #expect(byOutput[s.path("out/merged/take2.mp4")]?["action"] as? String == "skip")
    }

    @Test func aFailingJobDoesNotStopTheOthers() throws {
        let s = try samples()
        try FileManager.default.copyItem(atPath: try Fixtures.path("random.mp4"), toPath: s.path("mixed/broken.mkv"))
        let r = try Tool.avtool(["batch", recipe("remux-to-mp4.yaml"), "--base", s.url.path])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("batch: 3 done, 1 failed"), "\(r)")
        #expect(r.stderr.contains("failed: remux → out/mp4/broken.mp4") || r.stderr.contains("broken.mp4:"), "\(r)")
        #expect(r.stderr.contains("broken.mkv"), "\(r)")
        #expect(!fileExists(s.path("out/mp4/broken.mp4")))
        let entries = try ledger(s.path("out/mp4/.avtool-ledger.jsonl"))
        let failed = entries.filter { $0["status"] as? String == "failed" }
        #expect(failed.count == 1)
        #expect((failed.first?["error"] as? String)?.contains("broken.mkv") == true)
        // Run again: the failed job is tried again, the good ones are not.
        let again = try Tool.avtool(["batch", recipe("remux-to-mp4.yaml"), "--base", s.url.path, "--json"])
        let sum = try summary(again)
        #expect(again.status == 1 && sum.failed == 1 && sum.skipped == 3, "\(again)")
        // With --fail-fast and one job at a time, nothing starts after the failure
        // (broken.mkv sorts first).
        let fast = try Tool.avtool(["batch", recipe("remux-to-mp4.yaml"), "--base", s.url.path, "--json",
                                    "--fail-fast", "-j", "1", "--force"])
        let f = try summary(fast)
        #expect(fast.status == 1 && f.failed == 1 && f.notRun == 3 && f.done == 0, "\(fast)")
    }

    /// `**` takes every depth of folders (as bash's globstar), and a pattern
    /// that reaches few of the files below it is warned about; `batch
    /// --help` shows a recipe. Real recordings (a voice memo) in a library tree.
    @Test func globStarRecursesAndSparsePatternsAreWarned() throws {
        let s = try Scratch()
        let memo = try Fixtures.wild("ios_voicememos_2021.m4a")
        let places = ["library/m01.m4a", "library/a/m02.m4a"] + (3...13).map { String(format: "library/a/b/m%02d.m4a", $0) }
        for p in places {
            try FileManager.default.createDirectory(atPath: s.path((p as NSString).deletingLastPathComponent),
                                                    withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: memo, toPath: s.path(p))
        }
        func plan(_ pattern: String, output: String = "out/{stem}.mka") throws -> (jobs: Int, run: Run) {
            try "version: 1\nsteps:\n  - verb: remux\n    inputs: \(pattern)\n    output: \(output)\n"
                .write(toFile: s.path("r.yaml"), atomically: true, encoding: .utf8)
            let r = try Tool.avtool(["batch", s.path("r.yaml"), "--dry-run", "--json"])
            #expect(r.status == 0, "\(r)")
            return ((try JSONSerialization.jsonObject(with: r.data) as? [Any])?.count ?? -1, r)
        }
        let star = try plan("library/**/*")
        #expect(star.jobs == 13, "\(star.run)")
        #expect(!star.run.stderr.contains("warning"), "\(star.run)")
        let one = try plan("library/*")
        #expect(one.jobs == 1)
        #expect(one.run.stderr.contains("r.yaml:4:") && one.run.stderr.contains("matches 1 file(s), but 13 files")
                    && one.run.stderr.contains("'library/**/*'"), "\(one.run)")
        // A previous run's outputs in a folder below the inputs are not inputs left out.
        try FileManager.default.createDirectory(atPath: s.path("flat/done"), withIntermediateDirectories: true)
        for n in 1...3 {
            try FileManager.default.copyItem(atPath: memo, toPath: s.path("flat/m\(n).m4a"))
            try FileManager.default.copyItem(atPath: memo, toPath: s.path("flat/done/m\(n).m4a"))
        }
        let rerun = try plan("flat/*", output: "flat/done/{stem}.m4a")
        #expect(rerun.jobs == 3 && !rerun.run.stderr.contains("warning"), "\(rerun.run)")
        let help = try Tool.avtool("batch", "--help")
        #expect(help.stdout.contains("version: 1") && help.stdout.contains("inputs: library/**/*.mov"), "\(help.stdout)")
    }

    /// Option ranges are checked with the recipe, before any job: a
    /// tolerance past 10 s and an AAC bit rate below the least, in steps of
    /// their own, both named (their verbs refused them only when running).
    @Test func optionRangesAreCheckedBeforeAnyJob() throws {
        let s = try Scratch()
        try FileManager.default.createDirectory(atPath: s.path("in"), withIntermediateDirectories: true)
        for n in 1...2 {
            try FileManager.default.copyItem(atPath: try Fixtures.wild("ipad2_ios5_h264_rot180.mov"), toPath: s.path("in/take\(n).mov"))
        }
        try """
            version: 1
            steps:
              - verb: concat
                inputs: in/*.mov
                output: out/all.mov
                options: {tolerance: 20s}
              - verb: fill-silence
                inputs: in/*.mov
                output: out/{stem}-filled.mov
                options: {audio-bitrate: 1k}
            """.write(toFile: s.path("r.yaml"), atomically: true, encoding: .utf8)
        let r = try Tool.avtool(["batch", s.path("r.yaml"), "--dry-run"])
        #expect(r.status == 2, "\(r)")
        #expect(r.stderr.contains("r.yaml:6: step 1 (concat): '--tolerance' must be between 0 and 10 seconds"), "\(r)")
        #expect(r.stderr.contains("r.yaml:10: step 2 (fill-silence): '--audio-bitrate' must be at least"), "\(r)")
    }

    /// A failed job carries its kind of failure (the verb's own `--json`
    /// error code) in the batch's `--json` summary and in the ledger.
    @Test func failedJobsCarryTheirCode() throws {
        let s = try Scratch()
        try FileManager.default.createDirectory(atPath: s.path("in"), withIntermediateDirectories: true)
        // A real recording cut off before its index (a camera that lost power).
        let whole = try Data(contentsOf: URL(fileURLWithPath: try Fixtures.wild("ipad2_ios5_h264_rot180.mov")))
        try whole.prefix(3000).write(to: URL(fileURLWithPath: s.path("in/cut-off.mov")))
        let alone = try Tool.avtool("remux", s.path("in/cut-off.mov"), s.path("alone.mp4"), "--json")
        let error = try #require(try JSONSerialization.jsonObject(with: alone.data) as? [String: Any])["error"] as? [String: Any]
        let code = try #require(error?["code"] as? String, "\(alone)")
        try "version: 1\nsteps:\n  - verb: remux\n    inputs: in/*.mov\n    output: out/{stem}.mp4\n"
            .write(toFile: s.path("r.yaml"), atomically: true, encoding: .utf8)
        let r = try Tool.avtool(["batch", s.path("r.yaml"), "--json"])
        #expect(r.status == 1, "\(r)")
        let jobs = try #require(try JSONSerialization.jsonObject(with: r.data) as? [String: Any])["jobs"] as? [[String: Any]]
        #expect(jobs?.first?["code"] as? String == code, "\(r)")
        let entry = try #require(try ledger(s.path("out/.avtool-ledger.jsonl")).first)
        #expect(entry["error_category"] as? String == code, "\(entry)")
    }

    @Test func optionErrorsNameTheRecipeLineAndNothingRuns() throws {
        let s = try samples()
        let text = """
            version: 1
            defaults:
              transcode:
                preset: fast
                crf: 99
            steps:
              - verb: remux
                inputs: mixed/*.mkv
                output: out/{stem}.mp4
                options:
                  no-subtitles: true
                  start: sideways
            """
        try text.write(toFile: s.path("r.yaml"), atomically: true, encoding: .utf8)
        let r = try Tool.avtool(["batch", s.path("r.yaml")])
        #expect(r.status == 2, "\(r)")
        #expect(r.stderr.contains("r.yaml:12: step 1 (remux): "), "\(r)")
        #expect(r.stderr.contains("sideways"), "\(r)")
        #expect(!fileExists(s.path("out")))
        let t2 = text.replacingOccurrences(of: "verb: remux", with: "verb: transcode")
            .replacingOccurrences(of: "      start: sideways\n", with: "").replacingOccurrences(of: "start: sideways", with: "")
        try t2.write(toFile: s.path("r.yaml"), atomically: true, encoding: .utf8)
        let r2 = try Tool.avtool(["batch", s.path("r.yaml")])
        #expect(r2.status == 2, "\(r2)")
        #expect(r2.stderr.contains("r.yaml:5: step 1 (transcode): '--crf'"), "\(r2)")
        #expect(!fileExists(s.path("out")))
    }

    /// Four transcodes one at a time; the batch is killed (SIGKILL, or SIGINT)
    /// after the first finishes; a second run finishes the rest. Every output is
    /// made exactly once, no temporary is left, the ledger stays JSON Lines.
    @Test(arguments: [SIGKILL, SIGINT])
    func killedBatchFinishesOnRerun(signal: Int32) throws {
        let s = try Scratch()
        let src = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        try FileManager.default.createDirectory(atPath: s.path("in"), withIntermediateDirectories: true)
        for n in 1...4 { try FileManager.default.copyItem(atPath: src, toPath: s.path("in/clip\(n).mp4")) }
        try """
            version: 1
            steps:
              - verb: transcode
                inputs: in/*.mp4
                output: out/{stem}.mov
                options: {preset: ultrafast, crf: 30}
            """.write(toFile: s.path("r.yaml"), atomically: true, encoding: .utf8)
        let ledgerPath = s.path("out/.avtool-ledger.jsonl")

        let p = Process()
        p.executableURL = URL(fileURLWithPath: Tool.avtool)
        p.arguments = ["batch", s.path("r.yaml"), "-j", "1", "-q"]
        p.standardError = FileHandle.nullDevice
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: ledgerPath, encoding: .utf8), text.contains("\"done\"") { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        // Let the second job get under way, then kill.
        Thread.sleep(forTimeInterval: 0.3)
        kill(p.processIdentifier, signal)
        p.waitUntilExit()
        #expect(p.terminationStatus == (signal == SIGKILL ? SIGKILL : 130))
        let first = try ledger(ledgerPath)
        let doneFirst = Set(first.filter { $0["status"] as? String == "done" }.compactMap { $0["output"] as? String })
        #expect(doneFirst.count >= 1 && doneFirst.count < 4, "\(first)")
        // No output appears that the ledger does not call done.
        let outputsFirst = Set(files(s.path("out")).filter { $0.hasSuffix(".mov") && !$0.hasPrefix(".") }.map { s.path("out/" + $0) })
        #expect(outputsFirst == doneFirst)

        let r = try Tool.avtool(["batch", s.path("r.yaml"), "-j", "1", "--json"])
        #expect(r.status == 0, "\(r)")
        let sum = try summary(r)
        #expect(sum.done == 4 - doneFirst.count && sum.skipped == doneFirst.count, "\(r)")
        let all = try ledger(ledgerPath)
        for n in 1...4 {
            let out = s.path("out/clip\(n).mov")
            #expect(all.filter { $0["output"] as? String == out && $0["status"] as? String == "done" }.count == 1, "\(out)")
            let probe = try FFprobe(out, countPackets: true)
            #expect(FFprobe.int(probe.streams[0], "nb_read_packets") == 300)
        }
        #expect(files(s.path("out")).filter { $0.contains(".avtool-") && !$0.contains("ledger") }.isEmpty, "\(files(s.path("out")))")
    }

    @Test func shardsMakeEveryOutputOnceAndLedgersMerge() throws {
        let s = try samples()
        var made: [String] = []
        for k in 0..<3 {
            let r = try Tool.avtool(["batch", recipe("ios-recordings.yaml"), "--base", s.url.path, "--shard", "\(k)/3", "--json"])
            #expect(r.status == 0, "\(r)")
            let sum = try summary(r)
            #expect(sum.skipped == 0)
            made += sum.jobs.filter { $0.status == "done" }.map(\.output)
            #expect(fileExists(s.path("out/.avtool-ledger.shard-\(k)-of-3.jsonl")))
        }
        #expect(made.count == 5)
        #expect(Set(made).count == 5)
        let merged = try Tool.avtool(["batch", recipe("ios-recordings.yaml"), "--base", s.url.path, "--merge-ledgers"])
        #expect(merged.status == 0, "\(merged)")
        #expect(merged.stderr.contains("merged 5 entries"), "\(merged)")
        #expect(try ledger(s.path("out/.avtool-ledger.jsonl")).count == 5)
        #expect(!files(s.path("out")).contains { $0.contains("shard") })
        let again = try Tool.avtool(["batch", recipe("ios-recordings.yaml"), "--base", s.url.path, "--json"])
        #expect(try summary(again).skipped == 5, "\(again)")
    }

    @Test func anOutputTheLedgerDoesNotKnowIsKept() throws {
        let s = try samples()
        try FileManager.default.createDirectory(atPath: s.path("out/mp4"), withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: s.path("out/mp4/screen.mp4")))
        let r = try Tool.avtool(["batch", recipe("remux-to-mp4.yaml"), "--base", s.url.path, "--json"])
        #expect(r.status == 0, "\(r)")
        let sum = try summary(r)
        #expect(sum.done == 2 && sum.skipped == 1, "\(r)")
        #expect(try String(contentsOfFile: s.path("out/mp4/screen.mp4"), encoding: .utf8) == "mine")
        let forced = try Tool.avtool(["batch", recipe("remux-to-mp4.yaml"), "--base", s.url.path, "--force", "-q"])
        #expect(forced.status == 0, "\(forced)")
        #expect(try FFprobe(s.path("out/mp4/screen.mp4")).streams.count == 2)
    }
}

/// A thousand jobs in one process under a limit of 64 open files: a job
/// that leaked even one descriptor would make the later ones fail (EMFILE).
@Suite("batch resources")
struct BatchResourceTests {
    @Test func thousandJobsLeakNoFileDescriptors() throws {
        let s = try Scratch()
        let src = try Fixtures.path("clicks_seg1.mp4")
        try FileManager.default.createDirectory(atPath: s.path("in"), withIntermediateDirectories: true)
        for n in 0..<1000 { try FileManager.default.linkItem(atPath: src, toPath: s.path("in/c\(n).mp4")) }
        try """
            version: 1
            steps:
              - verb: remux
                inputs: in/*.mp4
                output: out/{stem}.mkv
            """.write(toFile: s.path("r.yaml"), atomically: true, encoding: .utf8)
        let r = try Tool.run("/bin/sh", ["-c", "ulimit -n 64 && exec \"$0\" batch \"$1\" -j 8 --json", Tool.avtool, s.path("r.yaml")])
        #expect(r.status == 0, "\(r.stderr.suffix(2000))")
        let obj = try #require(try JSONSerialization.jsonObject(with: r.data) as? [String: Any])
        #expect(obj["done"] as? Int == 1000, "\(r.stderr.suffix(2000))")
        #expect(obj["failed"] as? Int == 0)
        let outputs = try FileManager.default.contentsOfDirectory(atPath: s.path("out")).filter { $0.hasSuffix(".mkv") }
        #expect(outputs.count == 1000)
    }
}
