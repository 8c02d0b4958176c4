import Batch
import Foundation
import Glibc
import PropertyBased
import Testing

private func job(_ output: String, inputs: [String] = ["/in/a.mp4"], options: [OptionSetting] = []) -> Job {
    Job(step: 1, line: 3, verb: "remux", inputs: inputs, output: output, options: options)
}

@Suite("job decisions")
struct DecisionTests {
    let j = job("/out/a.mp4")
    let input = FileSignature(path: "/in/a.mp4", size: 100, mtimeNs: 5)
    let output = FileSignature(path: "/out/a.mp4", size: 200, mtimeNs: 9)

    func done() -> LedgerEntry {
        LedgerEntry(job: j, inputs: [input], outputFile: output, status: .done, seconds: 1, error: nil, shard: nil)
    }

    @Test func newJobRuns() {
        #expect(JobDecision.decide(job: j, last: nil, inputs: [input], output: nil, force: false) == .run(reason: "new", overwrite: false))
    }

    @Test func upToDateIsSkippedAndForceRedoes() {
        #expect(JobDecision.decide(job: j, last: done(), inputs: [input], output: output, force: false) == .skip(reason: "up to date"))
        #expect(JobDecision.decide(job: j, last: done(), inputs: [input], output: output, force: true) == .run(reason: "forced", overwrite: true))
    }

    @Test func changesRedo() {
        var touched = input
        touched.mtimeNs += 1
        #expect(JobDecision.decide(job: j, last: done(), inputs: [touched], output: output, force: false) == .run(reason: "inputs changed", overwrite: true))
        var edited = output
        edited.size += 1
        #expect(JobDecision.decide(job: j, last: done(), inputs: [input], output: edited, force: false) == .run(reason: "output changed since it was made", overwrite: true))
        let other = job("/out/a.mp4", options: [OptionSetting(name: "start", values: ["keep"], line: 4)])
        #expect(JobDecision.decide(job: other, last: done(), inputs: [input], output: output, force: false) == .run(reason: "options changed", overwrite: true))
        #expect(JobDecision.decide(job: j, last: done(), inputs: [input], output: nil, force: false) == .run(reason: "output missing", overwrite: false))
    }

    @Test func unknownOutputIsNotReplaced() {
        #expect(!JobDecision.decide(job: j, last: nil, inputs: [input], output: output, force: false).runs)
        var failed = done()
        failed.status = .failed
        #expect(!JobDecision.decide(job: j, last: failed, inputs: [input], output: output, force: false).runs)
    }
}

/// The record a decision rests on: the newest finished entry that made the
/// file there now, whatever came after it (issue 47).
@Suite("ledger records")
struct LedgerRecordTests {
    let j = job("/out/a.mp4")
    let input = FileSignature(path: "/in/a.mp4", size: 100, mtimeNs: 5)
    let output = FileSignature(path: "/out/a.mp4", size: 200, mtimeNs: 9)

    func entry(_ status: LedgerEntry.Status, finished: String, output file: FileSignature?) -> LedgerEntry {
        var e = LedgerEntry(job: j, inputs: [input], outputFile: file, status: status, seconds: 1, error: nil, shard: nil)
        e.finished = finished
        return e
    }

    @Test func anInterruptedFailedOrFutureEntryDoesNotHideTheFinishedOne() {
        let made = entry(.done, finished: "2026-01-01T00:00:00Z", output: output)
        var other = output
        other.size += 1
        for later in [entry(.interrupted, finished: "2026-02-01T00:00:00Z", output: nil),
                      entry(.failed, finished: "2099-01-01T00:00:00Z", output: nil),
                      entry(.done, finished: "2099-01-01T00:00:00Z", output: other)] {
            let record = Ledger.record([made, later], output: output)
            #expect(record == made, "\(later.status) \(later.finished)")
            #expect(JobDecision.decide(job: j, last: record, inputs: [input], output: output, force: false) == .skip(reason: "up to date"))
        }
        // No finished entry made the file there: the newest finished one says it changed.
        var edited = output
        edited.mtimeNs += 1
        let record = Ledger.record([made, entry(.failed, finished: "2026-03-01T00:00:00Z", output: nil)], output: edited)
        #expect(record == made)
        #expect(JobDecision.decide(job: j, last: record, inputs: [input], output: edited, force: false)
            == .run(reason: "output changed since it was made", overwrite: true))
        // None finished: the newest entry of any kind.
        let failed = entry(.failed, finished: "2026-03-01T00:00:00Z", output: nil)
        #expect(Ledger.record([entry(.interrupted, finished: "2026-01-01T00:00:00Z", output: nil), failed], output: nil) == failed)
    }
}

