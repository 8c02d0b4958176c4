import Foundation
import Testing

/// Examples/MergePair, programs on the AVToolKit library product, built on
/// their own (a package depending on this one by path, Swift 6 language
/// mode): merge-pair's file passes the oracle `avtool merge`'s does — every
/// beep within 1 ms of its flash — with the same packets; job-service runs
/// three transcodes at once in a task group and cancels one.
@Suite("AVToolKit example", .serialized)
struct ExamplePackageTests {
    static let package = Tool.repo.appendingPathComponent("Examples/MergePair").path

    /// The example package built (once per run: later builds find it done).
    static func build() throws {
        let build = try Tool.run("swift", ["build", "--package-path", package])
        try #require(build.status == 0, "\(build)")
    }

    /// `swiftc -typecheck` of `file` against the example's build of
    /// AVToolKit, in Swift 6 mode with every warning an error: what a
    /// client of the library sees, without building a package per check.
    static func typecheck(_ file: String) throws -> Run {
        let debug = package + "/.build/debug"
        let includes = try Tool.run("pkg-config", ["--cflags-only-I", "libavformat"]).stdout
            .split(whereSeparator: \.isWhitespace).flatMap { ["-Xcc", String($0)] }
        return try Tool.run("swiftc", ["-typecheck", "-swift-version", "6", "-warnings-as-errors",
                                       "-I", debug + "/Modules",
                                       "-I", Tool.repo.appendingPathComponent("Sources/CFFmpeg").path,
                                       "-I", Tool.repo.appendingPathComponent("Sources/CYAML").path,
                                       "-I", Tool.repo.appendingPathComponent("Sources/CFileAccess").path,
                                       "-Xcc", "-fmodule-map-file=" + debug + "/CFFmpegFilter.build/module.modulemap",
                                       "-Xcc", "-fmodule-map-file=" + debug + "/CFFmpegLazy.build/module.modulemap"]
                                + includes + [file])
    }

    @Test func mergePairMergesInSync() throws {
        try Self.build()
        let bin = Self.package + "/.build/debug/merge-pair"
        let scratch = try Scratch()
        let video = try Fixtures.path("clicks_video.mp4"), audio = try Fixtures.path("clicks_audio.m4a")
        let out = scratch.path("example.mp4")
        let run = try Tool.run(bin, [video, audio, out])
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("silence inserted: "), "\(run.stdout)")
        #expect(!run.stderr.contains("[mp4 @"), "FFmpeg's log leaked: \(run.stderr)")
        let c = try ClickTrack(out)
        #expect(c.beeps.count >= 5)
        for e in c.beepErrors { #expect(e <= 0.001) }
        // The same merge as the command line's.
        let cli = scratch.path("cli.mp4")
        let merged = try Tool.avtool("merge", video, audio, cli, "-q")
        try #require(merged.status == 0, "\(merged)")
        #expect(try PacketList(out).payloads == PacketList(cli).payloads)
        // A failure comes back as a MediaError with its category.
        let missing = try Tool.run(bin, ["/nonexistent.mp4", audio, scratch.path("none.mp4")])
        #expect(missing.status == 1 && missing.stderr.contains("[not-found]"), "\(missing)")
    }

