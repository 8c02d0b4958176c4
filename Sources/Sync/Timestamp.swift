/// A point in time: an integer count of ticks of a time base.
///
/// "Unknown" is `Timestamp?`, never a magic value; FFmpeg's `AV_NOPTS_VALUE`
/// stops at the bridge.
public struct Timestamp: Hashable, Sendable, CustomStringConvertible {
    public let value: Int64
    public let timeBase: Rational

    public init(_ value: Int64, _ timeBase: Rational) {
        self.value = value
        self.timeBase = timeBase
    }

    public static func zero(_ timeBase: Rational) -> Timestamp { Timestamp(0, timeBase) }

    /// The same instant in `target` ticks; `nil` when it does not fit in 64 bits.
    public func rescaled(to target: Rational, rounding: Rounding = .nearest) -> Timestamp? {
        if target == timeBase { return self }
        return rescale(value, from: timeBase, to: target, rounding: rounding).map { Timestamp($0, target) }
    }

    /// Exact comparison across time bases (like `av_compare_ts`), without
    /// rounding: `value·num·den'` fits in 128 bits for 32-bit fractions.
    public static func compare(_ a: Timestamp, _ b: Timestamp) -> Int {
        let l = Int128(a.value) * Int128(a.timeBase.numerator) * Int128(b.timeBase.denominator)
        let r = Int128(b.value) * Int128(b.timeBase.numerator) * Int128(a.timeBase.denominator)
        return l < r ? -1 : (l > r ? 1 : 0)
    }

    /// Whole microseconds, rounded to nearest; for reports.
    public var microseconds: Int64? { rescaled(to: .microseconds)?.value }

    /// Seconds as a `Double`, for display only; never fed back into arithmetic.
    public var seconds: Double {
        Double(value) * Double(timeBase.numerator) / Double(timeBase.denominator)
    }

    /// `self − other` expressed in `timeBase` ticks, exact when `other` has the
    /// same time base, otherwise `other` is rounded to nearest first.
    public func ticks(since other: Timestamp) -> Int64? {
        guard let o = other.rescaled(to: timeBase) else { return nil }
        let (d, overflow) = value.subtractingReportingOverflow(o.value)
        return overflow ? nil : d
    }

    public var description: String { "\(value)@\(timeBase)" }
}

extension Timestamp: Comparable {
    public static func < (a: Timestamp, b: Timestamp) -> Bool { compare(a, b) < 0 }
    /// Equal instants compare equal even in different time bases.
    public static func == (a: Timestamp, b: Timestamp) -> Bool { compare(a, b) == 0 }
    public func hash(into hasher: inout Hasher) {
        // Hash the reduced fraction value·num/den so equal instants hash alike.
        let n = Int128(value) * Int128(timeBase.numerator)
        let d = Int128(timeBase.denominator)
        let g = gcd(n.magnitude, d.magnitude)
        hasher.combine(n / Int128(g))
        hasher.combine(d / Int128(g))
    }
}

private func gcd(_ a: UInt128, _ b: UInt128) -> UInt128 {
    var (a, b) = (a, b)
    while b != 0 { (a, b) = (b, a % b) }
    return a == 0 ? 1 : a
}
