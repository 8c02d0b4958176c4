import Foundation
import Testing

/// SIGINT/SIGTERM while a remux is blocked reading a FIFO that never ends:
/// the process stops at once with 128+signal, writes nothing and leaves no
/// temporary.
@Suite("signals")
struct SignalTests {
    @Test(arguments: ["remux", "transcode"], [(SIGINT, Int32(130), "SIGINT"), (SIGTERM, Int32(143), "SIGTERM")])
    func interruptLeavesNothing(verb: String, signal: (Int32, Int32, String)) throws {
        let (signal, status, name) = signal
        let scratch = try Scratch()
        let fifo = scratch.path("in.ts")
        try #require(mkfifo(fifo, 0o600) == 0)
        let source = try Fixtures.path("h264_aac.ts")
        let data = try Data(contentsOf: URL(fileURLWithPath: source))

        let p = Process()
        p.executableURL = URL(fileURLWithPath: Tool.avtool)
        p.arguments = [verb, fifo, scratch.path("out.mkv")] + (verb == "transcode" ? ["--preset", "ultrafast"] : [])
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        // Feed most of the stream and keep the FIFO open: the reader blocks.
        let writer = try #require(FileHandle(forWritingAtPath: fifo))
        writer.write(data.prefix(data.count * 2 / 3))
        Thread.sleep(forTimeInterval: 1.0)
        #expect(p.isRunning)
        let sent = Date()
        kill(p.processIdentifier, signal)
        p.waitUntilExit()
        let took = Date().timeIntervalSince(sent)
        try? writer.close()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(p.terminationStatus == status, "\(stderr)")
        #expect(stderr.contains("interrupted (\(name))"), "\(stderr)")
        #expect(took < 3, "took \(took) s to stop")
        #expect(scratch.contents == ["in.ts"], "left behind: \(scratch.contents)")
    }
}
