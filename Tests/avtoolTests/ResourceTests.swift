import Foundation
import Testing

/// Open files stay bounded: a verb holds each input open as many times as it
/// reads it, and no more — also when it starts over (merge, concat and
/// fill-silence retry with re-encoded audio when stream copy cannot keep a
/// gap in sync), where the first attempt's files used to stay open, with
/// their whole MP4 index in memory, until the end.
@Suite("resources", .serialized)
struct ResourceTests {
    /// File descriptors of `pid` open on `path`.
    func openCount(_ pid: Int32, _ path: String) -> Int {
        let dir = "/proc/\(pid)/fd"
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        return fds.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/" + $0)) == target }.count
    }

    @Test func secondAttemptHoldsOnlyItsOwnFiles() throws {
        let scratch = try Scratch()
        let inputs = try FaultInputs.copies(for: .merge, in: scratch)
        // The audio with a 500-sample hole: not a whole number of AAC frames, so
        // the copy attempt gives up and the audio is re-encoded in a second one.
        let audio = scratch.path("holed.m4a")
        let made = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", inputs[1], "-c", "copy",
                                           "-bsf:a", "setts=ts=if(gte(N\\,200)\\,TS+500\\,TS)", audio])
        try #require(made.status == 0, "\(made)")
        let output = scratch.path("out.mkv")
        let run = try Running(["merge", inputs[0], audio, output])
        // The second attempt stages a new temporary: stop there.
        var first: String?
        var stopped = false
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, run.process.isRunning {
            let temps = scratch.contents.filter { $0.hasPrefix(".out.mkv.avtool-") }
            if first == nil { first = temps.first }
            if let f = first, let t = temps.first, t != f {
                kill(run.pid, SIGSTOP)
                stopped = true
                break
            }
            usleep(500)
        }
        try #require(stopped, "no second attempt seen (first temporary: \(first ?? "none"))")
        let video = openCount(run.pid, inputs[0]), audioOpen = openCount(run.pid, audio)
        run.resume()
        let (status, stderr) = run.finish()
        #expect(status == 0, "\(stderr)")
        #expect(stderr.contains("re-encoded"), "\(stderr)")
        #expect(video == 1, "the video is open \(video) times")
        #expect(audioOpen == 1, "the audio is open \(audioOpen) times")
    }
}
