import Foundation
import Testing

/// `avtool cut`, keyframe mode, checked with ffprobe and ffmpeg: the video
/// kept is a run of the input's packets, byte for byte; in MP4/MOV the first
/// frame shown is the one at --from and the audio starts at --from to the
/// sample (edit lists); click-track cuts keep every beep within 1 ms of its
/// flash, where `ffmpeg -ss -to -c copy` is measured beside.
@Suite("cut")
struct CutTests {
    /// A 10 s click recording in one MP4 (keyframes at 0, 2.4, 4.8, 7.2, 9.6 s).
    static func clickRecording(_ scratch: Scratch, ext: String = "mp4") throws -> String {
        let path = scratch.path("clicks." + ext)
        let r = try Tool.run("ffmpeg", ["-v", "error", "-i", try Fixtures.path("clicks_video.mp4"),
                                        "-i", try Fixtures.path("clicks_audio.m4a"), "-map", "0", "-map", "1",
                                        "-c", "copy", path])
        try #require(r.status == 0, "\(r)")
        return path
    }

    /// Whether `part` is a contiguous run of `whole`.
    static func isRun(_ part: [String], of whole: [String]) -> Bool {
        guard let first = part.first else { return false }
        return whole.indices.contains { i in whole[i] == first && Array(whole[i...].prefix(part.count)) == part }
    }

