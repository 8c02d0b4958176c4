import Foundation
import Testing

/// Dolby Vision and HDR10+ through a re-encode: every output frame has the
/// per-frame metadata (ffprobe's parse of the RPU, of the ST 2094-40 SEI)
/// of the source frame shown at the same time, the configuration record is
/// the source's — on real recordings (an iPhone, Dolby's samples, dovi_tool's
/// and hdr10plus_tool's x265 streams), through `transcode`, its chunks and
/// an exact cut's re-encoded stretches; ffmpeg and GStreamer decode the result.
@Suite("HDR through a re-encode")
struct HDRTranscodeTests {
    static let iphone = "iphone14pro_dv84_hlg_720p_mebx.MOV"
    static let dv5 = "dolby_sparks_dv5_dvh1_360p.mp4"
    static let dv8 = "dolby_sparks_dv8_hvc1_360p.mp4"
    static let dv81 = "dovitool_dv81_x265_256x144.hevc"
    static let hdr10plus = "hdr10plus_x265_256x144.hevc"

    /// The side data compared frame by frame: the RPU's parse, the RPU's
    /// presence (the decoder repeats the last parse on a frame without
    /// one), HDR10+'s parse.
    static let kinds = ["Dolby Vision Metadata", "Dolby Vision RPU Data", "HDR Dynamic Metadata SMPTE2094-40 (HDR10+)"]

