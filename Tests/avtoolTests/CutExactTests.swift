import Foundation
import Testing

/// `avtool cut --mode exact`, checked with oracles: the decoded frame count
/// is that of the source's frames in [from, to); every frame outside the
/// re-encoded stretches decodes bit-identical to the source's (framemd5);
/// the re-encoded ones have PSNR ≥ 40 dB against the source's; `ffmpeg
/// -xerror` and GStreamer (its own demuxer and parser, libav's decoder)
/// decode the whole output, frame for frame.
@Suite("cut --mode exact")
struct CutExactTests {
    struct Stretch { var from: Double, to: Double, frames: Int }

    /// Cuts and checks everything above; returns the stretches re-encoded.
    @discardableResult
    static func cutAndCheck(_ source: String, ext: String, from: Double, to: Double?,
                            _ scratch: Scratch) throws -> (out: String, stretches: [Stretch]) {
        let out = scratch.path("exact." + ext)
        var args = ["cut", source, out, "--mode", "exact", "--from", String(from), "--json"]
        if let to { args += ["--to", String(to)] }
        let run = try Tool.avtool(args)
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let stretches = (report["reencoded"] as? [[String: Any]] ?? []).map {
            Stretch(from: $0["from"] as? Double ?? 0, to: $0["to"] as? Double ?? 0, frames: $0["frames"] as? Int ?? 0)
        }
        let origin = try FFprobe(source).streams.compactMap { FFprobe.double($0, "start_time") }.min() ?? 0
        let original = try CutTests.decoded(source), shown = try CutTests.decoded(out)
        let atFrom = try #require(original.last { $0.pts <= origin + from + 0.0005 })
        let end = to.map { origin + $0 - 0.0005 } ?? .infinity
        let expected = original.filter { $0.pts >= atFrom.pts - 1e-6 && $0.pts < end }
        #expect(shown.count == expected.count, "\(shown.count) frames decoded, \(expected.count) in the range")
        #expect(stretches.reduce(0) { $0 + $1.frames } < expected.count || to != nil || stretches.isEmpty)
        var reencoded = 0
        for (o, e) in zip(shown, expected) {
            let t = e.pts - origin
            if stretches.contains(where: { t >= $0.from - 1e-4 && t < $0.to - 1e-4 }) {
                reencoded += 1
            } else {
                #expect(o.hash == e.hash, "frame at \(t) s is not the source's")
            }
        }
        #expect(reencoded == stretches.reduce(0) { $0 + $1.frames })
        // PSNR of every frame against the source's, paired by index (copied ones are identical: inf).
        let stats = scratch.path("psnr.log")
        let r = try Tool.run("ffmpeg", ["-v", "error", "-i", out, "-i", source, "-lavfi",
                                        "[1:v]trim=start=\(atFrom.pts),settb=1/30,setpts=N[r];[0:v]settb=1/30,setpts=N[d];[d][r]psnr=shortest=1:stats_file=\(stats)",
                                        "-f", "null", "-"])
        try #require(r.status == 0, "\(r)")
        let values = try String(contentsOfFile: stats, encoding: .utf8).split(separator: "\n").compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("psnr_avg:") }.map { Double($0.dropFirst(9)) ?? .infinity }
        }
        #expect(values.count == expected.count)
        #expect((values.min() ?? 0) >= 40, "PSNR \(values.min() ?? 0) dB")
        let check = try Tool.run("ffmpeg", ["-v", "error", "-xerror", "-i", out, "-f", "null", "-"])
        #expect(check.status == 0, "\(check)")
        #expect(try gstreamerFrames(out) == expected.count)
        return (out, stretches)
    }

    /// Frames GStreamer's own demuxer and parser, with libav's decoder, give for the video.
    static func gstreamerFrames(_ path: String) throws -> Int {
        let isMKV = path.hasSuffix(".mkv")
        let codec = try FFprobe(path).streams.first { FFprobe.string($0, "codec_type") == "video" }
            .flatMap { FFprobe.string($0, "codec_name") } ?? "h264"
        let parse = codec == "hevc" ? ["h265parse", "!", "avdec_h265"] : ["h264parse", "!", "avdec_h264"]
        let r = try Tool.run("gst-launch-1.0", ["-v", "filesrc", "location=\(path)", "!", isMKV ? "matroskademux" : "qtdemux",
                                                "!"] + parse + ["!", "fakesink", "silent=false"])
        #expect(r.status == 0, "\(r.stderr)")
        return (r.stdout + r.stderr).components(separatedBy: "last-message = chain").count - 1
    }

    /// H.264 with B-frames: the head up to the next IDR and the end's open GOP re-encoded.
    @Test(arguments: ["mp4", "mkv"])
    func h264WithBFrames(_ ext: String) throws {
        let scratch = try Scratch()
        let (out, stretches) = try Self.cutAndCheck(try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4"), ext: ext,
                                                    from: 1.3, to: 4.2, scratch)
        #expect(stretches.count == 2)
        // Both SPS announce the source's reorder depth (2 for its B-frames).
        let trace = try Tool.run("ffmpeg", ["-v", "trace", "-i", out, "-map", "0:v", "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"])
        let reorder = trace.stderr.split(separator: "\n").filter { $0.contains("max_num_reorder_frames") }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
        #expect(Set(reorder) == [2], "\(reorder)")
        // H.264 keeps avc1 in MP4: the new SPS/PPS sit in avcC beside the source's.
        if ext == "mp4" {
            let v = try #require(try FFprobe(out).streams.first { FFprobe.string($0, "codec_type") == "video" })
            #expect(FFprobe.string(v, "codec_tag_string") == "avc1")
        }
    }

    /// A real camera recording (High profile, B-frames).
    @Test func realCameraRecording() throws {
        let scratch = try Scratch()
        let (_, stretches) = try Self.cutAndCheck(try Fixtures.real("camera_576p.mp4"), ext: "mov", from: 3.3, to: 7.1, scratch)
        #expect(!stretches.isEmpty)
    }

    /// HEVC from x265 with open GOPs (CRA keyframes with RASL frames): the
    /// RASL frames after the copy start are re-encoded with the head.
    @Test(arguments: ["mp4", "mkv"])
    func hevcWithOpenGOPs(_ ext: String) throws {
        let scratch = try Scratch()
        let (out, stretches) = try Self.cutAndCheck(try Fixtures.path("hevc_aac.mp4"), ext: ext, from: 1.1, to: nil, scratch)
        #expect(stretches.count == 1)
        #expect(stretches.first?.to == 2.4, "the stretch ends at the CRA at 2.4 s")
        if ext == "mp4" {
            // hvc1 kept: the re-encoded head has a sample description of its own, both hvc1.
            let v = try #require(try FFprobe(out).streams.first { FFprobe.string($0, "codec_type") == "video" })
            #expect(FFprobe.string(v, "codec_tag_string") == "hvc1")
            #expect(try Self.videoSampleEntries(out) == ["hvc1", "hvc1"])
        }
    }

    /// The sample description types of the first video track, as FFmpeg's
    /// MP4/MOV demuxer reads them (its trace log).
    static func videoSampleEntries(_ path: String) throws -> [String] {
        let r = try Tool.run("ffprobe", ["-v", "trace", path])
        var tracks: [[String]] = [], inStsd = false
        for line in r.stderr.split(separator: "\n") {
            if line.contains("type:'stsd'") { tracks.append([]); inStsd = true; continue }
            if line.contains("type:'stts'") || line.contains("type:'stsc'") { inStsd = false }
            if inStsd, let at = line.range(of: "4CC=") {
                tracks[tracks.count - 1].append(String(line[at.upperBound...].prefix(4)))
            }
        }
        return tracks.first { $0.contains { ["hvc1", "hev1", "avc1", "dvh1", "dvhe"].contains($0) } } ?? []
    }

    /// An iPhone's HEVC (hvc1, one GOP) cut exactly: still hvc1 (Apple's
    /// players refuse hev1), the re-encoded frames described by a second
    /// hvc1 entry, the whole file decoding cleanly.
    @Test func iPhoneHEVCStaysHvc1() throws {
        let scratch = try Scratch()
        let (out, stretches) = try Self.cutAndCheck(try Fixtures.wild("iphonexr_ios15_hevc_livephoto_rot90.mov"), ext: "mov",
                                                    from: 0.5, to: 0.59, scratch)
        #expect(stretches.reduce(0) { $0 + $1.frames } == 6)
        let v = try #require(try FFprobe(out).streams.first { FFprobe.string($0, "codec_type") == "video" })
        #expect(FFprobe.string(v, "codec_tag_string") == "hvc1")
        #expect(try Self.videoSampleEntries(out) == ["hvc1", "hvc1"])
    }

    /// All-intra video (a camera's MJPEG AVI: every frame a keyframe): the
    /// cut copies the frames from the one shown at --from, nothing
    /// re-encoded; the packets are the source's, byte for byte.
    @Test(arguments: ["mov", "mkv"])
    func allIntraVideoIsCopiedFromTheFrame(_ ext: String) throws {
        let scratch = try Scratch()
        let source = try Fixtures.wild("generalplus_cam_mjpeg_pcm_garbage_hdr.avi")
        let out = scratch.path("intra." + ext)
        let run = try Tool.avtool("cut", source, out, "--mode", "exact", "--from", "0.5", "--to", "1.5", "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        #expect((report["reencoded"] as? [[String: Any]] ?? []).allSatisfy { $0["frames"] as? Int == 0 })
        // 15 fps: the frame shown at 0.5 s starts at 7/15 s.
        let start = try #require(report["start"] as? Double)
        #expect(abs(start - 7.0 / 15) < 1e-3, "starts at \(start)")
        let whole = try PacketList(source), part = try PacketList(out)
        let expected = whole.packets.filter { p in
            p.stream == 0 && p.pts.map { whole.seconds($0, stream: 0) >= 7.0 / 15 - 1e-6 && whole.seconds($0, stream: 0) < 1.5 } == true
        }.map { "\($0.size):\($0.hash)" }
        #expect(expected.count == 16)
        #expect(part.payloads[0] == expected)
        #expect(try CutTests.decoded(out).first?.pts == 0)
    }

    /// 10-bit HDR HEVC in MOV with PCM audio, as HDR cameras and phones write it.
    @Test func hevcTenBitHDR() throws {
        let scratch = try Scratch()
        let (out, _) = try Self.cutAndCheck(try Fixtures.path("hdr10_pcm.mov"), ext: "mov", from: 0.5, to: 1.7, scratch)
        let v = try #require(try FFprobe(out).streams.first { FFprobe.string($0, "codec_type") == "video" })
        #expect(FFprobe.string(v, "pix_fmt") == "yuv420p10le")
        #expect(FFprobe.string(v, "color_transfer") == "smpte2084")
    }

    /// Starting on an IDR nothing is re-encoded: the video is a run of the source's packets.
    @Test func startOnAKeyframeCopiesEverything() throws {
        let scratch = try Scratch()
        let source = try CutTests.clickRecording(scratch)
        let (out, stretches) = try Self.cutAndCheck(source, ext: "mp4", from: 2.4, to: nil, scratch)
        #expect(stretches.allSatisfy { $0.frames == 0 })
        let whole = try PacketList(source).payloads, part = try PacketList(out).payloads
        #expect(CutTests.isRun(part[0] ?? [], of: whole[0] ?? []))
    }

    /// The click recording cut exactly: the first frame is shown at 0, and
    /// every beep stays within 1 ms of its flash.
    @Test(arguments: [(2.37, 8.5), (5.01, nil)] as [(Double, Double?)])
    func clickTrackStaysInSync(from: Double, to: Double?) throws {
        let scratch = try Scratch()
        let source = try CutTests.clickRecording(scratch)
        let (out, _) = try Self.cutAndCheck(source, ext: "mp4", from: from, to: to, scratch)
        let shown = try CutTests.decoded(out)
        #expect(abs(shown.first?.pts ?? 1) < 0.0005, "first frame at \(shown.first?.pts ?? -1) s")
        let c = try ClickTrack(out)
        #expect(!c.beeps.isEmpty)
        for (b, e) in zip(c.beeps, c.beepErrors) {
            #expect(e <= 0.001, "beep at \(b) s is \(e * 1000) ms from its flash")
        }
    }

    /// `split --mode exact`: each part starts at the frame shown at its
    /// point, each frame is in one part, and `concat` of the parts gives
    /// back the source's frames (copied ones bit-identical) and its sync.
    @Test func splitExactThenConcat() throws {
        let scratch = try Scratch()
        let source = try CutTests.clickRecording(scratch)
        let run = try Tool.avtool("split", source, scratch.path("part-{n}.mp4"), "--at", "1.3,4.55,7.71", "--mode", "exact", "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let parts = try #require(report["parts"] as? [[String: Any]])
        // 25 fps: the frames shown at 1.3, 4.55 and 7.71 s start at 1.28, 4.52 and 7.68 s.
        let starts = parts.compactMap { $0["start"] as? Double }
        #expect(zip(starts, [0, 1.28, 4.52, 7.68]).allSatisfy { abs($0 - $1) < 1e-6 }, "\(starts)")
        let paths = parts.compactMap { $0["output"] as? String }
        let original = try CutTests.decoded(source)
        var frames: [String] = []
        for (k, p) in paths.enumerated() {
            let shown = try CutTests.decoded(p)
            let from = starts[k], to = k + 1 < starts.count ? starts[k + 1] : .infinity
            let expected = original.filter { $0.pts >= from - 1e-6 && $0.pts < to - 1e-6 }
            #expect(shown.count == expected.count, "part \(k + 1): \(shown.count) frames, \(expected.count) expected")
            #expect(abs(shown.first?.pts ?? 1) < 0.0005)
            frames += shown.map(\.hash)
            let check = try Tool.run("ffmpeg", ["-v", "error", "-xerror", "-i", p, "-f", "null", "-"])
            #expect(check.status == 0, "\(p): \(check)")
            for e in try ClickTrack(p).beepErrors { #expect(e <= 0.001, "\(p): \(e * 1000) ms") }
        }
        #expect(frames.count == original.count)
        // The copied frames (all but the re-encoded) are the source's.
        let reencoded = parts.reduce(0) { $0 + ($1["reencoded_frames"] as? Int ?? $1["reencodedFrames"] as? Int ?? 0) }
        #expect(reencoded > 0 && reencoded < original.count)
        #expect(zip(frames, original.map(\.hash)).filter { $0 != $1 }.count <= reencoded)
        let joined = scratch.path("joined.mp4")
        let concat = try Tool.avtool(["concat"] + paths + [joined])
        try #require(concat.status == 0, "\(concat)")
        #expect(try CutTests.decoded(joined).count == original.count)
        let c = try ClickTrack(joined)
        #expect(c.beeps.count == 10, "beeps \(c.beeps)")
        for (b, e) in zip(c.beeps, c.beepErrors) { #expect(e <= 0.001, "beep at \(b) s is \(e * 1000) ms from its flash") }
    }

    /// A timecode track keeps labelling the same frames: the output's first
    /// frame keeps its label (MOV writes the track again from it).
    @Test(arguments: [CutMode.keyframe, CutMode.exact])
    func timecodeFollowsTheCut(_ mode: CutMode) throws {
        let scratch = try Scratch()
        let out = scratch.path("tc.mov")
        let run = try Tool.avtool("cut", try Fixtures.path("timecode.mov"), out, "--from", "1.5", "--mode", mode.rawValue)
        try #require(run.status == 0, "\(run)")
        // 25 fps from 10:00:00:00: the frame at 1.5 s starts at 1.48 s, frame 37.
        let streams = try FFprobe(out).streams
        #expect(streams.contains { FFprobe.string($0, "codec_tag_string") == "tmcd" })
        for s in streams where ["video"].contains(FFprobe.string(s, "codec_type")) || FFprobe.string(s, "codec_tag_string") == "tmcd" {
            #expect(FFprobe.tag(s, "timecode") == "10:00:01:12", "\(s)")
        }
    }

    enum CutMode: String, CaseIterable { case keyframe, exact }

    /// `--dry-run` names the keyframe, the start and where copying resumes,
    /// as the real cut then does, and writes nothing.
    @Test func dryRunPredictsTheCut() throws {
        let scratch = try Scratch()
        let source = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        let out = scratch.path("x.mp4")
        let dry = try Tool.avtool("cut", source, out, "--from", "1.3", "--mode", "exact", "--dry-run", "--json")
        try #require(dry.status == 0, "\(dry)")
        #expect(!FileManager.default.fileExists(atPath: out))
        let plan = try #require(try JSONSerialization.jsonObject(with: dry.data) as? [String: Any])
        let range = try #require((plan["ranges"] as? [[String: Any]])?.first)
        let real = try Tool.avtool("cut", source, out, "--from", "1.3", "--mode", "exact", "--json")
        try #require(real.status == 0, "\(real)")
        let done = try #require(try JSONSerialization.jsonObject(with: real.data) as? [String: Any])
        let stretch = try #require((done["reencoded"] as? [[String: Any]])?.first)
        #expect(range["start"] as? Double == done["start"] as? Double)
        #expect(range["keyframe"] as? Double == done["keyframe"] as? Double)
        #expect(abs((range["copied_from"] as? Double ?? -1) - (stretch["to"] as? Double ?? -2)) < 1e-5, "\(range) \(stretch)")
    }

    @Test func refusals() throws {
        let scratch = try Scratch()
        // MPEG-TS input: H.264 without a codec record.
        let ts = try Tool.avtool("cut", try Fixtures.path("h264_aac.ts"), scratch.path("a.mp4"), "--from", "1", "--mode", "exact")
        #expect(ts.status != 0 && ts.stderr.contains("--mode keyframe") && ts.stderr.contains("MPEG-TS"), "\(ts)")
        // HEVC into MPEG-TS.
        let hevc = try Tool.avtool("cut", try Fixtures.path("hevc_aac.mp4"), scratch.path("b.ts"), "--from", "1", "--mode", "exact")
        #expect(hevc.status != 0 && hevc.stderr.contains("MP4, MOV or MKV"), "\(hevc)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("a.mp4")) && !FileManager.default.fileExists(atPath: scratch.path("b.ts")))
    }
}

/// `cut --keep A-B,C-D`: the ranges joined by the concat engine, sync
/// restarting at every joint.
@Suite("cut --keep")
struct CutKeepTests {
    /// Exact: the output's frames are the source's frames of each range, in
    /// order (copied ones bit-identical), and every beep stays on its flash.
    @Test func exactRangesJoinFrameForFrame() throws {
        let scratch = try Scratch()
        let source = try CutTests.clickRecording(scratch)
        let out = scratch.path("kept.mp4")
        let ranges: [(Double, Double)] = [(1.3, 3.55), (5.02, 7.7), (8.1, 9.3)]
        let run = try Tool.avtool("cut", source, out, "--keep", ranges.map { "\($0.0)-\($0.1)" }.joined(separator: ","),
                                  "--mode", "exact", "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let kept = try #require(report["ranges"] as? [[String: Any]])
        #expect(kept.count == 3)
        let original = try CutTests.decoded(source)
        var expected: [String] = []
        for (a, b) in ranges {
            let at = try #require(original.last { $0.pts <= a + 0.0005 })
            expected += original.filter { $0.pts >= at.pts - 1e-6 && $0.pts < b - 0.0005 }.map(\.hash)
        }
        let shown = try CutTests.decoded(out).map(\.hash)
        #expect(shown.count == expected.count, "\(shown.count) frames, \(expected.count) in the ranges")
        let reencoded = kept.reduce(0) { $0 + ($1["reencoded_frames"] as? Int ?? $1["reencodedFrames"] as? Int ?? 0) }
        #expect(zip(shown, expected).filter { $0 != $1 }.count <= reencoded)
        // Joints where each range's frames end (25 fps).
        let joints = try #require(report["joints"] as? [Double])
        let counts = ranges.map { r in original.filter { $0.pts >= (original.last { $0.pts <= r.0 + 0.0005 }?.pts ?? 0) - 1e-6 && $0.pts < r.1 - 0.0005 }.count }
        #expect(joints.count == 3 && abs(joints[1] - Double(counts[0]) / 25) < 0.001 && abs(joints[2] - Double(counts[0] + counts[1]) / 25) < 0.001,
                "joints \(joints), ranges of \(counts) frames")
        let check = try Tool.run("ffmpeg", ["-v", "error", "-xerror", "-i", out, "-f", "null", "-"])
        #expect(check.status == 0, "\(check)")
        #expect(try CutExactTests.gstreamerFrames(out) == expected.count)
        let c = try ClickTrack(out)
        // Beeps at 2, 3 (from 1.28 s), 5, 6, 7 (from 5.0 s) and 9 s (from 8.08 s).
        #expect(c.beeps.count == 6, "beeps \(c.beeps)")
        for (b, e) in zip(c.beeps, c.beepErrors) { #expect(e <= 0.001, "beep at \(b) s is \(e * 1000) ms from its flash") }
    }

    /// Keyframe mode: each range from its keyframe, said in a warning; still in sync.
    @Test func keyframeRangesStartAtTheirKeyframes() throws {
        let scratch = try Scratch()
        let source = try CutTests.clickRecording(scratch)
        let out = scratch.path("kept.mkv")
        let run = try Tool.avtool("cut", source, out, "--keep", "3-4.5,5.5-7.3")
        try #require(run.status == 0, "\(run)")
        #expect(run.stderr.contains("range 1 starts at the keyframe at 2.400 s"), "\(run.stderr)")
        let c = try ClickTrack(out)
        #expect(!c.beeps.isEmpty)
        for (b, e) in zip(c.beeps, c.beepErrors) { #expect(e <= 0.001, "beep at \(b) s is \(e * 1000) ms from its flash; flashes \(c.flashes), beeps \(c.beeps)") }
        // No temporary part is left beside the output.
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path(".")).filter { $0.contains("avtool-") }
        #expect(left.isEmpty, "\(left)")
    }

    @Test func badRangesAreRefused() throws {
        let scratch = try Scratch()
        let source = try CutTests.clickRecording(scratch)
        for keep in ["3-2", "1:00", "1-2,x-3", ""] {
            let r = try Tool.avtool("cut", source, scratch.path("x.mp4"), "--keep", keep)
            #expect(r.status != 0 && r.stderr.contains("--keep"), "\(keep): \(r)")
        }
        let both = try Tool.avtool("cut", source, scratch.path("x.mp4"), "--keep", "1-2", "--from", "1")
        #expect(both.status != 0 && both.stderr.contains("not both"))
        let past = try Tool.avtool("cut", source, scratch.path("x.mp4"), "--keep", "1-2,30-40")
        #expect(past.status != 0 && past.stderr.contains("range 2"), "\(past)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("x.mp4")))
    }
}
