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
/// Unlike libavutil, `Int64.min` is an ordinary value here (libavutil treats
/// it as −`Int64.max` and uses it as an error marker).
///
/// `multiplier` must not be negative and `divisor` must be positive; otherwise `nil`.
public func rescale(_ value: Int64, multiplier: Int64, divisor: Int64, rounding: Rounding) -> Int64? {
    guard multiplier >= 0, divisor > 0 else { return nil }
    // libavutil's rule: work on the magnitude and mirror the rounding for a
    // negative value. 128 bits hold the magnitude of Int64.min as well.
    let negative = value < 0
    let magnitude = Int128(value).magnitude
    let mode = negative ? rounding.mirrored : rounding
    let bias: UInt128
    switch mode {
    case .nearest: bias = UInt128(divisor / 2)
    case .awayFromZero, .up: bias = UInt128(divisor - 1)
    case .towardZero, .down: bias = 0
    }
    let result = (magnitude * UInt128(multiplier) + bias) / UInt128(divisor)
    if negative {
        guard result <= UInt128(Int64.max) + 1 else { return nil }
        return result == UInt128(Int64.max) + 1 ? .min : -Int64(result)
    }
    guard result <= UInt128(Int64.max) else { return nil }
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
