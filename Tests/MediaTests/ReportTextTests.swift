@testable import Probe
import Media
import Sync
import Testing

/// The probe report's text renders whatever numbers a broken file puts in
/// it — infinite or absurd seconds, a gap of Int64.min samples — as text,
/// never as a trap in an integer conversion.
@Suite("report text on absurd values")
struct ReportTextTests {
    static let absurd: [Double] = [.infinity, -.infinity, .nan, 1e300, -1e300, 9.3e18, -9.3e18, 1e15, 0, -0.0004]

    @Test(arguments: absurd)
    func numbers(_ v: Double) {
        _ = formatSeconds(v)
        _ = trim(v)
        _ = fixed(v, 3)
        _ = formatMicros(v.isFinite && abs(v) < 9e18 ? Int64(v) : .min)
    }

    @Test func wholeReport() {
        let stream = StreamReport(
            index: 0, type: .audio, codec: "aac", codecLongName: nil, profile: nil, codecTag: nil, timeBase: "2147483647/1",
            startSeconds: 1e300, durationSeconds: .infinity, packets: 2, corruptPackets: 0, declaredFrames: nil,
            bitRate: .max, language: nil, isDefault: true, isAttachedPicture: false, firstPTS: .min, firstDTS: .max,
            tags: [:], video: nil,
            audio: AudioReport(sampleRate: 1, channels: 2, channelLayout: nil, sampleFormat: nil, frameSize: 0,
                               primingSamples: .max, samples: .min))
        let report = ProbeReport(
            file: "x", format: "matroska", formatLongName: nil, size: .max, durationSeconds: .nan, startSeconds: -1e300,
            bitRate: .max, tags: [:], chapters: 0, streams: [stream],
            sync: SyncReport(videoStream: nil, audioStream: 0, skew: nil,
                             gaps: [GapReport(stream: 0, atSeconds: .infinity, atSample: .min, samples: .min, milliseconds: -.infinity)],
                             gapCount: 1, gapSamples: .max, overlapSamples: .max, toleranceSamples: .max))
        #expect(report.text.contains("overlap of 9223372036854775808 samples"))
    }
}