    static func decoded(_ path: String, stream: String = "0:v:0") throws -> [(pts: Double, hash: String)] {
        let r = try Tool.run("ffmpeg", ["-v", "error", "-i", path, "-map", stream, "-fps_mode", "passthrough",
                                        "-f", "framemd5", "-"])
        // framemd5: stream, dts, pts, duration, size, hash (timestamps in the stream's time base, given in the header).
        let tb = r.stdout.split(separator: "\n").first { $0.hasPrefix("#tb") }?.split(separator: ":").last
            .map { $0.trimmingCharacters(in: .whitespaces).split(separator: "/").compactMap { Double($0) } } ?? [1, 1]
        return r.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            let f = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return ((Double(f[2]) ?? 0) * tb[0] / tb[1], f[5])
        }
    }

    @Test(arguments: [(2.52, 7.3), (2.51, 7.3), (1.013, nil), (3.0, 8.64), (0.0, 4.5), (5.0, nil)] as [(Double, Double?)])
    func clickTrackCutStartsAtFromAndStaysInSync(from: Double, to: Double?) throws {
        let scratch = try Scratch()
        let source = try Self.clickRecording(scratch)
        let out = scratch.path("cut.mp4")
        var args = ["cut", source, out, "--from", String(from), "--json"]
        if let to { args += ["--to", String(to)] }
        let run = try Tool.avtool(args)
        try #require(run.status == 0, "\(run)")
        // The output starts where the frame shown at --from starts (25 fps: within 40 ms before it).
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let start = try #require(report["start"] as? Double)
        #expect(start <= from + 1e-6 && start > from - 0.04, "starts at \(start)")

        // Video: a run of the input's packets, byte for byte.
        let whole = try PacketList(source).payloads, part = try PacketList(out).payloads
        #expect(Self.isRun(part[0] ?? [], of: whole[0] ?? []), "video is not a run of the input's packets")
        #expect(Self.isRun(part[1] ?? [], of: whole[1] ?? []), "audio is not a run of the input's packets")
        // The first frame shown is the source's frame at --from (25 fps: within one frame).
        let shown = try Self.decoded(out), original = try Self.decoded(source)
        let atFrom = try #require(original.last { $0.pts <= from + 0.0005 })
        #expect(shown.first?.hash == atFrom.hash, "first frame shown is not the one at \(from) s")
        #expect(abs(shown.first?.pts ?? 1) < 0.0405, "first frame shown at \(shown.first?.pts ?? -1) s")
        // Audio starts at --from, to the sample, and lasts to --to.
        let probe = try FFprobe(out)
        let audio = try #require(probe.streams.first { FFprobe.string($0, "codec_type") == "audio" })
        #expect(abs(FFprobe.double(audio, "start_time") ?? 1) <= 1 / 48_000, "audio starts at \(FFprobe.double(audio, "start_time") ?? -1)")
        let c = try ClickTrack(out)
        let expectedBeeps = (0...9).filter { Double($0) >= start - 1e-6 && Double($0) < (to ?? 10) }.count
        #expect(c.beeps.count == expectedBeeps, "beeps \(c.beeps)")
        for (b, e) in zip(c.beeps, c.beepErrors) {
            #expect(e <= 0.001, "beep at \(b) s is \(e * 1000) ms from its flash")
        }
        if let to {
            #expect(abs(c.audioSeconds - (to - start)) <= 1024 / 48_000, "audio lasts \(c.audioSeconds) s")
        }
    }

    /// A keyframe cut shows the range to the frame: `--from 3.5 --to 8.2`
    /// of a 30 fps recording with B-frames shows 4.70 s (141 frames), not
    /// the reference frame after 8.2 s it keeps for the B-frames before it
    /// (the edit list ends where the frames before --to end), every beep
    /// within 1 ms of its flash.
    @Test(arguments: ["mp4", "mov"])
    func keyframeCutLastsTheRangeToTheFrame(ext: String) throws {
        let scratch = try Scratch()
        let source = scratch.path("clicks30." + ext)
        let video = "color=c=black:s=320x240:r=30:d=10,drawbox=x=0:y=0:w=iw:h=ih:color=white:t=fill:enable='eq(mod(n\\,30)\\,0)'"
        let audio = "aevalsrc='if(lt(mod(t\\,1)\\,0.01)\\,0.5*sin(2*PI*1000*t)\\,0)':s=48000:d=10:n=1024"
        let made = try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", video, "-f", "lavfi", "-i", audio,
                                           "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p",
                                           "-x264-params", "keyint=72:min-keyint=72:scenecut=0:bframes=3:b-adapt=0:b-pyramid=normal:threads=1",
                                           "-c:a", "aac", "-b:a", "96k", source])
        try #require(made.status == 0, "\(made)")
        let out = scratch.path("cut." + ext)
        let run = try Tool.avtool("cut", source, out, "--from", "3.5", "--to", "8.2", "-q")
        try #require(run.status == 0, "\(run)")
        let frames = try Self.decoded(out)
        #expect(abs(Double(frames.count) / 30 - 4.70) <= 0.034, "\(frames.count) frames shown")
        let probe = try FFprobe(out)
        let v = try #require(probe.streams.first { FFprobe.string($0, "codec_type") == "video" })
        let shown = FFprobe.double(v, "duration") ?? 0
        #expect(abs(shown - 4.70) <= 0.034, "video lasts \(shown) s")
        // The headers agree with the edits: the file lasts the range too (its audio's last frame at most).
        let length = FFprobe.double(probe.format, "duration") ?? 0
        #expect(length >= 4.70 - 0.001 && length <= 4.70 + 1024 / 48_000, "the file lasts \(length) s")
        // The first and last frames shown are the source's at 3.5 s and the last before 8.2 s.
        let original = try Self.decoded(source)
        #expect(frames.first?.hash == original.first { abs($0.pts - 3.5) < 0.001 }?.hash)
        #expect(frames.last?.hash == original.last { $0.pts < 8.2 - 0.001 }?.hash)
        let c = try ClickTrack(out)
        #expect(c.beeps.count == 5, "beeps \(c.beeps)")
        for (b, e) in zip(c.beeps, c.beepErrors) {
            #expect(e <= 0.001, "beep at \(b) s is \(e * 1000) ms from its flash")
        }
    }

    /// The same on real recordings, whose packets carry no duration (HandBrake's
    /// B-frame MP4) or come from a camera: the frames shown are exactly the
    /// source's from the one shown at --from to the last before --to.
    @Test(arguments: [("real:birds_handbrake_bframes.mp4", 0.313, 0.626), ("real:camera_576p.mp4", 3.067, 6.133),
                      ("device:gopro_max_heromode_gpmd.mp4", 3.155, 6.31)])
    func keyframeCutShowsTheRangeOnRealRecordings(name: String, from: Double, to: Double) throws {
        let scratch = try Scratch()
        let source = try MetadataTests.input(name)
        let out = scratch.path("cut.mp4")
        let run = try Tool.avtool("cut", source, out, "--from", String(from), "--to", String(to), "--no-data", "-q")
        try #require(run.status == 0, "\(run)")
        let original = try Self.decoded(source)
        let first = try #require(original.lastIndex { $0.pts <= from + 0.0005 })
        let expected = original[first...].filter { $0.pts < to - 0.0005 }.map(\.hash)
        #expect(try Self.decoded(out).map(\.hash) == expected)
    }

    /// The `ffmpeg` program's stream-copy cut of the same range, measured the
    /// same way, for the record: it starts at the keyframe with its audio
    /// from --from, so every beep is off by the distance to the keyframe.
    @Test func ffmpegOnTheSameCutForComparison() throws {
        let scratch = try Scratch()
        let source = try Self.clickRecording(scratch)
        let ours = scratch.path("ours.mp4"), theirs = scratch.path("ffmpeg.mp4")
        #expect(try Tool.avtool("cut", source, ours, "--from", "3", "--to", "8.5").status == 0)
        let r = try Tool.run("ffmpeg", ["-v", "error", "-ss", "3", "-to", "8.5", "-i", source, "-c", "copy", theirs])
        try #require(r.status == 0, "\(r)")
        let a = try ClickTrack(ours), b = try ClickTrack(theirs)
        let worstOurs = a.beepErrors.max() ?? .infinity, worstTheirs = b.beepErrors.max() ?? .infinity
        #expect(worstOurs <= 0.001)
        print("cut 3–8.5 s of the click recording: avtool worst beep error \(worstOurs * 1000) ms, ffmpeg -ss -to -c copy \(worstTheirs * 1000) ms")
    }

    /// A real camera recording with B-frames: the frames shown are the
    /// source's frames from --from to --to, in order, none missing.
    @Test func realRecordingWithBFrames() throws {
        let scratch = try Scratch()
        let source = try Fixtures.real("camera_576p.mp4")
        let out = scratch.path("cut.mov")
        let run = try Tool.avtool("cut", source, out, "--from", "5.5", "--to", "8")
        try #require(run.status == 0, "\(run)")
        let whole = try PacketList(source).payloads, part = try PacketList(out).payloads
        #expect(Self.isRun(part[0] ?? [], of: whole[0] ?? []))
        let shown = try Self.decoded(out).map(\.hash), original = try Self.decoded(source)
        let expected = original.filter { $0.pts >= 5.5 - 0.0005 - 1 / 25.0 && $0.pts < 8 - 0.0005 }.map(\.hash)
        // The frame spanning --from is shown from --from; frames needed as references may follow --to.
        #expect(Array(shown.prefix(expected.count)) == expected || Array(shown.prefix(expected.count - 1)) == Array(expected.dropFirst()),
                "\(shown.count) frames shown, \(expected.count) expected")
        #expect(try GstDiscoverer(out).ok)
        let check = try Tool.run("ffmpeg", ["-v", "error", "-xerror", "-i", out, "-f", "null", "-"])
        #expect(check.status == 0, "\(check)")
    }

    /// Matroska has no edit lists: the output starts at the keyframe, the
    /// report says how far before --from, and A/V stays in sync.
    @Test func matroskaStartsAtTheKeyframe() throws {
        let scratch = try Scratch()
        let source = try Self.clickRecording(scratch)
        let out = scratch.path("cut.mkv")
        let run = try Tool.avtool("cut", source, out, "--from", "3", "--duration", "3.5")
        try #require(run.status == 0, "\(run)")
        #expect(run.stderr.contains("starts at the keyframe 0.600 s before --from"), "\(run.stderr)")
        let c = try ClickTrack(out)
        #expect(c.beeps.count == 4, "beeps \(c.beeps)")
        for e in c.beepErrors { #expect(e <= 0.001) }
    }

    @Test func refusals() throws {
        let scratch = try Scratch()
        let source = try Self.clickRecording(scratch)
        let out = scratch.path("out.mp4")
        for (args, text) in [(["--from", "5", "--to", "4"], "after"), (["--from", "30"], "past the end"),
                             ([], "--from"), (["--from", "1:75"], "not a time"),
                             (["--to", "3", "--duration", "2"], "not both")] {
            let run = try Tool.avtool(["cut", source, out] + args)
            #expect(run.status != 0 && run.stderr.contains(text), "\(args): \(run)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }

    /// A QuickTime 3GPP export of 2005 (AMR-NB, MPEG-4 video, an RTP hint
    /// track for each): the audio's hint track ends at 69.812 s, before the
    /// audio (69.9 s) and the video (70 s). A cut from 69.87 s (the frame
    /// shown there starts at 69.867 s) holds no sample of it: the muxer
    /// writes no such track, and the report names it (before: "its track
    /// is empty", a track the file did not hold).
    @Test func aTrackTheRangeHoldsNoSampleOfIsNamed() throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild("qt_3gpp_export_2005_amrnb_mp4v_hinted.3gp")
        let out = scratch.path("tail.3gp")
        let run = try Tool.avtool("cut", input, out, "--from", "69.87", "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let warnings = report["warnings"] as? [String] ?? []
        #expect(warnings.contains { $0.hasPrefix("stream #3 (data rtp") && $0.hasSuffix(": no packet of it to write, and 3gp holds no empty track: the output has none") },
                "\(warnings)")
        #expect(try FFprobe(out).streams.count == 3)
        // The video from the keyframe at 69 s (15 frames, those before 69.867 s not shown), its hint
        // samples from the frame shown at 69.867 s: the input's last packets, byte for byte.
        let whole = try PacketList(input).payloads, part = try PacketList(out).payloads
        #expect(part[1] == Array((whole[1] ?? []).suffix(15)), "\(part[1]?.count ?? 0) video packets")
        #expect(part[2] == Array((whole[2] ?? []).suffix(2)), "\(part[2]?.count ?? 0) hint packets")
        // The audio: the packet that holds 69.87 s (5 AMR frames, 100 bytes), written a frame each.
        let amr = { (path: String) throws -> Data in
            let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a", "-c", "copy", "-f", "data", "-"])
            try #require(r.status == 0, "\(r)")
            return r.data
        }
        let a = try amr(input), b = try amr(out)
        #expect(b.count == 100 && b == a.suffix(100), "\(b.count) bytes of audio")
    }

    /// `--keep` says once, of the joined output, what a single cut says of
    /// its own: the tags the target cannot hold (before: nothing, the parts'
    /// reports were not read), the data tracks it cannot hold, and no track
    /// as empty that one of the ranges holds.
    @Test func keepReportsTheJoinedOutputsLosses() throws {
        let scratch = try Scratch()
        let input = try Fixtures.device("gopro_max_heromode_gpmd.mp4")
        let out = scratch.path("kept.mkv")
        let run = try Tool.avtool("cut", input, out, "--keep", "1-3,6-8", "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let warnings = report["warnings"] as? [String] ?? []
        #expect(warnings.filter { $0.contains("tag(s) not kept") }.count == 1, "\(warnings)")
        #expect(warnings.contains { $0.hasPrefix("2 tag(s) not kept (mkv cannot hold them as they were): stream #0 creation_time=") },
                "\(warnings)")
        #expect(warnings.filter { $0.contains("data track gpmd") }.count == 1, "\(warnings)")
        #expect(!warnings.contains { $0.contains("no packet of it to write") }, "\(warnings)")
        // A track the first range holds and the second does not is the output's, and not named.
        let hinted = try Fixtures.wild("qt_3gpp_export_2005_amrnb_mp4v_hinted.3gp")
        let joined = scratch.path("kept.3gp")
        let both = try Tool.avtool("cut", hinted, joined, "--keep", "0-2,69.87-70.5", "--json")
        try #require(both.status == 0, "\(both)")
        let said = try #require(try JSONSerialization.jsonObject(with: both.data) as? [String: Any])
        #expect(!(said["warnings"] as? [String] ?? []).contains { $0.contains("no packet of it to write") }, "\(said)")
        #expect(try FFprobe(joined).streams.count == 4)
    }

    /// An iTunes 6 movie's chapters are a QuickTime chapter track, whose
    /// samples libavformat reads as the file's chapters (never as packets):
    /// the cut writes them again as its own chapter track, clipped to the
    /// range, and says so, not that a track is missing (before: "stream #1
    /// (data) has no packet in the range: its track is empty").
    @Test func aChapterTrackIsWrittenAgainFromTheChapters() throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild("itunes6_aac_qt_chapter_track.m4v")
        let out = scratch.path("cut.m4v")
        let run = try Tool.avtool("cut", input, out, "--from", "1", "--to", "3", "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        #expect((report["warnings"] as? [String] ?? []).isEmpty, "\(report["warnings"] ?? "")")
        let dropped = report["dropped"] as? [[String: Any]] ?? []
        #expect(dropped.count == 1 && dropped.first?["index"] as? Int == 1
                && (dropped.first?["reason"] as? String) == "chapters: 4 chapter(s) written again as a chapter track", "\(dropped)")
        let probe = try Tool.run("ffprobe", ["-v", "error", "-show_chapters", "-show_streams", "-of", "json", out])
        let json = try #require(try JSONSerialization.jsonObject(with: probe.data) as? [String: Any])
        let titles = (json["chapters"] as? [[String: Any]] ?? []).map { ($0["tags"] as? [String: Any])?["title"] as? String ?? "" }
        #expect(titles == ["Chapter One", "Chapter 2", "Chapter 003"], "\(titles)")
        let tags = (json["streams"] as? [[String: Any]] ?? []).map { $0["codec_tag_string"] as? String ?? "" }
        #expect(tags == ["mp4a", "text"], "\(tags)")
    }
}

