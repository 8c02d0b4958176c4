import PropertyBased
import Sync
import Testing

@Suite("Rational")
struct RationalTests {
    // MARK: Construction and sign normalisation

    @Test("the sign moves onto the numerator; the denominator stays positive",
          arguments: [
              // (numerator, denominator, expected numerator, expected denominator)
              (Int32(1), Int32(2), Int32(1), Int32(2)),
              (1, -2, -1, 2),
              (-1, -2, 1, 2),
              (-1, 2, -1, 2),
              (0, -5, 0, 5),
              (Int32.max, -1, -Int32.max, 1),
              (-Int32.max, -Int32.max, Int32.max, Int32.max),
          ])
    func signNormalisation(n: Int32, d: Int32, expectedN: Int32, expectedD: Int32) throws {
        let r = try #require(Rational(n, d))
        #expect(r.numerator == expectedN)
        #expect(r.denominator == expectedD)
        #expect(r.denominator > 0)
    }

    @Test("a zero denominator is not representable", arguments: [Int32(0), 1, -1, .max, .min])
    func zeroDenominator(n: Int32) {
        #expect(Rational(n, 0) == nil)
    }

    @Test("Int32.min cannot change sign, so it is refused only where a negation is needed")
    func int32MinEdge() throws {
        // Negating a negative denominator would negate Int32.min: refused.
        #expect(Rational(.min, -1) == nil)
        #expect(Rational(1, .min) == nil)
        #expect(Rational(.min, .min) == nil)
        // With a positive denominator nothing is negated: accepted as is.
        let r = try #require(Rational(.min, 1))
        #expect(r.numerator == .min)
        #expect(r.denominator == 1)
        let s = try #require(Rational(.min, .max))
        #expect(s.numerator == .min)
        #expect(s.denominator == .max)
    }

    @Test("equality is structural (not reduced), like AVRational")
    func structuralEquality() {
        #expect(Rational(1, 2) != Rational(2, 4))
        #expect(Rational(1, -2) == Rational(-1, 2))
        #expect(Rational.compare(Rational(1, 2)!, Rational(2, 4)!) == 0)
    }

    // MARK: Time bases and constants

    @Test func constants() {
        #expect(Rational.microseconds == Rational(1, 1_000_000))
        #expect(Rational.mpegClock == Rational(1, 90_000))
        #expect(Rational.perSecond(48_000) == Rational(1, 48_000))
        #expect(Rational.perSecond(0) == nil)
        #expect(Rational(unchecked: 1001, 30000) == Rational(1001, 30000))
    }

    @Test func validTimeBase() {
        #expect(Rational(1, 90_000)!.isValidTimeBase)
        #expect(Rational(1001, 30_000)!.isValidTimeBase)
        #expect(!Rational(0, 1)!.isValidTimeBase)
        #expect(!Rational(-1, 1000)!.isValidTimeBase)
        #expect(!Rational(1, -1000)!.isValidTimeBase)
        // A negative rate gives a fraction, but not a usable time base.
        #expect(Rational.perSecond(-48_000)?.isValidTimeBase == false)
    }

    @Test func description() {
        #expect(Rational(1, 90_000)!.description == "1/90000")
        #expect(Rational(1, -2)!.description == "-1/2")
    }

    // MARK: Comparison

    @Test("exact three-way comparison",
          arguments: [
              // 1/3 = 0.333… > 333333/1000000 = 0.333333
              (Rational(1, 3)!, Rational(333_333, 1_000_000)!, 1),
              (Rational(333_333, 1_000_000)!, Rational(1, 3)!, -1),
              (Rational(1, 2)!, Rational(2, 4)!, 0),
              (Rational(-1, 2)!, Rational(1, 3)!, -1),
              (Rational(.min, 1)!, Rational(.max, 1)!, -1),
              // -2^31 < -2^30
              (Rational(.min, 1)!, Rational(.min, 2)!, -1),
              // M/(M−1) vs (M−1)/(M−2), M = Int32.max: cross products
              // M·(M−2) = M²−2M  <  (M−1)² = M²−2M+1, so the left one is smaller.
              (Rational(.max, .max - 1)!, Rational(.max - 1, .max - 2)!, -1),
              (Rational(.max - 1, .max - 2)!, Rational(.max, .max - 1)!, 1),
          ])
    func compare(a: Rational, b: Rational, expected: Int) {
        #expect(Rational.compare(a, b) == expected)
    }

    @Test("compare is antisymmetric and ignores a common factor")
    func compareProperties() async {
        await propertyCheck(
            count: 500,
            input: Gen.int32(in: -40_000...40_000), Gen.int32(in: 1...40_000),
            Gen.int32(in: -40_000...40_000), Gen.int32(in: 1...40_000), Gen.int32(in: 1...50_000)
        ) { n1, d1, n2, d2, k in
            let a = Rational(n1, d1)!
            let b = Rational(n2, d2)!
            #expect(Rational.compare(a, b) == -Rational.compare(b, a))
            #expect(Rational.compare(a, a) == 0)
            // n·k and d·k stay below 2^31 for these ranges.
            let scaled = Rational(n1 * k, d1 * k)!
            #expect(Rational.compare(a, scaled) == 0)
            #expect(Rational.compare(scaled, b) == Rational.compare(a, b))
        }
    }
}
