import CFFmpeg
import Sync
import Testing

/// The core's rescale against libavutil's `av_rescale_q_rnd` on many random
/// values: the same answer wherever libavutil's result is defined.
@Suite("rescale matches av_rescale_q_rnd")
struct RescaleCrossCheckTests {
    static let modes: [(Rounding, AVRounding)] = [
        (.towardZero, AV_ROUND_ZERO), (.awayFromZero, AV_ROUND_INF), (.down, AV_ROUND_DOWN),
        (.up, AV_ROUND_UP), (.nearest, AV_ROUND_NEAR_INF),
    ]

    /// A deterministic generator so a failure can be reproduced.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func randomTimeBase(_ g: inout SplitMix) -> Rational {
        let common: [Int32] = [1, 1000, 25, 24000, 30000, 44100, 48000, 90000, 1_000_000, 15360, 600]
        switch Int.random(in: 0..<3, using: &g) {
        case 0: return Rational(1, common.randomElement(using: &g)!)!
        case 1: return Rational(Int32.random(in: 1...1001, using: &g), common.randomElement(using: &g)!)!
        default: return Rational(Int32.random(in: 1...Int32.max, using: &g), Int32.random(in: 1...Int32.max, using: &g))!
        }
    }

    static func randomValue(_ g: inout SplitMix) -> Int64 {
        switch Int.random(in: 0..<4, using: &g) {
        case 0: return Int64.random(in: -100_000...100_000, using: &g)
        case 1: return Int64.random(in: -(1 << 40)...(1 << 40), using: &g)
        case 2: return Int64.random(in: (Int64.min + 1)...Int64.max, using: &g)
        default: return [Int64.max, -Int64.max, 1 << 33, (1 << 33) - 1, 0, 1, -1].randomElement(using: &g)!
        }
    }

    @Test(arguments: 0..<modes.count)
    func randomValues(modeIndex: Int) {
        let (ours, theirs) = Self.modes[modeIndex]
        var g = SplitMix(state: 0xA57_0001 + UInt64(modeIndex))
        var compared = 0, overflowed = 0
        for _ in 0..<200_000 {
            let v = Self.randomValue(&g)
            let a = Self.randomTimeBase(&g), b = Self.randomTimeBase(&g)
            let lib = av_rescale_q_rnd(v, AVRational(num: a.numerator, den: a.denominator),
                                       AVRational(num: b.numerator, den: b.denominator), theirs)
            let mine = rescale(v, from: a, to: b, rounding: ours)
            // libavutil returns INT64_MIN when the result does not fit; we return nil.
            if lib == Int64.min {
                #expect(mine == nil, "v=\(v) \(a)→\(b): libavutil overflowed, ours \(String(describing: mine))")
                overflowed += 1
            } else {
                #expect(mine == lib, "v=\(v) \(a)→\(b) \(ours): ours \(String(describing: mine)), libavutil \(lib)")
                compared += 1
            }
        }
        #expect(compared > 100_000)
        #expect(overflowed > 100)
    }

    /// av_compare_ts against the core's exact comparison, where libavutil's is
    /// exact too: it compares through av_rescale_rnd, whose overflow marker
    /// INT64_MIN makes it answer −1; those cases are skipped (and counted).
    @Test func compareAcrossTimeBases() {
        var g = SplitMix(state: 77)
        var compared = 0
        for _ in 0..<100_000 {
            let a = Self.randomTimeBase(&g), b = Self.randomTimeBase(&g)
            let x = Int64.random(in: -(1 << 40)...(1 << 40), using: &g)
            let y = Bool.random(using: &g) ? x : Int64.random(in: -(1 << 40)...(1 << 40), using: &g)
            let ab = Int64(a.numerator) * Int64(b.denominator), ba = Int64(b.numerator) * Int64(a.denominator)
            guard rescale(x, multiplier: ab, divisor: ba, rounding: .down) != nil,
                  rescale(y, multiplier: ba, divisor: ab, rounding: .down) != nil else { continue }
            let lib = av_compare_ts(x, AVRational(num: a.numerator, den: a.denominator),
                                    y, AVRational(num: b.numerator, den: b.denominator))
            #expect(Int32(Timestamp.compare(Timestamp(x, a), Timestamp(y, b))) == lib, "\(x)@\(a) vs \(y)@\(b)")
            compared += 1
        }
        #expect(compared > 50_000)
    }
}