/// `avtool split`: parts start on keyframes, and `avtool concat` of the
/// parts gives back the input's packets and its sync.
@Suite("split")
struct SplitTests {
    @Test(arguments: [["--every", "3"], ["--at", "2.5,6.1"]])
    func concatOfThePartsIsTheInput(_ points: [String]) throws {
        let scratch = try Scratch()
        let source = try CutTests.clickRecording(scratch)
        let run = try Tool.avtool(["split", source, scratch.path("part-{n}.mp4"), "--json"] + points)
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let parts = try #require(report["parts"] as? [[String: Any]])
        // Keyframes at 0, 2.4, 4.8, 7.2, 9.6 s: the last at or before each point.
        let starts = parts.compactMap { $0["start"] as? Double }
        #expect(starts == (points[0] == "--every" ? [0, 2.4, 4.8, 7.2] : [0, 2.4, 4.8]), "\(starts)")
        let paths = parts.compactMap { $0["output"] as? String }
        // Each part starts with a keyframe shown at its start.
        for p in paths {
            let first = try #require(try PacketList(p).packets.first { $0.stream == 0 })
            #expect(first.pts == 0, "\(p): video starts at \(first.pts ?? -1)")
        }
        let joined = scratch.path("joined.mp4")
        let concat = try Tool.avtool(["concat"] + paths + [joined, "--json"])
        try #require(concat.status == 0, "\(concat)")
        let original = try PacketList(source).payloads, back = try PacketList(joined).payloads
        #expect(back[0] == original[0], "video packets differ")
        #expect(back[1] == original[1], "audio packets differ: \(back[1]?.count ?? 0) vs \(original[1]?.count ?? 0)")
        let c = try ClickTrack(joined)
        #expect(c.beeps.count == 10, "beeps \(c.beeps)")
        for (b, e) in zip(c.beeps, c.beepErrors) { #expect(e <= 0.001, "beep at \(b) s is \(e * 1000) ms from its flash") }
        // Every part alone is in sync too.
        for p in paths {
            for e in try ClickTrack(p).beepErrors { #expect(e <= 0.001, "\(p): \(e * 1000) ms") }
        }
    }

    @Test func realRecordingWithBFrames() throws {
        let scratch = try Scratch()
        let source = try Fixtures.real("camera_576p.mp4")
        let run = try Tool.avtool("split", source, scratch.path("p{n}.mov"), "--every", "4", "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let paths = (report["parts"] as? [[String: Any]])?.compactMap { $0["output"] as? String } ?? []
        // Its keyframes are 4.88 s apart: the points at 4 and 8 s give parts from 0 and 4.88 s.
        #expect(paths.count == 2)
        #expect((report["warnings"] as? [String])?.contains { $0.contains("same stretch between keyframes") } == true)
        var video: [String] = [], audio: [String] = []
        for p in paths {
            let l = try PacketList(p).payloads
            video += l[0] ?? []
            audio += l[1] ?? []
            let check = try Tool.run("ffmpeg", ["-v", "error", "-xerror", "-i", p, "-f", "null", "-"])
            #expect(check.status == 0, "\(p): \(check)")
        }
        let original = try PacketList(source).payloads
        #expect(video == original[0] && audio == original[1], "the parts do not hold every packet once")
    }

    @Test func dryRunWritesNothing() throws {
        let scratch = try Scratch()
        let source = try CutTests.clickRecording(scratch)
        let run = try Tool.avtool("split", source, scratch.path("part-{n}.mp4"), "--every", "5", "--dry-run")
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.contains("would split") && run.stderr.contains("4.800–end s"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("part-1.mp4")))
    }
}

/// Chapters follow the cut: clipped to the part and moved to its start.
@Suite("cut chapters")
struct CutChapterTests {
    @Test func chaptersAreClippedAndMoved() throws {
        let scratch = try Scratch()
        let meta = scratch.path("chapters.txt")
        try """
            ;FFMETADATA1
            [CHAPTER]
            TIMEBASE=1/1000
            START=0
            END=2000
            title=one
            [CHAPTER]
            TIMEBASE=1/1000
            START=2000
            END=6000
            title=two
            [CHAPTER]
            TIMEBASE=1/1000
            START=6000
            END=10000
            title=three

            """.write(toFile: meta, atomically: true, encoding: .utf8)
        let source = scratch.path("chapters.mp4")
        let r = try Tool.run("ffmpeg", ["-v", "error", "-i", try Fixtures.path("clicks_video.mp4"), "-i", meta,
                                        "-map", "0", "-map_chapters", "1", "-c", "copy", source])
        try #require(r.status == 0, "\(r)")
        let out = scratch.path("cut.mp4")
        let run = try Tool.avtool("cut", source, out, "--from", "3", "--to", "7")
        try #require(run.status == 0, "\(run)")
        let probe = try Tool.run("ffprobe", ["-v", "error", "-show_chapters", "-of", "json", out])
        let chapters = try #require((try JSONSerialization.jsonObject(with: probe.data) as? [String: Any])?["chapters"] as? [[String: Any]])
        let got = chapters.map { c in
            ((c["tags"] as? [String: Any])?["title"] as? String ?? "", Double(c["start_time"] as? String ?? "") ?? -1,
             Double(c["end_time"] as? String ?? "") ?? -1)
        }
        #expect(got.map(\.0) == ["two", "three"], "\(got)")
        #expect(got.map(\.1) == [0, 3] && got.map(\.2) == [3, 4], "\(got)")
    }
}

/// MPEG-TS input (no index: seeking lands by timestamp, not on a keyframe).
@Suite("cut from MPEG-TS")
struct CutTSTests {
    @Test(arguments: ["mp4", "ts"])
    func cutsAnMPEGTSRecording(_ ext: String) throws {
        let scratch = try Scratch()
        let source = try CutTests.clickRecording(scratch, ext: "ts")
        let out = scratch.path("cut." + ext)
        let run = try Tool.avtool("cut", source, out, "--from", "5.5", "--to", "8.5")
        try #require(run.status == 0, "\(run)")
        let c = try ClickTrack(out)
        // MP4 starts at 5.5 s (beeps at 6, 7, 8); MPEG-TS at the keyframe at 4.8 s (also the beep at 5).
        #expect(c.beeps.count == (ext == "mp4" ? 3 : 4), "beeps \(c.beeps)")
        for (b, e) in zip(c.beeps, c.beepErrors) { #expect(e <= 0.001, "beep at \(b) s is \(e * 1000) ms from its flash") }
    }
}

/// Audio only: split points fall anywhere; every packet is in one part.
@Suite("split audio")
struct SplitAudioTests {
    @Test func audioPartsHoldEveryPacketOnce() throws {
        let scratch = try Scratch()
        let source = try Fixtures.path("aac48_stereo.m4a")
        let run = try Tool.avtool("split", source, scratch.path("a{n}.m4a"), "--every", "1.7", "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let paths = (report["parts"] as? [[String: Any]])?.compactMap { $0["output"] as? String } ?? []
        #expect(paths.count >= 3)
        var all: [String] = []
        for p in paths { all += try PacketList(p).payloads[0] ?? [] }
        #expect(all == (try PacketList(source).payloads[0] ?? []), "\(all.count) packets in the parts")
        // A cut of the same file keeps the range.
        let cut = scratch.path("cut.m4a")
        #expect(try Tool.avtool("cut", source, cut, "--from", "2", "--to", "3").status == 0)
        let seconds = FFprobe.double(try FFprobe(cut).stream(0), "duration") ?? 0
        #expect(abs(seconds - 1) <= 1024 / 48_000.0 + 0.001, "\(seconds) s")
    }
}
