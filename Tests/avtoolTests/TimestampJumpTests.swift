import Foundation
import Testing

/// A timestamp that jumps by days (a corrupt or hand-edited file): verbs that
/// fill gaps would write days of silence or repeat one frame for days —
/// hours of work and gigabytes, a hang in all but name. They refuse instead,
/// at once, with the place and size of the jump; a stream copy (no filling)
/// just carries the timestamps over.
@Suite("timestamp jumps")
struct TimestampJumpTests {
    /// `source` with every packet of `stream` (a or v) from the `from`-th on moved days later
    /// (`by` is in the bitstream filter's terms: seconds of the output's 1/1000 time base
    /// read in the input's own, 48 times longer for 1/48000 audio).
    func jumped(_ source: String, stream: String, from: Int, by: String = "172800", in scratch: Scratch) throws -> String {
        let out = scratch.path("jump-\(stream).mkv")
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", source, "-c", "copy",
                                        "-bsf:\(stream)", "setts=ts=if(gte(N\\,\(from))\\,TS+\(by)/TB\\,TS)", out])
        try #require(r.status == 0, "\(r)")
        return out
    }

    @Test(arguments: ["fill-silence", "merge"])
    func audioJumpIsRefusedAtOnce(verb: String) throws {
        let scratch = try Scratch()
        let input = try jumped(try Fixtures.path("audio_gap.mp4"), stream: "a", from: 100, in: scratch)
        let output = scratch.path("out.mkv")
        let args = verb == "merge"
            ? ["merge", try Fixtures.path("audio_gap.mp4"), input, output, "--end", "longest"]
            : ["fill-silence", input, output]
        let started = Date()
        let r = try Tool.avtool(args)
        #expect(Date().timeIntervalSince(started) < 20)
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("'\(input)' (stream #1)") && r.stderr.contains("a jump that long is a broken timestamp"),
                "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1)
        #expect(!scratch.contents.contains { $0.contains("out.mkv") }, "left behind: \(scratch.contents)")
    }

    @Test func videoJumpAtConstantFrameRateIsRefused() throws {
        let scratch = try Scratch()
        let input = try jumped(try Fixtures.path("h264_aac.mkv"), stream: "v", from: 50, in: scratch)
        let r = try Tool.avtool("transcode", input, scratch.path("out.mkv"), "--fps", "30", "--preset", "ultrafast",
                                "--size", "160x-1")
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("--fps would repeat one frame for more than 12 hours"), "\(r.stderr)")
        #expect(!scratch.contents.contains { $0.contains("out.mkv") }, "left behind: \(scratch.contents)")
    }

    @Test func streamCopyCarriesTheJump() throws {
        let scratch = try Scratch()
        let input = try jumped(try Fixtures.path("audio_gap.mp4"), stream: "a", from: 100, in: scratch)
        let output = scratch.path("out.mkv")
        let r = try Tool.avtool("remux", input, output, "-q")
        #expect(r.status == 0, "\(r)")
        // Every packet copied, and the audio's jump of two days still between
        // its 100th packet and the one before, to the millisecond.
        let before = try PacketList(input), after = try PacketList(output)
        #expect(after.payloads == before.payloads)
        func jump(_ list: PacketList) throws -> Double {
            let audio = list.packets.filter { $0.stream == 1 }
            try #require(audio.count > 100)
            return list.seconds(audio[100].pts!, stream: 1) - list.seconds(audio[99].pts!, stream: 1)
        }
        let expected = try jump(before)
        #expect(expected > 172_000)
        let copied = try jump(after)
        #expect(abs(copied - expected) < 0.001, "jump \(copied) s for \(expected) s")
    }

    /// A long gap that is real (10 minutes, not a whole number of AAC frames,
    /// so the audio is re-encoded): its silence is made a second at a time.
    /// Queued whole it took 230 MB (8 hours of gap: 1.6 GB, then a failure).
    @Test func longGapIsFilledInBoundedMemory() throws {
        if !Tool.peakMemoryIsMeaningful {
            try Test.cancel("peak memory says nothing under AddressSanitizer (its quarantine keeps freed memory)")
        }
        let scratch = try Scratch()
        let input = try jumped(try Fixtures.path("audio_gap.mp4"), stream: "a", from: 100, by: "12.5001", in: scratch)
        let output = scratch.path("out.mkv")
        let timing = scratch.path("time.txt")
        let r = try Tool.run("/usr/bin/time", ["-f", "%M", "-o", timing, Tool.avtool, "fill-silence", input, output, "-q"])
        #expect(r.status == 0, "\(r)")
        let peak = Int(try String(contentsOfFile: timing, encoding: .utf8).split(separator: "\n").last ?? "") ?? 0
        #expect(peak > 0 && peak < 150_000, "peak RSS \(peak) KiB")
        let duration = FFprobe.double(try FFprobe(output).format, "duration") ?? 0
        #expect(duration > 600, "the gap is filled: \(duration) s")
    }
}
