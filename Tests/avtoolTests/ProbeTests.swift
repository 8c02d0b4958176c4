import Foundation
import Testing

/// `avtool probe --json` checked against ffprobe.
@Suite("probe")
struct ProbeTests {
    func probeJSON(_ path: String) throws -> [String: Any] {
        let run = try Tool.avtool("probe", path, "--json")
        try #require(run.status == 0, "\(run)")
        return try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
    }

    func streams(_ j: [String: Any]) -> [[String: Any]] { j["streams"] as? [[String: Any]] ?? [] }

    @Test(arguments: ["h264_bframes_2997_aac48_stereo.mp4", "h264_vfr.mkv", "rotated90.mp4", "pcm_in_mov.mov",
                      "ts_wrap.ts", "hevc_aac.mp4", "aac44_mono.m4a", "h264_aac.mkv", "odd_size_321x241.mp4"])
    func agreesWithFFprobe(_ name: String) throws {
        let path = try Fixtures.path(name)
        let ours = try probeJSON(path)
        let ref = try FFprobe(path, countPackets: true)
        let s = streams(ours)
        try #require(s.count == ref.streams.count)
        for (o, r) in zip(s, ref.streams) {
            #expect(o["codec"] as? String == FFprobe.string(r, "codec_name"))
            #expect(o["type"] as? String == FFprobe.string(r, "codec_type"))
            #expect(o["packets"] as? Int == FFprobe.int(r, "nb_read_packets"), "packet count of \(name)")
            #expect(o["time_base"] as? String == FFprobe.string(r, "time_base"))
            if let v = o["video"] as? [String: Any] {
                #expect(v["width"] as? Int == FFprobe.int(r, "width"))
                #expect(v["height"] as? Int == FFprobe.int(r, "height"))
                #expect(v["frame_rate"] as? String == FFprobe.string(r, "r_frame_rate"))
                #expect(v["pixel_format"] as? String == FFprobe.string(r, "pix_fmt"))
                #expect((v["rotation"] as? Double).map { Int($0) } == FFprobe.rotation(r))
            }
            if let a = o["audio"] as? [String: Any] {
                #expect(a["sample_rate"] as? Int == FFprobe.int(r, "sample_rate"))
                #expect(a["channels"] as? Int == FFprobe.int(r, "channels"))
                #expect(a["channel_layout"] as? String == FFprobe.string(r, "channel_layout"))
            }
            #expect(o["language"] as? String == FFprobe.tag(r, "language"))
        }
        if let d = FFprobe.double(ref.format, "duration") {
            #expect(abs((ours["duration_seconds"] as? Double ?? -1) - d) < 0.001)
        }
        #expect(ours["format"] as? String == FFprobe.string(ref.format, "format_name"))
    }

