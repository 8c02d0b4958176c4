import Foundation
import Testing

/// A recording cut off (a crash, a copy that stopped): refused with what is
/// missing, never a short output with exit 0; with `--salvage`, every
/// complete packet kept, the same bytes as the original's first packets, at
/// least as many as the `ffmpeg` program keeps.
struct CutCase: CustomTestStringConvertible, Sendable {
    let source: String
    /// Percent of the file kept.
    let percent: Int
    /// Written as fragmented MP4 first (no whole index).
    var fragmented = false

    var testDescription: String { "\(source) cut at \(percent)%" + (fragmented ? " (fragmented)" : "") }
}

let cutCases: [CutCase] = [
    CutCase(source: "h264_bframes_2997_aac48_stereo.mp4", percent: 30),
    CutCase(source: "h264_bframes_2997_aac48_stereo.mp4", percent: 75),
    // Its media data starts at 70% (the first 70% hold no complete packet).
    CutCase(source: "real:sample_1080p_23976.mp4", percent: 85),
    CutCase(source: "real:sample_1080p_23976.mp4", percent: 95),
    CutCase(source: "h264_bframes_2997_aac48_stereo.mp4", percent: 50, fragmented: true),
]

@Suite("cut-off inputs")
struct TruncationTests {
    /// The original (perhaps rewritten as fragments) and the cut copy.
    func cut(_ c: CutCase, in scratch: Scratch) throws -> (whole: String, cut: String) {
        var whole = try MetadataTests.input(c.source)
        if c.fragmented {
            let f = scratch.path("fragmented.mp4")
            let r = try Tool.run("ffmpeg", ["-v", "error", "-i", whole, "-map", "0", "-c", "copy",
                                            "-movflags", "frag_keyframe+empty_moov", f])
            try #require(r.status == 0, "\(r)")
            whole = f
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        let path = scratch.path("cut.mp4")
        try data.prefix(data.count * c.percent / 100).write(to: URL(fileURLWithPath: path))
        return (whole, path)
    }

    @Test(arguments: cutCases)
    func refusedWithWhatIsMissing(_ c: CutCase) throws {
        let scratch = try Scratch()
        let (_, input) = try cut(c, in: scratch)
        for verb in [["remux"], ["transcode", "--preset", "ultrafast"]] {
            let out = scratch.path("out.mp4")
            let run = try Tool.avtool([verb[0], input, out] + verb.dropFirst())
            #expect(run.status == 1, "\(run)")
            #expect(run.stderr.contains("--salvage"), "\(run.stderr)")
            // The index (or the fragments) says how much is there, before a packet is read (a read names its stream).
            #expect(run.stderr.contains("is cut off: only") && run.stderr.contains("video"), "\(run.stderr)")
            #expect(!run.stderr.contains("(stream #"), "\(run.stderr)")
            #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
        #expect(scratch.contents.filter { $0.hasPrefix("out") || $0.hasPrefix(".") }.isEmpty, "\(scratch.contents)")
    }

    @Test(arguments: cutCases)
    func salvageKeepsEveryCompletePacket(_ c: CutCase) throws {
        let scratch = try Scratch()
        let (whole, input) = try cut(c, in: scratch)
        let out = scratch.path("out.mp4")
        let run = try Tool.avtool("remux", input, out, "--salvage", "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        #expect((report["warnings"] as? [String])?.contains { $0.hasPrefix("salvaged what was readable") } == true,
                "\(run.stdout)")
        let original = try PacketList(whole).payloads, kept = try PacketList(out).payloads
        // The ffmpeg program's stream copy of the same cut file, for the count.
        let ff = scratch.path("ffmpeg.mp4")
        _ = try Tool.run("ffmpeg", ["-v", "quiet", "-i", input, "-map", "0", "-c", "copy", ff])
        let byFFmpeg = (try? PacketList(ff).payloads) ?? [:]
        var lost = 0
        for (stream, packets) in original.sorted(by: { $0.key < $1.key }) {
            let got = kept[stream] ?? []
            #expect(!got.isEmpty || stream > 0, "stream \(stream): nothing kept")
            lost += packets.count - got.count
            #expect(Array(packets.prefix(got.count)) == got, "stream \(stream): not the original's first packets")
            // ffmpeg also writes the packet the cut runs through (its bytes cut
            // short): only its complete packets, the original's, count.
            let ffmpegWhole = zip(byFFmpeg[stream] ?? [], packets).prefix { $0 == $1 }.count
            #expect(got.count >= ffmpegWhole, "stream \(stream): \(got.count) kept, ffmpeg keeps \(ffmpegWhole) whole")
        }
        #expect(lost > 0, "a cut file cannot hold every packet")
        // Every packet the refusal counts as in the file is kept.
        let refusal = try Tool.avtool("remux", input, scratch.path("refused.mp4"))
        let present = refusal.stderr.components(separatedBy: "only ").last?.components(separatedBy: " are in the file").first
        let warning = (report["warnings"] as? [String])?.first { $0.hasPrefix("salvaged") } ?? ""
        #expect(present.map { warning.contains("kept " + $0) } == true, "\(refusal.stderr) vs \(warning)")
        // The report says how many were kept.
        let salvage = try #require(report["salvage"] as? [String: Any], "\(run.stdout)")
        #expect((salvage["kept"] as? [Int])?.reduce(0, +) == kept.values.map(\.count).reduce(0, +))
    }

    /// A real phone recording fragmented by GStreamer (`mp4mux`, a fragment
    /// every 400 ms), cut at 70 % inside its last fragment's media data, or
    /// inside the `moof` of the fragment after (which libavformat cannot open
    /// at all: it read as "not a media file"): refused before any packet is
    /// read (no stream named, as a read names the one it failed on), with
    /// what its fragments list and the file holds per track — by ffprobe's
    /// packets of the whole file, those of the fragments whose `moof`
    /// starts before the cut, and of them those whose bytes end by it. probe
    /// says the same (`cut_off`), and repair keeps that many of that many.
    @Test(arguments: [false, true])
    func fragmentedRecordingCutInsideItsLastFragment(insideMoof: Bool) throws {
        let scratch = try Scratch()
        let whole = scratch.path("whole.mp4")
        let r = try Tool.run("gst-launch-1.0", [
            "-q", "filesrc", "location=\(try Fixtures.wild("iphone4s_ios5_baseline_rot90_vfr.mov"))", "!", "qtdemux", "name=d",
            "d.video_0", "!", "queue", "!", "h264parse", "!", "mux.", "d.audio_0", "!", "queue", "!", "aacparse", "!", "mux.",
            "mp4mux", "name=mux", "fragment-duration=400", "!", "filesink", "location=\(whole)",
        ])
        try #require(r.status == 0, "\(r)")
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        let moofs = ShorterRecording.boxes(data, in: 0..<data.count).filter { $0.0 == "moof" }.map(\.1)
        try #require(moofs.count > 3 && !moofs.contains { $0.contains(data.count * 70 / 100) }, "70 % is in media data: \(moofs)")
        // Inside the moof: 10 bytes short of its end, its trun's counts there.
        let next = try #require(moofs.first { $0.lowerBound >= data.count * 70 / 100 })
        let bytes = insideMoof ? next.upperBound - 10 : data.count * 70 / 100
        let input = scratch.path("cut.mp4")
        try data.prefix(bytes).write(to: URL(fileURLWithPath: input))
        let listedBefore = moofs.first { $0.lowerBound >= (insideMoof ? next.upperBound : bytes) }?.lowerBound ?? data.count
        // The oracle: ffprobe's packets of the whole file, per stream in order.
        let probed = try Tool.run("ffprobe", ["-v", "error", "-show_entries", "packet=stream_index,pos,size:stream=index,codec_type",
                                              "-of", "json", whole])
        let json = try #require(try JSONSerialization.jsonObject(with: probed.data) as? [String: Any])
        let types = (json["streams"] as? [[String: Any]] ?? []).compactMap { $0["codec_type"] as? String }
        var have = [Int](repeating: 0, count: types.count), of = have
        for p in json["packets"] as? [[String: Any]] ?? [] {
            guard let s = p["stream_index"] as? Int, let pos = Int(p["pos"] as? String ?? ""), let size = Int(p["size"] as? String ?? "")
            else { continue }
            if pos < listedBefore { of[s] += 1 }
            if pos + size <= bytes { have[s] += 1 }
        }
        try #require(types == ["video", "audio"] && zip(have, of).allSatisfy { $0 > 0 && $0 <= $1 } && have != of, "\(types) \(have) of \(of)")
        let expected = "only \(have[0]) of \(of[0]) video and \(have[1]) of \(of[1]) audio packets are in the file"

        let refused = try Tool.avtool("remux", input, scratch.path("out.mp4"))
        #expect(refused.status == 1 && refused.stderr.contains("it is cut off: " + expected), "\(refused.stderr) vs \(expected)")
        #expect(!refused.stderr.contains("(stream #"), "\(refused.stderr)")
        let probe = try Tool.avtool("probe", input, "--json")
        let report = try JSONSerialization.jsonObject(with: probe.data) as? [String: Any]
        #expect(probe.status == 0 && report?["cut_off"] as? String == expected, "\(probe)")
        let repaired = try Tool.avtool("repair", input, scratch.path("repaired.mp4"), "--json")
        try #require(repaired.status == 0, "\(repaired)")
        let salvage = (try JSONSerialization.jsonObject(with: repaired.data) as? [String: Any])?["salvage"] as? [String: Any]
        #expect(salvage?["kept"] as? [Int] == have && salvage?["listed"] as? [Int] == of, "\(repaired.stdout)")
    }

    /// FFmpeg's fragments hold a stream each in turn, so a recording it
    /// fragmented (the iPhone 4S clip, `frag_keyframe+empty_moov`) and cut
    /// at 70 % keeps video but not one audio packet. The muxer writes no
    /// track without samples: repair refused its own output ("1 track(s)
    /// where 2 were written … a fault of avtool's"). Now it keeps the video,
    /// every packet of it the input's (data hashes), and says the audio
    /// had nothing to write.
    @Test func salvageThatKeepsNoPacketOfAStreamLeavesItsTrackOut() throws {
        let scratch = try Scratch()
        let whole = scratch.path("whole.mp4"), input = scratch.path("cut.mp4"), out = scratch.path("repaired.mp4")
        let f = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try Fixtures.wild("iphone4s_ios5_baseline_rot90_vfr.mov"),
                                        "-c", "copy", "-movflags", "frag_keyframe+empty_moov", whole])
        try #require(f.status == 0, "\(f)")
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        try data.prefix(data.count * 70 / 100).write(to: URL(fileURLWithPath: input))
        let run = try Tool.avtool("repair", input, out)
        try #require(run.status == 0, "\(run)")
        #expect(run.stderr.contains("stream #1 (audio aac): no packet of it to write"), "\(run.stderr)")
        let kept = try PacketList(out).payloads[0] ?? []
        let original = try PacketList(whole).payloads[0] ?? []
        #expect(!kept.isEmpty && kept == Array(original.prefix(kept.count)), "\(kept.count) video packets")
        #expect(try FFprobe(out).streams.count == 1)
    }

