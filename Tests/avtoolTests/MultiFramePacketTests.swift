import Foundation
import Testing

/// Audio whose packets hold several codec frames (a 3GP's AMR samples of
/// 5 frames, 100 ms each) is counted, decoded and written whole: no gaps
/// where the packets follow each other, no silence in their place.
///
/// The oracle for the input's sound is the `ffmpeg` program decoding the
/// AMR packets rewritten as a raw `.amr` file (one frame per packet there):
/// libavcodec's AMR decoder decodes only a packet's first frame, so the
/// 3GP decoded directly loses four fifths of its sound.
@Suite("audio packets of several frames")
struct MultiFramePacketTests {
    static let amr3gp = "qt_3gpp_export_2005_amrnb_mp4v_hinted.3gp"
    /// Samples in the recording's 699 packets of 5 AMR-NB frames.
    static let amrSamples = 699 * 5 * 160

    @Test func probeFindsNoGapsBetweenPacketsOfFiveFrames() throws {
        let r = try Tool.avtool("probe", "--json", try Fixtures.wild(Self.amr3gp))
        try #require(r.status == 0, "\(r)")
        let j = try #require(try JSONSerialization.jsonObject(with: r.data) as? [String: Any])
        let sync = try #require(j["sync"] as? [String: Any])
        // Before: 698 gaps of 640 samples, one after each packet's first frame.
        #expect(sync["gap_count"] as? Int == 0, "\(sync)")
        #expect(sync["gap_samples"] as? Int == 0, "\(sync)")
    }

    @Test(arguments: ["mov", "mp4"])
    func fillSilenceKeepsEveryFrame(_ ext: String) throws {
        let scratch = try Scratch()
        let out = scratch.path("filled.\(ext)")
        let r = try Tool.avtool("fill-silence", try Fixtures.wild(Self.amr3gp), out, "--json")
        try #require(r.status == 0, "\(r)")
        let j = try #require(try JSONSerialization.jsonObject(with: r.data) as? [String: Any])
        // Before: 446720 samples of silence in 698 places.
        #expect(j["silence_inserted_samples"] as? Int == 0, "\(r.stdout)")
        try expectSameSound(out, scratch: scratch)
    }

    @Test func transcodeKeepsEveryFrame() throws {
        let scratch = try Scratch()
        let out = scratch.path("transcoded.mp4")
        let r = try Tool.avtool("transcode", try Fixtures.wild(Self.amr3gp), out, "--preset", "ultrafast", "--no-data")
        try #require(r.status == 0, "\(r)")
        #expect(!r.stdout.contains("silence"), "\(r.stdout)")
        try expectSameSound(out, scratch: scratch)
    }

    /// PCM in an AVI of 7 large chunks (libavformat hands it out in packets
    /// of up to 1024 samples): no gaps, and fill-silence copies every sample.
    @Test func pcmInLargeChunksIsKeptWhole() throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild("generalplus_cam_mjpeg_pcm_garbage_hdr.avi")
        let p = try Tool.avtool("probe", "--json", input)
        let sync = try #require((try JSONSerialization.jsonObject(with: p.data) as? [String: Any])?["sync"] as? [String: Any])
        #expect(sync["gap_count"] as? Int == 0, "\(sync)")
        let out = scratch.path("filled.mov")
        let r = try Tool.avtool("fill-silence", input, out)
        try #require(r.status == 0, "\(r)")
        #expect(try decoded(out) == (try decoded(input)))
    }

    /// The output's decoded audio against the input's AMR frames decoded one
    /// by one: as long (within one 1024-sample AAC frame), as loud (RMS
    /// within 0.5 dB) and the same waveform (correlation at least 0.95).
    private func expectSameSound(_ out: String, scratch: Scratch,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws {
        let raw = scratch.path("input.amr")
        let x = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try Fixtures.wild(Self.amr3gp),
                                        "-map", "0:a", "-c", "copy", "-f", "amr", raw])
        try #require(x.status == 0, "\(x)")
        let input = try decoded(raw), output = try decoded(out)
        #expect(input.count == Self.amrSamples, sourceLocation: sourceLocation)
        // Before: 111840 samples of sound in 559104, the rest silence (-27 dB against -19.3 dB).
        #expect(abs(output.count - input.count) <= 1024, "\(output.count) samples, input \(input.count)",
                sourceLocation: sourceLocation)
        let (a, b) = (rmsDecibels(input), rmsDecibels(output))
        #expect(abs(a - b) <= 0.5, "RMS \(b) dB, input \(a) dB", sourceLocation: sourceLocation)
        let c = correlation(input, output)
        #expect(c >= 0.95, "correlation \(c)", sourceLocation: sourceLocation)
    }

    /// The first audio stream decoded by the `ffmpeg` program as 16-bit mono.
    private func decoded(_ path: String) throws -> [Int16] {
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-ac", "1",
                                        "-f", "s16le", "-"])
        try #require(r.status == 0, "\(r)")
        return r.data.withUnsafeBytes { raw in
            (0..<raw.count / 2).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: 2 * $0, as: Int16.self)) }
        }
    }

    private func rmsDecibels(_ s: [Int16]) -> Double {
        let sum = s.reduce(0.0) { $0 + Double($1) * Double($1) }
        return 10 * log10(sum / Double(max(s.count, 1)) / (32768.0 * 32768.0))
    }

    /// Normalized correlation of the two at no lag, over their common length.
    private func correlation(_ a: [Int16], _ b: [Int16]) -> Double {
        var ab = 0.0, aa = 0.0, bb = 0.0
        for i in 0..<min(a.count, b.count) {
            let x = Double(a[i]), y = Double(b[i])
            ab += x * y
            aa += x * x
            bb += y * y
        }
        return ab / max((aa * bb).squareRoot(), 1)
    }
}