    @Test func aacPriming() throws {
        let j = try probeJSON(try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4"))
        let audio = try #require(streams(j).first { $0["type"] as? String == "audio" }?["audio"] as? [String: Any])
        #expect(audio["priming_samples"] as? Int == 1024)
        let sync = try #require(j["sync"] as? [String: Any])
        #expect(sync["gap_count"] as? Int == 0)
    }

    /// The skew is checked against ffprobe's stream start times.
    @Test func audioStartingLate() throws {
        let path = try Fixtures.path("audio_starts_late.mp4")
        let j = try probeJSON(path)
        let skew = try #require((j["sync"] as? [String: Any])?["skew"] as? [String: Any])
        let us = try #require(skew["start_microseconds"] as? Int)
        let ref = try FFprobe(path)
        let v = try #require(ref.streams.first { FFprobe.string($0, "codec_type") == "video" })
        let a = try #require(ref.streams.first { FFprobe.string($0, "codec_type") == "audio" })
        let expected = (FFprobe.double(a, "start_time")! - FFprobe.double(v, "start_time")!) * 1e6
        #expect(abs(Double(us) - expected) <= 1000, "skew \(us) µs, ffprobe says \(expected)")
        #expect(abs(us - 500_000) <= 25_000)
    }

    /// About one second of audio is missing in the middle; the gap is found
    /// with its sample count (one AAC frame of slack for the cut position).
    @Test(arguments: ["audio_gap.mkv", "audio_gap.mp4"])
    func audioGap(_ name: String) throws {
        let j = try probeJSON(try Fixtures.path(name))
        let sync = try #require(j["sync"] as? [String: Any])
        #expect(sync["gap_count"] as? Int == 1, "\(sync)")
        let gap = try #require((sync["gaps"] as? [[String: Any]])?.first)
        let samples = try #require(gap["samples"] as? Int)
        #expect(abs(samples - 48000) <= 1024, "gap of \(samples) samples")
        let at = try #require(gap["at_seconds"] as? Double)
        #expect(abs(at - 3.0) < 0.05, "gap at \(at)")
    }

    @Test func tsWrapIsContinuous() throws {
        let j = try probeJSON(try Fixtures.path("ts_wrap.ts"))
        let sync = try #require(j["sync"] as? [String: Any])
        #expect(sync["gap_count"] as? Int == 0)
        let d = try #require(j["duration_seconds"] as? Double)
        #expect(d > 9 && d < 11, "duration \(d)")
    }

    @Test func jsonIsStable() throws {
        let path = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        let a = try Tool.avtool("probe", path, "--json"), b = try Tool.avtool("probe", path, "--json")
        #expect(a.stdout == b.stdout)
        // Keys are sorted: re-encoding with sorted keys changes nothing.
        let obj = try JSONSerialization.jsonObject(with: a.data)
        let again = try JSONSerialization.data(withJSONObject: obj, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
        #expect(String(decoding: again, as: UTF8.self).filter { !$0.isWhitespace }
                == a.stdout.filter { !$0.isWhitespace })
    }

    @Test func humanTable() throws {
        let path = try Fixtures.path("audio_gap.mp4")
        let run = try Tool.avtool("probe", path)
        #expect(run.status == 0)
        #expect(run.stdout.contains("#0 video h264"))
        #expect(run.stdout.contains("audio gaps: 1"))
        #expect(run.stdout.contains("A/V start skew"))
    }

    // MARK: HDR, views and data tracks

    /// The Dolby Vision record as ffprobe prints it; the format named from
    /// its numbers (profile.compatibility, what the compatibility id means, level).
    @Test(arguments: ["iphone14pro_dv84_hlg_720p_mebx.MOV", "dolby_sparks_dv5_dvh1_360p.mp4",
                      "dolby_sparks_dv8_hvc1_360p.mp4"])
    func dolbyVisionRecord(_ name: String) throws {
        let path = try Fixtures.device(name)
        let ref = try #require(try FFprobe(path).streams.first { FFprobe.string($0, "codec_type") == "video" })
        let record = try #require(FFprobe.sideData(ref, "DOVI configuration record"), "ffprobe sees no record in \(name)")
        let hdr = try #require(try video(probeJSON(path))["hdr"] as? [String: Any])
        let dv = try #require(hdr["dolby_vision"] as? [String: Any])
        let profile = try #require(FFprobe.int(record, "dv_profile")), level = try #require(FFprobe.int(record, "dv_level"))
        let id = try #require(FFprobe.int(record, "dv_bl_signal_compatibility_id"))
        #expect(dv["profile"] as? Int == profile)
        #expect(dv["level"] as? Int == level)
        #expect(dv["compatibility_id"] as? Int == id)
        #expect(dv["version"] as? String == "\(FFprobe.int(record, "dv_version_major") ?? -1).\(FFprobe.int(record, "dv_version_minor") ?? -1)")
        for flag in ["rpu", "el", "bl"] {
            #expect(dv["\(flag)_present"] as? Bool == (FFprobe.int(record, "\(flag)_present_flag") == 1), "\(flag) of \(name)")
        }
        // What a player without Dolby Vision gets from the base layer (Dolby's meanings of the id).
        let meaning = [0: "no compatible base layer", 1: "HDR10-compatible", 2: "SDR-compatible", 4: "HLG-compatible"]
        let number = id == 0 ? "\(profile)" : "\(profile).\(id)"
        let words = "Dolby Vision \(number) (\(try #require(meaning[id]))), level \(level)"
        #expect(hdr["format"] as? String == words)
        let text = try Tool.avtool("probe", path)
        #expect(text.stdout.contains("      HDR: \(words)\n"), "\(text.stdout)")
    }

    /// The iPhone's video in words, and its three QuickTime timed-metadata
    /// tracks (codec "none" to libavformat) by their sample entry and keys.
    @Test func iPhoneDolbyVisionAndMetadataTracks() throws {
        let path = try Fixtures.device("iphone14pro_dv84_hlg_720p_mebx.MOV")
        let text = try Tool.avtool("probe", path)
        try #require(text.status == 0, "\(text)")
        #expect(text.stdout.contains("HDR: Dolby Vision 8.4 (HLG-compatible), level 2"))
        #expect(text.stdout.contains("mebx (Core Media Metadata): com.apple.quicktime.video-orientation"))
        #expect(text.stdout.contains("mebx (Core Media Metadata): com.apple.quicktime.detected-face"))
        let ours = streams(try probeJSON(path)), ref = try FFprobe(path).streams
        let data = zip(ours, ref).filter { FFprobe.string($0.1, "codec_type") == "data" }
        #expect(data.count == 3)
        for (o, r) in data {
            let d = try #require(o["data"] as? [String: Any], "stream \(o["index"] ?? "?")")
            #expect(d["kind"] as? String == FFprobe.string(r, "codec_tag_string"))
            #expect(d["handler_name"] as? String == FFprobe.tag(r, "handler_name"))
            #expect((d["keys"] as? [String])?.count == 1)
        }
        let keys = data.compactMap { ($0.0["data"] as? [String: Any])?["keys"] as? [String] }.flatMap { $0 }
        #expect(keys.contains("com.apple.quicktime.video-orientation") && keys.contains("com.apple.quicktime.detected-face"))
    }

    /// A GoPro's timecode, telemetry and SOS tracks: kind from the sample
    /// entry, handler name as ffprobe reads it (without length byte and padding).
    @Test func goProDataTracks() throws {
        let path = try Fixtures.device("gopro_max_heromode_gpmd.mp4")
        let ours = streams(try probeJSON(path)), ref = try FFprobe(path).streams
        let data = zip(ours, ref).filter { FFprobe.string($0.1, "codec_type") == "data" }
        #expect(data.count == 3)
        let text = try Tool.avtool("probe", path).stdout
        for (o, r) in data {
            let d = try #require(o["data"] as? [String: Any], "stream \(o["index"] ?? "?")")
            let kind = try #require(FFprobe.string(r, "codec_tag_string"))
            // libavformat keeps the QuickTime name's length byte ("\u{0B}GoPro TCD  "): drop it and the padding.
            var name = Array(try #require(FFprobe.tag(r, "handler_name")).unicodeScalars)
            if let n = name.first, Int(n.value) == name.count - 1 { name.removeFirst() }
            let handler = String(String.UnicodeScalarView(name)).trimmingCharacters(in: .whitespaces)
            #expect(d["kind"] as? String == kind)
            #expect(d["handler_name"] as? String == handler)
            #expect(d["keys"] == nil)
            #expect(text.contains("      \(kind) (\(handler))\n"), "\(text)")
        }
        #expect(Set(data.compactMap { ($0.0["data"] as? [String: Any])?["kind"] as? String }) == ["tmcd", "gpmd", "fdsc"])
        // BT.709 video: no HDR, one view.
        #expect(try video(probeJSON(path))["hdr"] == nil)
        #expect(!text.contains("HDR:"))
    }

    /// HDR10+ is in the bitstream (SEI), not the container: found by
    /// decoding the first frames, as ffprobe's first frames show it; the
    /// mastering display and light levels come from the same SEI.
    @Test func hdr10PlusFromTheBitstream() throws {
        let scratch = try Scratch()
        let path = scratch.path("hdr10plus.mp4")
        let made = try Tool.run("ffmpeg", ["-v", "error", "-f", "hevc", "-i", try Fixtures.device("hdr10plus_x265_256x144.hevc"),
                                           "-c", "copy", path])
        try #require(made.status == 0, "\(made)")
        let frame = try #require(try FFprobe.firstFrameSideData(path).first)
        try #require(FFprobe.sideData(frame, "HDR Dynamic Metadata SMPTE2094-40 (HDR10+)") != nil)
        let hdr = try #require(try video(probeJSON(path))["hdr"] as? [String: Any])
        #expect(hdr["format"] as? String == "HDR10+")
        #expect(hdr["hdr10_plus"] as? Bool == true)
        try expectStaticMetadata(hdr, as: frame)
        let text = try Tool.avtool("probe", path).stdout
        #expect(text.contains("      HDR: HDR10+\n"), "\(text)")
        #expect(text.contains("MaxCLL \(FFprobe.int(try #require(FFprobe.sideData(frame, "Content light level metadata")), "max_content") ?? -1) cd/m²"))
    }

    /// PQ without Dolby Vision or HDR10+ (x265's HDR10: mastering display
    /// and light levels in SEI only), and a Dolby Vision stream whose first
    /// frames have no HDR10+.
    @Test func hdr10WithoutDynamicMetadata() throws {
        let path = try Fixtures.path("hdr10_pcm.mov")
        let frame = try #require(try FFprobe.firstFrameSideData(path).first)
        try #require(FFprobe.sideData(frame, "HDR Dynamic Metadata SMPTE2094-40 (HDR10+)") == nil)
        let hdr = try #require(try video(probeJSON(path))["hdr"] as? [String: Any])
        #expect(hdr["format"] as? String == "HDR10 (PQ)")
        #expect(hdr["hdr10_plus"] as? Bool == false)
        try expectStaticMetadata(hdr, as: frame)
        #expect(try Tool.avtool("probe", path).stdout.contains("      HDR: HDR10 (PQ)\n"))

        let dv8 = try Fixtures.device("dolby_sparks_dv8_hvc1_360p.mp4")
        let dvFrame = try #require(try FFprobe.firstFrameSideData(dv8).first)
        let dvHDR = try #require(try video(probeJSON(dv8))["hdr"] as? [String: Any])
        #expect(dvHDR["hdr10_plus"] as? Bool == (FFprobe.sideData(dvFrame, "HDR Dynamic Metadata SMPTE2094-40 (HDR10+)") != nil))
        try expectStaticMetadata(dvHDR, as: dvFrame)
    }

    /// HLG, signalled in the bitstream by the encoder.
    @Test func hlg() throws {
        let scratch = try Scratch()
        let path = scratch.path("hlg.mp4")
        let made = try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=128x72:rate=25", "-frames:v", "3",
                                           "-c:v", "libx265", "-x265-params", "log-level=none", "-pix_fmt", "yuv420p10le",
                                           "-color_primaries", "bt2020", "-color_trc", "arib-std-b67", "-colorspace", "bt2020nc", path])
        try #require(made.status == 0, "\(made)")
        let ref = try #require(try FFprobe(path).streams.first)
        try #require(FFprobe.string(ref, "color_transfer") == "arib-std-b67")
        let hdr = try #require(try video(probeJSON(path))["hdr"] as? [String: Any])
        #expect(hdr["format"] as? String == "HLG")
        #expect(hdr["hdr10_plus"] as? Bool == false)
        #expect(hdr["dolby_vision"] == nil)
        #expect(try Tool.avtool("probe", path).stdout.contains("      HDR: HLG\n"))
    }