    /// Each video frame's Dolby Vision and HDR10+ side data as ffprobe
    /// parses it (JSON text of each, by kind), in presentation order.
    static func frameMetadata(_ path: String) throws -> [[String: String]] {
        let r = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_frames", "-of", "json", path])
        try #require(r.status == 0, "\(r)")
        let obj = try #require(try JSONSerialization.jsonObject(with: r.data) as? [String: Any])
        var frames: [(Double, [String: String])] = []
        for f in obj["frames"] as? [[String: Any]] ?? [] {
            var m: [String: String] = [:]
            for sd in f["side_data_list"] as? [[String: Any]] ?? [] {
                guard let type = sd["side_data_type"] as? String, kinds.contains(type) else { continue }
                let data = try JSONSerialization.data(withJSONObject: sd, options: [.sortedKeys])
                m[type] = String(decoding: data, as: UTF8.self)
            }
            let t = Double(f["pts_time"] as? String ?? f["pkt_dts_time"] as? String ?? "") ?? .nan
            frames.append((t, m))
        }
        return frames.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// `out`'s frames have `source`'s metadata from source frame `from` on,
    /// one for one; a message naming the first difference otherwise.
    static func sameMetadata(_ source: [[String: String]], _ out: [[String: String]], from: Int = 0) -> String? {
        guard source.count >= from + out.count else { return "\(out.count) frames for \(source.count - from)" }
        for (i, m) in out.enumerated() where m != source[from + i] {
            return "frame \(i): \(m.keys.sorted()) for \(source[from + i].keys.sorted())"
                + (m.isEmpty ? "" : "; first differing kind differs in content")
        }
        return nil
    }

    /// The output decodes without error in ffmpeg and, frame for frame, in GStreamer.
    static func decodes(_ out: String, frames: Int) throws {
        let decode = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-xerror", "-i", out, "-f", "null", "-"])
        #expect(decode.status == 0, "\(decode)")
        if !out.hasSuffix(".hevc") { #expect(try CutExactTests.gstreamerFrames(out) == frames, "GStreamer: \(out)") }
    }

    /// Frames with an RPU, with HDR10+.
    static func counts(_ frames: [[String: String]]) -> (dv: Int, plus: Int) {
        (frames.filter { $0[kinds[1]] != nil }.count, frames.filter { $0[kinds[2]] != nil }.count)
    }

    @Test(arguments: [(iphone, "mov"), (iphone, "mp4"), (iphone, "mkv"), (dv5, "mp4"), (dv5, "mkv"), (dv8, "mov"),
                      (dv81, "mp4"), (hdr10plus, "mp4"), (hdr10plus, "mkv")])
    func transcodeCarriesEachFramesMetadata(_ name: String, _ ext: String) throws {
        let input = try Fixtures.device(name)
        let scratch = try Scratch()
        let out = scratch.path("out.\(ext)")
        let run = try Tool.avtool(["transcode", input, out, "--preset", "ultrafast", "--json"])
        try #require(run.status == 0, "\(run)")
        let source = try Self.frameMetadata(input), written = try Self.frameMetadata(out)
        let (dv, plus) = Self.counts(source)
        try #require(dv + plus > 0 && source.count == written.count, "\(name): \(source.count) frames, \(written.count) written")
        #expect(Self.sameMetadata(source, written) == nil, "\(name) → \(ext): \(Self.sameMetadata(source, written) ?? "")")
        #expect(Self.counts(written) == (dv, plus))
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        if dv > 0 {
            let record = try #require(try DeviceRecordingTests.doviRecord(out), "\(name) → \(ext): no Dolby Vision record")
            if let expected = try DeviceRecordingTests.doviRecord(input) {
                #expect(record == expected, "\(name) → \(ext)")
            } else {
                // A raw stream has no record: the one written is the RPUs' (profile 8 on a PQ base: 8.1).
                #expect(record["dv_profile"] == 8 && record["dv_bl_signal_compatibility_id"] == 1, "\(record)")
            }
            let outcome = try #require(report["dolby_vision"] as? [String: Any])
            #expect(outcome["action"] as? String == "carried" && outcome["frames"] as? Int == dv, "\(outcome)")
            if name == Self.dv5 && ext == "mp4" {
                #expect(FFprobe.string(try FFprobe(out).stream(0), "codec_tag_string") == "dvh1")
            }
        }
        if plus > 0 {
            let outcome = try #require(report["hdr10_plus"] as? [String: Any])
            #expect(outcome["action"] as? String == "carried" && outcome["frames"] as? Int == plus, "\(outcome)")
        }
        try Self.decodes(out, frames: source.count)
    }

    /// Chunks encoded apart and joined: no frame loses or shifts its metadata at a seam.
    @Test(arguments: [(dv8, "mp4"), (dv5, "mkv"), (hdr10plus, "mov")])
    func chunkedTranscodeCarriesItAcrossSeams(_ name: String, _ ext: String) throws {
        let scratch = try Scratch()
        let input = try Self.stored(name, scratch)
        let out = scratch.path("out.\(ext)")
        let run = try Tool.avtool(["transcode", input, out, "--preset", "ultrafast", "--chunks", "3", "--jobs", "2"])
        try #require(run.status == 0, "\(run)")
        let source = try Self.frameMetadata(input), written = try Self.frameMetadata(out)
        #expect(source.count == written.count)
        #expect(Self.sameMetadata(source, written) == nil, "\(name): \(Self.sameMetadata(source, written) ?? "")")
        if let expected = try DeviceRecordingTests.doviRecord(input) {
            #expect(try DeviceRecordingTests.doviRecord(out) == expected)
        }
        try Self.decodes(out, frames: source.count)
    }

    /// An exact cut re-encodes its head and tail: those frames get their
    /// source frames' RPUs and HDR10+ as the copied ones keep theirs.
    @Test(arguments: [dv8, dv5, hdr10plus])
    func exactCutStretchesCarryIt(_ name: String) throws {
        let scratch = try Scratch()
        let input = try Self.stored(name, scratch)
        let out = scratch.path("cut.mp4")
        let run = try Tool.avtool(["cut", input, out, "--from", "1.1", "--to", "4.3", "--mode", "exact", "--json"])
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let stretches = report["reencoded"] as? [[String: Any]] ?? []
        try #require(!stretches.isEmpty, "\(report)")
        let source = try Self.frameMetadata(input), written = try Self.frameMetadata(out)
        // The cut's first frame is the source frame shown at its start.
        let start = try #require(report["start"] as? Double)
        let times = try Self.frameTimes(input)
        let first = try #require(times.firstIndex { abs($0 - start) < 0.0005 }, "no source frame at \(start)")
        #expect(Self.sameMetadata(source, written, from: first) == nil, "\(name): \(Self.sameMetadata(source, written, from: first) ?? "")")
        #expect(Self.counts(written).dv + Self.counts(written).plus >= written.count)
        if let expected = try DeviceRecordingTests.doviRecord(input) {
            #expect(try DeviceRecordingTests.doviRecord(out) == expected)
        }
        try Self.decodes(out, frames: written.count)
    }

    static func frameTimes(_ path: String) throws -> [Double] {
        let r = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time",
                                         "-of", "json", path])
        try #require(r.status == 0)
        let obj = try #require(try JSONSerialization.jsonObject(with: r.data) as? [String: Any])
        return (obj["frames"] as? [[String: Any]] ?? []).compactMap { Double($0["pts_time"] as? String ?? "") }.sorted()
    }

