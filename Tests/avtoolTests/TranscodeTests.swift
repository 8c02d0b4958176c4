import Foundation
import Testing

/// `avtool transcode` checked with ffprobe (codec, tag, size, frame count,
/// duration, profile, rotation), ffmpeg's psnr filter, and packet hashes.
@Suite("transcode")
struct TranscodeTests {
    /// PSNR floor at the default CRF on the B-frame sample (measured 43.5 dB).
    static let psnrFloor = 40.0

    func countFrames(_ path: String) throws -> Int {
        let r = try Tool.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                         "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path])
        return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    func psnr(_ a: String, _ b: String) throws -> Double {
        let r = try Tool.run("ffmpeg", ["-nostdin", "-i", a, "-i", b, "-lavfi", "[0:v][1:v]psnr", "-f", "null", "-"])
        guard let range = r.stderr.range(of: #"average:([0-9.]+|inf)"#, options: .regularExpression) else { return -1 }
        let v = r.stderr[range].dropFirst("average:".count)
        return v == "inf" ? .infinity : Double(v) ?? -1
    }

    @Test func h264WithBFramesToHEVCInMOV() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        let out = scratch.path("out.mov")
        let run = try Tool.avtool("transcode", input, out, "--preset", "fast")
        try #require(run.status == 0, "\(run)")
        #expect(run.stderr.contains("300 frames"))
        let a = try FFprobe(input), b = try FFprobe(out)
        let v = try #require(b.streams.first { FFprobe.string($0, "codec_type") == "video" })
        let iv = try #require(a.streams.first { FFprobe.string($0, "codec_type") == "video" })
        #expect(FFprobe.string(v, "codec_name") == "hevc")
        #expect(FFprobe.string(v, "codec_tag_string") == "hvc1")
        #expect(FFprobe.int(v, "width") == FFprobe.int(iv, "width"))
        #expect(FFprobe.int(v, "height") == FFprobe.int(iv, "height"))
        #expect(try countFrames(out) == countFrames(input))
        let frame = 1001.0 / 30000
        #expect(abs(FFprobe.double(v, "duration")! - FFprobe.double(iv, "duration")!) <= frame)
        // First and last PTS within one frame of the input's.
        let ours = try PacketList(out), theirs = try PacketList(input)
        let op = ours.packets.filter { $0.stream == 0 }.compactMap { $0.pts.map { ours.seconds($0, stream: 0) } }
        let ip = theirs.packets.filter { $0.stream == 0 }.compactMap { $0.pts.map { theirs.seconds($0, stream: 0) } }
        #expect(abs(op.min()! - ip.min()!) <= frame && abs(op.max()! - ip.max()!) <= frame)
        // Audio copied bit-exact.
        #expect(ours.payloads[1] == theirs.payloads[1], "audio packets differ")
        let quality = try psnr(out, input)
        #expect(quality >= Self.psnrFloor, "PSNR \(quality) dB")
        let gst = try GstDiscoverer(out)
        #expect(gst.ok && gst.videoStreams == 1 && gst.audioStreams == 1, "\(gst.output.prefix(300))")
    }

    /// Variable frame rate: every frame keeps its own timestamp.
    @Test func vfrKeepsTimestamps() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("h264_vfr.mp4")
        let out = scratch.path("out.mov")
        let run = try Tool.avtool("transcode", input, out, "--preset", "ultrafast", "-q")
        try #require(run.status == 0, "\(run)")
        func sortedPTS(_ path: String) throws -> [Double] {
            let l = try PacketList(path)
            return l.packets.filter { $0.stream == 0 }.compactMap { $0.pts.map { l.seconds($0, stream: 0) } }.sorted()
        }
        let a = try sortedPTS(input), b = try sortedPTS(out)
        try #require(a.count == b.count)
        let worst = zip(a, b).map { abs(($0 - a[0]) - ($1 - b[0])) }.max() ?? 0
        #expect(worst <= 0.001, "VFR timestamps moved by up to \(worst) s")
        // The input really is variable: several distinct frame durations.
        #expect(Set(zip(a, a.dropFirst()).map { Int((($1 - $0) * 1000).rounded()) }).count >= 3)
    }

