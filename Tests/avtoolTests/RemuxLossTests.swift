import Foundation
import Testing

/// Remuxes that exited 0 and lost something (issue 46), on recordings of the
/// kinds that showed it: checked with ffprobe's packets and data hashes.
@Suite("remux: nothing lost on the way")
struct RemuxLossTests {
    /// Per stream: codec name and every packet's "size:hash", in order.
    static func packets(_ path: String) throws -> [String: [String]] {
        let probe = try FFprobe(path), list = try PacketList(path)
        var r: [String: [String]] = [:]
        for (i, s) in probe.streams.enumerated() {
            r["\(i) \(FFprobe.string(s, "codec_name") ?? "?")"] = list.payloads[i] ?? []
        }
        return r
    }

    /// AC-3 (GStreamer's mp4mux; no camcorder AC-3 recording is kept here)
    /// and E-AC-3 beside H.264 into MOV and MP4, by every way the remux
    /// takes: the muxer parses their every packet (`dac3`/`dec3`), so a
    /// remux by reference, which gives it no payloads, lost the track.
    @Test(arguments: ["ac3", "eac3"], ["mov", "mp4"])
    func dolbyAudioKept(_ codec: String, _ container: String) throws {
        let scratch = try Scratch()
        let input: String
        if codec == "ac3" {
            input = try Fixtures.path("encoders/ac3_48k_51.mp4")
        } else {
            input = scratch.path("in.mp4")
            let made = try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=2",
                                               "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
                                               "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "eac3", input])
            try #require(made.status == 0, "\(made)")
        }
        let expected = try Self.packets(input)
        try #require(expected.count == 2 && expected.keys.contains { $0.hasSuffix(codec) }, "\(expected.keys)")
        for flags in [[], ["--no-bulk"]] {
            let out = scratch.path("out\(flags.joined()).\(container)")
            let r = try Tool.avtool(["remux", input, out] + flags)
            try #require(r.status == 0, "\(r)")
            try Self.expectSamePackets(out, as: expected, flags)
        }
    }

