import Foundation
import Testing

/// The post-condition on every output (docs/reliability.md, "Verified
/// outputs"): each writing path made to write a wrong file on purpose
/// (`AVTOOL_TEST_FAULT`: a packet dropped, a track dropped, a track
/// stretched) refuses it — exit 1, the `internal-mismatch` code, nothing
/// left in the folder — and real recordings' data tracks no longer make a
/// file last longer than what it shows.
@Suite("verified outputs")
struct VerifiedOutputTests {
    /// A real iPhone 6s recording: H.264, AAC with an edit list, two `mebx` tracks.
    static let iphone = "iphone6s_ios9_720p_audio_elst1.mov"

    /// Each writing path, by its arguments (`IN` is the iPhone recording, `OUT` the output in the scratch folder).
    static let paths: [[String]] = [
        ["remux", "IN", "OUT.mov", "--no-bulk"],
        ["remux", "IN", "OUT.mp4"],
        ["remux", "IN", "OUT.mkv"],
        ["transcode", "IN", "OUT.mov", "--preset", "ultrafast"],
        ["transcode", "IN", "OUT.mov", "--preset", "ultrafast", "--chunks", "2"],
        ["merge", "IN", "MEMO", "OUT.mov"],
        ["concat", "IN", "IN", "OUT.mov"],
        ["fill-silence", "IN", "OUT.mov"],
        ["cut", "IN", "OUT.mov", "--from", "0.1"],
        ["cut", "IN", "OUT.mov", "--from", "0.1", "--mode", "exact"],
        ["split", "IN", "OUT{n}.mov", "--every", "0.2"],
        ["loudness", "IN", "OUT.mov", "--target", "podcast"],
    ]