    @Test func salvagedTranscodeDecodes() throws {
        let scratch = try Scratch()
        let (_, input) = try cut(CutCase(source: "h264_bframes_2997_aac48_stereo.mp4", percent: 60), in: scratch)
        let out = scratch.path("out.mp4")
        let run = try Tool.avtool("transcode", input, out, "--preset", "ultrafast", "--salvage")
        try #require(run.status == 0, "\(run)")
        #expect(run.stderr.contains("salvaged what was readable"), "\(run.stderr)")
        let check = try Tool.run("ffmpeg", ["-v", "error", "-xerror", "-i", out, "-f", "null", "-"])
        #expect(check.status == 0, "\(check)")
        let frames = try FFprobe(out, countPackets: true).stream(0)["nb_read_packets"] as? String
        #expect((Int(frames ?? "") ?? 0) > 50, "\(frames ?? "?")")
    }

    @Test func nothingToSalvageIsAnError() throws {
        let scratch = try Scratch()
        // The index whole, the media data cut a few bytes in: no packet is complete.
        let data = try Data(contentsOf: URL(fileURLWithPath: try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")))
        let mdat = try #require(data.firstRange(of: Data("mdat".utf8)))
        let input = scratch.path("cut.mp4")
        try data.prefix(mdat.upperBound + 4).write(to: URL(fileURLWithPath: input))
        let run = try Tool.avtool("remux", input, scratch.path("out.mp4"), "--salvage")
        #expect(run.status == 1, "\(run)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("out.mp4")))
    }
}

/// A Matroska file cut off: its segment's declared size says so before a
/// packet is read; `--salvage` keeps every packet the demuxer reads whole.
@Suite("cut-off Matroska")
struct MatroskaTruncationTests {
    @Test(arguments: [40, 75])
    func refusedThenSalvaged(percent: Int) throws {
        let scratch = try Scratch()
        let whole = try Fixtures.path("h264_aac.mkv")
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        let input = scratch.path("cut.mkv")
        try data.prefix(data.count * percent / 100).write(to: URL(fileURLWithPath: input))
        let out = scratch.path("out.mkv")
        let refused = try Tool.avtool("remux", input, out)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("it is cut off: only \(data.count * percent / 100) of the \(data.count) bytes"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--salvage"))
        #expect(!FileManager.default.fileExists(atPath: out))

        let run = try Tool.avtool("remux", input, out, "--salvage")
        try #require(run.status == 0, "\(run)")
        #expect(run.stderr.contains("short of its Matroska segment"), "\(run.stderr)")
        let original = try PacketList(whole).payloads, kept = try PacketList(out).payloads
        let ff = scratch.path("ffmpeg.mkv")
        _ = try Tool.run("ffmpeg", ["-v", "quiet", "-i", input, "-map", "0", "-c", "copy", ff])
        let byFFmpeg = (try? PacketList(ff).payloads) ?? [:]
        for (s, packets) in original {
            let got = kept[s] ?? []
            #expect(Array(packets.prefix(got.count)) == got, "stream \(s): not the original's first packets")
            let ffmpegWhole = zip(byFFmpeg[s] ?? [], packets).prefix { $0 == $1 }.count
            #expect(got.count >= ffmpegWhole, "stream \(s): \(got.count) kept, ffmpeg keeps \(ffmpegWhole) whole")
        }
        #expect((kept[0]?.count ?? 0) > 0)
    }

    /// A whole Matroska file and one of unknown segment size (as a live
    /// recording writes it) are not taken for cut-off ones.
    @Test func wholeFilesPass() throws {
        let scratch = try Scratch()
        for name in ["h264_aac.mkv", "hevc.mkv", "audio_gap.mkv", "attachment.mkv"] {
            let run = try Tool.avtool("remux", try Fixtures.path(name), scratch.path("out-" + name))
            #expect(run.status == 0, "\(name): \(run)")
        }
        let live = scratch.path("live.mkv")
        let r = try Tool.run("ffmpeg", ["-v", "error", "-i", try Fixtures.path("h264_aac.mkv"), "-map", "0:v", "-map", "0:a",
                                        "-c", "copy", "-live", "1", "-f", "matroska", live])
        try #require(r.status == 0, "\(r)")
        let run = try Tool.avtool("remux", live, scratch.path("out-live.mkv"))
        #expect(run.status == 0, "\(run)")
    }
}

/// merge, concat and fill-silence refuse a cut-off input too, whatever
/// says so: an index listing packets past the end, fragments that do, or a
/// Matroska segment longer than the file. Nothing is written.
@Suite("cut-off inputs to the assembly verbs")
struct AssemblyTruncationTests {
    @Test func refusedByEveryAssemblyVerb() throws {
        let scratch = try Scratch()
        func cut(_ source: String, _ percent: Int, _ name: String, movflags: String? = nil) throws -> String {
            var path = source
            if let movflags {
                path = scratch.path("whole-" + name)
                let r = try Tool.run("ffmpeg", ["-v", "error", "-i", source, "-map", "0", "-c", "copy", "-movflags", movflags, path])
                try #require(r.status == 0, "\(r)")
            }
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let out = scratch.path(name)
            try data.prefix(data.count * percent / 100).write(to: URL(fileURLWithPath: out))
            return out
        }
        let video = try Fixtures.path("clicks_video.mp4"), whole = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        let mkv = try cut(try Fixtures.path("h264_aac.mkv"), 60, "cut.mkv")
        let fragmented = try cut(whole, 60, "fragmented.mp4", movflags: "frag_keyframe+empty_moov")
        let indexFirst = try cut(whole, 60, "indexfirst.mp4")
        let jobs: [[String]] = [
            ["merge", video, mkv], ["merge", fragmented, try Fixtures.path("aac48_stereo.m4a")],
            ["concat", whole, fragmented], ["concat", indexFirst, whole],
            ["fill-silence", fragmented], ["fill-silence", indexFirst],
        ]
        for (k, job) in jobs.enumerated() {
            let out = scratch.path("out\(k).mp4")
            let run = try Tool.avtool(job + [out])
            #expect(run.status == 1, "\(job): \(run)")
            #expect(run.stderr.contains("cut off") && run.stderr.contains("avtool repair"), "\(job): \(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }
}