    /// An iPhone 6s Live Photo whose file ends in a line end after its last
    /// box (two bytes a text-mode copy added; every demuxer ignores them):
    /// its index was not read, so its two `mebx` tracks were left out as
    /// "mov cannot hold it" by every way and every verb. Remux, cut and
    /// transcode keep them.
    @Test(arguments: ["mov", "mp4"])
    func bytesAfterTheLastBoxAreNoReasonToLoseTracks(_ container: String) throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild("iphone6s_ios9_720p_audio_elst1.mov")
        let expected = try Self.packets(input)
        try #require(expected.count == 4, "\(expected.keys)")
        for flags in [[], ["--no-bulk"]] {
            let out = scratch.path("out\(flags.joined()).\(container)")
            let r = try Tool.avtool(["remux", input, out] + flags)
            try #require(r.status == 0, "\(r)")
            #expect(!r.stderr.contains("not kept"), "\(r.stderr)")
            try Self.expectSamePackets(out, as: expected, flags)
        }
        let cut = scratch.path("cut.\(container)")
        let r = try Tool.avtool("cut", input, cut, "--to", "0.3")
        try #require(r.status == 0, "\(r)")
        #expect(try FFprobe(cut).streams.count == 4, "\(r.stderr)")
    }

    /// The iPhone 6s clip's edit list shows 101 samples of its last AAC
    /// packet (its audio ends with the video, at 0.467 s): fill-silence and
    /// merge copy that packet and show no more of it (they showed all 1024
    /// samples: 0.488 s, "end difference 923 samples").
    @Test func audioShownInPartAtTheEndStaysSo() throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild("iphone6s_ios9_720p_audio_elst1.mov")
        let shown = try #require(FFprobe.double(try FFprobe(input).stream(1), "duration"))
        for (verb, args) in [("fill-silence", [input]), ("merge", [input, input])] {
            let out = scratch.path("\(verb).mov")
            let r = try Tool.avtool([verb] + args + [out])
            try #require(r.status == 0, "\(r)")
            let audio = try #require(FFprobe.double(try FFprobe(out).stream(1), "duration"))
            #expect(abs(audio - shown) < 0.0001, "\(verb): audio lasts \(audio) s, the input's \(shown) s")
            #expect(r.stderr.contains("end difference 0 samples"), "\(verb): \(r.stderr)")
        }
    }

    /// An iPad 2 clip whose edit list hides its last frame, joined to
    /// itself: the hidden frame is left out at the joint (it would be shown
    /// there: 5.47 s for two clips of 2.68 s before) and kept, hidden, at
    /// the output's end; every frame decodes.
    @Test func aHiddenLastFrameIsNotShownAtAJoint() throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild("ipad2_ios5_h264_rot180.mov"), out = scratch.path("out.mov")
        let r = try Tool.avtool("concat", input, input, out)
        try #require(r.status == 0, "\(r)")
        let video = try PacketList(out).packets.filter { $0.stream == 0 }
        #expect(video.count == 2 * 82 - 1, "\(video.count) video packets")
        #expect(video.indices.filter { video[$0].discard } == [video.count - 1], "hidden: \(video.indices.filter { video[$0].discard })")
        let length = try #require(FFprobe.double(try FFprobe(out).format, "duration"))
        #expect(length <= 2 * 2.7 + 0.001, "\(length) s")
        #expect(try Tool.run("ffmpeg", ["-v", "error", "-xerror", "-i", out, "-f", "null", "-"]).status == 0)
    }

    /// An iPhone 15 Pro Max clip whose edit list hides its last two frames,
    /// both decoded before frames it shows (references), joined to itself:
    /// the first copy's last group is re-encoded up to its shown end, so the
    /// hidden pair is not shown at the joint (before: 14 pictures for 2 × 6,
    /// the pair among them); the second copy is copied, its pair hidden by
    /// the output's edit list as in the input.
    @Test func framesHiddenAsReferencesAreNotShownAtAJoint() throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild("iphone15promax_ios26_dv84_hevc10_cut.mov"), out = scratch.path("out.mov")
        let r = try Tool.avtool("concat", input, input, out)
        try #require(r.status == 0, "\(r)")
        #expect(r.stderr.contains("where 1 trimmed segment ends"), "\(r.stderr)")
        let shown = try PictureCheck.frameHashes(input), joined = try PictureCheck.frameHashes(out)
        try #require(shown.count == 6)
        #expect(joined.count == 2 * shown.count, "\(joined.count) pictures")
        #expect(Array(joined.suffix(shown.count)) == shown)
        #expect(try PictureCheck.worstPSNR(out, firstFrame: 0, against: input, frames: shown.count) >= 40)
    }

    /// An iPhone 14 Pro clip whose only negative composition offsets are
    /// its last two (`ctts`): libavformat leaves those out of its DTS shift
    /// and gives two frames a PTS before their DTS. Raising those PTS (as
    /// before) showed the first frame three periods long and two frames at
    /// one time; every DTS is lowered instead, and each frame is shown when
    /// and as the input shows it (`-f framemd5`: time and picture hash).
    @Test func framesShownBeforeTheyDecodeKeepTheirTimes() throws {
        let scratch = try Scratch()
        let input = try Fixtures.device("iphone14pro_dv84_hlg_720p_mebx.MOV")
        func frames(_ path: String) throws -> [String] {
            let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-f", "framemd5", "-"])
            try #require(r.status == 0, "\(r)")
            return r.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.map {
                let f = $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                return "\(f[2]) \(f[5])"
            }
        }
        let shown = try frames(input)
        try #require(shown.count == 4)
        for (verb, args, out) in [("remux", [input, "--no-bulk"], "r.mp4"), ("fill-silence", [input], "f.mov"),
                                  ("merge", [input, input], "m.mov")] {
            let r = try Tool.avtool([verb] + args + [scratch.path(out)])
            try #require(r.status == 0, "\(verb): \(r)")
            #expect(try frames(scratch.path(out)) == shown, "\(verb)")
            #expect(!r.stderr.contains("PTS raised") || r.stderr.contains("0 PTS raised"), "\(verb): \(r.stderr)")
            // The frame the input hides (decoded second, shown last) does not lengthen it: 0.184 s before for merge.
            let length = try #require(FFprobe.double(try FFprobe(scratch.path(out)).format, "duration"))
            #expect(length <= 4.0 / 30 + 1024.0 / 44100, "\(verb): \(length) s")
        }
    }

    /// Every stream of `out` holds the packets of `expected`, in order, byte for byte.
    static func expectSamePackets(_ out: String, as expected: [String: [String]], _ flags: [String]) throws {
        let got = try packets(out)
        #expect(got.keys.sorted() == expected.keys.sorted(), "\(flags): streams \(got.keys.sorted())")
        for (stream, list) in expected {
            #expect(got[stream]?.count == list.count, "\(flags) stream \(stream): \(got[stream]?.count ?? 0) of \(list.count) packets")
            let same = got[stream] == list
            #expect(same, "\(flags) stream \(stream): the payloads differ")
        }
    }

    /// Per stream: ffprobe's duration (the input's or output's edit list).
    static func durations(_ path: String) throws -> [Double?] {
        try FFprobe(path).streams.map { FFprobe.double($0, "duration") }
    }

    /// Phone recordings whose edit lists end before their last frames
    /// (flagged discard: an iPad 2's H.264 ends with one, an iPhone 15 Pro
    /// Max's HEVC with two B-frame references) into MP4 and MOV: every
    /// packet kept in order (before, the iPad's last one was left out), the
    /// same frames shown, each stream as long as in the input (the edit
    /// list ends where the input's does, inside the last shown frame).
    @Test(arguments: ["ipad2_ios5_h264_rot180.mov", "iphone15promax_ios26_dv84_hevc10_cut.mov"], ["mp4", "mov"])
    func framesHiddenAtTheEndKept(_ name: String, _ container: String) throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild(name)
        let expected = try Self.packets(input), lengths = try Self.durations(input)
        let video = try #require(try FFprobe(input).streams.firstIndex { FFprobe.string($0, "codec_type") == "video" })
        let shown = try RepairTests.decodedHashes(input, stream: video)
        try #require(try PacketList(input).packets.contains { $0.stream == video && $0.discard }, "no hidden frame")
        for flags in [[], ["--no-bulk"]] {
            let out = scratch.path("out\(flags.joined()).\(container)")
            let r = try Tool.avtool(["remux", input, out] + flags)
            try #require(r.status == 0, "\(r)")
            try Self.expectSamePackets(out, as: expected, flags)
            #expect(try RepairTests.decodedHashes(out, stream: video) == shown, "\(flags): not the frames the input shows")
            let outLengths = try Self.durations(out)
            #expect(outLengths.count == lengths.count)
            for (i, (a, b)) in zip(lengths, outLengths).enumerated() {
                #expect(abs((a ?? -1) - (b ?? 1)) < 0.0005, "\(flags) stream \(i): \(b ?? .nan) s, the input \(a ?? .nan) s")
            }
        }
    }

    /// Matroska has no edit lists: the iPad's hidden last frame is left out
    /// (shown, the video would be a frame longer), and the report says so.
    @Test func matroskaSaysWhatItLeavesOut() throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild("ipad2_ios5_h264_rot180.mov")
        let out = scratch.path("out.mkv")
        let r = try Tool.avtool("remux", input, out)
        try #require(r.status == 0, "\(r)")
        #expect(r.stderr.contains("stream #1 (h264): 1 frame(s) the input's edit list hides at its end left out"), "\(r.stderr)")
        // (The counts: Matroska keeps no rotation, so the pictures come out turned.)
        #expect(try RepairTests.decodedHashes(out, stream: 1).count == RepairTests.decodedHashes(input, stream: 1).count)
    }

    /// The `©xyz` boxes of a file's movie user data (`moov`/`udta`), whole.
    static func locationBoxes(_ path: String) throws -> [[UInt8]] {
        let d = try Data(contentsOf: URL(fileURLWithPath: path))
        func inside(_ r: Range<Int>) -> Range<Int> { (r.lowerBound + 8)..<r.upperBound }
        guard let moov = ShorterRecording.boxes(d, in: 0..<d.count).first(where: { $0.0 == "moov" })?.1,
              let udta = ShorterRecording.boxes(d, in: inside(moov)).first(where: { $0.0 == "udta" })?.1 else { return [] }
        return ShorterRecording.boxes(d, in: inside(udta))
            .filter { [UInt8](d[($0.1.lowerBound + 4)..<($0.1.lowerBound + 8)]) == [0xA9, 0x78, 0x79, 0x7A] }
            .map { [UInt8](d[$0.1]) }
    }

    /// An iPhone 4S MOV (`©xyz` in its user data) and an Android-like MP4
    /// (`com.android.*` keys and a place) into MOV and MP4 by remux and
    /// transcode: the place kept as `©xyz` beside the `location` key and
    /// `loci` the muxer writes (before, only a MOV without keys had one).
    /// The iPhone's box comes out byte for byte; the Android-like one as the
    /// MOV muxer writes a `location` tag (its language from `location-eng`).
    /// (The generated MP4 holds no `©xyz`, as a real Android one would: its
    /// remux into MP4, a copy of its index as it is, is left out.)
    @Test(arguments: [("iphone4s_ios5_baseline_rot90_vfr.mov", "remux", "mp4"), ("iphone4s_ios5_baseline_rot90_vfr.mov", "remux", "mov"),
                      ("iphone4s_ios5_baseline_rot90_vfr.mov", "transcode", "mp4"), ("iphone4s_ios5_baseline_rot90_vfr.mov", "transcode", "mov"),
                      ("android_tags.mp4", "remux", "mov"), ("android_tags.mp4", "transcode", "mp4"), ("android_tags.mp4", "transcode", "mov")])
    func placeKeptAsQuickTimeUserData(_ name: String, _ verb: String, _ container: String) throws {
        let scratch = try Scratch()
        let input = name.hasPrefix("android") ? try Fixtures.path(name) : try Fixtures.wild(name)
        let place = try #require(FFprobe.tag(try FFprobe(input).format, "location"))
        let expected: [UInt8]
        if let own = try Self.locationBoxes(input).first {
            expected = own
        } else {
            // Size, type, the text's length, its language ('eng' packed), the text.
            let text = Array(place.utf8)
            expected = [0, 0, 0, UInt8(12 + text.count), 0xA9, 0x78, 0x79, 0x7A, 0, UInt8(text.count), 0x15, 0xC7] + text
        }
        let out = scratch.path("out.\(container)")
        let r = try Tool.avtool([verb, input, out] + (verb == "transcode" ? ["--preset", "ultrafast"] : []))
        try #require(r.status == 0, "\(r)")
        let written = try Self.locationBoxes(out)
        #expect(written == [expected], "\(written)")
        #expect(FFprobe.tag(try FFprobe(out).format, "location") == place)
    }
}
