import Foundation
import Testing

/// `avtool probe --loudness` and `avtool loudness`, checked against the
/// `ffmpeg` program's `ebur128` filter.
@Suite("loudness")
struct LoudnessTests {
    /// Each audio stream's `loudness` object from `probe --loudness --json`.
    func measured(_ path: String) throws -> [[String: Any]] {
        let run = try Tool.avtool("probe", path, "--loudness", "--json")
        try #require(run.status == 0, "\(run)")
        let json = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let streams = json["streams"] as? [[String: Any]] ?? []
        return streams.filter { $0["type"] as? String == "audio" }.compactMap { $0["loudness"] as? [String: Any] }
    }

    static func number(_ o: [String: Any], _ key: String) -> Double? {
        if let d = o[key] as? Double { return d }
        return (o[key] as? String) == "-inf" ? -.infinity : nil
    }

    /// Real recordings (5.1 AAC, a camera's and a phone's AAC, a silent MP3,
    /// a silent ALAC) and PCM: integrated within 0.2 LU, range within 0.2 LU
    /// and peaks within 0.3 dB of ebur128's summary (which has one decimal).
    @Test(arguments: [
        "real:bbb_720p_aac51.mp4", "real:cockatoo_yuv444_mp3.mp4", "real:alac.m4a",
        "device:gopro_max_heromode_gpmd.mp4", "device:iphone14pro_dv84_hlg_720p_mebx.MOV",
        "fixture:pcm_in_mov.mov", "fixture:clicks_audio.wav", "fixture:aac44_mono.m4a",
    ])
    func measurementAgreesWithEbur128(_ name: String) throws {
        let parts = name.split(separator: ":").map(String.init)
        let path = switch parts[0] {
        case "real": try Fixtures.real(parts[1])
        case "device": try Fixtures.device(parts[1])
        default: try Fixtures.path(parts[1])
        }
        let ours = try measured(path)
        try #require(ours.count == 1, "one audio stream measured in \(name)")
        let ref = try Ebur128(path)
        let m = ours[0]
        let integrated = try #require(Self.number(m, "integrated_lufs"))
        let range = try #require(Self.number(m, "range_lu"))
        let samplePeak = try #require(Self.number(m, "sample_peak_dbfs"))
        let truePeak = try #require(Self.number(m, "true_peak_dbtp"))
        #expect(abs(integrated - ref.integrated) <= 0.2, "integrated \(integrated) vs \(ref.integrated) in \(name)")
        #expect(abs(range - ref.range) <= 0.2, "range \(range) vs \(ref.range) in \(name)")
        for (ours, theirs, what) in [(samplePeak, ref.samplePeak, "sample"), (truePeak, ref.truePeak, "true")] {
            if theirs.isInfinite {
                #expect(ours == theirs, "\(what) peak \(ours) vs \(theirs) in \(name)")
            } else {
                #expect(abs(ours - theirs) <= 0.3, "\(what) peak \(ours) vs \(theirs) in \(name)")
            }
        }
        #expect(truePeak >= samplePeak)
    }

    /// The text report names a stream below the absolute gate as gated out.
    @Test func textReportSaysGatedOut() throws {
        let run = try Tool.avtool("probe", "--loudness", try Fixtures.device("iphone14pro_dv84_hlg_720p_mebx.MOV"))
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("loudness below -70 LUFS (gated out)"), "\(run.stdout)")
        #expect(run.stdout.contains("true peak -33.1 dBTP"), "\(run.stdout)")
    }

    /// A file without audio is probed as usual, with nothing measured.
    @Test func fileWithoutAudio() throws {
        let run = try Tool.avtool("probe", "--loudness", "--json", try Fixtures.real("bikes_bframes_videoonly.mp4"))
        try #require(run.status == 0, "\(run)")
        #expect(!run.stdout.contains("\"loudness\""), "\(run.stdout)")
    }
}
