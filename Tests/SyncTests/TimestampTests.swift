import PropertyBased
import Sync
import Testing

private func tb(_ n: Int32, _ d: Int32) -> Rational { Rational(n, d)! }

@Suite("Timestamp")
struct TimestampTests {
    // MARK: Comparison across time bases

    @Test("1@1/3 is later than 333333@1/1000000 (1/3 s > 0.333333 s)")
    func oneThirdVersusMicroseconds() {
        let third = Timestamp(1, tb(1, 3))
        let micro = Timestamp(333_333, .microseconds)
        #expect(Timestamp.compare(third, micro) == 1)
        #expect(Timestamp.compare(micro, third) == -1)
        #expect(third > micro)
        #expect(micro < third)
        #expect(third != micro)
        // 333334 µs is later than 1/3 s.
        #expect(Timestamp(333_334, .microseconds) > third)
    }

    @Test("comparison is exact where Double would round")
    func exactWhereDoubleRounds() {
        // 2^53 s vs (2^53·1000 + 1) ms = 9007199254740992001 ms: 1 ms later, although
        // both are the same Double (9.007199254740992e18 needs more than 53 bits of mantissa).
        let seconds = Timestamp(1 << 53, tb(1, 1))
        let millis = Timestamp(9_007_199_254_740_992_001, tb(1, 1000))
        #expect(seconds < millis)
        #expect(Timestamp(9_007_199_254_740_992_000, tb(1, 1000)) == seconds)
        // Extremes: Int64.max ticks of Int32.max/1 vs Int64.min ticks of 1/Int32.max.
        let huge = Timestamp(.max, tb(.max, 1))
        let tiny = Timestamp(.min, tb(1, .max))
        #expect(Timestamp.compare(huge, tiny) == 1)
        #expect(Timestamp.compare(tiny, huge) == -1)
        #expect(Timestamp(.min, tb(.max, 1)) < Timestamp(.min, tb(1, 1)))
    }

    @Test("negative instants")
    func negative() {
        #expect(Timestamp(-1024, tb(1, 48_000)) < Timestamp(0, .microseconds))
        // −1024/48000 s = −21333.33 µs, so it lies between −21334 µs and −21333 µs.
        #expect(Timestamp(-1024, tb(1, 48_000)) > Timestamp(-21_334, .microseconds))
        #expect(Timestamp(-1024, tb(1, 48_000)) < Timestamp(-21_333, .microseconds))
    }

    // MARK: Equality and hashing

    @Test("3@1/30 == 100000@1/1000000 (both 0.1 s), and they hash alike")
    func equalAcrossTimeBases() {
        let a = Timestamp(3, tb(1, 30))
        let b = Timestamp(100_000, .microseconds)
        #expect(a == b)
        #expect(Timestamp.compare(a, b) == 0)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b]).count == 1)
        #expect(a != Timestamp(100_001, .microseconds))
        #expect(Set([a, b, Timestamp(100_001, .microseconds)]).count == 2)
    }

    @Test("zero is zero in every time base")
    func zeros() {
        let zeros = [Timestamp.zero(.microseconds), .zero(.mpegClock), .zero(tb(1001, 30_000)), Timestamp(0, tb(1, 1))]
        #expect(Set(zeros).count == 1)
        for z in zeros { #expect(z == .zero(.microseconds)) }
    }

    @Test("equal instants in scaled time bases are == and hash alike; one tick more is later")
    func scaledEquality() async {
        await propertyCheck(
            count: 1000,
            input: Gen.int64(in: -(1 << 40)...(1 << 40)), Gen.int32(in: 1...1000),
            Gen.int32(in: 1...1_000_000), Gen.int32(in: 1...1000)
        ) { value, n, d, k in
            // value@n/d and (value·k)@n/(d·k) are the same instant.
            let a = Timestamp(value, tb(n, d))
            let b = Timestamp(value * Int64(k), tb(n, d * k))
            #expect(a == b)
            #expect(a.hashValue == b.hashValue)
            #expect(Timestamp(value * Int64(k) + 1, tb(n, d * k)) > a)
            #expect(Timestamp(value * Int64(k) - 1, tb(n, d * k)) < a)
        }
    }

    // MARK: Rescaling and ticks(since:)

    @Test func rescaled() throws {
        let t = Timestamp(45, .mpegClock)
        #expect(t.rescaled(to: tb(1, 1000)) == Timestamp(1, tb(1, 1000)))  // 0.5 ms → 1 (nearest)
        #expect(t.rescaled(to: tb(1, 1000))?.timeBase == tb(1, 1000))
        #expect(t.rescaled(to: tb(1, 1000), rounding: .down)?.value == 0)
        #expect(t.rescaled(to: .mpegClock)?.value == 45)
        #expect(Timestamp(.max, tb(1, 1)).rescaled(to: .mpegClock) == nil)
        #expect(Timestamp(1, tb(1, 3)).microseconds == 333_333)
        #expect(Timestamp(2, tb(1, 3)).microseconds == 666_667)
        #expect(Timestamp(-1024, tb(1, 48_000)).microseconds == -21_333)
        #expect(Timestamp(.max, tb(1, 1)).microseconds == nil)
        #expect(Timestamp(3, tb(1, 2)).seconds == 1.5)
    }

    @Test func ticksSince() {
        let ms = tb(1, 1000)
        #expect(Timestamp(5000, ms).ticks(since: Timestamp(2000, ms)) == 3000)
        #expect(Timestamp(2000, ms).ticks(since: Timestamp(5000, ms)) == -3000)
        // 500 ms = 45000 ticks of 1/90000: 90000 − 45000.
        #expect(Timestamp(90_000, .mpegClock).ticks(since: Timestamp(500, ms)) == 45_000)
        // 1/3 s rounds to 333 ms first: 100 − 333.
        #expect(Timestamp(100, ms).ticks(since: Timestamp(1, tb(1, 3))) == -233)
        // The difference overflows, or `other` cannot be expressed in this time base.
        #expect(Timestamp(.max, ms).ticks(since: Timestamp(-1, ms)) == nil)
        #expect(Timestamp(.min, ms).ticks(since: Timestamp(1, ms)) == nil)
        #expect(Timestamp(0, .mpegClock).ticks(since: Timestamp(.max, tb(1, 1))) == nil)
    }

    @Test func description() {
        #expect(Timestamp(-1024, tb(1, 48_000)).description == "-1024@1/48000")
    }
}

/// A packet without a duration gets the frame period, so a last frame counts.
@Suite struct NominalDurationTests {
    @Test func framePeriodInTicks() throws {
        let tb = try #require(Rational(1, 90_000))
        #expect(PacketTiming.framePeriod(frameRate: Rational(30, 1), timeBase: tb) == 3000)
        #expect(PacketTiming.framePeriod(frameRate: Rational(30000, 1001), timeBase: tb) == 3003)
        #expect(PacketTiming.framePeriod(frameRate: nil, timeBase: tb) == nil)
    }

    @Test func onlyAMissingDurationIsFilled() {
        #expect(PacketTiming(pts: 90_000, dts: 81_000, duration: 0).orDuration(3000).end == 93_000)
        #expect(PacketTiming(pts: 90_000, dts: 81_000, duration: 1500).orDuration(3000).end == 91_500)
        #expect(PacketTiming(pts: 90_000, dts: 81_000, duration: 0).orDuration(nil).end == 90_000)
    }
}