    /// A device recording as a file with a codec record and timestamps: a
    /// raw HEVC stream (whose B-frames have none) transcoded into MP4 first,
    /// its per-frame metadata checked against the raw stream by
    /// `transcodeCarriesEachFramesMetadata`.
    static func stored(_ name: String, _ scratch: Scratch) throws -> String {
        let input = try Fixtures.device(name)
        guard input.hasSuffix(".hevc") else { return input }
        let mp4 = scratch.path("stored.mp4")
        let r = try Tool.avtool(["transcode", input, mp4, "--preset", "ultrafast"])
        try #require(r.status == 0, "\(r)")
        return mp4
    }

    /// Where Dolby Vision cannot stay valid: a resized profile 8 is encoded
    /// as its base layer, said; a resized profile 5 (no compatible base
    /// layer) is refused unless the user drops it; `--no-dolby-vision` drops it.
    @Test func whereItCannotBeKeptItIsSaid() throws {
        let scratch = try Scratch()
        let dv8 = try Fixtures.device(Self.dv8), dv5 = try Fixtures.device(Self.dv5)
        let resized = scratch.path("resized.mp4")
        let run = try Tool.avtool(["transcode", dv8, resized, "--preset", "ultrafast", "--size", "320x-1"])
        try #require(run.status == 0, "\(run)")
        #expect(run.stderr.contains("stream #0: Dolby Vision (profile 8.2) is not kept: the picture is resized (--size)"), "\(run.stderr)")
        #expect(try DeviceRecordingTests.doviRecord(resized) == nil)
        #expect(Self.counts(try Self.frameMetadata(resized)).dv == 0)

        let refused = try Tool.avtool(["transcode", dv5, scratch.path("p5.mp4"), "--size", "320x-1"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("Dolby Vision profile 5 cannot be kept: the picture is resized") && refused.stderr.contains("--no-dolby-vision"),
                "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("p5.mp4")))

        let dropped = scratch.path("dropped.mkv")
        let forced = try Tool.avtool(["transcode", dv5, dropped, "--preset", "ultrafast", "--no-dolby-vision", "--json"])
        try #require(forced.status == 0, "\(forced)")
        #expect(try DeviceRecordingTests.doviRecord(dropped) == nil)
        #expect(Self.counts(try Self.frameMetadata(dropped)).dv == 0)
        let report = try #require(try JSONSerialization.jsonObject(with: forced.data) as? [String: Any])
        #expect((report["dolby_vision"] as? [String: Any])?["action"] as? String == "dropped")
    }
}

/// `--sdr`: an HDR recording (HLG from an iPhone and generated, PQ from
/// Dolby's sample and generated HDR10) rendered as BT.709 SDR: 8-bit,
/// BT.709 tags, no HDR metadata of any kind left, and a picture that is a
/// faithful SDR rendering — compared with the `ffmpeg` program's own
/// zscale/tonemap rendering of the same source: SSIM ≥ 0.85, mean luma and
/// colourfulness (mean saturation) within 30 %. A copy that only relabels
/// the HDR picture as BT.709 must fail the same comparison.
@Suite("an SDR copy of HDR video")
struct SDRTests {
    /// The `ffmpeg` program's rendering: its documented chain, its defaults.
    static let reference = "zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=hable,zscale=t=bt709:m=bt709:r=tv,format=yuv420p"

    /// Mean luma and mean saturation of `path`'s video after `filters`
    /// (signalstats' YAVG and SATAVG over every frame).
    static func stats(_ path: String, filters: String? = nil) throws -> (luma: Double, saturation: Double) {
        let chain = (filters.map { $0 + "," } ?? "") + "signalstats,metadata=print:file=-"
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-vf", chain, "-f", "null", "-"])
        try #require(r.status == 0, "\(r)")
        func mean(_ key: String) -> Double {
            let v = r.stdout.split(separator: "\n").compactMap { line -> Double? in
                guard line.hasPrefix("lavfi.signalstats.\(key)=") else { return nil }
                return Double(line.split(separator: "=").last ?? "")
            }
            return v.isEmpty ? .nan : v.reduce(0, +) / Double(v.count)
        }
        return (mean("YAVG"), mean("SATAVG"))
    }

    /// SSIM of `path`'s video against `source` rendered by the reference chain.
    static func ssim(_ path: String, source: String) throws -> Double {
        let r = try Tool.run("ffmpeg", ["-nostdin", "-i", path, "-i", source, "-lavfi",
                                        "[1:v:0]\(reference)[ref];[0:v:0][ref]ssim", "-f", "null", "-"])
        try #require(r.status == 0, "\(r.stderr.suffix(600))")
        let line = try #require(r.stderr.split(separator: "\n").last { $0.contains("SSIM") })
        let all = try #require(line.range(of: "All:"))
        return Double(line[all.upperBound...].prefix { "0123456789.".contains($0) }) ?? 0
    }

    /// What the comparison asks of a rendering; nil when it is faithful.
    static func unfaithful(_ path: String, source: String) throws -> String? {
        let s = try ssim(path, source: source)
        let mine = try stats(path), theirs = try stats(source, filters: reference)
        func off(_ a: Double, _ b: Double) -> Bool { abs(a - b) > 0.3 * max(abs(b), 1) }
        var problems: [String] = []
        if !(s >= 0.85) { problems.append("SSIM \(s)") }
        if off(mine.luma, theirs.luma) { problems.append("mean luma \(mine.luma) for \(theirs.luma)") }
        if off(mine.saturation, theirs.saturation) { problems.append("saturation \(mine.saturation) for \(theirs.saturation)") }
        return problems.isEmpty ? nil : problems.joined(separator: ", ")
    }

    /// A generated HLG recording: x265 Main10, BT.2020, ARIB STD-B67.
    static func generatedHLG(_ scratch: Scratch) throws -> String {
        let out = scratch.path("hlg.mov")
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=s=640x360:r=30:d=1",
                                        "-vf", "format=yuv420p10le", "-c:v", "libx265", "-preset", "ultrafast",
                                        "-x265-params", "log-level=error:colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc",
                                        "-color_primaries", "bt2020", "-color_trc", "arib-std-b67", "-colorspace", "bt2020nc", out])
        try #require(r.status == 0, "\(r)")
        return out
    }

