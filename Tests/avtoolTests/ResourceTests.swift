import Foundation
import Testing

/// Open files stay bounded: a verb holds each input open as many times as it
/// reads it, and no more. Merge, concat and fill-silence decide between
/// copying and re-encoding the audio from a packet-only read before the
/// output exists (they used to write a whole first attempt, then start over
/// with the first attempt's files, and their MP4 indexes, still open).
@Suite("resources", .serialized)
struct ResourceTests {
    /// File descriptors of `pid` open on `path`.
    func openCount(_ pid: Int32, _ path: String) -> Int {
        let dir = "/proc/\(pid)/fd"
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        return fds.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/" + $0)) == target }.count
    }

    /// The program links FoundationEssentials, never Foundation: Foundation
    /// brings ICU's data, about 6 MiB resident in every run (`--version` included).
    @Test func theProgramDoesNotLinkFoundation() throws {
        let ldd = try Tool.run("ldd", [Tool.avtool])
        try #require(ldd.status == 0, "\(ldd)")
        #expect(ldd.stdout.contains("libFoundationEssentials"), "\(ldd.stdout)")
        #expect(!ldd.stdout.contains("libFoundation.so") && !ldd.stdout.contains("lib_FoundationICU"), "\(ldd.stdout)")
    }

    @Test func reencodingIsDecidedBeforeWritingAndHoldsOnlyItsOwnFiles() throws {
        let scratch = try Scratch()
        let inputs = try FaultInputs.copies(for: .merge, in: scratch)
        // The audio with a 500-sample hole: not a whole number of AAC frames, so
        // stream copy cannot keep it in sync and the audio is re-encoded.
        let audio = scratch.path("holed.m4a")
        let made = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", inputs[1], "-c", "copy",
                                           "-bsf:a", "setts=ts=if(gte(N\\,200)\\,TS+500\\,TS)", audio])
        try #require(made.status == 0, "\(made)")
        let output = scratch.path("out.mkv")
        // (At the default tolerance, 20 ms, the hole is absorbed: the audio after it lands 10.4 ms early.)
        let run = try Running(["merge", inputs[0], audio, output, "--tolerance", "1ms"])
        // Stop once the output has its header (the temporary is reserved
        // before the decision, written only after it).
        var temporaries = Set<String>()
        var video = -1, audioOpen = -1
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, run.process.isRunning {
            let temps = scratch.contents.filter { $0.hasPrefix(".out.mkv.avtool-") }
            let written = temps.contains {
                ((try? FileManager.default.attributesOfItem(atPath: scratch.path($0)))?[.size] as? Int ?? 0) > 0
            }
            if video < 0, written {
                kill(run.pid, SIGSTOP)
                video = openCount(run.pid, inputs[0])
                audioOpen = openCount(run.pid, audio)
                run.resume()
            }
            temporaries.formUnion(temps)
            usleep(500)
        }
        let (status, stderr) = run.finish()
        #expect(status == 0, "\(stderr)")
        #expect(stderr.contains("re-encoded"), "\(stderr)")
        #expect(temporaries.count == 1, "the output was staged \(temporaries.count) times: \(temporaries)")
        #expect(video == 1, "the video is open \(video) times")
        #expect(audioOpen == 1, "the audio is open \(audioOpen) times")
    }

    /// Concat opens a segment when planning, the copied-audio scan and the
    /// run reach it, and lets it go after: a thousand inputs under a limit of
    /// 64 descriptors, in memory that grows a few KB per input. Before, every
    /// input stayed open from the plan to the end (one descriptor each, and
    /// its demuxer and parsers): `Too many open files` at the 60th or so.
    @Test func aThousandInputsToConcatHoldFewFilesOpen() throws {
        let s = try Scratch()
        let clip = try Fixtures.wild("ios_voicememos_2021.m4a")
        let packets = try #require(FFprobe.int(try FFprobe(clip, countPackets: true).stream(0), "nb_read_packets"))
        let inputs = try (0..<1000).map { n in
            let link = s.path("memo\(n).m4a")
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: clip)
            return link
        }
        let output = s.path("all.m4a"), measure = s.path("rss")
        let r = try Tool.run("/bin/sh", ["-c", "ulimit -n 64 && exec /usr/bin/time -f %M -o \"$0\" \"$@\"",
                                         measure, Tool.avtool, "concat"] + inputs + [output, "-q"])
        try #require(r.status == 0, "\(r.stderr.suffix(2000))")
        let probed = try FFprobe(output, countPackets: true)
        #expect(FFprobe.int(probed.stream(0), "nb_read_packets") == 1000 * packets)
        // Measured (debug build): 58 MB for 100 inputs, 61 MB for 1,000 (3 KB more
        // an input: the output's index), 16 descriptors at most; before, 203 MB and
        // 1,013 descriptors. Once merged with the other work of its stop, 89 MB for
        // 1,000 (not yet understood): the bound, 120 MB, still fails the 203 MB.
        let peakKB = try #require(Int(try String(contentsOfFile: measure, encoding: .utf8)
            .split(separator: "\n").last ?? ""))
        // (Under AddressSanitizer the same run peaks at 450 MB: its quarantine.)
        if Tool.peakMemoryIsMeaningful { #expect(peakKB < 120_000, "peak RSS \(peakKB) KB") }
    }
}
