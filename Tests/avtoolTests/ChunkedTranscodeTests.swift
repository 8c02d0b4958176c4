import Foundation
import Testing

/// `avtool transcode --chunks N`, `--chunk K/N --chunk-dir DIR` and
/// `--join DIR OUT`, checked against a single-pass transcode with the same
/// settings and against the source: ffprobe's frame counts and packet
/// timestamps, ffmpeg's psnr filter per frame, `ffmpeg -xerror`, GStreamer,
/// and the click track's flashes and beeps.
@Suite("chunked transcode")
struct ChunkedTranscodeTests {
    static let settings = ["--preset", "ultrafast", "--crf", "26"]

    func transcode(_ input: String, _ output: String, _ extra: [String] = []) throws -> Run {
        try Tool.avtool(["transcode", input, output, "--json"] + Self.settings + extra)
    }

    func countFrames(_ path: String) throws -> Int {
        let r = try Tool.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                         "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path])
        return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// The video's packet PTS, sorted (presentation order), in seconds.
    func videoTimes(_ path: String) throws -> [Double] {
        let list = try PacketList(path)
        let v = try FFprobe(path).streams.firstIndex { FFprobe.string($0, "codec_type") == "video" }!
        return list.packets.filter { $0.stream == v }.compactMap(\.pts).sorted().map { list.seconds($0, stream: v) }
    }

    /// Per-frame PSNR of `output` against `source` (frames paired in order), with each frame's time.
    func framePSNR(_ output: String, _ source: String, in scratch: Scratch) throws -> [(t: Double, psnr: Double)] {
        let stats = scratch.path("psnr-\(UUID().uuidString).log")
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", output, "-i", source, "-lavfi",
                                        "[0:v]setpts=N/TB/25[a];[1:v]setpts=N/TB/25[b];[a][b]psnr=stats_file=\(stats)",
                                        "-f", "null", "-"])
        try #require(r.status == 0, "\(r)")
        let times = try videoTimes(output)
        let lines = try String(contentsOfFile: stats, encoding: .utf8).split(separator: "\n")
        return zip(times, lines).map { t, line in
            let v = line.split(separator: " ").first { $0.hasPrefix("psnr_avg:") }.map { Double($0.dropFirst(9)) ?? 100 } ?? -1
            return (t, min(v ?? 100, 100))
        }
    }

    func mean(_ v: [Double]) -> Double { v.isEmpty ? 0 : v.reduce(0, +) / Double(v.count) }

    func seams(_ run: Run) throws -> [Double] {
        let json = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        let chunks = json?["chunks"] as? [String: Any]
        return chunks?["seams_seconds"] as? [Double] ?? []
    }

    /// `input` transcoded in a single pass and in 3 chunks with the same
    /// settings, into `scratch` (`tag` keeps several pairs apart).
    func singleAndChunked(_ input: String, ext: String, tag: String = "", in scratch: Scratch,
                          sourceLocation: SourceLocation = #_sourceLocation) throws -> (single: String, chunked: String, run: Run) {
        let single = scratch.path("single\(tag).\(ext)"), chunked = scratch.path("chunked\(tag).\(ext)")
        try #require(try transcode(input, single).status == 0, sourceLocation: sourceLocation)
        let run = try transcode(input, chunked, ["--chunks", "3"])
        try #require(run.status == 0, "\(run)", sourceLocation: sourceLocation)
        return (single, chunked, run)
    }

    @Test func chunksJoinAsTheSinglePassWould() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        let (single, chunked, run) = try singleAndChunked(input, ext: "mp4", in: scratch)
        let seams = try seams(run)
        #expect(seams.count == 2, "\(run.stdout)")
        // Every frame once, at the source's time.
        #expect(try countFrames(chunked) == countFrames(input))
        #expect(try videoTimes(chunked) == videoTimes(single))
        #expect(try videoTimes(chunked).count == videoTimes(input).count)
        // The audio is the source's, copied once.
        #expect(try PacketList(chunked).payloads[1] == PacketList(input).payloads[1])
        // Quality and size as the single pass's, at the seams too.
        let a = try framePSNR(chunked, input, in: scratch), b = try framePSNR(single, input, in: scratch)
        try #require(a.count == b.count && a.count == 300)
        #expect(abs(mean(a.map(\.psnr)) - mean(b.map(\.psnr))) <= 0.2, "\(mean(a.map(\.psnr))) vs \(mean(b.map(\.psnr)))")
        for s in seams {
            let near = { (frames: [(t: Double, psnr: Double)]) in mean(frames.filter { abs($0.t - s) <= 1 }.map(\.psnr)) }
            #expect(abs(near(a) - near(b)) <= 0.5, "seam at \(s) s: \(near(a)) vs \(near(b)) dB")
        }
        let sizes = try [chunked, single].map { try FileManager.default.attributesOfItem(atPath: $0)[.size] as! Int }
        #expect(abs(Double(sizes[0]) / Double(sizes[1]) - 1) <= 0.03, "\(sizes)")
        // Other decoders: ffmpeg stopping at the first error, and GStreamer.
        let strict = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-xerror", "-i", chunked, "-f", "null", "-"])
        #expect(strict.status == 0 && strict.stderr.isEmpty, "\(strict.stderr)")
        let gst = try GstDiscoverer(chunked)
        #expect(gst.ok && gst.videoStreams == 1 && gst.audioStreams == 1, "\(gst.output.prefix(300))")
        #expect(try CutExactTests.gstreamerFrames(chunked) == 300)
        // The temporary chunk directory is gone.
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path("."))
        #expect(!left.contains { $0.contains("chunks") }, "\(left)")
    }

    /// Recordings nobody here made: a B-frame clip, a 4:4:4 camera file with
    /// MP3 audio, a camera's 576p recording.
    @Test(arguments: ["bikes_bframes_videoonly.mp4", "cockatoo_yuv444_mp3.mp4", "camera_576p.mp4"])
    func realRecordingsJoinAsTheSinglePassWould(_ name: String) throws {
        let scratch = try Scratch()
        let input = try Fixtures.real(name)
        let (single, chunked, run) = try singleAndChunked(input, ext: "mp4", in: scratch)
        #expect(try seams(run).count >= 1, "\(run.stdout)")
        let frames = try countFrames(input)
        #expect(try countFrames(chunked) == frames)
        #expect(try videoTimes(chunked) == videoTimes(single))
        let a = try framePSNR(chunked, input, in: scratch), b = try framePSNR(single, input, in: scratch)
        #expect(abs(mean(a.map(\.psnr)) - mean(b.map(\.psnr))) <= 0.2, "\(mean(a.map(\.psnr))) vs \(mean(b.map(\.psnr)))")
        let strict = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-xerror", "-i", chunked, "-f", "null", "-"])
        #expect(strict.status == 0 && strict.stderr.isEmpty, "\(strict.stderr)")
        #expect(try CutExactTests.gstreamerFrames(chunked) == frames)
    }

    /// x265's default open GOPs: the leading frames of each CRA follow it in
    /// decode order but belong to the chunk before.
    @Test func openGOPSourceLosesAndRepeatsNoFrame() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("hevc_aac.mp4")
        let out = scratch.path("out.mov")
        let run = try transcode(input, out, ["--chunks", "3"])
        try #require(run.status == 0, "\(run)")
        #expect(try seams(run).count == 2)
        #expect(try countFrames(out) == countFrames(input))
        let source = try videoTimes(input), ours = try videoTimes(out)
        #expect(ours == source)
        // The same frames in the same places: a frame lost or repeated would
        // pair every later frame with its neighbour (measured: below 26 dB
        // on this source, against 37 dB and more in place).
        let frames = try framePSNR(out, input, in: scratch)
        #expect(frames.count == source.count)
        let worst = frames.map(\.psnr).min() ?? 0
        #expect(worst >= 30, "worst frame \(worst) dB")
    }

    @Test(arguments: ["mp4", "mkv"])
    func clickTrackStaysInSync(_ ext: String) throws {
        let scratch = try Scratch()
        let av = scratch.path("clicks.mp4")
        let mux = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try Fixtures.path("clicks_video.mp4"),
                                          "-i", try Fixtures.path("clicks_audio.m4a"), "-map", "0:v", "-map", "1:a",
                                          "-c", "copy", av])
        try #require(mux.status == 0, "\(mux)")
        let out = scratch.path("out.\(ext)")
        let run = try transcode(av, out, ["--chunks", "4"])
        try #require(run.status == 0, "\(run)")
        #expect(try seams(run).count >= 3)
        #expect(try countFrames(out) == countFrames(av))
        #expect(try CutExactTests.gstreamerFrames(out) == countFrames(av))
        let c = try ClickTrack(out)
        #expect(c.flashes.map { Int($0.rounded()) } == Array(0...9), "flashes \(c.flashes)")
        #expect(c.beeps.map { Int($0.rounded()) } == Array(0...9), "beeps \(c.beeps)")
        for (b, e) in zip(c.beeps, c.beepErrors) {
            #expect(e <= 0.001, "beep at \(b) s is \(e * 1000) ms from its flash")
        }
    }

    @Test func variableFrameRateAndRotationAsTheSinglePass() throws {
        let scratch = try Scratch()
        for (name, ext) in [("h264_vfr.mkv", "mkv"), ("rotated90.mp4", "mp4")] {
            let input = try Fixtures.path(name)
            let (single, chunked, run) = try singleAndChunked(input, ext: ext, tag: "-\(name)", in: scratch)
            #expect(try seams(run).count >= 1, "\(name)")
            #expect(try videoTimes(chunked) == videoTimes(single), "\(name)")
            let a = try FFprobe(chunked).stream(0), b = try FFprobe(single).stream(0)
            #expect(FFprobe.rotation(a) == FFprobe.rotation(b), "\(name)")
            for key in ["color_primaries", "color_transfer", "color_space", "profile", "pix_fmt", "sample_aspect_ratio"] {
                #expect(FFprobe.string(a, key) == FFprobe.string(b, key), "\(name) \(key)")
            }
        }
    }

    /// A cluster's way: one task per chunk, then the join; a rerun redoes
    /// only what is missing; the join refuses a missing chunk or one of
    /// other settings, naming it.
    @Test func tasksLedgerAndJoin() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        let dir = scratch.path("chunks")
        func task(_ k: Int, _ extra: [String] = [], into d: String? = nil) throws -> Run {
            try Tool.avtool(["transcode", input, "--chunk", "\(k)/3", "--chunk-dir", d ?? dir, "--json"] + Self.settings + extra)
        }
        try #require(try task(1).status == 0)
        try #require(try task(3).status == 0)
        let out = scratch.path("joined.mp4")
        var join = try Tool.avtool("transcode", "--join", dir, out)
        #expect(join.status != 0)
        #expect(join.stderr.contains("chunk 2 of 3 is missing"), "\(join.stderr)")
        #expect(join.stderr.contains("--chunk 2/3"), "\(join.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        // A task with other settings is refused by the directory's manifest.
        let other = try task(2, ["--crf", "30"])
        #expect(other.status != 0)
        #expect(other.stderr.contains("another transcode"), "\(other.stderr)")
        // A chunk of other settings slipped in is named by the join.
        let elsewhere = scratch.path("elsewhere")
        try #require(try Tool.avtool(["transcode", input, "--chunk", "2/3", "--chunk-dir", elsewhere,
                                      "--preset", "ultrafast", "--crf", "30"]).status == 0)
        for suffix in ["packets", "json"] {
            try FileManager.default.copyItem(atPath: elsewhere + "/chunk-0002-of-0003.\(suffix)",
                                             toPath: dir + "/chunk-0002-of-0003.\(suffix)")
        }
        join = try Tool.avtool("transcode", "--join", dir, out)
        #expect(join.status != 0)
        #expect(join.stderr.contains("chunk 2 of 3 was encoded with other settings"), "\(join.stderr)")
        for suffix in ["packets", "json"] { try FileManager.default.removeItem(atPath: dir + "/chunk-0002-of-0003.\(suffix)") }
        // The rerun of every task encodes only chunk 2.
        let first = dir + "/chunk-0001-of-0003.packets"
        let before = try FileManager.default.attributesOfItem(atPath: first)[.modificationDate] as! Date
        let rerun1 = try task(1), rerun2 = try task(2)
        #expect(rerun1.stdout.contains("\"status\" : \"done-before\""), "\(rerun1.stdout)")
        #expect(rerun2.stdout.contains("\"status\" : \"encoded\""), "\(rerun2.stdout)")
        #expect(try FileManager.default.attributesOfItem(atPath: first)[.modificationDate] as! Date == before)
        join = try Tool.avtool("transcode", "--join", dir, out, "--json")
        try #require(join.status == 0, "\(join)")
        // The same file as all chunks on one machine.
        let local = scratch.path("local.mp4")
        try #require(try transcode(input, local, ["--chunks", "3"]).status == 0)
        #expect(try PacketList(out).payloads == PacketList(local).payloads)
        #expect(try countFrames(out) == 300)

        // Chunk 3's packets cut 100 bytes short (a copy between nodes that stopped): refused, in one
        // line naming the file, by its ledger's size; with a record that agrees, by the reader.
        let third = dir + "/chunk-0003-of-0003.packets"
        let whole = try Data(contentsOf: URL(fileURLWithPath: third))
        try whole.prefix(whole.count - 100).write(to: URL(fileURLWithPath: third))
        let refused = scratch.path("refused.mp4")
        join = try Tool.avtool("transcode", "--join", dir, refused)
        #expect(join.status == 1 && join.stderr.split(separator: "\n").count == 1, "\(join)")
        #expect(join.stderr.contains("'\(third)': chunk 3 of 3 is damaged: \(whole.count - 100) bytes, the ledger says \(whole.count) bytes"),
                "\(join.stderr)")
        let record = URL(fileURLWithPath: dir + "/chunk-0003-of-0003.json")
        var fields = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: record)) as? [String: Any])
        fields["bytes"] = whole.count - 100
        try JSONSerialization.data(withJSONObject: fields).write(to: record)
        join = try Tool.avtool("transcode", "--join", dir, refused)
        #expect(join.status == 1 && join.stderr.split(separator: "\n").count == 1, "\(join)")
        #expect(join.stderr.contains("could not read '\(third)': the chunk is cut off: packet "), "\(join.stderr)")
        #expect(join.stderr.contains("past its end at byte \(whole.count - 100)") || join.stderr.contains("header at byte"), "\(join.stderr)")
        #expect(!FileManager.default.fileExists(atPath: refused))
    }

    /// A recipe's `chunks: N`: whole on one machine; sharded, the chunks are
    /// spread over the shards and `--merge-ledgers` joins them.
    @Test func batchRecipeSpreadsChunksOverShards() throws {
        let scratch = try Scratch()
        try FileManager.default.copyItem(atPath: try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4"),
                                         toPath: scratch.path("talk.mp4"))
        let recipe = scratch.path("chunks.yaml")
        try """
            version: 1
            steps:
              - verb: transcode
                inputs: talk.mp4
                output: out/{stem}.mp4
                options: {chunks: 3, preset: ultrafast, crf: 26}
            """.write(toFile: recipe, atomically: true, encoding: .utf8)
        var done: [String] = []
        for k in 0..<2 {
            let r = try Tool.avtool(["batch", recipe, "--shard", "\(k)/2", "--json"])
            try #require(r.status == 0, "\(r)")
            let json = try JSONSerialization.jsonObject(with: r.data) as? [String: Any]
            let jobs = json?["jobs"] as? [[String: Any]] ?? []
            done += jobs.filter { $0["status"] as? String == "done" }.compactMap { $0["output"] as? String }
        }
        #expect(done.count == 3 && done.allSatisfy { $0.contains("chunk-000") && $0.hasSuffix("-of-0003.packets") }, "\(done)")
        let out = scratch.path("out/talk.mp4")
        #expect(!FileManager.default.fileExists(atPath: out))
        let merge = try Tool.avtool("batch", recipe, "--merge-ledgers")
        try #require(merge.status == 0, "\(merge)")
        #expect(try countFrames(out) == 300)
        // The same file as the transcode run whole.
        let whole = scratch.path("whole.mp4")
        try #require(try transcode(scratch.path("talk.mp4"), whole, ["--chunks", "3"]).status == 0)
        #expect(try PacketList(out).payloads == PacketList(whole).payloads)
        // Nothing left to do on a rerun.
        let again = try Tool.avtool(["batch", recipe, "--shard", "0/2", "--json"])
        let json = try JSONSerialization.jsonObject(with: again.data) as? [String: Any]
        #expect(json?["done"] as? Int == 0, "\(again.stdout)")
    }

    /// A video with fewer keyframes than chunks asked: fewer chunks, the
    /// tasks past them write empty ones, the join needs nothing more. The
    /// HDR10 sample (one keyframe) keeps its HDR as the single pass does.
    @Test func fewerKeyframesThanChunks() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("hdr10_pcm.mov")
        let (single, chunked, run) = try singleAndChunked(input, ext: "mov", in: scratch)
        #expect(run.stdout.contains("keyframes for 1 chunks only"), "\(run.stdout)")
        #expect(try countFrames(chunked) == countFrames(input))
        #expect(try videoTimes(chunked) == videoTimes(single))
        let a = try FFprobe(chunked).stream(0), b = try FFprobe(single).stream(0)
        for key in ["color_primaries", "color_transfer", "color_space", "pix_fmt", "profile"] {
            #expect(FFprobe.string(a, key) == FFprobe.string(b, key), "\(key)")
        }
        let dir = scratch.path("dir")
        let empty = try Tool.avtool(["transcode", input, "--chunk", "3/3", "--chunk-dir", dir, "--json"] + Self.settings)
        #expect(empty.status == 0 && empty.stdout.contains("\"status\" : \"empty\""), "\(empty)")
        for k in 1...2 {
            try #require(try Tool.avtool(["transcode", input, "--chunk", "\(k)/3", "--chunk-dir", dir] + Self.settings).status == 0)
        }
        let joined = scratch.path("joined.mov")
        let join = try Tool.avtool("transcode", "--join", dir, joined)
        try #require(join.status == 0, "\(join)")
        #expect(try countFrames(joined) == countFrames(input))
    }

    /// Tasks that name the source relatively, the join run from elsewhere:
    /// the manifest keeps the source's absolute path.
    @Test func relativeSourceIsFoundByTheJoin() throws {
        let scratch = try Scratch()
        try FileManager.default.copyItem(atPath: try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4"),
                                         toPath: scratch.path("talk.mp4"))
        for k in 1...2 {
            let r = try Tool.run("/bin/sh", ["-c", "cd '\(scratch.url.path)' && '\(Tool.avtool)' transcode talk.mp4 --chunk \(k)/2 --chunk-dir parts --preset ultrafast"])
            try #require(r.status == 0, "\(r)")
        }
        let out = scratch.path("joined.mp4")
        let join = try Tool.avtool("transcode", "--join", scratch.path("parts"), out)
        try #require(join.status == 0, "\(join)")
        #expect(try countFrames(out) == 300)
    }

    @Test func refusedUpFront() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        let ts = try Tool.avtool("transcode", input, scratch.path("o.ts"), "--chunks", "2")
        #expect(ts.status != 0 && ts.stderr.contains("MP4, MOV or Matroska"), "\(ts.stderr)")
        let fps = try Tool.avtool("transcode", input, scratch.path("o.mp4"), "--chunks", "2", "--fps", "30")
        #expect(fps.status != 0 && fps.stderr.contains("--fps"), "\(fps.stderr)")
        let join = try Tool.avtool("transcode", "--join", scratch.path("d"), scratch.path("o.mp4"), "--crf", "20")
        #expect(join.status == 64 && join.stderr.contains("belong to the '--chunk' tasks"), "\(join.stderr)")
        let bad = try Tool.avtool("transcode", input, "--chunk", "4/3", "--chunk-dir", scratch.path("d"))
        #expect(bad.status == 64, "\(bad.stderr)")
        let empty = try Tool.avtool("transcode", "--join", scratch.path("nothing"), scratch.path("o.mp4"))
        #expect(empty.status != 0 && empty.stderr.contains("not a chunk directory"), "\(empty.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path(".")).isEmpty)
    }
}
