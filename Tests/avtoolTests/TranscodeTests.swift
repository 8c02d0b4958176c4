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
        ("pcm_in_mov.mov", "--no-audio"),
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
}
