import Foundation
import Testing

/// Faults while a writing verb runs — a signal, a full disk, a read-only
/// directory, an input cut short or replaced, an output on another
/// filesystem, a time limit — for every verb that writes: the result is
/// either a complete output or a clear one-line error with no output, no
/// temporary left behind, an existing output untouched and the inputs as
/// they were.
@Suite("faults", .serialized)
struct FaultTests {
    /// No error line is a crash report; exactly one line.
    func expectOneLine(_ stderr: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = stderr.split(separator: "\n")
        #expect(lines.count == 1, "expected one line: \(stderr)", sourceLocation: sourceLocation)
        #expect(!stderr.contains("Fatal error") && !stderr.contains("Crash"), "\(stderr)", sourceLocation: sourceLocation)
    }

    // MARK: Signals mid-run

    @Test(arguments: WritingVerb.allCases, [(SIGINT, Int32(130), "SIGINT"), (SIGTERM, Int32(143), "SIGTERM")])
    func signalMidRun(verb: WritingVerb, signal: (Int32, Int32, String)) throws {
        let (sig, status, name) = signal
        let scratch = try Scratch()
        let inputs = try FaultInputs.copies(for: verb, in: scratch)
        let hashes = try inputs.map(sha256)
        let before = scratch.contents
        let output = scratch.path("out.\(verb.outputExtension)")
        let run = try Running(verb.arguments(inputs, output: output))
        try #require(run.stopWhenStaged(in: scratch.url.path, output: output), "\(verb) ended before its output was staged")
        kill(run.pid, sig)
        run.resume()
        let (exit, stderr) = run.finish()
        #expect(exit == status, "\(stderr)")
        #expect(stderr.contains("interrupted (\(name))") && stderr.contains("no output written"), "\(stderr)")
        expectOneLine(stderr)
        #expect(scratch.contents == before, "left behind: \(scratch.contents)")
        #expect(try inputs.map(sha256) == hashes)
    }

    // MARK: --timeout

    @Test(arguments: WritingVerb.allCases)
    func timeoutMidRun(verb: WritingVerb) throws {
        let scratch = try Scratch()
        let inputs = try FaultInputs.copies(for: verb, in: scratch)
        let before = scratch.contents
        let output = scratch.path("out.\(verb.outputExtension)")
        let run = try Running(verb.arguments(inputs, output: output) + ["--timeout", "1s"])
        try #require(run.stopWhenStaged(in: scratch.url.path, output: output), "\(verb) ended before its output was staged")
        // Stopped past its deadline: the timer fires as soon as it runs again.
        Thread.sleep(forTimeInterval: 1.2)
        run.resume()
        let (exit, stderr) = run.finish()
        #expect(exit == 124, "\(stderr)")
        #expect(stderr.contains("timed out after 1s (--timeout); no output written"), "\(stderr)")
        expectOneLine(stderr)
        #expect(scratch.contents == before, "left behind: \(scratch.contents)")
    }

    @Test func timeoutIsValidated() throws {
        for bad in ["0", "-3s", "soon"] {
            let r = try Tool.avtool("remux", try Fixtures.path("aac48_stereo.m4a"), "/tmp/never.mkv", "--timeout=\(bad)")
            #expect(r.status != 0 && r.stderr.contains("'--timeout' \(bad) is not a positive duration"), "\(r)")
        }
    }

    // MARK: Disk full