    @Test(arguments: ["iphone", "dv8", "hdr10", "hlg"])
    func hdrBecomesAFaithfulSDRCopy(_ which: String) throws {
        let scratch = try Scratch()
        let input: String
        switch which {
        case "iphone": input = try Fixtures.device(HDRTranscodeTests.iphone)
        case "dv8": input = try Fixtures.device(HDRTranscodeTests.dv8)
        case "hdr10": input = try Fixtures.path("hdr10_pcm.mov")
        default: input = try Self.generatedHLG(scratch)
        }
        let out = scratch.path("sdr.mp4")
        let run = try Tool.avtool(["transcode", input, out, "--sdr", "--preset", "ultrafast", "--json"])
        try #require(run.status == 0, "\(run)")
        let v = try FFprobe(out).stream(0)
        #expect(FFprobe.string(v, "pix_fmt") == "yuv420p" && FFprobe.string(v, "profile") == "Main")
        for key in ["color_primaries", "color_transfer", "color_space"] { #expect(FFprobe.string(v, key) == "bt709", "\(key)") }
        #expect((v["side_data_list"] as? [[String: Any]] ?? []).allSatisfy { ($0["side_data_type"] as? String) == "Display Matrix" },
                "\(v["side_data_list"] ?? "")")
        let frames = try HDRTranscodeTests.frameMetadata(out)
        #expect(frames.allSatisfy { $0.isEmpty }, "Dolby Vision or HDR10+ left in frames")
        let sei = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_frames", "-show_entries", "side_data=side_data_type", "-of", "csv", out])
        #expect(!sei.stdout.contains("Mastering display") && !sei.stdout.contains("Content light"), "\(sei.stdout.prefix(300))")
        let problems = try Self.unfaithful(out, source: input)
        #expect(problems == nil, "\(which): \(problems ?? "")")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        #expect((report["tone_map"] as? String)?.contains("→ BT.709 SDR (hable)") == true, "\(report["tone_map"] ?? "none")")
        if which == "iphone" || which == "dv8" {
            #expect((report["dolby_vision"] as? [String: Any])?["action"] as? String == "tone-mapped")
        }
    }

