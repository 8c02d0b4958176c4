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
        let texts = [formatSeconds(v), trim(v), fixed(v, 3), formatMicros(v.isFinite && abs(v) < 9e18 ? Int64(v) : .min)]
        for t in texts { #expect(!t.isEmpty) }
        if !v.isFinite {
            // Not a number of seconds: printed as what it is.
            #expect(texts[0] == "\(v) s")
            #expect(texts[2] == "\(v)")
        } else if abs(v) < 1e15 {
            // A clock reading that reads back to the value, to the millisecond.
            #expect(abs(Self.seconds(texts[0]) - v) <= 0.0005, "\(texts[0]) for \(v)")
            #expect(abs(Double(texts[2])! - v) <= 0.0005)
        } else {
            #expect(texts[0] == "\(v) s")
        }
    }

    /// `[h:]m:ss.fff` back to seconds.
    static func seconds(_ clock: String) -> Double {
        let negative = clock.hasPrefix("-")
        let parts = clock.drop { $0 == "-" }.split(separator: ":").map { Double($0)! }
        let s = parts.reduce(0) { $0 * 60 + $1 }
        return negative ? -s : s
    }

    /// Rounding to the millisecond carries into the seconds, minutes and hours.
    @Test func clockCarries() {
        #expect(formatSeconds(59.9996) == "1:00.000")
        #expect(formatSeconds(9.9996) == "0:10.000")
        #expect(formatSeconds(3599.9996) == "1:00:00.000")
        #expect(formatSeconds(-59.9996) == "-1:00.000")
        #expect(formatSeconds(-0.0004) == "0:00.000")
        #expect(formatSeconds(61.0625) == "1:01.062" || formatSeconds(61.0625) == "1:01.063")
        #expect(formatSeconds(3723.004) == "1:02:03.004")
        #expect(formatSeconds(0.05) == "0:00.050")
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
