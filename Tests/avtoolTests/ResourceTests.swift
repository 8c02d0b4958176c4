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
        let run = try Running(["merge", inputs[0], audio, output])
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
}
