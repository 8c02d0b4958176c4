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
    static func codecMargin(encoder: String, bitRatePerChannel: Int64?) -> Double {
        if encoder.hasPrefix("pcm_") || ["flac", "alac", "wavpack", "tta"].contains(encoder) { return 0.02 }
        let low = (bitRatePerChannel ?? 64_000) < 48_000
        switch encoder {
        case "ac3", "eac3": return low ? 0.5 : 0.3
        case "libopus": return low ? 1.2 : 0.8
        default: return low ? 1.0 : 0.5  // aac, libmp3lame, others
        }
    }
}
