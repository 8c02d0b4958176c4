import Foundation
import Testing

/// SIGINT/SIGTERM while a verb is blocked reading a FIFO that never ends:
/// the process stops at once with 128+signal, writes nothing and leaves no
/// temporary. (FaultTests signals every writing verb mid-run on files.)
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

    /// merge blocked on its AUDIO input, concat on its second segment (a
    /// video-only stream: a segment with audio is opened twice, which a FIFO
    /// cannot be).
    @Test(arguments: ["merge", "concat"], [(SIGINT, Int32(130), "SIGINT"), (SIGTERM, Int32(143), "SIGTERM")])
    func assemblyBlockedOnFIFO(verb: String, signal: (Int32, Int32, String)) throws {
        let (signal, status, name) = signal
        let scratch = try Scratch()
        let fifo = scratch.path("in.ts")
        try #require(mkfifo(fifo, 0o600) == 0)
        var arguments: [String]
        let fed: Data
        if verb == "merge" {
            arguments = ["merge", try Fixtures.path("clicks_video.mp4"), fifo]
            fed = try Data(contentsOf: URL(fileURLWithPath: try Fixtures.path("h264_aac.ts")))
        } else {
            let videoOnly = scratch.path("video.ts")
            let made = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try Fixtures.path("h264_aac.ts"),
                                               "-map", "0:v", "-c", "copy", videoOnly])
            try #require(made.status == 0, "\(made)")
            arguments = ["concat", videoOnly, fifo]
            fed = try Data(contentsOf: URL(fileURLWithPath: videoOnly))
        }
        let output = scratch.path("out.mkv")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Tool.avtool)
        p.arguments = arguments + [output]
        // A named temporary, to see the output staged.
        p.environment = ProcessInfo.processInfo.environment.merging(["AVTOOL_NAMED_TEMPORARIES": "1"]) { $1 }
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let writer = try #require(FileHandle(forWritingAtPath: fifo))
        writer.write(fed.prefix(fed.count * 2 / 3))
        Thread.sleep(forTimeInterval: 1.0)
        #expect(p.isRunning)
        let before = Set(scratch.contents)
        #expect(before.contains { $0.hasPrefix(".out.mkv.avtool-") }, "blocked with its output staged: \(before)")
        kill(p.processIdentifier, signal)
        p.waitUntilExit()
        try? writer.close()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(p.terminationStatus == status, "\(stderr)")
        #expect(stderr.contains("interrupted (\(name))"), "\(stderr)")
        #expect(!scratch.contents.contains { $0.hasPrefix(".out.mkv") || $0 == "out.mkv" }, "left behind: \(scratch.contents)")
    }

    /// A stream that never ends (a FIFO fed by ffmpeg looping an MPEG-TS
    /// file forever at its real-time pace, like a live source): Ctrl-C stops
    /// it, and so does --timeout.
    @Test(arguments: ["SIGINT", "--timeout"])
    func neverEndingInput(stop: String) throws {
        let scratch = try Scratch()
        let fifo = scratch.path("live.ts")
        try #require(mkfifo(fifo, 0o600) == 0)
        let feeder = Process()
        feeder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        feeder.arguments = ["ffmpeg", "-nostdin", "-v", "quiet", "-re", "-stream_loop", "-1",
                            "-i", try Fixtures.path("h264_aac.ts"), "-c", "copy", "-f", "mpegts", "-y", fifo]
        feeder.standardOutput = FileHandle.nullDevice
        feeder.standardError = FileHandle.nullDevice
        try feeder.run()
        defer {
            feeder.terminate()
            feeder.waitUntilExit()
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Tool.avtool)
        p.arguments = ["remux", fifo, scratch.path("out.mkv")] + (stop == "--timeout" ? ["--timeout", "2s"] : [])
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let started = Date()
        if stop == "SIGINT" {
            Thread.sleep(forTimeInterval: 1.5)
            #expect(p.isRunning)
            kill(p.processIdentifier, SIGINT)
        }
        p.waitUntilExit()
        let took = Date().timeIntervalSince(started)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        if stop == "SIGINT" {
            #expect(p.terminationStatus == 130, "\(stderr)")
            #expect(stderr.contains("interrupted (SIGINT)"), "\(stderr)")
        } else {
            #expect(p.terminationStatus == 124, "\(stderr)")
            #expect(stderr.contains("timed out after 2s"), "\(stderr)")
            #expect(took > 1.9 && took < 5, "stopped after \(took) s")
        }
        #expect(scratch.contents == ["live.ts"], "left behind: \(scratch.contents)")
    }

    /// A batch job runs on a worker thread: a signal wakes it out of a
    /// blocked read too, so the batch stops at once with its own report
    /// (not the 5-second fallback that exits without one).
    @Test func batchJobBlockedOnFIFOStopsAtOnce() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.path("in"), withIntermediateDirectories: true)
        let fifo = scratch.path("in/live.ts")
        try #require(mkfifo(fifo, 0o600) == 0)
        let recipe = scratch.path("live.yaml")
        try "version: 1\nsteps:\n  - verb: remux\n    inputs: [\"in/*.ts\"]\n    output: out/{stem}.mkv\n"
            .write(toFile: recipe, atomically: true, encoding: .utf8)
        let data = try Data(contentsOf: URL(fileURLWithPath: try Fixtures.path("h264_aac.ts")))

        let p = Process()
        p.executableURL = URL(fileURLWithPath: Tool.avtool)
        p.arguments = ["batch", recipe, "--base", scratch.url.path]
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        // Open the FIFO once the job has opened it for reading (no hang if it never does).
        var fd: Int32 = -1
        let deadline = Date().addingTimeInterval(20)
        while fd < 0, Date() < deadline, p.isRunning {
            fd = open(fifo, O_WRONLY | O_NONBLOCK)
            if fd < 0 { usleep(20_000) }
        }
        try #require(fd >= 0, "the batch job never opened its input")
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        let writer = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        writer.write(data.prefix(data.count * 2 / 3))
        Thread.sleep(forTimeInterval: 1.0)
        #expect(p.isRunning)
        let sent = Date()
        kill(p.processIdentifier, SIGINT)
        p.waitUntilExit()
        let took = Date().timeIntervalSince(sent)
        try? writer.close()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(p.terminationStatus == 130, "\(stderr)")
        #expect(stderr.contains("finished jobs are kept"), "\(stderr)")
        #expect(took < 3, "took \(took) s to stop")
        #expect(!fileExists(scratch.path("out/live.mkv")))
    }
}
