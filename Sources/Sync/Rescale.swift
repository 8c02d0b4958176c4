/// Rounding of a rescaled value, the five modes of FFmpeg's `AVRounding`.
public enum Rounding: Sendable, CaseIterable {
    /// Toward zero (`AV_ROUND_ZERO`).
    case towardZero
    /// Away from zero (`AV_ROUND_INF`).
    case awayFromZero
    /// Toward negative infinity (`AV_ROUND_DOWN`).
    case down
    /// Toward positive infinity (`AV_ROUND_UP`).
    case up
    /// To nearest, halfway cases away from zero (`AV_ROUND_NEAR_INF`).
    case nearest

    /// The mode that gives the same magnitude for the negated operand.
    fileprivate var mirrored: Rounding {
        switch self {
        case .down: .up
        case .up: .down
        default: self
        }
    }
}

/// `value × multiplier / divisor` with a 128-bit intermediate, the arithmetic
/// of `av_rescale_rnd`. Returns `nil` when the result does not fit in `Int64`.
///
/// `multiplier` and `divisor` must be positive; otherwise `nil`.
public func rescale(_ value: Int64, multiplier: Int64, divisor: Int64, rounding: Rounding) -> Int64? {
    guard multiplier >= 0, divisor > 0 else { return nil }
    if value < 0 {
        // Same as libavutil: work on the magnitude, mirror the rounding.
        let magnitude = value == .min ? Int64.max : -value
        guard let r = rescale(magnitude, multiplier: multiplier, divisor: divisor, rounding: rounding.mirrored)
        else { return nil }
        return -r
    }
    let bias: Int128
    switch rounding {
    case .nearest: bias = Int128(divisor / 2)
    case .awayFromZero, .up: bias = Int128(divisor - 1)
    case .towardZero, .down: bias = 0
    }
    let result = (Int128(value) * Int128(multiplier) + bias) / Int128(divisor)
    guard result <= Int128(Int64.max) else { return nil }
    return Int64(result)
}

/// Converts `value` ticks of time base `source` into ticks of `target`, like
/// `av_rescale_q_rnd`. Returns `nil` on overflow or a non-positive time base.
public func rescale(_ value: Int64, from source: Rational, to target: Rational, rounding: Rounding = .nearest) -> Int64? {
    guard source.isValidTimeBase, target.isValidTimeBase else { return nil }
    // value × (sn/sd) / (tn/td) = value × (sn·td) / (sd·tn); both products fit in 64 bits.
    let multiplier = Int64(source.numerator) * Int64(target.denominator)
    let divisor = Int64(source.denominator) * Int64(target.numerator)
    return rescale(value, multiplier: multiplier, divisor: divisor, rounding: rounding)
}