    static func environment(fault: String) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["AVTOOL_TEST_FAULT"] = fault
        return env
    }

    /// Runs `arguments` with `fault`; the run must refuse its output and leave the folder empty.
    static func refuses(_ arguments: [String], fault: String) throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild(iphone), memo = try Fixtures.wild("ios_voicememos_2021.m4a")
        let args = arguments.map { a in
            a == "IN" ? input : a == "MEMO" ? memo : a.hasPrefix("OUT") ? scratch.path(a) : a
        } + ["--json"]
        let run = try Tool.run(Tool.avtool, args, environment: environment(fault: fault))
        #expect(run.status == 1, "\(arguments) with \(fault): \(run)")
        #expect(run.stdout.contains("\"internal-mismatch\""), "\(arguments) with \(fault): \(run)")
        #expect(run.stdout.contains("not what was planned"), "\(arguments) with \(fault): \(run)")
        #expect(scratch.contents.isEmpty, "\(arguments) with \(fault) left \(scratch.contents)")
    }

    @Test("a dropped packet is refused by every writing path", arguments: paths)
    func droppedPacket(_ arguments: [String]) throws {
        try Self.refuses(arguments, fault: "drop-packet")
    }

    @Test("a dropped track and a stretched one are refused", arguments: [paths[0], paths[2], paths[5], paths[6], paths[9]])
    func droppedTrackAndStretch(_ arguments: [String]) throws {
        try Self.refuses(arguments, fault: "drop-track")
        try Self.refuses(arguments, fault: "stretch")
    }

    /// Cover art is written into the index (`covr`), not as a track: a
    /// picture the muxer did not write is refused; a real iTunes file's two
    /// pictures (PNG and JPEG), through the muxer and through fill-silence.
    @Test("lost cover art is refused", arguments: [["remux", "--no-bulk"], ["fill-silence"]])
    func lostCoverArt(_ verb: [String]) throws {
        let scratch = try Scratch()
        let input = try Fixtures.real("itunes_tags_cover.m4a"), out = scratch.path("out.m4a")
        let args = [verb[0], input, out] + verb.dropFirst()
        let run = try Tool.run(Tool.avtool, args, environment: Self.environment(fault: "drop-cover-art"))
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.contains("cover art"), "\(run)")
        #expect(scratch.contents.isEmpty, "\(scratch.contents)")
        let kept = try Tool.avtool(args)
        try #require(kept.status == 0, "\(kept)")
        let pictures = try FFprobe(out).streams.filter { FFprobe.string($0, "codec_type") == "video" }.count
        #expect(pictures == 2, "\(pictures) pictures kept")
    }

    /// Cover art beside video (a real iPad clip with a picture added as
    /// the MP4 muxer writes it, `covr`) is kept by every verb that writes
    /// MP4. Before, merge, concat and fill-silence left it out without a
    /// word, and a cut from the start or a split failed ("no video packet
    /// lies in the range": the picture of an unprobed opening has no time).
    @Test("cover art beside video is kept by every verb")
    func coverArtBesideVideo() throws {
        let scratch = try Scratch()
        let picture = scratch.path("cover.png"), input = scratch.path("in.mp4")
        var r = try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "color=red:size=64x64", "-frames:v", "1", picture])
        try #require(r.status == 0, "\(r)")
        r = try Tool.run("ffmpeg", ["-v", "error", "-i", try Fixtures.wild("ipad2_ios5_h264_rot180.mov"), "-i", picture,
                                    "-map", "0:v", "-map", "0:a", "-map", "1", "-c", "copy", "-disposition:v:1", "attached_pic", input])
        try #require(r.status == 0, "\(r)")
        let runs: [(args: [String], outputs: [String])] = [
            (["fill-silence", input, "OUT"], ["fill.mp4"]),
            (["merge", input, try Fixtures.wild("ios_voicememos_2021.m4a"), "OUT"], ["merge.mp4"]),
            (["concat", input, input, "OUT"], ["concat.mp4"]),
            (["cut", input, "OUT", "--to", "1"], ["cut-head.mp4"]),
            (["cut", input, "OUT", "--from", "1", "--mode", "exact"], ["cut-tail.mp4"]),
            (["split", input, "OUT", "--at", "1"], ["split1.mp4", "split2.mp4"]),
            (["loudness", input, "OUT", "--target", "podcast"], ["loudness.mp4"]),
        ]
        for (args, outputs) in runs {
            let out = outputs.count > 1 ? scratch.path("split{n}.mp4") : scratch.path(outputs[0])
            let run = try Tool.avtool(args.map { $0 == "OUT" ? out : $0 })
            #expect(run.status == 0, "\(args[0]): \(run)")
            for o in outputs where run.status == 0 {
                let attached = try FFprobe(scratch.path(o)).streams.filter {
                    (($0["disposition"] as? [String: Any])?["attached_pic"] as? Int) == 1
                }
                #expect(attached.count == 1, "\(args[0]) \(o): \(attached.count) pictures")
            }
        }
    }

    /// A cut of a range the audio does not reach (a 1 s tone beside a real
    /// 3 s iPad clip, cut from 2 s): refused in one line with the way out,
    /// and no file left (the refusal came after the file was named before).
    @Test("a cut with no audio in its range leaves nothing")
    func cutPastTheAudio() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mp4"), out = scratch.path("out.mp4")
        let r = try Tool.run("ffmpeg", ["-v", "error", "-i", try Fixtures.wild("ipad2_ios5_h264_rot180.mov"), "-f", "lavfi",
                                        "-i", "sine=duration=1", "-map", "0:v", "-map", "1:a", "-c:v", "copy", "-c:a", "aac", input])
        try #require(r.status == 0, "\(r)")
        let run = try Tool.avtool("cut", input, out, "--from", "2")
        #expect(run.status == 1 && run.stderr.contains("no audio packet lies in the range; drop it with --no-audio"), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: out), "a refused cut left its output")
        #expect(try Tool.avtool("cut", input, out, "--from", "2", "--no-audio").status == 0)
    }

    /// The bulk copy writes no packet through a muxer: its copied index is spoiled instead (a track made `free`).
    @Test("the bulk copy's dropped track is refused")
    func bulkCopy() throws {
        let scratch = try Scratch()
        let out = scratch.path("out.mp4")
        let run = try Tool.run(Tool.avtool, ["remux", try Fixtures.device(DeviceRecordingTests.gopro), out],
                               environment: Self.environment(fault: "drop-track"))
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.contains("holds 4 track(s) where 5 were copied"), "\(run)")
        #expect(scratch.contents.isEmpty, "\(scratch.contents)")
        // Without the fault the same copy is made and kept.
        #expect(try Tool.avtool("remux", try Fixtures.device(DeviceRecordingTests.gopro), out).status == 0)
    }

    /// The longest video, audio or subtitle stream's end, and the file's duration, by ffprobe.
    static func durations(_ path: String) throws -> (content: Double, file: Double) {
        let probe = try FFprobe(path)
        let content = probe.streams.filter { ["video", "audio", "subtitle"].contains(FFprobe.string($0, "codec_type") ?? "") }
            .compactMap { s -> Double? in
                guard let d = FFprobe.double(s, "duration") else { return nil }
                return d + (FFprobe.double(s, "start_time") ?? 0)
            }.max() ?? 0
        return (content, FFprobe.double(probe.format, "duration") ?? .nan)
    }

    /// A cut of a GoPro (a timecode sample lasting the whole recording, `gpmd`, `fdsc`) and
    /// of an iPhone XR Live Photo (three `mebx` tracks) lasts what its video and audio last,
    /// with every data track the recording has (10.44 s and 0.50 s files before).
    @Test("a cut lasts what it shows", arguments: [
        (DeviceRecordingTests.gopro, true), ("iphonexr_ios15_hevc_livephoto_rot90.mov", false),
    ])
    func cutLastsWhatItShows(_ recording: String, _ device: Bool) throws {
        let scratch = try Scratch()
        let input = device ? try Fixtures.device(recording) : try Fixtures.wild(recording)
        let ext = recording.hasSuffix(".mov") ? "mov" : "mp4"
        for mode in ["keyframe", "exact"] {
            let out = scratch.path("cut-\(mode).\(ext)")
            let run = try Tool.avtool("cut", input, out, "--from", "0.1", "--duration", "0.3", "--mode", mode)
            try #require(run.status == 0, "\(run)")
            let (content, file) = try Self.durations(out)
            #expect(file <= content + 0.034, "\(mode): the file lasts \(file) s, its video and audio \(content) s")
            #expect(content < 0.5, "\(mode): \(content) s kept of a 0.3 s cut")
            let kinds = try DeviceRecordingTests.dataPackets(out).keys.map { $0.split(separator: " ").first ?? "" }.sorted()
            let before = try DeviceRecordingTests.dataPackets(input).keys.map { $0.split(separator: " ").first ?? "" }.sorted()
            #expect(kinds == before, "\(mode): data tracks \(kinds) of \(before)")
        }
    }

    /// A Live Photo joined with itself lasts twice what it shows, not what its data samples last.
    @Test("a concat of a Live Photo lasts twice its content")
    func concatLastsWhatItShows() throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild("iphonexr_ios15_hevc_livephoto_rot90.mov")
        let out = scratch.path("twice.mov")
        let run = try Tool.avtool("concat", input, input, out)
        try #require(run.status == 0, "\(run)")
        let one = try Self.durations(input), two = try Self.durations(out)
        #expect(abs(two.file - 2 * one.content) <= 0.034, "\(two.file) s for 2 × \(one.content) s")
        #expect(two.file <= two.content + 0.034, "\(two)")
    }

    /// A keyframe cut keeps the video from the keyframe before its start, hidden by the edit
    /// list: the probe of the cut says where the shown video starts, as ffprobe does (it said
    /// "A/V start skew 2000 ms" for a cut from 2 s whose streams both start at 0).
    @Test("the probe of a cut reports the skew the file has")
    func probeOfACut() throws {
        let scratch = try Scratch()
        let out = scratch.path("cut.mp4")
        let cut = try Tool.avtool("cut", try Fixtures.real("camera_576p.mp4"), out, "--from", "2", "--duration", "5")
        try #require(cut.status == 0, "\(cut)")
        let starts = try FFprobe(out).streams.compactMap { FFprobe.double($0, "start_time") }
        let run = try Tool.avtool("probe", out, "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let skew = try #require((report["sync"] as? [String: Any])?["skew"] as? [String: Any])
        let micros = try #require(skew["start_microseconds"] as? Int)
        let expected = (starts.last! - starts.first!) * 1e6
        #expect(abs(Double(micros) - expected) <= 40_000, "skew \(micros) µs where the streams start at \(starts)")
    }

    /// A podcast's shape: AAC, its cover as a one-frame JPEG video track, chapter titles and
    /// links as two `tx3g` tracks. fill-silence keeps every track the target holds, every
    /// packet byte for byte (it wrote the audio and the picture alone).
    @Test("a podcast keeps its artwork and both text tracks")
    func podcastKeepsItsTracks() throws {
        let scratch = try Scratch()
        let chapters = scratch.path("chapters.srt"), links = scratch.path("links.srt"), input = scratch.path("podcast.mp4")
        try "1\n00:00:00,000 --> 00:00:02,000\nIntro\n\n2\n00:00:02,000 --> 00:00:04,000\nPart two\n"
            .write(toFile: chapters, atomically: true, encoding: .utf8)
        try "1\n00:00:00,000 --> 00:00:04,000\nhttps://example.org/episode\n".write(toFile: links, atomically: true, encoding: .utf8)
        let made = try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=4", "-f", "lavfi",
                                           "-i", "color=red:size=300x300:duration=1", "-i", chapters, "-i", links,
                                           "-map", "0", "-map", "1", "-map", "2", "-map", "3", "-c:a", "aac", "-c:v", "mjpeg",
                                           "-frames:v", "1", "-c:s", "mov_text", input])
        try #require(made.status == 0, "\(made)")
        // Per codec, each track's packets ("size:hash"): the output puts the video first.
        func byCodec(_ path: String) throws -> [String: [[String]]] {
            Dictionary(grouping: try RemuxLossTests.packets(path), by: { String($0.key.split(separator: " ").last ?? "") })
                .mapValues { $0.map(\.value).sorted { $0.joined() < $1.joined() } }
        }
        let out = scratch.path("filled.mp4")
        let run = try Tool.avtool("fill-silence", input, out)
        try #require(run.status == 0, "\(run)")
        let expected = try byCodec(input), got = try byCodec(out)
        #expect(got.keys.sorted() == ["aac", "mjpeg", "mov_text"], "\(got.keys.sorted())")
        #expect(got["mov_text"]?.count == 2, "\(got["mov_text"]?.count ?? 0) text tracks")
        #expect(got == expected, "the packets differ")
        // Into .m4a, which holds audio only: refused in one line that names the picture's track
        // and the container that keeps it (before: "m4a cannot hold video codec 'mjpeg'; choose a
        // container that holds it (mov, mkv)"), with the code for what a container cannot hold.
        for verb in ["remux", "fill-silence"] {
            let m4a = try Tool.avtool(verb, input, scratch.path("\(verb).m4a"), "--json")
            #expect(m4a.status != 0, "\(verb)")
            #expect(m4a.stderr.contains("(stream #1): m4a cannot hold video codec 'mjpeg'; write .mp4 or .mov, which hold it (an .m4a holds audio only)"),
                    "\(verb): \(m4a.stderr)")
            #expect(m4a.stdout.contains("\"code\" : \"unsupported\""), "\(verb): \(m4a.stdout)")
            #expect(!FileManager.default.fileExists(atPath: scratch.path("\(verb).m4a")))
        }
    }
}
