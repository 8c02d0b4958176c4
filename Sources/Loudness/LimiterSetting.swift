import Glibc

/// The limiter's setting of a stream, as the last encode used it, and what
/// it did there.
public struct LimiterSetting: Sendable, Codable {
    public var gainDB: Double
    /// The limiter's ceiling: the target's, less a margin for the codec.
    public var limitDBTP: Double
    /// How far the limiter brought the loudest peak down (dB), and for how
    /// long it limited at all (s); nil before an encode.
    public var reductionDB: Double?
    public var limitedSeconds: Double?

    public init(gainDB: Double, limitDBTP: Double) {
        self.gainDB = gainDB
        self.limitDBTP = limitDBTP
    }

    /// A stream is encoded again (once at most) when it lands further than
    /// this from the target loudness, or over the ceiling by more than
    /// `peakTolerance`.
    static let loudnessTolerance = 0.3
    /// Over the ceiling by more than this, an encode missed it: the first
    /// is corrected, the corrective one refused (ebur128 reads to 0.1 dB).
    public static let peakTolerance = 0.1
    static let mostEncodes = 2
    /// Decode-only runs through the limiter that find a limited stream's gain.
    static let rehearsals = 3

    /// How far under the ceiling the limiter is set for an encoder: what a
    /// lossy codec adds to the peaks it is given (measured on the output,
    /// and corrected by a second encode when more), more at lower bit rates.
    /// Lossless and PCM encoders add no more than their last bit's rounding.
    /// The loudest overshoot of a lossy encoder grows with the length of
    /// the programme (more frames at the ceiling, more chances): libavcodec's
    /// AAC at 64 kb/s per channel added 0.51 dB over the limiter's ceiling to
    /// 10 minutes of a film's sound limited for 514 s, 0.74 dB to 60 minutes
    /// of it; so a lossy margin grows by 0.25 dB a decade of `seconds` over
    /// a minute, by 0.5 dB at most.
    static func codecMargin(encoder: String, bitRatePerChannel: Int64?, seconds: Double? = nil) -> Double {
        if encoder.hasPrefix("pcm_") || ["flac", "alac", "wavpack", "tta"].contains(encoder) { return 0.02 }
        let low = (bitRatePerChannel ?? 64_000) < 48_000
        let growth = min(0.25 * log10(max(seconds ?? 0, 60) / 60), 0.5)
        switch encoder {
        case "ac3", "eac3": return (low ? 0.5 : 0.3) + growth
        case "libopus": return (low ? 1.2 : 0.8) + growth
        default: return (low ? 1.0 : 0.5) + growth  // aac, libmp3lame, others
        }
    }
}
