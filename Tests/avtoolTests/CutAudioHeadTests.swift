import Foundation
import Testing

/// A cut into a container without edit lists (Matroska, MPEG-TS) starts
/// its audio at the output's start to the sample: the AAC frames around it
/// re-encoded on the source's frame grid, silent before it, the source's
/// packets copied after. Checked against the source decoded by `ffmpeg`:
/// nothing heard before the start, the source's samples from it (the frame
/// holding it re-encoded, those after the rejoin as the source decodes
/// them), and the start at the first video frame's time within 1 ms.
@Suite("cut: audio start without edit lists")
struct CutAudioHeadTests {
    /// A chirp (no period, so the alignment is unique) in AAC-LC with H.264 B-frame video.
    static func chirpRecording(_ scratch: Scratch) throws -> String {
        let path = scratch.path("chirp.mp4")
        let r = try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=30000/1001:d=6",
                                        "-f", "lavfi", "-i",
                                        "aevalsrc=0.3*sin(2*PI*(220+300*t)*t)+0.1*sin(2*PI*3000*t+sin(2*PI*3*t))|0.2*sin(2*PI*(500+100*t)*t):s=48000:d=6",
                                        "-c:v", "libx264", "-bf", "2", "-g", "48", "-c:a", "aac", "-b:a", "128k", path])
        try #require(r.status == 0, "\(r)")
        return path
    }

    /// The first audio stream decoded to mono float samples.
    static func samples(_ path: String) throws -> [Float] {
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-ac", "1", "-f", "f32le", "-"])
        try #require(r.status == 0, "\(r)")
        return r.data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Signal to error, in dB, of `a` against the reference `b`.
    static func snr(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
        var signal = 0.0, error = 0.0
        for (x, y) in zip(a, b) {
            signal += Double(y) * Double(y)
            error += Double(x - y) * Double(x - y)
        }
        return error == 0 ? .infinity : 10 * log10(signal / error)
    }

    @Test(arguments: [("keyframe", "mkv"), ("exact", "mkv"), ("exact", "ts")])
    func aacStartsAtTheSample(mode: String, ext: String) throws {
        let scratch = try Scratch()
        let source = try Self.chirpRecording(scratch)
        let out = scratch.path("cut." + ext)
        let run = try Tool.avtool("cut", source, out, "--mode", mode, "--from", "2.345", "--to", "4.5", "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let said = report["audio_start"] as? String ?? ""
        #expect(said.contains("3 aac frame(s) re-encoded (silent before the start)"), "\(said)")
        let start = try #require(report["start"] as? Double)

        // Output sample i is source sample i + offset: found where the
        // decoded chirps match, a second in (after the rejoin).
        let s = try Self.samples(source), o = try Self.samples(out)
        let at = Int((start * 48_000).rounded())
        let window = 48_000..<49_000
        try #require(o.count > window.upperBound)
        func mismatch(_ shift: Int) -> Float {
            var worst: Float = 0
            for i in window { worst = max(worst, abs(o[i] - s[i + shift])) }
            return worst
        }
        var offset = at - 4096
        for shift in (at - 4096)...(at + 1024) where mismatch(shift) < mismatch(offset) { offset = shift }
        let k = at - offset
        #expect(mismatch(offset) < 0.001)
        try #require(k > 0 && k < 2048 + 1024, "the start is \(k) samples into the output's audio")
        // Silent before the start (within 1 ms: the codec's pre-echo).
        let before = o[..<max(k - 48, 0)].map { abs($0) }.max() ?? 0
        #expect(before < 0.01, "\(before) before the start")
        // The frame holding the start re-encoded; the next ones close; after the rejoin as the source decodes.
        func ref(_ r: Range<Int>) -> ArraySlice<Float> { s[(r.lowerBound + offset)..<(r.upperBound + offset)] }
        #expect(Self.snr(o[k..<k + 1024], ref(k..<k + 1024)) >= 25)
        #expect(Self.snr(o[k + 1024..<k + 3072], ref(k + 1024..<k + 3072)) >= 40)
        #expect(Self.snr(o[k + 8192..<k + 40_000], ref(k + 8192..<k + 40_000)) >= 60)

        // In sync: the start's sample plays when the first video frame is shown.
        let probe = try FFprobe(out)
        let a = try #require(probe.streams.first { FFprobe.string($0, "codec_type") == "audio" })
        let audioAtStart = (FFprobe.double(a, "start_time") ?? 0) + Double(k) / 48_000
        let v = try #require(probe.streams.first { FFprobe.string($0, "codec_type") == "video" })
        let firstFrame = try #require(FFprobe.double(v, "start_time"))
        #expect(abs(audioAtStart - firstFrame) <= 0.001 + 0.0005, "audio \(audioAtStart) s, video \(firstFrame) s")
        let check = try Tool.run("ffmpeg", ["-v", "error", "-xerror", "-i", out, "-f", "null", "-"])
        #expect(check.status == 0, "\(check)")
        #expect(try GstDiscoverer(out).ok)
    }

    /// The click recording cut exactly into Matroska: every beep within 1 ms of its flash.
    @Test func clickTrackInMatroska() throws {
        let scratch = try Scratch()
        let source = try CutTests.clickRecording(scratch)
        let out = scratch.path("cut.mkv")
        let run = try Tool.avtool("cut", source, out, "--mode", "exact", "--from", "2.37", "--to", "8.5")
        try #require(run.status == 0, "\(run)")
        #expect((run.stdout + run.stderr).contains("frame(s) re-encoded"), "\(run)")
        let c = try ClickTrack(out)
        #expect(c.beeps.count >= 5, "beeps \(c.beeps)")
        for e in c.beepErrors { #expect(e <= 0.001) }
    }

    /// PCM frames stand alone: the packet holding the start is cut at it
    /// and every sample from there is the source's.
    @Test func pcmIsTrimmed() throws {
        let scratch = try Scratch()
        let source = try Fixtures.path("pcm_in_mov.mov")
        let out = scratch.path("cut.mkv")
        let run = try Tool.avtool("cut", source, out, "--mode", "exact", "--from", "0.5123", "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        #expect((report["audio_start"] as? String ?? "").contains("trimmed to the start"))
        let start = try #require(report["start"] as? Double)
        let s = try Self.samples(source), o = try Self.samples(out)
        let at = Int((start * 48_000).rounded())
        #expect(Array(o.prefix(48_000)) == Array(s[at..<at + 48_000]))
        let probe = try FFprobe(out)
        let starts = probe.streams.compactMap { FFprobe.double($0, "start_time") }
        #expect(starts.count == 2 && abs(starts[0] - starts[1]) <= 0.001, "\(starts)")
    }
}