    @Test func rotationAnd10Bit() throws {
        let scratch = try Scratch()
        let out = scratch.path("out.mp4")
        let run = try Tool.avtool("transcode", try Fixtures.path("rotated90.mp4"), out, "--10bit",
                                  "--preset", "ultrafast", "-q")
        try #require(run.status == 0, "\(run)")
        let v = try FFprobe(out).stream(0)
        #expect(FFprobe.string(v, "profile") == "Main 10")
        #expect(FFprobe.string(v, "pix_fmt") == "yuv420p10le")
        #expect(FFprobe.rotation(v) == FFprobe.rotation(try FFprobe(try Fixtures.path("rotated90.mp4")).stream(0)))
    }

    /// The encoder chooses its own frame types: an intra-only source (MJPEG)
    /// must not become all-I HEVC.
    @Test func encoderChoosesFrameTypes() throws {
        let scratch = try Scratch()
        let input = scratch.path("intra.mov"), out = scratch.path("out.mov")
        let gen = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25",
                                          "-frames:v", "50", "-c:v", "mjpeg", input])
        try #require(gen.status == 0, "\(gen)")
        let run = try Tool.avtool("transcode", input, out, "--preset", "ultrafast", "-q")
        try #require(run.status == 0, "\(run)")
        let types = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pict_type",
                                             "-of", "csv=p=0", out]).stdout.split(separator: "\n")
        #expect(types.count == 50)
        #expect(types.filter { $0 == "I" }.count <= 2, "I-frames: \(types.filter { $0 == "I" }.count) of \(types.count)")
    }

    @Test func sizeKeepsAspect() throws {
        let scratch = try Scratch()
        let out = scratch.path("out.mkv")
        let run = try Tool.avtool("transcode", try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4"), out,
                                  "--size", "320x-1", "--preset", "ultrafast", "-q")
        try #require(run.status == 0, "\(run)")
        let v = try FFprobe(out).stream(0)
        #expect(FFprobe.int(v, "width") == 320 && FFprobe.int(v, "height") == 180)
    }

    /// A camera's full-range MJPEG (`yuvj422p`, luma 0–255) into HEVC: the
    /// output is tagged full range and holds full-range values. Before, the
    /// conversion to the encoder's 4:2:0 squeezed them to 10–238 under the
    /// same full-range tag, a washed-out picture (PSNR 29.9 dB against the
    /// source by ffmpeg's psnr filter, which reads both tags).
    @Test func fullRangeVideoStaysFullRange() throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild("generalplus_cam_mjpeg_pcm_garbage_hdr.avi"), out = scratch.path("out.mp4")
        let run = try Tool.avtool("transcode", input, out, "--preset", "ultrafast", "-q")
        try #require(run.status == 0, "\(run)")
        #expect(FFprobe.string(try FFprobe(out).stream(0), "color_range") == "pc")
        let p = try psnr(out, input)
        #expect(p >= 35, "PSNR \(p) dB")
    }

    @Test func pcmStaysPCMInMOV() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("pcm_in_mov.mov")
        let out = scratch.path("out.mov")
        let run = try Tool.avtool("transcode", input, out, "--preset", "ultrafast", "-q")
        try #require(run.status == 0, "\(run)")
        #expect(FFprobe.string(try FFprobe(out).stream(1), "codec_name") == "pcm_s16le")
        #expect(try PacketList(out).payloads[1] == PacketList(input).payloads[1])
    }

    @Test(arguments: [
        (["--crf", "60"], "'--crf' must be between 0 and 51"),
        (["--crf", "20", "--bitrate", "2M"], "'--crf' and '--bitrate' cannot be used together"),
        (["--preset", "warp"], "unknown '--preset' warp"),
        (["--bitrate", "lots"], "'--bitrate' lots"),
        (["--size", "axb"], "'--size' axb"),
        (["--keyint", "0"], "'--keyint' must be at least 1"),
        (["--fps", "fast"], "'--fps' fast is not a frame rate"),
        (["--fps", "0/1"], "'--fps' 0/1 is not a frame rate"),
        (["--audio", "mp3"], "--audio"),
        (["--audio-bitrate", "128k", "--audio", "copy"], "'--audio-bitrate' applies to AAC"),
        (["--audio-bitrate", "2k"], "'--audio-bitrate' must be at least 8k"),
    ])
    func invalidOptions(args: [String], message: String) throws {
        let scratch = try Scratch()
        let run = try Tool.avtool(["transcode", try Fixtures.path("h264_vfr.mp4"), scratch.path("o.mov")] + args)
        #expect(run.status != 0)
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(scratch.contents.isEmpty)
    }

    @Test(arguments: [
        ("aac48_stereo.m4a", "no video stream"),
        ("text.mp4", "Invalid data"),
        // Cut off: refused before anything is written, with what the index says is there.
        ("truncated_faststart.mp4", "it is cut off: only 145 of 300 video"),
    ])
    func refusedInputs(name: String, cause: String) throws {
        let scratch = try Scratch()
        let input = try Fixtures.path(name)
        let before = try sha256(input)
        let run = try Tool.avtool("transcode", input, scratch.path("o.mp4"))
        #expect(run.status != 0)
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        #expect(run.stderr.contains(input) && run.stderr.contains(cause), "\(run.stderr)")
        #expect(scratch.contents.isEmpty)
        #expect(try sha256(input) == before)
    }

    // MARK: audio encoding

    /// `(audio start − video start)` in seconds, from ffprobe's stream start times.
    func avOffset(_ path: String) throws -> Double {
        let p = try FFprobe(path)
        let v = try #require(p.streams.first { FFprobe.string($0, "codec_type") == "video" })
        let a = try #require(p.streams.first { FFprobe.string($0, "codec_type") == "audio" })
        return FFprobe.double(a, "start_time")! - FFprobe.double(v, "start_time")!
    }

    /// ffmpeg's `volumedetect` mean volume (dB) of the first audio stream.
    func meanVolume(_ path: String) throws -> Double {
        let r = try Tool.run("ffmpeg", ["-nostdin", "-i", path, "-map", "0:a:0", "-af", "volumedetect", "-f", "null", "-"])
        guard let range = r.stderr.range(of: #"mean_volume: -?[0-9.]+"#, options: .regularExpression) else { return .nan }
        return Double(r.stderr[range].dropFirst("mean_volume: ".count)) ?? .nan
    }

    /// Decoded audio samples per channel (ffprobe counts the frames' samples).
    func decodedSamples(_ path: String) throws -> Int {
        let r = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "frame=nb_samples",
                                         "-of", "csv=p=0", path])
        return r.stdout.split(separator: "\n").compactMap { Int($0.filter(\.isNumber)) }.reduce(0, +)
    }

    /// MP4 cannot hold PCM: the audio becomes AAC at the input's rate and
    /// channels, 64 kb/s per channel, in sync with the video.
    @Test func pcmInMOVBecomesAACInMP4() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("pcm_in_mov.mov")
        let out = scratch.path("out.mp4")
        let run = try Tool.avtool("transcode", input, out, "--preset", "ultrafast", "--json")
        try #require(run.status == 0, "\(run)")
        let a = try FFprobe(out).streams[1], ia = try FFprobe(input).streams[1]
        #expect(FFprobe.string(a, "codec_name") == "aac")
        #expect(FFprobe.string(a, "sample_rate") == FFprobe.string(ia, "sample_rate"))
        #expect(FFprobe.int(a, "channels") == FFprobe.int(ia, "channels"))
        let rate = try #require(FFprobe.double(ia, "sample_rate"))
        // A/V offset within one AAC frame of the input's.
        #expect(abs(try avOffset(out) - avOffset(input)) <= 1024 / rate)
        // Every input sample is there: decoded length within one AAC frame.
        #expect(abs(try decodedSamples(out) - decodedSamples(input)) <= 1024)
        // Same loudness (AAC is lossy, but not that lossy).
        #expect(abs(try meanVolume(out) - meanVolume(input)) <= 0.5)
        let bitRate = try #require(FFprobe.int(a, "bit_rate"))
        #expect((96_000...160_000).contains(bitRate), "bit rate \(bitRate)")
        #expect(run.stdout.contains("\"action\" : \"encoded\"") && run.stdout.contains("\"codec\" : \"aac\""), "\(run.stdout)")
        let gst = try GstDiscoverer(out)
        #expect(gst.ok && gst.audioStreams == 1, "\(gst.output.prefix(300))")
    }

    /// `--audio pcm` into MOV: 16-bit PCM; from PCM input the decoded samples
    /// are identical (ffmpeg's md5 muxer over the decoded audio).
    @Test func pcmFlagKeepsPCMInMOV() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("pcm_in_mov.mov")
        let out = scratch.path("out.mov")
        let run = try Tool.avtool("transcode", input, out, "--preset", "ultrafast", "--audio", "pcm", "-q")
        try #require(run.status == 0, "\(run)")
        #expect(FFprobe.string(try FFprobe(out).stream(1), "codec_name") == "pcm_s16le")
        func md5(_ path: String) throws -> String {
            try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a", "-f", "md5", "-"]).stdout
        }
        #expect(try md5(out) == md5(input))
        #expect(try avOffset(out) == avOffset(input))

        // From AAC: PCM with the AAC's decoded samples (priming removed).
        let aacInput = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        let out2 = scratch.path("out2.mov")
        let run2 = try Tool.avtool("transcode", aacInput, out2, "--preset", "ultrafast", "--audio", "pcm", "-q")
        try #require(run2.status == 0, "\(run2)")
        #expect(FFprobe.string(try FFprobe(out2).stream(1), "codec_name") == "pcm_s16le")
        #expect(abs(try decodedSamples(out2) - decodedSamples(aacInput)) <= 1024)
        #expect(abs(try avOffset(out2) - avOffset(aacInput)) <= 1024 / 48_000)
    }

    /// Audio that starts late keeps its offset when re-encoded: the encoder's
    /// 1024 priming samples come first (MP4 in FFmpeg 5.1 can skip priming
    /// only at a track's very start), and the input's first sample lands
    /// within one sample of where it was.
    @Test func encodedAudioKeepsItsOffset() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("audio_starts_late.mp4")
        let out = scratch.path("out.mp4")
        let run = try Tool.avtool("transcode", input, out, "--preset", "ultrafast", "--audio", "aac", "-q")
        try #require(run.status == 0, "\(run)")
        let inputOffset = try avOffset(input)
        #expect(inputOffset > 0.1, "fixture's audio should start late")
        let firstInputSample = try avOffset(out) + 1024 / 48_000
        #expect(abs(firstInputSample - inputOffset) <= 1.0 / 48_000 + 1e-6, "offset \(firstInputSample) vs \(inputOffset)")
    }

    /// A gap in the input's audio becomes exactly as many samples of silence
    /// (counted by ffprobe from the input's packet timestamps), so the
    /// re-encoded audio has no gap and later audio stays in place.
    @Test func audioGapIsFilledWhenEncoding() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("audio_gap.mp4")
        let out = scratch.path("out.mp4")
        let run = try Tool.avtool("transcode", input, out, "--preset", "ultrafast", "--audio", "aac", "--json")
        try #require(run.status == 0, "\(run)")
        let packets = try PacketList(input)
        let audio = packets.packets.filter { $0.stream == 1 }.compactMap(\.pts).sorted()
        let steps = zip(audio, audio.dropFirst()).map { $1 - $0 }
        let (tbn, tbd) = packets.timeBases[1]!
        #expect(tbn == 1 && tbd == 48_000)
        let missing = steps.map { $0 - 1024 }.filter { $0 > 0 }.reduce(0, +)
        #expect(missing > 40_000, "fixture's gap")
        #expect(run.stdout.contains("\"silence_inserted\" : \(missing)"), "\(run.stdout)")
        let outAudio = try PacketList(out).packets.filter { $0.stream == 1 }.compactMap(\.pts).sorted()
        let outSteps = Set(zip(outAudio, outAudio.dropFirst()).map { $1 - $0 })
        #expect(outSteps == [1024], "output audio steps \(outSteps)")
        #expect(abs(try decodedSamples(out) - (decodedSamples(input) + Int(missing))) <= 1024)
    }

    @Test(arguments: [
        (["--audio-bitrate", "2000k"], "too high for AAC with 2 channels at 48000 Hz (at most 576k)"),
        (["--audio-bitrate", "12k"], "too low for AAC with 2 channels at 48000 Hz (at least 16k)"),
        (["--audio", "pcm"], "mp4 cannot hold pcm_s16le audio"),
        (["--audio", "copy"], "mp4 cannot hold audio codec 'pcm_s16le'"),
    ])
    func audioRefusedUpFront(args: [String], message: String) throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("pcm_in_mov.mov")
        let run = try Tool.avtool(["transcode", input, scratch.path("o.mp4")] + args)
        #expect(run.status != 0)
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        #expect(run.stderr.contains(message) && run.stderr.contains(input), "\(run.stderr)")
        #expect(scratch.contents.isEmpty)
    }

    // MARK: frame rate, HDR

    /// `--fps 25` on VFR input: constant 1/25 s steps, as many frames as the
    /// duration holds; `--fps` equal to the input's rate changes nothing.
    @Test func constantFrameRate() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("h264_vfr.mp4")
        let out = scratch.path("cfr.mp4")
        let run = try Tool.avtool("transcode", input, out, "--preset", "ultrafast", "--fps", "25", "-q")
        try #require(run.status == 0, "\(run)")
        let v = try FFprobe(out).stream(0)
        #expect(FFprobe.string(v, "r_frame_rate") == "25/1" && FFprobe.string(v, "avg_frame_rate") == "25/1")
        let list = try PacketList(out)
        let pts = list.packets.filter { $0.stream == 0 }.compactMap(\.pts).sorted()
        let steps = Set(zip(pts, pts.dropFirst()).map { $1 - $0 })
        #expect(steps.count == 1, "steps \(steps)")
        let inputDuration = try #require(FFprobe.double(try FFprobe(input).stream(0), "duration"))
        #expect(abs(Double(try countFrames(out)) - inputDuration * 25) <= 1.5)

        let same = scratch.path("same.mov")
        let main = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        let run2 = try Tool.avtool("transcode", main, same, "--preset", "ultrafast", "--fps", "29.97")
        try #require(run2.status == 0, "\(run2)")
        #expect(run2.stderr.contains("(0 dropped, 0 repeated)"), "\(run2.stderr)")
        #expect(try countFrames(same) == countFrames(main))
    }

    /// HDR10 in, HDR10 out: Main10, BT.2020/PQ tags, and the same
    /// mastering-display and content-light metadata in the first frame.
    @Test func hdr10MetadataKept() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("hdr10_pcm.mov")
        let out = scratch.path("out.mov")
        let run = try Tool.avtool("transcode", input, out, "--preset", "ultrafast")
        try #require(run.status == 0, "\(run)")
        func firstFrame(_ path: String) throws -> String {
            try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_frames", "-read_intervals", "%+#1",
                                     "-show_entries", "frame=pix_fmt,color_primaries,color_transfer,color_space:side_data",
                                     "-of", "flat", path]).stdout
                .split(separator: "\n").filter { !$0.contains("User Data Unregistered") && !$0.contains("side_data_type") || $0.contains("Mastering") || $0.contains("Content light") }
                .joined(separator: "\n")
        }
        let a = try firstFrame(input), b = try firstFrame(out)
        #expect(a.contains("max_content=1000") && a.contains("red_x=\"34000/50000\""), "\(a)")
        #expect(a == b)
        let v = try FFprobe(out).stream(0)
        #expect(FFprobe.string(v, "profile") == "Main 10")
        #expect(FFprobe.string(v, "color_transfer") == "smpte2084" && FFprobe.string(v, "color_primaries") == "bt2020")
        #expect(try PacketList(out).payloads[1] == PacketList(input).payloads[1], "PCM copied")
    }
}