    /// The comparison can fail: the iPhone's HLG picture only relabelled as
    /// BT.709 (what a player that ignores HDR shows) keeps under half the colour.
    @Test func aRelabelledCopyIsNotFaithful() throws {
        let scratch = try Scratch()
        let input = try Fixtures.device(HDRTranscodeTests.iphone)
        let out = scratch.path("relabelled.mp4")
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", input, "-map", "0:v:0", "-vf",
                                        "format=yuv420p,setparams=color_primaries=bt709:color_trc=bt709:colorspace=bt709",
                                        "-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error", out])
        try #require(r.status == 0, "\(r)")
        let problems = try #require(try Self.unfaithful(out, source: input))
        #expect(problems.contains("saturation"), "\(problems)")
    }

    /// SDR input: nothing to do, said; profile 5 (no compatible base layer) refused.
    @Test func sdrInputIsANoteAndProfile5IsRefused() throws {
        let scratch = try Scratch()
        let sdr = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        let run = try Tool.avtool(["transcode", sdr, scratch.path("a.mp4"), "--sdr", "--preset", "ultrafast"])
        try #require(run.status == 0, "\(run)")
        #expect(run.stderr.contains("--sdr: the video is already SDR"), "\(run.stderr)")
        let p5 = try Tool.avtool(["transcode", try Fixtures.device(HDRTranscodeTests.dv5), scratch.path("b.mp4"), "--sdr"])
        #expect(p5.status != 0 && p5.stderr.contains("Dolby Vision profile 5 has no compatible one"), "\(p5.stderr)")
        let bad = try Tool.avtool(["transcode", sdr, scratch.path("c.mp4"), "--tone-map", "mobius"])
        #expect(bad.status != 0 && bad.stderr.contains("tone-map"), "\(bad.stderr)")
    }

    /// With --size and --chunks: the same rendering, joined.
    @Test func withSizeAndChunks() throws {
        let scratch = try Scratch()
        let input = try Fixtures.device(HDRTranscodeTests.dv8)
        let out = scratch.path("sdr.mkv")
        let run = try Tool.avtool(["transcode", input, out, "--sdr", "--size", "320x-1", "--chunks", "3", "--preset", "ultrafast"])
        try #require(run.status == 0, "\(run)")
        let v = try FFprobe(out).stream(0)
        #expect(FFprobe.int(v, "width") == 320 && FFprobe.string(v, "color_transfer") == "bt709" && FFprobe.string(v, "pix_fmt") == "yuv420p")
        #expect(try DeviceRecordingTests.doviRecord(out) == nil)
        let mine = try SDRTests.stats(out), theirs = try SDRTests.stats(input, filters: SDRTests.reference)
        #expect(abs(mine.luma - theirs.luma) < 0.3 * theirs.luma && abs(mine.saturation - theirs.saturation) < 0.3 * max(theirs.saturation, 1))
        try HDRTranscodeTests.decodes(out, frames: 361)
    }
}

/// The same options in a recipe as on the command line.
@Suite("HDR options in recipes")
struct HDRRecipeTests {
    @Test func sdrAndNoDolbyVisionInARecipe() throws {
        let s = try Scratch()
        let recipe = s.path("hdr.yaml")
        try """
        version: 1
        steps:
          - verb: transcode
            inputs: \(try Fixtures.device(HDRTranscodeTests.iphone))
            output: \(s.path("sdr.mp4"))
            options:
              sdr: true
              tone-map: mobius
              preset: ultrafast
          - verb: transcode
            inputs: \(try Fixtures.device(HDRTranscodeTests.dv5))
            output: \(s.path("nodv.mkv"))
            options:
              no-dolby-vision: true
              preset: ultrafast
        """.write(toFile: recipe, atomically: true, encoding: .utf8)
        let r = try Tool.avtool(["batch", recipe])
        try #require(r.status == 0, "\(r)")
        let v = try FFprobe(s.path("sdr.mp4")).stream(0)
        #expect(FFprobe.string(v, "color_transfer") == "bt709" && FFprobe.string(v, "pix_fmt") == "yuv420p")
        #expect(try DeviceRecordingTests.doviRecord(s.path("nodv.mkv")) == nil)
    }
}