    @Test(arguments: WritingVerb.allCases)
    func diskFull(verb: WritingVerb) throws {
        let scratch = try Scratch()
        let inputs = try FaultInputs.copies(for: verb, in: scratch)
        let hashes = try inputs.map(sha256)
        let fs = try SmallFilesystem(size: "256k", in: scratch)
        let output = fs.file("out.\(verb.outputExtension)")
        // An earlier output of the same name, to be replaced (-y) only by a complete file.
        let existing = Data("an earlier output that must survive\n".utf8)
        try existing.write(to: URL(fileURLWithPath: output))
        let r = try Tool.avtool(verb.arguments(inputs, output: output) + ["-y"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("no space left on device"), "\(r.stderr)")
        #expect(r.stderr.contains("'\(output)'"), "names the output: \(r.stderr)")
        expectOneLine(r.stderr)
        #expect(fs.contents == ["out.\(verb.outputExtension)"], "left behind: \(fs.contents)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == existing, "the existing output changed")
        #expect(try inputs.map(sha256) == hashes)
    }

    /// A real recording remuxed onto a full disk by the bulk copy (`copy_file_range`, `pwrite`) and by
    /// the muxer (`--no-bulk`): the same code and the same line, nothing left, the input as it was.
    @Test func diskFullSaysTheSameForBulkAndMuxer() throws {
        let scratch = try Scratch()
        let input = scratch.path("iphone6s.mov")
        try FileManager.default.copyItem(atPath: try Fixtures.wild("iphone6s_ios9_720p_audio_elst1.mov"), toPath: input)
        let hash = try sha256(input)
        // The recording is one the bulk copy takes.
        let whole = try Tool.avtool("remux", input, scratch.path("whole.mov"), "--json")
        try #require(whole.status == 0 && whole.stdout.contains("the media data copied as it is"), "\(whole)")
        let fs = try SmallFilesystem(size: "256k", in: scratch)
        let output = fs.file("out.mov")
        var said: [(code: String?, line: String)] = []
        for way in [[], ["--no-bulk"]] {
            let r = try Tool.avtool(["remux", input, output, "--json"] + way)
            #expect(r.status == 1, "\(way): \(r)")
            expectOneLine(r.stderr)
            let json = try JSONSerialization.jsonObject(with: r.data) as? [String: Any]
            said.append(((json?["error"] as? [String: Any])?["code"] as? String, r.stderr))
            #expect(fs.contents.isEmpty, "\(way): left behind: \(fs.contents)")
        }
        #expect(said[0].code == "no-space" && said[1].code == "no-space", "\(said)")
        #expect(said[0].line == said[1].line, "bulk: \(said[0].line)muxer: \(said[1].line)")
        #expect(said[0].line.contains("could not write to '\(output)': no space left on device; free some space or write the output elsewhere; nothing was written"),
                "\(said[0].line)")
        #expect(try sha256(input) == hash)
    }

    // MARK: Read-only output directory

