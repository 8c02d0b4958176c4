import Foundation
import Testing

/// Each bad input: exit status ≠ 0, one line on stderr naming the file and the
/// cause, no output and no temporary left behind, the input untouched.
@Suite("bad input")
struct BadInputTests {
    func expectClean(_ run: Run, scratch: Scratch, mentions: [String], allowed: [String] = [],
                     sourceLine: SourceLocation = #_sourceLocation) {
        #expect(run.status != 0, "\(run)", sourceLocation: sourceLine)
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.count == 1, "expected one line: \(run.stderr)", sourceLocation: sourceLine)
        for m in mentions {
            #expect(run.stderr.contains(m), "stderr lacks '\(m)': \(run.stderr)", sourceLocation: sourceLine)
        }
        #expect(scratch.contents == allowed.sorted(), "left behind: \(scratch.contents)", sourceLocation: sourceLine)
        #expect(!run.stderr.contains("Fatal error"), sourceLocation: sourceLine)
    }

    @Test(arguments: [
        ("missing.mp4", "No such file or directory"),
        ("empty.mp4", "empty"),
        ("text.mp4", "Invalid data"),
        ("random.mp4", "Invalid data"),
    ])
    func unreadableInput(name: String, cause: String) throws {
        let scratch = try Scratch()
        let input = name == "missing.mp4" ? scratch.url.appendingPathComponent("nope/missing.mp4").path
            : try Fixtures.path(name)
        let before = fileExists(input) ? try sha256(input) : ""
        let out = scratch.path("out.mkv")
        for args in [["remux", input, out], ["probe", input]] {
            let run = try Tool.avtool(args)
            expectClean(run, scratch: scratch, mentions: [input, cause])
        }
        if !before.isEmpty { #expect(try sha256(input) == before) }
    }

    @Test(arguments: ["truncated.mp4", "truncated_faststart.mp4"])
    func truncatedInput(name: String) throws {
        let scratch = try Scratch()
        let input = try Fixtures.path(name)
        let before = try sha256(input)
        let run = try Tool.avtool("remux", input, scratch.path("out.mkv"))
        expectClean(run, scratch: scratch, mentions: [input])
        #expect(try sha256(input) == before)
        // probe describes the damage instead of refusing, where the file opens at all.
        let probe = try Tool.avtool("probe", input, "--json")
        if name == "truncated_faststart.mp4" {
            #expect(probe.status == 0, "\(probe)")
            let j = try JSONSerialization.jsonObject(with: probe.data) as? [String: Any]
            let corrupt = (j?["streams"] as? [[String: Any]])?.compactMap { $0["corrupt_packets"] as? Int }.reduce(0, +)
            #expect((corrupt ?? 0) > 0, "corrupt packets reported")
            #expect((j?["cut_off"] as? String)?.hasPrefix("only 145 of 300 video") == true, "\(probe.stdout)")
        } else {
            // No index: what it is, and the verb that rebuilds it.
            expectClean(probe, scratch: scratch, mentions: [input, "without its index (moov)", "avtool repair"])
            expectClean(run, scratch: scratch, mentions: [input, "without its index (moov)", "avtool repair"])
        }
    }

    /// fill-silence of a browser's video-only recording: nothing to fill, and
    /// the way to give a video its sound named.
    @Test func fillSilenceOfVideoAloneNamesMerge() throws {
        let scratch = try Scratch()
        let run = try Tool.avtool("fill-silence", try Fixtures.wild("chrome_mediarecorder_vp8_video_only.webm"), scratch.path("out.mkv"))
        expectClean(run, scratch: scratch, mentions: ["chrome_mediarecorder_vp8_video_only.webm': it has no audio stream",
                                                      "'avtool merge VIDEO AUDIO OUT' gives a video its sound"])
    }

    @Test func unknownOutputExtension() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("aac48_stereo.m4a")
        let run = try Tool.avtool("remux", input, scratch.path("out.xyz"))
        expectClean(run, scratch: scratch, mentions: ["out.xyz", "extension", "--format"])
    }

    @Test func unknownFormatOption() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("aac48_stereo.m4a")
        let run = try Tool.avtool("remux", input, scratch.path("out.mkv"), "--format", "avi2")
        #expect(run.status != 0)
        #expect(run.stderr.contains("avi2"))
        #expect(scratch.contents.isEmpty)
    }

    @Test func outputDirectoryMissing() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("aac48_stereo.m4a")
        let out = scratch.path("no/such/dir/out.mkv")
        let run = try Tool.avtool("remux", input, out)
        expectClean(run, scratch: scratch, mentions: [out, "does not exist"])
    }

    @Test func outputDirectoryReadOnly() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("aac48_stereo.m4a")
        let dir = scratch.path("ro")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        // Root ignores permission bits, so as root use a read-only mount.
        var mounted = false
        if getuid() == 0 {
            let m = try Tool.run("mount", ["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir])
            mounted = m.status == 0
            try #require(mounted, "could not mount a read-only tmpfs: \(m)")
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: dir)
        }
        defer {
            if mounted { _ = try? Tool.run("umount", [dir]) }
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir)
        }
        let out = dir + "/out.mkv"
        let run = try Tool.avtool("remux", input, out)
        expectClean(run, scratch: scratch, mentions: [out, "not writable"], allowed: ["ro"])
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir)) == [])
    }

    @Test func outputIsInput() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.m4a")
        try FileManager.default.copyItem(atPath: try Fixtures.path("aac48_stereo.m4a"), toPath: input)
        let before = try sha256(input)
        for target in [input, scratch.url.path + "/./in.m4a"] {
            let run = try Tool.avtool("remux", input, target, "-y")
            expectClean(run, scratch: scratch, mentions: ["is the input"], allowed: ["in.m4a"])
        }
        #expect(try sha256(input) == before)
    }

    @Test func existingOutputNeedsOverwrite() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("aac48_stereo.m4a")
        let out = scratch.path("out.mkv")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: out))
        let run = try Tool.avtool("remux", input, out)
        expectClean(run, scratch: scratch, mentions: [out, "exists", "--overwrite"], allowed: ["out.mkv"])
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "keep me")
        let again = try Tool.avtool("remux", input, out, "-y", "--quiet")
        #expect(again.status == 0, "\(again)")
        #expect(try FFprobe(out).streams.count == 1)
        #expect(scratch.contents == ["out.mkv"])
    }

    @Test func pcmIntoMP4NamesTheStream() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("pcm_in_mov.mov")
        let run = try Tool.avtool("remux", input, scratch.path("out.mp4"))
        expectClean(run, scratch: scratch, mentions: [input, "stream #1", "pcm_s16le", "--audio aac"])
        // Dropping the stream makes it work.
        let ok = try Tool.avtool("remux", input, scratch.path("out.mp4"), "--no-audio", "--quiet")
        #expect(ok.status == 0, "\(ok)")
    }

    /// Matroska cannot store the display matrix in FFmpeg 5.1: the remux
    /// works but says so, and the JSON report lists it.
    @Test func rotationLossIsReported() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("rotated90.mp4")
        let run = try Tool.avtool("remux", input, scratch.path("out.mkv"))
        #expect(run.status == 0)
        #expect(run.stderr.contains("warning: stream #0: rotation 90° is not kept"), "\(run.stderr)")
        let json = try Tool.avtool("remux", input, scratch.path("out.mkv"), "-y", "--json")
        let report = try JSONSerialization.jsonObject(with: json.data) as? [String: Any]
        #expect((report?["warnings"] as? [String])?.count == 1)
        let mov = try Tool.avtool("remux", input, scratch.path("out.mov"))
        #expect(!mov.stderr.contains("warning"), "\(mov.stderr)")
    }

    @Test func subtitlesMP4NeedsDropping() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("h264_aac.mkv")
        let run = try Tool.avtool("remux", input, scratch.path("out.mp4"))
        expectClean(run, scratch: scratch, mentions: ["subrip", "--no-subtitles"])
    }
}
