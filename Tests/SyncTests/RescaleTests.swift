import PropertyBased
import Sync
import Testing

/// One exact row of the rounding table: `value × multiplier / divisor` in every mode.
struct RoundingCase: Sendable, CustomTestStringConvertible {
    let value: Int64
    let multiplier: Int64
    let divisor: Int64
    let expected: [Rounding: Int64]

    init(_ value: Int64, _ multiplier: Int64, _ divisor: Int64,
         towardZero: Int64, awayFromZero: Int64, down: Int64, up: Int64, nearest: Int64) {
        self.value = value
        self.multiplier = multiplier
        self.divisor = divisor
        expected = [.towardZero: towardZero, .awayFromZero: awayFromZero,
                    .down: down, .up: up, .nearest: nearest]
    }

    var testDescription: String { "\(value)×\(multiplier)/\(divisor)" }
}

private func tb(_ n: Int32, _ d: Int32) -> Rational { Rational(n, d)! }

@Suite("rescale")
struct RescaleTests {
    // MARK: Exact rounding tables

    static let table: [RoundingCase] = [
        // 1 tick of 1/90000 in 1/1000 ticks = 1/90 ≈ 0.011
        RoundingCase(1, 1000, 90_000, towardZero: 0, awayFromZero: 1, down: 0, up: 1, nearest: 0),
        RoundingCase(-1, 1000, 90_000, towardZero: 0, awayFromZero: -1, down: -1, up: 0, nearest: 0),
        // 45/90 = 0.5: a halfway case
        RoundingCase(45, 1000, 90_000, towardZero: 0, awayFromZero: 1, down: 0, up: 1, nearest: 1),
        RoundingCase(-45, 1000, 90_000, towardZero: 0, awayFromZero: -1, down: -1, up: 0, nearest: -1),
        // 5/2 = 2.5: halfway away from zero (banker's rounding would give 2)
        RoundingCase(5, 1, 2, towardZero: 2, awayFromZero: 3, down: 2, up: 3, nearest: 3),
        RoundingCase(-5, 1, 2, towardZero: -2, awayFromZero: -3, down: -3, up: -2, nearest: -3),
        // 7/2 = 3.5
        RoundingCase(7, 1, 2, towardZero: 3, awayFromZero: 4, down: 3, up: 4, nearest: 4),
        RoundingCase(-7, 1, 2, towardZero: -3, awayFromZero: -4, down: -4, up: -3, nearest: -4),
        // 12/5 = 2.4, 13/5 = 2.6
        RoundingCase(12, 1, 5, towardZero: 2, awayFromZero: 3, down: 2, up: 3, nearest: 2),
        RoundingCase(-12, 1, 5, towardZero: -2, awayFromZero: -3, down: -3, up: -2, nearest: -2),
        RoundingCase(13, 1, 5, towardZero: 2, awayFromZero: 3, down: 2, up: 3, nearest: 3),
        RoundingCase(-13, 1, 5, towardZero: -2, awayFromZero: -3, down: -3, up: -2, nearest: -3),
        // exact quotients are never rounded
        RoundingCase(6, 1, 2, towardZero: 3, awayFromZero: 3, down: 3, up: 3, nearest: 3),
        RoundingCase(-6, 1, 2, towardZero: -3, awayFromZero: -3, down: -3, up: -3, nearest: -3),
        RoundingCase(0, 7, 3, towardZero: 0, awayFromZero: 0, down: 0, up: 0, nearest: 0),
        // Int64.max = 90·102481911520608620 + 7, so Int64.max/90 has remainder 7/90 < 1/2.
        RoundingCase(.max, 1000, 90_000,
                     towardZero: 102_481_911_520_608_620, awayFromZero: 102_481_911_520_608_621,
                     down: 102_481_911_520_608_620, up: 102_481_911_520_608_621,
                     nearest: 102_481_911_520_608_620),
        // 2^63 = 90·102481911520608620 + 8: −2^63/90 = −(102481911520608620 + 8/90).
        RoundingCase(.min, 1000, 90_000,
                     towardZero: -102_481_911_520_608_620, awayFromZero: -102_481_911_520_608_621,
                     down: -102_481_911_520_608_621, up: -102_481_911_520_608_620,
                     nearest: -102_481_911_520_608_620),
        RoundingCase(.max, 1, 1, towardZero: .max, awayFromZero: .max, down: .max, up: .max, nearest: .max),
        // Int64.max·48000/90000 = Int64.max·8/15 = 4919131752989213763 + 11/15; the
        // product needs 79 bits, the result fits.
        RoundingCase(.max, 48_000, 90_000,
                     towardZero: 4_919_131_752_989_213_763, awayFromZero: 4_919_131_752_989_213_764,
                     down: 4_919_131_752_989_213_763, up: 4_919_131_752_989_213_764,
                     nearest: 4_919_131_752_989_213_764),
        // 2^62·90000/90000: the product overflows 64 bits, the result is exact.
        RoundingCase(1 << 62, 90_000, 90_000,
                     towardZero: 1 << 62, awayFromZero: 1 << 62, down: 1 << 62, up: 1 << 62, nearest: 1 << 62),
        RoundingCase(-(1 << 62), 90_000, 90_000,
                     towardZero: -(1 << 62), awayFromZero: -(1 << 62), down: -(1 << 62), up: -(1 << 62),
                     nearest: -(1 << 62)),
        // 2^62·48000/90000 = 2^65/15 = 2459565876494606882 + 2/15
        RoundingCase(1 << 62, 48_000, 90_000,
                     towardZero: 2_459_565_876_494_606_882, awayFromZero: 2_459_565_876_494_606_883,
                     down: 2_459_565_876_494_606_882, up: 2_459_565_876_494_606_883,
                     nearest: 2_459_565_876_494_606_882),
    ]