    @Test(arguments: WritingVerb.allCases)
    func readOnlyDirectory(verb: WritingVerb) throws {
        let scratch = try Scratch()
        let inputs = try smallInputs(verb)
        let directory: String
        var fs: SmallFilesystem?
        if getuid() == 0 {
            // Root writes through file permissions: only a read-only mount stops it.
            fs = try SmallFilesystem(size: "1m", readOnly: true, in: scratch)
            directory = fs!.path
        } else {
            directory = scratch.path("ro")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o555])
        }
        let output = directory + "/out.\(verb.outputExtension)"
        let r = try Tool.avtool(verb.arguments(inputs, output: output))
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("'\(output)'") && r.stderr.contains("is not writable"), "\(r.stderr)")
        expectOneLine(r.stderr)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: directory)) == [])
        withExtendedLifetime(fs) {}
    }

    // MARK: Input cut short or replaced while it is read

    @Test(arguments: WritingVerb.allCases, ["truncated", "replaced"])
    func inputChangesMidRun(verb: WritingVerb, change: String) throws {
        let scratch = try Scratch()
        let inputs = try FaultInputs.copies(for: verb, in: scratch)
        let victim = FaultInputs.victim(inputs, verb: verb)
        let before = scratch.contents
        let output = scratch.path("out.\(verb.outputExtension)")
        let run = try Running(verb.arguments(inputs, output: output))
        try #require(run.stopWhenStaged(in: scratch.url.path, output: output), "\(verb) ended before its output was staged")
        if change == "truncated" {
            let size = try #require(try FileManager.default.attributesOfItem(atPath: victim)[.size] as? Int)
            #expect(truncate(victim, off_t(size / 2)) == 0)
        } else {
            // Another file renamed over it (what editors and downloaders do).
            let other = scratch.path("other.tmp")
            try FileManager.default.copyItem(atPath: try Fixtures.path("h264_aac.mkv"), toPath: other)
            #expect(rename(other, victim) == 0)
        }
        run.resume()
        let (exit, stderr) = run.finish()
        #expect(exit == 1, "\(stderr)")
        #expect(stderr.contains("'\(victim)'") && stderr.contains("changed while it was being read"), "\(stderr)")
        #expect(stderr.contains(change == "truncated" ? "truncated from" : "replaced by another file"), "\(stderr)")
        expectOneLine(stderr)
        #expect(scratch.contents == before, "left behind: \(scratch.contents)")
    }

    // MARK: Output on another filesystem

    @Test(arguments: WritingVerb.allCases)
    func outputOnAnotherFilesystem(verb: WritingVerb) throws {
        let scratch = try Scratch()
        let inputs = try smallInputs(verb)
        let fs = try SmallFilesystem(size: "64m", in: scratch)
        var inputStat = stat(), outputStat = stat()
        stat(inputs[0], &inputStat)
        stat(fs.path, &outputStat)
        try #require(inputStat.st_dev != outputStat.st_dev, "the tmpfs is another filesystem")
        let output = fs.file("out.\(verb.outputExtension)")
        let r = try Tool.avtool(verb.arguments(inputs, output: output) + ["-q"])
        #expect(r.status == 0, "\(r)")
        // Staged beside the target, so the final rename never crosses devices.
        #expect(fs.contents == ["out.\(verb.outputExtension)"])
        #expect(try FFprobe(output).streams.count >= 1)
    }

    // MARK: Durability

    /// An output that replaces an existing file (`-y`) is flushed to the
    /// disk (`fsync`) before it takes the name, and the directory after the
    /// rename, so a power cut leaves the old file or the whole new one; a
    /// new name is not flushed (it costs ~0.3 s per GB, and a power cut can
    /// lose only that output). Seen from outside: the system calls strace
    /// records, in order, each relative to the folder's descriptor.
    @Test(arguments: WritingVerb.allCases, [true, false])
    func replacedOutputIsOnDiskBeforeItTakesTheName(verb: WritingVerb, replacing: Bool) throws {
        let scratch = try Scratch()
        let logs = try Scratch()
        try #require(try Tool.run("strace", ["-qq", "-e", "trace=none", "true"]).status == 0,
                     "strace cannot trace here (ptrace refused)")
        let output = scratch.path("out.\(verb.outputExtension)")
        if replacing { try Data("an older output".utf8).write(to: URL(fileURLWithPath: output)) }
        let log = logs.path("strace.log")
        // LeakSanitizer cannot run under ptrace (an ASan build of avtool,
        // scripts/sanitize.sh): leaks are checked by every other test.
        var environment = ProcessInfo.processInfo.environment
        environment["ASAN_OPTIONS"] = (environment["ASAN_OPTIONS"].map { $0 + ":" } ?? "") + "detect_leaks=0"
        // The named temporary's way (KillTests check the unnamed one's).
        environment["AVTOOL_NAMED_TEMPORARIES"] = "1"
        let r = try Tool.run("strace", ["-f", "-qq", "-o", log,
                                        "-e", "trace=openat,fsync,fdatasync,rename,renameat,renameat2,link,linkat",
                                        Tool.avtool] + verb.arguments(try smallInputs(verb), output: output) + ["-q", "-y"],
                             environment: environment)
        #expect(r.status == 0, "\(r)")
        #expect(scratch.contents == ["out.\(verb.outputExtension)"])
        // strace -f lines: "PID syscall(arguments) = result".
        let calls = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map { line in
            line.drop { $0 != " " }.drop { $0 == " " }
        }
        func fd(_ call: Substring) -> String? {
            call.range(of: " = ").map { String(call[$0.upperBound...].prefix { $0.isNumber }) }
        }
        // The temporary is made, renamed and flushed relative to the folder's descriptor.
        let temporary = "\".out.\(verb.outputExtension).avtool-"
        let name = "\"out.\(verb.outputExtension)\""
        let named = try #require(calls.firstIndex { $0.hasPrefix("rename") && $0.contains(temporary) && $0.contains(name) },
                                 "no rename to the output:\n\(calls.joined(separator: "\n"))")
        guard replacing else {
            #expect(!calls.contains { $0.hasPrefix("fsync(") }, "a new output was flushed")
            return
        }
        // The temporary (its descriptor, from its making) flushed, then the rename.
        let made = try #require(calls[..<named].lastIndex { $0.hasPrefix("openat(") && $0.contains(temporary) && $0.contains("O_CREAT") },
                                "the temporary was not made:\n\(calls.joined(separator: "\n"))")
        let temporaryFd = try #require(fd(calls[made]))
        let flushed = try #require(calls[made..<named].firstIndex { $0.hasPrefix("fsync(\(temporaryFd))") && $0.hasSuffix("= 0") },
                                   "the temporary was not flushed")
        #expect(flushed < named)
        // Then the folder, through the descriptor the rename was made relative to.
        let dirFd = String(calls[named].drop { $0 != "(" }.dropFirst().prefix { $0.isNumber })
        #expect(calls[named...].contains { $0.hasPrefix("fsync(\(dirFd))") }, "the directory was not flushed")
    }

    /// Small fixtures for runs that should complete quickly.
    func smallInputs(_ verb: WritingVerb) throws -> [String] {
        switch verb {
        case .merge: [try Fixtures.path("clicks_video.mp4"), try Fixtures.path("clicks_audio.m4a")]
        case .concat: [try Fixtures.path("clicks_seg1.mp4"), try Fixtures.path("clicks_seg2.mp4")]
        case .fillSilence: [try Fixtures.path("audio_gap.mp4")]
        default: [try Fixtures.path("h264_aac.mkv")]
        }
    }
}
