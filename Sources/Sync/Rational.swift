/// An exact fraction with 32-bit parts, the shape of FFmpeg's `AVRational`.
///
/// The denominator is kept positive; a zero denominator is not representable,
/// so a broken time base from a file becomes `nil` at the bridge, not a value.
public struct Rational: Hashable, Sendable, CustomStringConvertible {
    public let numerator: Int32
    public let denominator: Int32

    /// Returns `nil` when `denominator` is zero or the sign cannot be moved
    /// onto the numerator without overflow.
    public init?(_ numerator: Int32, _ denominator: Int32) {
        guard denominator != 0 else { return nil }
        if denominator < 0 {
            guard numerator != .min, denominator != .min else { return nil }
            self.numerator = -numerator
            self.denominator = -denominator
        } else {
            self.numerator = numerator
            self.denominator = denominator
        }
    }

    /// `1/1_000_000`, FFmpeg's `AV_TIME_BASE_Q`.
    public static let microseconds = Rational(unchecked: 1, 1_000_000)
    /// `1/90000`, the MPEG system clock.
    public static let mpegClock = Rational(unchecked: 1, 90_000)

    /// For constants known to be valid.
    public init(unchecked numerator: Int32, _ denominator: Int32) {
        self.init(numerator, denominator)!
    }

    /// A time base must be a positive fraction.
    public var isValidTimeBase: Bool { numerator > 0 }

    /// One tick of `1/rate`, e.g. the time base of an audio sample counter.
    public static func perSecond(_ rate: Int32) -> Rational? { Rational(1, rate) }

    public var description: String { "\(numerator)/\(denominator)" }

    /// Exact three-way comparison by cross multiplication.
    public static func compare(_ a: Rational, _ b: Rational) -> Int {
        let l = Int64(a.numerator) * Int64(b.denominator)
        let r = Int64(b.numerator) * Int64(a.denominator)
        return l < r ? -1 : (l > r ? 1 : 0)
    }
}
