import Foundation
import Testing

/// SIGKILL (the OOM killer, a time limit's last word) at any moment of a
/// writing verb leaves the output folder as it was: outputs have no name
/// until they are complete (an unnamed file, `O_TMPFILE`), so nothing is
/// left to sweep; an output being replaced is intact until the new one
/// takes its name; a rerun writes what an uninterrupted run writes.
@Suite("kills")
struct KillTests {
    /// A verb's arguments, its output's name, and the delays to kill it after.
    static func job(_ verb: String, _ scratch: Scratch) throws -> [String] {
        switch verb {
        case "transcode": [try Fixtures.path("clicks_video.mp4"), scratch.path("out.mov"), "--preset", "ultrafast"]
        case "merge": [try Fixtures.path("clicks_video.mp4"), try Fixtures.path("clicks_audio.m4a"), scratch.path("out.mov")]
        case "concat": [try Fixtures.path("clicks_seg1.mp4"), try Fixtures.path("clicks_seg2.mp4"), scratch.path("out.mp4")]
        case "fill-silence": [try Fixtures.path("clicks_audio_gap.m4a"), scratch.path("out.m4a")]
        case "remux": [try Fixtures.path("clicks_video.mp4"), scratch.path("out.mkv")]
        case "cut": [try Fixtures.path("clicks_video.mp4"), scratch.path("out.mp4"), "--from", "1.3", "--to", "7.7",
                     "--mode", "exact"]
        default: [try Fixtures.path("clicks_video.mp4"), scratch.path("part-{n}.mp4"), "--every", "3"]
        }
    }

    /// Every file in `dir`, hidden ones included.
    static func listing(_ dir: String) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [])
    }

    @Test(arguments: ["transcode", "merge", "concat", "fill-silence", "remux", "cut", "split"], [0.02, 0.15, 0.6])
    func aKillLeavesNothingBehind(verb: String, after delay: Double) throws {
        let scratch = try Scratch()
        let arguments = [verb] + (try Self.job(verb, scratch))
        let before = Self.listing(scratch.url.path)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Tool.avtool)
        p.arguments = arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        Thread.sleep(forTimeInterval: delay)
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        let after = Self.listing(scratch.url.path)
        let new = after.subtracting(before)
        if p.terminationReason == .uncaughtSignal {
            // Killed: at most whole outputs that were finished before the kill
            // (split's earlier parts), never a temporary.
            #expect(!new.contains { $0.hasPrefix(".") }, "\(verb) killed after \(delay) s left \(new)")
            for name in new {
                let check = try Tool.run("ffprobe", ["-v", "error", scratch.path(name)])
                #expect(check.status == 0, "\(name) is not a whole file: \(check)")
            }
        }
        // A rerun succeeds.
        let again = try Tool.avtool(arguments + ["--overwrite"])
        #expect(again.status == 0, "\(again)")
        #expect(!Self.listing(scratch.url.path).contains { $0.hasPrefix(".") })
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