    /// Apple spatial video: MV-HEVC's second layer (`lhvC`, which libavformat
    /// 5.1 does not read) and the stereo pair its `vexu` box declares.
    @Test func spatialVideoViews() throws {
        let path = try Fixtures.device("apple_vt_spatial_mvhevc_160x120.mp4")
        let views = try #require(try video(probeJSON(path))["views"] as? [String: Any])
        #expect(views["coding"] as? String == "MV-HEVC")
        #expect(views["count"] as? Int == 2)
        #expect(views["stereo"] as? Bool == true)
        #expect(views["hero_eye"] as? String == "left")
        let text = try Tool.avtool("probe", path).stdout
        #expect(text.contains("      MV-HEVC, 2 views, stereo"), "\(text)")
        #expect(!text.contains("HDR:"))
    }

    func video(_ j: [String: Any]) throws -> [String: Any] {
        try #require(streams(j).first { $0["type"] as? String == "video" }?["video"] as? [String: Any])
    }

    /// The report's mastering display and light levels are ffprobe's, from
    /// the first decoded frame's side data.
    func expectStaticMetadata(_ hdr: [String: Any], as frame: [String: Any]) throws {
        if let m = FFprobe.sideData(frame, "Mastering display metadata") {
            let ours = try #require(hdr["mastering_display"] as? [String: Any])
            for (key, prefix) in [("red", "red"), ("green", "green"), ("blue", "blue"), ("white_point", "white_point")] {
                let xy = try #require(ours[key] as? [Double])
                #expect(xy.count == 2)
                #expect(abs(xy[0] - (FFprobe.ratio(m, "\(prefix)_x") ?? -1)) < 1e-9, "\(key) x")
                #expect(abs(xy[1] - (FFprobe.ratio(m, "\(prefix)_y") ?? -1)) < 1e-9, "\(key) y")
            }
            #expect(abs((ours["min_luminance"] as? Double ?? -1) - (FFprobe.ratio(m, "min_luminance") ?? -2)) < 1e-9)
            #expect(abs((ours["max_luminance"] as? Double ?? -1) - (FFprobe.ratio(m, "max_luminance") ?? -2)) < 1e-9)
        } else {
            #expect(hdr["mastering_display"] == nil)
        }
        if let c = FFprobe.sideData(frame, "Content light level metadata"), FFprobe.int(c, "max_content") != 0 {
            let ours = try #require(hdr["content_light"] as? [String: Any])
            #expect(ours["max_cll"] as? Int == FFprobe.int(c, "max_content"))
            #expect(ours["max_fall"] as? Int == FFprobe.int(c, "max_average"))
        } else {
            #expect(hdr["content_light"] == nil)
        }
    }
}

extension FFprobe {
    /// The entry of `type` in a stream's or frame's side data list.
    static func sideData(_ s: [String: Any], _ type: String) -> [String: Any]? {
        (s["side_data_list"] as? [[String: Any]])?.first { $0["side_data_type"] as? String == type }
    }

    /// A value ffprobe prints as "num/den".
    static func ratio(_ s: [String: Any], _ key: String) -> Double? {
        guard let parts = (s[key] as? String)?.split(separator: "/"), parts.count == 2,
              let n = Double(parts[0]), let d = Double(parts[1]), d != 0 else { return nil }
        return n / d
    }

    /// The first decoded frames of the first video stream, as ffprobe
    /// decodes them (a few packets: the decoder holds some back).
    static func firstFrameSideData(_ path: String) throws -> [[String: Any]] {
        let r = try Tool.run("ffprobe", ["-v", "error", "-of", "json", "-select_streams", "v:0", "-show_frames",
                                         "-read_intervals", "%+#8", path])
        guard r.status == 0, let obj = try JSONSerialization.jsonObject(with: r.data) as? [String: Any] else {
            throw FixtureError(message: "ffprobe frames failed on \(path): \(r.stderr)")
        }
        return obj["frames"] as? [[String: Any]] ?? []
    }
}
