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