    /// Three transcodes in a task group start together (the verbs do not
    /// hold the cooperative pool's two threads); the one cancelled halfway
    /// by `Task.cancel()` stops within 0.5 s with category `interrupted`
    /// and leaves no file; a missing file's category comes out of an
    /// exhaustive switch; the jobs' options come from JSON; a job's events,
    /// its task cancelled, end with `interrupted`; FFmpeg's log goes to a handler.
    @Test func jobServiceRunsJobsAtOnceAndCancelsOne() throws {
        try Self.build()
        let scratch = try Scratch()
        let dir = scratch.path("jobs")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let run = try Tool.run(Self.package + "/.build/debug/job-service",
                               [try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4"), dir])
        try #require(run.status == 0, "\(run)")
        var lines: [String: String] = [:]
        for line in run.stdout.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            lines[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        #expect(lines["decoded"] == "3 jobs, preset fast, size 320x-1", "\(run.stdout)")
        // Every verb's options decoded from JSON, encoded and decoded again to the same value.
        #expect(lines["round-trip"] == "RemuxOptions TranscodeOptions AssemblyOptions CutOptions SplitOptions RepairOptions LoudnessOptions",
                "\(run.stdout)")
        let spread = try #require(lines["start-spread"].flatMap(Double.init), "\(run.stdout)")
        #expect(spread <= 0.5, "\(run.stdout)")
        #expect(lines["first"] == "finished, 300 frames" && lines["third"] == "finished, 300 frames", "\(run.stdout)")
        #expect(lines["second"] == "interrupted", "\(run.stdout)")
        let latency = try #require(lines["cancel-latency"].flatMap(Double.init), "\(run.stdout)")
        #expect(latency <= 0.5, "\(run.stdout)")
        // Nothing of the cancelled job: neither its output nor a temporary.
        #expect(lines["left"] == "first.mp4 third.mp4", "\(run.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["first.mp4", "third.mp4"])
        #expect(lines["missing"] == "not-found (no such file)", "\(run.stdout)")
        #expect(lines["cancelled-before"] == "interrupted", "\(run.stdout)")
        // The events of a job whose task is cancelled: a typed failure, not an end as if finished, and no file.
        #expect(lines["events-cancelled"] == "interrupted", "\(run.stdout)")
        #expect(lines["left-after-events"] == "first.mp4 third.mp4", "\(run.stdout)")
        // FFmpeg's own error went to the program's handler, not to stderr.
        #expect(lines["library-log"]?.hasPrefix("error: [mov,mp4") == true && lines["library-log"]?.hasSuffix("moov atom not found") == true,
                "\(run.stdout)")
        #expect(!run.stderr.contains("moov atom"), "\(run.stderr)")
    }

    /// The examples compile without a warning in Swift 6 mode (strict
    /// concurrency), job-service beside `import Foundation` with its own
    /// `Decodable` type; `import AVToolKit` shows none of the bridge's
    /// types, so a program naming one does not compile (`Decoder` is
    /// Swift's: job-service's `init(from decoder: Decoder)` checks it).
    @Test func publicSurfaceIsSmall() throws {
        try Self.build()
        for example in ["merge-pair", "job-service"] {
            let check = try Self.typecheck(Self.package + "/Sources/\(example)/main.swift")
            #expect(check.status == 0, "\(example): \(check)")
        }
        let scratch = try Scratch()
        // What the DocC articles show a client writing, and the values a client's tests make.
        let client = scratch.path("client.swift")
        try """
            import AVToolKit
            import Foundation

            func jobs(v: String, a: String, o: String, options: TranscodeOptions) async throws {
                do {
                    _ = try await AVTool.merge(video: v, audio: a, output: o)
                } catch {
                    switch error.category {
                    case .notFound, .permissionDenied, .outputExists: break
                    default: print(error)
                    }
                }
                for try await event in AVTool.events({ progress in
                    try await AVTool.transcode(input: "in.mov", output: "out.mp4", options: options, progress: progress)
                }) {
                    switch event {
                    case .progress(let p): print(p.frames)
                    case .finished(let report): print(report.framesEncoded)
                    }
                }
                try await withThrowingTaskGroup(of: TranscodeReport.self) { group in
                    for (input, output) in [("a.mov", "a.mp4")] {
                        group.addTask { try await AVTool.transcode(input: input, output: output, options: options) }
                    }
                    for try await report in group { print(report.output) }
                }
                let job = Task { try await AVTool.transcode(input: "in.mov", output: "out.mp4", options: options) }
                job.cancel()
                let body = #"{"preset": "fast", "crf": 26, "size": {"width": 1280, "height": -1}}"#
                let decoded = try JSONDecoder().decode(TranscodeOptions.self, from: Data(body.utf8))
                let again = try JSONDecoder().decode(TranscodeOptions.self, from: JSONEncoder().encode(decoded))
                precondition(again == decoded)
                var toQuality = TranscodeOptions()
                toQuality.quality = QualityTarget("high", metric: QualityMetric.ssim)
                toQuality.verifyQuality = true
                let graded = try await AVTool.transcode(input: "in.mov", output: "out.mp4", options: toQuality)
                let found: QualityReport? = graded.quality
                print(found?.crf ?? 0, found?.chunks?.map { $0.crf } ?? [])
                _ = [TranscodeProgress(frames: 1, position: 0.5, duration: 1).fraction,
                     RemuxProgress(bytesRead: 1, inputSize: 2, position: 0, duration: nil).fraction,
                     AssemblyProgress(position: 1, duration: 2).fraction, CutProgress(fraction: 0.5, position: 1).fraction,
                     RepairProgress(fraction: 0.5).fraction, LoudnessProgress(position: 1, duration: 2).fraction]
            }
            """.write(toFile: client, atomically: true, encoding: .utf8)
        let check = try Self.typecheck(client)
        #expect(check.status == 0, "client: \(check)")
        for name in ["Packet", "Frame", "Scaler", "InputStream", "InputFile", "Cancellation", "TrackTimeline"] {
            let file = scratch.path("uses\(name).swift")
            try "import AVToolKit\nlet value: \(name)? = nil\n".write(toFile: file, atomically: true, encoding: .utf8)
            let check = try Self.typecheck(file)
            #expect(check.status != 0 && check.stderr.contains("cannot find type '\(name)' in scope"), "\(name): \(check)")
        }
    }
}