    @Test("value × multiplier / divisor, every rounding mode", arguments: table)
    func roundingTable(row: RoundingCase) {
        for mode in Rounding.allCases {
            #expect(rescale(row.value, multiplier: row.multiplier, divisor: row.divisor, rounding: mode)
                == row.expected[mode], "\(mode)")
        }
    }

    @Test("time-base form: 1 tick of 1/90000 in 1/1000 ticks")
    func oneMPEGTickInMilliseconds() {
        let expected: [Rounding: (Int64, Int64)] = [
            // (for +1, for −1); 1/90 ≈ 0.011
            .towardZero: (0, 0), .awayFromZero: (1, -1), .down: (0, -1), .up: (1, 0), .nearest: (0, 0),
        ]
        for mode in Rounding.allCases {
            #expect(rescale(1, from: .mpegClock, to: tb(1, 1000), rounding: mode) == expected[mode]!.0, "\(mode)")
            #expect(rescale(-1, from: .mpegClock, to: tb(1, 1000), rounding: mode) == expected[mode]!.1, "\(mode)")
        }
    }

    @Test("time-base form rounds to nearest by default")
    func defaultRoundingIsNearest() {
        #expect(rescale(45, from: .mpegClock, to: tb(1, 1000)) == 1)      // 0.5 → 1
        #expect(rescale(-45, from: .mpegClock, to: tb(1, 1000)) == -1)    // −0.5 → −1
        #expect(rescale(3003, from: .mpegClock, to: tb(1, 1000)) == 33)   // 33.37 → 33
        #expect(rescale(1024, from: tb(1, 48_000), to: tb(1, 44_100)) == 941)  // 940.8 → 941
        // non-unit numerators: 7 ticks of 1001/30000 = 7007/30000 s = 233.5667 ms
        #expect(rescale(7, from: tb(1001, 30_000), to: tb(1, 1000)) == 234)
        // and the other way: 1000 ms = 30000/1001 ticks = 29.97 → 30
        #expect(rescale(1000, from: tb(1, 1000), to: tb(1001, 30_000)) == 30)
    }

    @Test("2^62 through equal time bases stays exact although 2^62·90000 needs 79 bits")
    func wideProductExactResult() {
        for mode in Rounding.allCases {
            #expect(rescale(1 << 62, from: .mpegClock, to: .mpegClock, rounding: mode) == 1 << 62)
        }
    }

    // MARK: Overflow and invalid input

    @Test("results that do not fit in Int64 are nil")
    func overflow() {
        for mode in Rounding.allCases {
            #expect(rescale(.max, from: tb(1, 1), to: .mpegClock, rounding: mode) == nil)
            #expect(rescale(.min, from: tb(1, 1), to: .mpegClock, rounding: mode) == nil)
            #expect(rescale(.max, multiplier: 2, divisor: 1, rounding: mode) == nil)
        }
        // The largest value whose ×90000 fits: Int64.max / 90000 = 102481911520608 (remainder 55807),
        // 102481911520608 · 90000 = 9223372036854720000.
        let limit: Int64 = 102_481_911_520_608
        #expect(rescale(limit, from: tb(1, 1), to: .mpegClock) == 9_223_372_036_854_720_000)
        #expect(rescale(limit + 1, from: tb(1, 1), to: .mpegClock) == nil)
        #expect(rescale(-limit, from: tb(1, 1), to: .mpegClock) == -9_223_372_036_854_720_000)
        #expect(rescale(-limit - 1, from: tb(1, 1), to: .mpegClock) == nil)
        // Int64.max·3/3 is exact, so rounding up adds nothing; Int64.max·3/2 does not fit.
        #expect(rescale(.max, multiplier: 3, divisor: 3, rounding: .up) == .max)
        #expect(rescale(.max, multiplier: 3, divisor: 2, rounding: .down) == nil)
    }

    @Test("non-positive time bases, negative multipliers and non-positive divisors give nil")
    func invalidInput() {
        #expect(rescale(1, from: tb(0, 1), to: tb(1, 1000)) == nil)
        #expect(rescale(1, from: tb(-1, 90_000), to: tb(1, 1000)) == nil)
        #expect(rescale(1, from: tb(1, 90_000), to: tb(0, 1)) == nil)
        #expect(rescale(1, from: tb(1, 90_000), to: tb(1, -1000)) == nil)
        #expect(rescale(0, from: tb(0, 1), to: tb(1, 1000)) == nil)
        for mode in Rounding.allCases {
            #expect(rescale(5, multiplier: -1, divisor: 2, rounding: mode) == nil)
            #expect(rescale(5, multiplier: 1, divisor: 0, rounding: mode) == nil)
            #expect(rescale(5, multiplier: 1, divisor: -2, rounding: mode) == nil)
        }
    }

    @Test("a result of exactly Int64.min fits in Int64 and must be returned")
    func resultInt64Min() {
        // The negative path rescales the magnitude, and |Int64.min| = 2^63 does not fit in Int64:
        // Int64.min is clamped to −Int64.max, and a magnitude result of 2^63 is reported as overflow.
        #expect(rescale(.min, multiplier: 1, divisor: 1, rounding: .nearest) == .min)
        #expect(rescale(.min, from: tb(1, 1000), to: tb(1, 1000), rounding: .down) == .min)
        // −2^62 · 2 / 1 = −2^63 = Int64.min exactly.
        #expect(rescale(-(1 << 62), multiplier: 2, divisor: 1, rounding: .towardZero) == .min)
    }

    // MARK: Properties against an independent Int128 oracle

    /// Values of every magnitude, with small ones over-represented.
    static let anyValue = Gen.oneOf(
        Gen.int64(in: -1000...1000),
        Gen.int64(in: -(1 << 40)...(1 << 40)),
        Gen.int64(in: (Int64.min + 1)...Int64.max),
        Gen.int64(in: (Int64.max - 1000)...Int64.max),
        Gen.int64(in: (Int64.min + 1)...(Int64.min + 1000))
    )
    static let positiveFactor = Gen.oneOf(
        Gen.int64(in: 1...10),
        Gen.int64(in: 1...1_000_000),
        Gen.int64(in: 1...Int64(Int32.max) * Int64(Int32.max)),
        Gen.int64(in: 1...Int64.max)
    )
    static let mode = Gen<Rounding?>.element(of: Rounding.allCases).map { $0! }

    @Test("equals floor/ceil/round of the exact quotient, or nil exactly when that does not fit")
    func matchesOracle() async {
        await propertyCheck(count: 3000, input: Self.anyValue, Self.positiveFactor, Self.positiveFactor, Self.mode) {
            value, multiplier, divisor, mode in
            let exact = exactQuotient(value, multiplier, divisor, mode)
            let actual = rescale(value, multiplier: multiplier, divisor: divisor, rounding: mode)
            if exact == Int128(Int64.min) { return }  // covered by resultInt64Min (known issue)
            if exact >= Int128(Int64.min), exact <= Int128(Int64.max) {
                #expect(actual == Int64(exact), "\(value)·\(multiplier)/\(divisor) \(mode)")
            } else {
                #expect(actual == nil, "\(value)·\(multiplier)/\(divisor) \(mode)")
            }
        }
    }

    @Test("monotonic in the value for every mode")
    func monotonic() async {
        await propertyCheck(count: 2000, input: Self.anyValue, Self.anyValue, Self.positiveFactor, Self.positiveFactor) {
            x, y, multiplier, divisor in
            let (a, b) = (min(x, y), max(x, y))
            for mode in Rounding.allCases {
                guard let ra = rescale(a, multiplier: multiplier, divisor: divisor, rounding: mode),
                      let rb = rescale(b, multiplier: multiplier, divisor: divisor, rounding: mode)
                else { continue }
                #expect(ra <= rb, "\(a) ≤ \(b) ×\(multiplier)/\(divisor) \(mode): \(ra) > \(rb)")
            }
        }
    }

    @Test("down ≤ nearest ≤ up, up − down ≤ 1 (0 exactly for exact quotients), zero/inf by sign")
    func modesBracket() async {
        await propertyCheck(count: 2000, input: Self.anyValue, Self.positiveFactor, Self.positiveFactor) {
            value, multiplier, divisor in
            func r(_ mode: Rounding) -> Int64? { rescale(value, multiplier: multiplier, divisor: divisor, rounding: mode) }
            guard let down = r(.down), let up = r(.up), let nearest = r(.nearest),
                  let zero = r(.towardZero), let inf = r(.awayFromZero) else { return }
            #expect(down <= nearest && nearest <= up)
            let divisible = (Int128(value) * Int128(multiplier)) % Int128(divisor) == 0
            #expect(up - down == (divisible ? 0 : 1))
            #expect(zero == (value >= 0 ? down : up))
            #expect(inf == (value >= 0 ? up : down))
        }
    }

    // Time bases: numerators 1…1000, denominators 1…1_000_000, so one tick ratio is ≤ 10^9 < 2^30.
    static let timeBase = zip(Gen.int32(in: 1...1000), Gen.int32(in: 1...1_000_000)).map { Rational($0, $1)! }

    @Test("A → B → A with nearest returns the value when B is finer; each step is off by ≤ ½ tick")
    func roundTrip() async {
        await propertyCheck(count: 2000, input: Self.timeBase, Self.timeBase, Gen.int64(in: -(1 << 32)...(1 << 32))) {
            x, y, value in
            // A is the coarser (or equal) time base, B the finer.
            let (a, b) = Rational.compare(x, y) >= 0 ? (x, y) : (y, x)
            guard let inB = rescale(value, from: a, to: b) else {
                Issue.record("overflow for \(value) from \(a) to \(b)")
                return
            }
            // |inB·b − value·a| ≤ b/2, i.e. |2·(inB·bn·ad − value·an·bd)| ≤ bn·ad.
            let error = Int128(inB) * Int128(b.numerator) * Int128(a.denominator)
                - Int128(value) * Int128(a.numerator) * Int128(b.denominator)
            #expect(2 * error.magnitude <= UInt128(b.numerator) * UInt128(a.denominator))
            #expect(rescale(inB, from: b, to: a) == value, "\(value) \(a) → \(inB) \(b)")
        }
    }

    @Test("an unreduced time base gives the same result as the reduced one")
    func unreducedTimeBase() async {
        await propertyCheck(count: 1000, input: Gen.int64(in: -(1 << 40)...(1 << 40)), Gen.int32(in: 1...2000), Self.mode) {
            value, k, mode in
            // 1/30 vs k/(30k), and 1/1000 vs k/(1000k)
            let r1 = rescale(value, from: tb(1, 30), to: tb(1, 1000), rounding: mode)
            let r2 = rescale(value, from: tb(k, 30 * k), to: tb(k, 1000 * k), rounding: mode)
            #expect(r1 == r2)
        }
    }
}

/// `value × multiplier / divisor` rounded per `mode`, by floor division and an explicit
/// remainder comparison in Int128 (independent of the bias trick in the implementation).
private func exactQuotient(_ value: Int64, _ multiplier: Int64, _ divisor: Int64, _ mode: Rounding) -> Int128 {
    let n = Int128(value) * Int128(multiplier)
    let d = Int128(divisor)
    var q = n / d          // truncates toward zero
    var r = n % d          // same sign as n
    if r < 0 { q -= 1; r += d }  // now q = ⌊n/d⌋, 0 ≤ r < d
    let floor = q
    let ceil = r == 0 ? q : q + 1
    switch mode {
    case .down: return floor
    case .up: return ceil
    case .towardZero: return n >= 0 ? floor : ceil
    case .awayFromZero: return n >= 0 ? ceil : floor
    case .nearest:
        if 2 * r < d { return floor }
        if 2 * r > d { return ceil }
        return n >= 0 ? ceil : floor  // halfway: away from zero
    }
}
