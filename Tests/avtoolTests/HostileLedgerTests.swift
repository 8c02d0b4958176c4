import Foundation
import Testing

/// The batch ledger lives in the outputs' folder, which others may write
/// into: a ledger that is a link, a FIFO or a device is refused in one line
/// (never followed, never waited on, never read whole), and no job may
/// write over the recipe or a ledger, not even with --force (issue 47).
@Suite("hostile ledger")
struct HostileLedgerTests {
    /// A recipe remuxing one real recording into `out/`, in `s`; returns its path.
    static func recipe(_ s: Scratch, output: String = "out/{stem}.m4a") throws -> String {
        try FileManager.default.createDirectory(atPath: s.path("in"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: s.path("out"), withIntermediateDirectories: true)
        try? FileManager.default.copyItem(atPath: try Fixtures.wild("ios_voicememos_2021.m4a"), toPath: s.path("in/memo.m4a"))
        try """
            version: 1
            steps:
              - verb: remux
                inputs: in/memo.m4a
                output: \(output)
            """.write(toFile: s.path("r.yaml"), atomically: true, encoding: .utf8)
        return s.path("r.yaml")
    }

    /// `avtool batch ARGS` stopped after 10 s (a ledger that blocks) and kept under 3 GB (one read whole).
    static func batch(_ arguments: [String]) throws -> (run: Run, seconds: Double) {
        let started = Date()
        let r = try Tool.run("/bin/sh", ["-c", "ulimit -v 3000000; exec timeout -k 2 10 \"$0\" batch \"$@\"", Tool.avtool] + arguments)
        return (r, Date().timeIntervalSince(started))
    }

    static func expectRefused(_ r: Run, seconds: Double, mentioning words: [String], _ context: String) {
        #expect(r.status == 1, "\(context): \(r)")
        #expect(seconds < 5, "\(context): took \(seconds) s")
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(context): \(r.stderr)")
        for w in words { #expect(r.stderr.contains(w), "\(context): \(r.stderr)") }
    }

    /// A ledger that is a link to another file (one without a last newline,
    /// which a ledger's opening would trim): refused, the file unchanged, nothing made.
    @Test func aLinkedLedgerIsNotFollowed() throws {
        let s = try Scratch()
        let recipe = try Self.recipe(s)
        let target = s.path("some.conf")
        let text = "setting = 1\nlast = line without newline"
        try text.write(toFile: target, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: s.path("out/.avtool-ledger.jsonl"), withDestinationPath: target)
        for extra in [[], ["--force"]] {
            let (r, seconds) = try Self.batch([recipe] + extra)
            Self.expectRefused(r, seconds: seconds, mentioning: [".avtool-ledger.jsonl", "symbolic link"], "link \(extra)")
            #expect(try String(contentsOfFile: target, encoding: .utf8) == text)
            #expect(!fileExists(s.path("out/memo.m4a")))
        }
    }

    /// A FIFO as the ledger, or as a shard's ledger: refused at once, not waited on.
    @Test(arguments: [".avtool-ledger.jsonl", ".avtool-ledger.shard-0-of-2.jsonl"])
    func aFIFOLedgerIsRefusedAtOnce(name: String) throws {
        let s = try Scratch()
        let recipe = try Self.recipe(s)
        try #require(mkfifo(s.path("out/" + name), 0o644) == 0)
        let (r, seconds) = try Self.batch([recipe])
        Self.expectRefused(r, seconds: seconds, mentioning: [name, "FIFO"], name)
        #expect(!fileExists(s.path("out/memo.m4a")))
    }

    /// A device as the ledger (/dev/zero never ends): refused, not read.
    @Test func aDeviceLedgerIsRefused() throws {
        let s = try Scratch()
        let recipe = try Self.recipe(s)
        let (r, seconds) = try Self.batch([recipe, "--ledger", "/dev/zero"])
        Self.expectRefused(r, seconds: seconds, mentioning: ["/dev/zero", "device"], "/dev/zero")
    }

    /// A step whose output is the recipe, the ledger or a shard's ledger is
    /// refused before any job runs, --force or not; the file is unchanged.
    @Test(arguments: ["r.yaml", "out/.avtool-ledger.jsonl", "out/.avtool-ledger.shard-1-of-4.jsonl"])
    func anOutputMayNotBeTheRecipeOrALedger(output: String) throws {
        let s = try Scratch()
        let recipe = try Self.recipe(s, output: output)
        // The default ledger's folder is the outputs' folder: with the recipe as output, name it.
        let ledgerArguments = output == "r.yaml" ? ["--ledger", s.path("out/.avtool-ledger.jsonl")] : []
        if output != "r.yaml" { try "".write(toFile: s.path(output), atomically: true, encoding: .utf8) }
        let before = try Data(contentsOf: URL(fileURLWithPath: s.path(output)))
        for extra in [[], ["--force"]] {
            let (r, seconds) = try Self.batch([recipe] + ledgerArguments + extra)
            #expect(r.status == 2, "\(output) \(extra): \(r)")
            #expect(seconds < 5)
            #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
            #expect(r.stderr.contains("is the recipe") || r.stderr.contains("ledger"), "\(r.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: s.path(output))) == before, "\(output) was changed")
        }
    }

    /// After a finished job, a later entry for its output — an interrupted
    /// redo, a failed one, an entry dated 2099 (finished, of another file) —
    /// does not make the output "no record of making it" or "changed": the
    /// finished entry that made the file there decides, and the job is up to date.
    @Test func aLaterEntryDoesNotHideTheFinishedOne() throws {
        let s = try Scratch()
        let recipe = try Self.recipe(s)
        let first = try Tool.avtool(["batch", recipe, "-q"])
        try #require(first.status == 0, "\(first)")
        let ledgerPath = s.path("out/.avtool-ledger.jsonl")
        let done = try #require(try String(contentsOfFile: ledgerPath, encoding: .utf8).split(separator: "\n").first.map(String.init))
        let redos = [
            done.replacingOccurrences(of: "\"status\":\"done\"", with: "\"status\":\"interrupted\""),
            done.replacingOccurrences(of: "\"status\":\"done\"", with: "\"status\":\"failed\"")
                .replacingOccurrences(of: "\"finished\":\"20", with: "\"finished\":\"2099-01-01T00:00:00Z\",\"x\":\"20"),
            done.replacingOccurrences(of: "\"size\":", with: "\"size\":1").replacingOccurrences(of: "\"finished\":\"20", with: "\"finished\":\"2099-01-01T00:00:00Z\",\"x\":\"20"),
        ]
        for line in redos {
            #expect(line != done)
            let handle = try #require(FileHandle(forWritingAtPath: ledgerPath))
            handle.seekToEndOfFile()
            handle.write(Data((line + "\n").utf8))
            handle.closeFile()
            let r = try Tool.avtool(["batch", recipe])
            #expect(r.status == 0, "\(r)")
            #expect(r.stderr.contains("(up to date)"), "after \(line): \(r.stderr)")
        }
    }

    /// A failed job's entry carries its error code (here libavformat's AVERROR_INVALIDDATA).
    @Test func aFailureRecordsItsErrorCode() throws {
        let s = try Scratch()
        let recipe = try Self.recipe(s)
        try "not a recording".write(toFile: s.path("in/memo.m4a"), atomically: true, encoding: .utf8)
        let r = try Tool.avtool(["batch", recipe, "-q"])
        #expect(r.status == 1, "\(r)")
        let text = try String(contentsOfFile: s.path("out/.avtool-ledger.jsonl"), encoding: .utf8)
        let entry = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(entry["status"] as? String == "failed")
        #expect(entry["error_code"] as? Int == -1_094_995_529, "\(text)")
    }

    /// Shard ledgers in an output folder whose name holds glob characters
    /// (`o[1]`, which as a pattern names `o1`): `--merge-ledgers` finds and
    /// folds them, and leaves alone a shard ledger in `o1/` that the
    /// unescaped pattern would have taken (issue 47; fixed before this test).
    @Test func shardLedgersInAFolderWithGlobCharactersAreFound() throws {
        let s = try Scratch()
        let recipe = try Self.recipe(s, output: "'o[1]/{stem}.m4a'")
        try FileManager.default.createDirectory(atPath: s.path("o[1]"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: s.path("o1"), withIntermediateDirectories: true)
        let decoy = s.path("o1/.avtool-ledger.shard-1-of-2.jsonl")
        try "{}\n".write(toFile: decoy, atomically: true, encoding: .utf8)
        for shard in ["0/2", "1/2"] {
            let r = try Tool.avtool("batch", recipe, "--shard", shard, "-q")
            #expect(r.status == 0, "\(shard): \(r)")
        }
        let merged = try Tool.avtool("batch", recipe, "--merge-ledgers")
        #expect(merged.status == 0 && merged.stderr.contains("merged 1 entries into '\(s.path("o[1]/.avtool-ledger.jsonl"))'"), "\(merged)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.path("o[1]")).sorted() == [".avtool-ledger.jsonl", "memo.m4a"])
        #expect(try String(contentsOfFile: decoy, encoding: .utf8) == "{}\n")
        let again = try Tool.avtool("batch", recipe)
        #expect(again.status == 0 && again.stderr.contains("1 skipped"), "\(again)")
    }
}
