import Foundation
import Testing

/// What a new user hit in everyday jobs on real recordings, each fixed
/// where the rule lives and checked here on a file that showed it.
@Suite("a new user's jobs")
struct NewUserTests {
    /// A B-frame H.264 file on a 30000 time base (NTSC rates as HandBrake
    /// and cameras write them), with keyframes whose times fall between two
    /// microseconds: at frames 50, 101 and 152 (1.668333…, 3.370033…,
    /// 5.071733… s).
    static func ntscBFrames(in scratch: Scratch) throws -> String {
        let path = scratch.path("ntsc_bframes.mp4")
        let r = try Tool.run("ffmpeg", ["-v", "error", "-nostdin", "-y",
                                        "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30000/1001:duration=8",
                                        "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=8",
                                        "-c:v", "libx264", "-preset", "ultrafast", "-bf", "3", "-g", "1000",
                                        "-force_key_frames", "expr:eq(n,50)+eq(n,101)+eq(n,152)",
                                        "-c:a", "aac", "-video_track_timescale", "30000", path])
        try #require(r.status == 0, "\(r)")
        return path
    }

    /// The video's keyframe times as ffprobe prints them (microseconds).
    static func keyframeTimes(_ path: String) throws -> [String] {
        let r = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time,flags",
                                         "-of", "csv=p=0", path])
        return r.stdout.split(separator: "\n").filter { $0.hasSuffix("K_") }.map { String($0.split(separator: ",")[0]) }
    }

    /// 1 and 3: a split part that starts at a keyframe starts at that
    /// keyframe, on files whose keyframe times are not whole microseconds (a
    /// GoPro's 90 kHz clock at 29.97 fps, a B-frame file on a 30000 clock):
    /// every packet in exactly one part, and `concat` of the parts gives back
    /// the source's packets, the audio copied with no frame re-encoded.
    @Test(arguments: ["gopro", "ntsc-bframes"])
    func splitThenConcatGivesBackEveryPacketOnce(_ name: String) throws {
        let scratch = try Scratch()
        let source: String
        var options: [String]
        if name == "gopro" {
            source = try Fixtures.device("gopro_max_heromode_gpmd.mp4")
            options = ["--every", "2", "--no-data"]
        } else {
            source = try Self.ntscBFrames(in: scratch)
            // The keyframes asked for by the times ffprobe shows.
            options = ["--at", try Self.keyframeTimes(source).dropFirst().joined(separator: ",")]
        }
        let run = try Tool.avtool(["split", source, scratch.path("part-{n}.mp4"), "--json"] + options)
        try #require(run.status == 0, "\(run)")
        let parts = try SplitMoreTests.parts(run).compactMap { $0["output"] as? String }
        #expect(parts.count >= 4, "\(parts)")
        let original = try PacketList(source).payloads
        let (video, audio) = try SplitMoreTests.packets(of: parts)
        #expect(video.count == original[0]?.count && audio.count == original[1]?.count,
                "parts hold \(video.count) video and \(audio.count) audio packets; the source \(original[0]?.count ?? 0) and \(original[1]?.count ?? 0)")
        #expect(video == original[0] && audio == original[1], "the parts do not hold every packet once, in order")

        let joined = scratch.path("joined.mp4")
        let concat = try Tool.avtool(["concat"] + parts + [joined, "--json"])
        try #require(concat.status == 0, "\(concat)")
        let report = try #require(try JSONSerialization.jsonObject(with: concat.data) as? [String: Any])
        #expect(report["audio_mode"] as? String == "copied", "\(concat.stdout)")
        #expect(report["audio_frames_reencoded"] as? Int == 0, "\(concat.stdout)")
        let back = try PacketList(joined).payloads
        #expect(back[0] == original[0], "concat of the parts changed the video")
        // Every source packet, in order; concat pads a short audio tail to the video's end.
        let heard = back[1] ?? []
        #expect(Array(heard.prefix(original[1]?.count ?? 0)) == original[1], "concat of the parts changed the audio")
        #expect(heard.count - (original[1]?.count ?? 0) <= 1, "\(heard.count) audio packets for \(original[1]?.count ?? 0)")
    }

    /// An error names the verb the user ran, not the remux its plan shares.
    @Test func errorsNameTheVerbRun() throws {
        let scratch = try Scratch()
        let source = try Fixtures.path("h264_aac.mkv")  // subtitles MP4 cannot hold
        for (args, verb) in [(["transcode", source, scratch.path("t.mp4"), "--preset", "ultrafast"], "transcode"),
                             (["cut", source, scratch.path("c.mp4"), "--from", "1", "--to", "2"], "cut"),
                             (["split", source, scratch.path("s{n}.mp4"), "--every", "2"], "split")] {
            let r = try Tool.avtool(args)
            #expect(r.status == 1 && r.stderr.hasPrefix("avtool: error: could not \(verb) '\(source)' (stream #2): mp4 cannot hold"),
                    "\(r)")
        }
        #expect(scratch.contents.isEmpty, "left behind: \(scratch.contents)")
    }

    /// 5: hints that lead somewhere, and mistakes named as they were made.
    @Test func hintsLeadSomewhere() throws {
        let scratch = try Scratch()
        let source = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        // WebM holds none of what avtool encodes: the hint is a container that holds H.264, not transcode.
        let webm = try Tool.avtool("remux", source, scratch.path("o.webm"))
        #expect(webm.status == 1 && webm.stderr.contains("write .mkv") && !webm.stderr.contains("transcode"), "\(webm)")
        let transcode = try Tool.avtool("transcode", source, scratch.path("o.webm"))
        #expect(transcode.status == 1 && transcode.stderr.contains(".mkv"), "\(transcode)")
        // An extension libavformat knows but avtool does not write is named as such.
        let avi = try Tool.avtool("remux", source, scratch.path("o.avi"))
        #expect(avi.status == 1 && avi.stderr.contains("does not write AVI") && avi.stderr.contains(".mkv"), "\(avi)")
        // --format into a file named otherwise: written, with a warning.
        let misnamed = try Tool.avtool("remux", source, scratch.path("o.avi"), "--format", "mkv")
        #expect(misnamed.status == 0 && misnamed.stderr.contains("warning: '\(scratch.path("o.avi"))' will be a mkv file"), "\(misnamed)")
        // An unknown verb after 'help' is an unknown verb.
        let help = try Tool.avtool("help", "convert")
        #expect(help.status == 64 && help.stderr.contains("unknown verb 'convert'"), "\(help)")
        #expect(try Tool.avtool("help", "cut").status == 0)
        // ffmpeg's options are named, with avtool's own.
        let habits = try Tool.avtool("cut", source, scratch.path("c.mp4"), "-ss", "1", "-t", "2")
        #expect(habits.status == 64, "\(habits)")
        #expect(habits.stderr.contains("'-ss' (avtool's: '--from')") && habits.stderr.contains("'-t' (avtool's: '--duration')"), "\(habits)")
        // A negative value is a value: refused for what it is, and accepted where it means something.
        let negative = try Tool.avtool("cut", source, scratch.path("c.mp4"), "--from", "1", "--duration", "-1")
        #expect(negative.status == 64 && negative.stderr.contains("'--duration' -1 is negative"), "\(negative)")
        let earlier = try Tool.avtool("merge", try Fixtures.path("clicks_video.mp4"), try Fixtures.path("clicks_audio.m4a"),
                                      scratch.path("m.mov"), "--offset", "-0.5s")
        #expect(earlier.status == 0, "the help's own example: \(earlier)")
        // The same in a recipe.
        try FileManager.default.createDirectory(atPath: scratch.path("rec"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try Fixtures.path("clicks_video.mp4"), toPath: scratch.path("rec/a.mp4"))
        try FileManager.default.copyItem(atPath: try Fixtures.path("clicks_audio.m4a"), toPath: scratch.path("rec/a.m4a"))
        try """
            version: 1
            steps:
              - verb: merge
                video: rec/{name}.mp4
                audio: rec/{name}.m4a
                output: out/{name}.mov
                options:
                  offset: -0.5s
            """.write(toFile: scratch.path("r.yaml"), atomically: true, encoding: .utf8)
        let recipe = try Tool.avtool("batch", scratch.path("r.yaml"))
        #expect(recipe.status == 0 && fileExists(scratch.path("out/a.mov")), "\(recipe)")
        // Short flags avtool has still combine.
        #expect(try Tool.avtool("remux", source, scratch.path("o.mkv"), "-yq").status == 0)
        // The top-level help names every verb a recipe runs.
        let top = try Tool.avtool("--help")
        let flowing = top.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(flowing.contains("fill-silence, repair, cut, split) in parallel"), "\(top.stdout)")
    }

    /// 6: every mistake of a recipe listed at once, before any job runs: a
    /// step's unknown key, an option no verb has, a value out of range, an
    /// input that matches nothing, a range that ends before it starts, in
    /// steps of their own.
    @Test func recipeMistakesAreListedAtOnceBeforeAnyJob() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.path("in"), withIntermediateDirectories: true)
        for n in 1...2 {
            try FileManager.default.copyItem(atPath: try Fixtures.path("clicks_video.mp4"), toPath: scratch.path("in/c\(n).mp4"))
        }
        let recipe = scratch.path("r.yaml")
        try """
            version: 1
            defaults:
              transcode:
                crf: 99
            steps:
              - verb: remux
                inputs: ["in/*.mp4"]
                output: out/{stem}.mkv
              - verb: transcode
                inputs: ["in/*.mp4"]
                output: out/{stem}.mov
                options:
                  presett: fast
              - verb: remux
                inputs: ["missing/*.mp4"]
                output: out/{stem}.ts
                options:
                  no-vidoe: true
              - verb: cut
                inputs: ["in/*.mp4"]
                output: out/{stem}-cut.mp4
                options:
                  from: "0:01"
                  to: "0:00.5"
              - verb: remux
                inptus: ["in/*.mp4"]
                output: out/{stem}.mp4
            """.write(toFile: recipe, atomically: true, encoding: .utf8)
        let run = try Tool.avtool("batch", recipe)
        #expect(run.status == 2, "\(run)")
        let lines = run.stderr.split(separator: "\n").map(String.init)
        for (line, what) in [(4, "'--crf'"), (13, "presett"), (15, "no file matches 'missing/*.mp4'"), (18, "no-vidoe"),
                             (24, "'--to' 0:00.5 must be after '--from' 0:01"), (26, "unknown key 'inptus' in step 5")] {
            #expect(lines.contains { $0.contains("r.yaml:\(line):") && $0.contains(what) }, "line \(line) (\(what)) not named: \(run.stderr)")
        }
        // In the recipe's order, and nothing ran: the first step's outputs are not there.
        let numbers = lines.compactMap { $0.split(separator: ":").dropFirst(2).first.flatMap { Int($0) } }
        #expect(numbers == numbers.sorted(), "\(numbers)")
        #expect(!fileExists(scratch.path("out")), "a job ran before the mistakes were listed")
    }

    /// 7: on a terminal an existing output is replaced when the user says
    /// y, kept otherwise; without a terminal it is refused, as before.
    @Test func aTerminalIsAskedBeforeAFileIsReplaced() throws {
        guard fileExists("/usr/bin/script") else { try Test.cancel("no script(1) to give avtool a terminal") }
        let scratch = try Scratch()
        let source = try Fixtures.path("clicks_video.mp4")
        let out = scratch.path("out.mkv")
        let old = Data("an older file".utf8)
        func onATerminal(answer: String) throws -> Run {
            try old.write(to: URL(fileURLWithPath: out))
            let command = "'\(Tool.avtool)' remux '\(source)' '\(out)'"
            let feed = Pipe()
            feed.fileHandleForWriting.write(Data((answer + "\n").utf8))
            try feed.fileHandleForWriting.close()
            return try Tool.run("/usr/bin/script", ["-qec", command, "/dev/null"], stdin: feed.fileHandleForReading)
        }
        let no = try onATerminal(answer: "n")
        #expect(no.status == 1 && no.stdout.contains("exists; replace it? [y/N]"), "\(no)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == old)
        let yes = try onATerminal(answer: "y")
        #expect(yes.status == 0 && yes.stdout.contains("remuxed"), "\(yes)")
        #expect(try Tool.run("ffprobe", ["-v", "error", out]).status == 0)
        // No terminal: refused, nothing asked.
        try old.write(to: URL(fileURLWithPath: out))
        let script = try Tool.avtool("remux", source, out)
        #expect(script.status == 1 && script.stderr.contains("--overwrite") && !script.stderr.contains("replace it?"), "\(script)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == old)
    }

    /// 8: a PCM MOV into MP4 has a route that copies the video: `remux
    /// --audio aac` (the refusal says so), on PCM written by GStreamer's
    /// qtmux and by libavformat.
    @Test(arguments: ["qtmux_pcm_s24le_sowt.mov", "pcm_s16be_twos.mov"])
    func pcmMovIntoMP4CopiesTheVideo(_ name: String) throws {
        let scratch = try Scratch()
        let source = try Fixtures.path("encoders/" + name)
        let out = scratch.path("out.mp4")
        let refused = try Tool.avtool("remux", source, out)
        #expect(refused.status == 1 && refused.stderr.contains("--audio aac"), "\(refused)")
        let run = try Tool.avtool("remux", source, out, "--audio", "aac", "--json")
        try #require(run.status == 0, "\(run)")
        let original = try PacketList(source).payloads, made = try PacketList(out).payloads
        #expect(made[0] == original[0], "the video was not copied packet for packet")
        let probe = try FFprobe(out)
        #expect(probe.streams.compactMap { FFprobe.string($0, "codec_name") } == ["h264", "aac"])
        // The audio as long as the source's and starting where it did (the encoder's priming trimmed).
        let a = try #require(probe.streams.last), sourceAudio = try #require(try FFprobe(source).streams.last)
        let start = FFprobe.double(a, "start_time") ?? 1, sourceStart = FFprobe.double(sourceAudio, "start_time") ?? 0
        #expect(abs(start - sourceStart) < 0.001, "audio starts at \(start) s, the source's at \(sourceStart) s")
        let length = FFprobe.double(a, "duration") ?? 0, sourceLength = FFprobe.double(sourceAudio, "duration") ?? 0
        #expect(abs(length - sourceLength) < 0.025, "\(length) s of audio for \(sourceLength) s")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let streams = try #require(report["streams"] as? [[String: Any]])
        #expect(streams.last?["encoded_from"] as? String == FFprobe.string(sourceAudio, "codec_name"), "\(streams)")
    }

    /// 2: `cut --keep` in keyframe mode says first and plainly how much
    /// longer the file is than the ranges asked; `--mode exact` holds the
    /// ranges as asked (two real recordings with few keyframes, B-frames).
    @Test(arguments: ["real:bikes_bframes_videoonly.mp4", "real:camera_576p.mp4"])
    func keepSaysHowMuchLongerTheFileIs(_ name: String) throws {
        let scratch = try Scratch()
        let source = try MetadataTests.input(name)
        let ranges = "2.1-3.1,4.4-5.4,6.2-7.2"
        let keyframe = try Tool.avtool("cut", source, scratch.path("k.mp4"), "--keep", ranges, "--no-data", "--json")
        try #require(keyframe.status == 0, "\(keyframe)")
        let report = try #require(try JSONSerialization.jsonObject(with: keyframe.data) as? [String: Any])
        let held = try #require(report["output_seconds"] as? Double), asked = try #require(report["asked_seconds"] as? Double)
        #expect(abs(asked - 3) < 1e-9)
        let probed = FFprobe.double(try FFprobe(scratch.path("k.mp4")).format, "duration") ?? 0
        #expect(abs(held - probed) < 0.05, "the report says \(held) s, ffprobe \(probed) s")
        let warnings = report["warnings"] as? [String] ?? []
        #expect(held > asked + 0.5 && warnings.first?.contains("for the 3.0 s asked") == true, "\(warnings)")
        let exact = try Tool.avtool("cut", source, scratch.path("e.mp4"), "--keep", ranges, "--no-data", "--mode", "exact", "--json")
        try #require(exact.status == 0, "\(exact)")
        let e = try #require(try JSONSerialization.jsonObject(with: exact.data) as? [String: Any])
        let video = try #require(try FFprobe(scratch.path("e.mp4")).streams.first { FFprobe.string($0, "codec_type") == "video" })
        let exactly = FFprobe.double(video, "duration") ?? 0
        #expect(abs(exactly - 3) < 0.1, "exact mode holds \(exactly) s of video for 3 s")
        #expect(!(e["warnings"] as? [String] ?? []).contains { $0.contains("s asked") })
    }

    /// 9: an iPhone MOV into MP4 names the MP4's brand, not the input's
    /// (`major_brand=qt` was written as a tag); a place (kept as `©xyz`, as
    /// written; `loci` beside it holds it to its own precision) and a zero
    /// date (no date) are not reported as lost tags.
    @Test func iPhoneTagsAreKeptWithoutFalseAlarms() throws {
        let scratch = try Scratch()
        let iphone = try Fixtures.device("iphone14pro_dv84_hlg_720p_mebx.MOV")
        let run = try Tool.avtool("remux", iphone, scratch.path("i.mp4"), "--no-data")
        try #require(run.status == 0, "\(run)")
        let format = try FFprobe(scratch.path("i.mp4")).format
        #expect(FFprobe.tag(format, "major_brand") == "isom", "\(format)")
        #expect(FFprobe.tag(format, "com.apple.quicktime.model") == "iPhone 14 Pro")
        // A recording with a place as older iPhones write it and a zero date.
        let tagged = scratch.path("tagged.mov")
        let made = try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30:duration=1",
                                           "-c:v", "libx264", "-metadata", "location=+51.5334-000.1255+081.120/",
                                           "-metadata", "creation_time=1970-01-01T00:00:00.000000Z", tagged])
        try #require(made.status == 0, "\(made)")
        for out in ["t.mp4", "t.mov", "t.mkv"] {
            let r = try Tool.avtool("remux", tagged, scratch.path(out), "--no-bulk")
            #expect(r.status == 0 && !r.stderr.contains("warning"), "\(out): \(r.stderr)")
        }
        let place = FFprobe.tag(try FFprobe(scratch.path("t.mp4")).format, "location") ?? ""
        #expect(place == "+51.5334-000.1255+081.120/", "\(place)")
    }

    /// 9: a `--json` timeout's message is the message, not the error line
    /// again (it repeated "avtool: error:").
    @Test func aTimeoutInJSONSaysItOnce() throws {
        let scratch = try Scratch()
        let run = try Tool.avtool("transcode", try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4"), scratch.path("o.mov"),
                                  "--preset", "slow", "--timeout", "0.3s", "--json")
        #expect(run.status == 124, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let error = try #require(report["error"] as? [String: Any])
        #expect(error["code"] as? String == "timeout")
        let message = error["message"] as? String ?? ""
        #expect(message.hasPrefix("timed out after 0.3s") && !message.contains("avtool:"), "\(message)")
        #expect(run.stderr.contains("avtool: error: timed out after 0.3s"), "\(run.stderr)")
    }

    /// 9: concat's reported A/V start skew is the output's as ffprobe reads
    /// it: the first heard sample, after the encoder delay the decoder is
    /// told to skip (LAME's MP3 in MP4, an iPhone's AAC priming), which the
    /// report counted as sound (529 and 64 samples early).
    @Test(arguments: ["real:cockatoo_yuv444_mp3.mp4", "device:iphone14pro_dv84_hlg_720p_mebx.MOV"])
    func concatReportsTheSkewTheOutputHas(_ name: String) throws {
        let scratch = try Scratch()
        let source = try MetadataTests.input(name)
        let out = scratch.path("joined.mp4")
        let run = try Tool.avtool("concat", source, source, out, "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let skew = try #require(report["skew"] as? [String: Any])
        let probe = try FFprobe(out)
        let video = try #require(probe.streams.first { FFprobe.string($0, "codec_type") == "video" })
        let audio = try #require(probe.streams.first { FFprobe.string($0, "codec_type") == "audio" })
        let rate = Double(FFprobe.int(audio, "sample_rate") ?? 48000)
        let measured = ((FFprobe.double(audio, "start_time") ?? 0) - (FFprobe.double(video, "start_time") ?? 0)) * rate
        let reported = Double(skew["start_samples"] as? Int ?? Int.min)
        #expect(abs(reported - measured) <= 1, "the report says \(reported) samples, ffprobe \(measured)")
    }

    /// 9: a MOV whose edit list ends before its last frames (as iPhones
    /// write them) shows the same frames after a remux (it showed one more):
    /// hidden frames last in decode order are left out (every container);
    /// with B-frames, where a hidden frame is a reference of shown ones and
    /// stays, the MP4/MOV output's edit list ends where the shown ones do.
    @Test(arguments: [0, 3])
    func anEditListsEndIsKept(bFrames: Int) throws {
        let scratch = try Scratch()
        let whole = scratch.path("whole.mov")
        let made = try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30000/1001:duration=4",
                                           "-c:v", "libx264", "-preset", "ultrafast", "-bf", "\(bFrames)", whole])
        try #require(made.status == 0, "\(made)")
        // The edit list's one entry made 100 ms shorter than the media (movie time scale 1000).
        var data = try Data(contentsOf: URL(fileURLWithPath: whole))
        let elst = try #require(data.firstRange(of: Data("elst".utf8)))
        let entries = Int(data[elst.upperBound + 4..<elst.upperBound + 8].reduce(0) { $0 << 8 | UInt32($1) })
        let at = elst.upperBound + 8 + 12 * (entries - 1)
        let duration = data[at..<at + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } - 100
        data.replaceSubrange(at..<at + 4, with: withUnsafeBytes(of: duration.bigEndian) { Array($0) })
        let source = scratch.path("ends_early.mov")
        try data.write(to: URL(fileURLWithPath: source))
        let shown = try RepairTests.decodedHashes(source, stream: 0)
        let all = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v", "-count_packets", "-show_entries",
                                           "stream=nb_read_packets", "-of", "csv=p=0", source])
        #expect(Int(all.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 > shown.count, "the edit list hides no frame: \(all.stdout)")
        for out in bFrames == 0 ? ["o.mp4", "o.mov", "o.mkv"] : ["o.mp4", "o.mov"] {
            let r = try Tool.avtool("remux", source, scratch.path(out), "--no-bulk")
            try #require(r.status == 0, "\(r)")
            #expect(try RepairTests.decodedHashes(scratch.path(out), stream: 0) == shown, "\(out) does not show what the source shows")
        }
    }
}
