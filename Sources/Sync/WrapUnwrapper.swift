/// Makes timestamps of a counter that wraps (MPEG-TS: 33 bits) continuous.
///
/// Each value is replaced by the value congruent to it modulo 2^bits that is
/// nearest to the previous result, so small backward steps (B-frame reorder)
/// stay backward and a jump of almost a whole period is read as a wrap.
/// Values that are already continuous pass through unchanged.
public struct WrapUnwrapper: Hashable, Sendable {
    public let bits: Int
    private var reference: Int64?
    private var lowestAdjustment: Int64 = 0
    private var highestAdjustment: Int64 = 0
    /// How many wraps were undone: each correction level reached for the
    /// first time (reordered values flicking back across a wrap already
    /// counted do not count again).
    public private(set) var wraps = 0

    /// `bits` must be in 2...62.
    public init?(bits: Int) {
        guard (2...62).contains(bits) else { return nil }
        self.bits = bits
    }

    public static let mpegTS = WrapUnwrapper(bits: 33)!

    public mutating func unwrap(_ raw: Int64) -> Int64 {
        guard let ref = reference else {
            reference = raw
            return raw
        }
        let period = Int64(1) << bits
        let half = period >> 1
        // delta ≡ raw − ref (mod period), in [−half, half). Reduce both first so
        // the subtraction cannot overflow.
        var delta = (raw % period) - (ref % period)
        delta = ((delta % period) + period) % period
        if delta >= half { delta -= period }
        let (result, overflow) = ref.addingReportingOverflow(delta)
        guard !overflow else { return raw }
        let adjustment = result &- raw
        if adjustment > highestAdjustment {
            wraps += 1
            highestAdjustment = adjustment
        } else if adjustment < lowestAdjustment {
            wraps += 1
            lowestAdjustment = adjustment
        }
        reference = result
        return result
    }
}