@Suite("ledger")
struct LedgerTests {
    func scratch() throws -> String {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }

    @Test func appendsReadsAndCutsATornLine() throws {
        let d = try scratch()
        defer { try? FileManager.default.removeItem(atPath: d) }
        let path = d + "/l.jsonl"
        do {
            let l = try Ledger(path: path)
            for i in 0..<3 {
                try l.append(LedgerEntry(job: job("/out/\(i).mp4"), inputs: [], outputFile: nil, status: .done,
                                         seconds: 0, error: nil, shard: nil))
            }
        }
        // A kill in the middle of a write: half a line, no newline.
        let h = try #require(FileHandle(forWritingAtPath: path))
        h.seekToEndOfFile()
        h.write(Data("{\"verb\":\"rem".utf8))
        try h.close()
        #expect(try Ledger.read(path).badLines == 1)
        _ = try Ledger(path: path)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasSuffix("}\n"))
        let r = try Ledger.read(path)
        #expect(r.badLines == 0)
        #expect(r.entries.map(\.output) == ["/out/0.mp4", "/out/1.mp4", "/out/2.mp4"])
        for line in text.split(separator: "\n") {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil)
        }
    }

    @Test func secondUserIsRefused() throws {
        let d = try scratch()
        defer { try? FileManager.default.removeItem(atPath: d) }
        let first = try Ledger(path: d + "/l.jsonl")
        #expect(throws: Ledger.Failure.self) { try Ledger(path: d + "/l.jsonl") }
        _ = first
    }

    @Test func shardLedgersAreReadAndMerged() throws {
        let d = try scratch()
        defer { try? FileManager.default.removeItem(atPath: d) }
        let main = d + "/l.jsonl"
        for k in 0..<3 {
            let s = try Ledger(path: Ledger.shardPath(of: main, shard: Shard("\(k)/3")!))
            try s.append(LedgerEntry(job: job("/out/\(k).mp4"), inputs: [], outputFile: nil, status: .done,
                                     seconds: 0, error: nil, shard: "\(k)/3"))
        }
        #expect(Ledger.shardFiles(of: main).count == 3)
        #expect(try Ledger.read(main).entries.count == 3)
        let l = try Ledger(path: main)
        #expect(try l.mergeShards() == 3)
        #expect(Ledger.shardFiles(of: main).isEmpty)
        #expect(Set(try Ledger.read(main).entries.map(\.output)) == ["/out/0.mp4", "/out/1.mp4", "/out/2.mp4"])
    }
}

@Suite("shards")
struct ShardTests {
    @Test func parses() {
        #expect(Shard("0/1") == Shard("0/1"))
        #expect(Shard("3/4")?.index == 3)
        for bad in ["4/4", "-1/4", "1/0", "1", "a/b", "1/2/3"] { #expect(Shard(bad) == nil, "\(bad)") }
    }

    @Test func shardsPartitionEveryJobList() async {
        await propertyCheck(input: Gen.int(in: 1...12), Gen.int(in: 0...60)) { n, count in
            let jobs = (0..<count).map { job("/out/\($0 * 7919 % 1000)-\($0).mp4") }
            var owners = [Int](repeating: 0, count: jobs.count)
            for k in 0..<n {
                let s = Shard("\(k)/\(n)")!
                for (i, j) in jobs.enumerated() where s.contains(j) { owners[i] += 1 }
            }
            #expect(owners.allSatisfy { $0 == 1 })
        }
    }
}
