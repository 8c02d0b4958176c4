import PropertyBased
import Sync
import Testing

private func tb(_ n: Int32, _ d: Int32) -> Rational { Rational(n, d)! }
private let ms = Rational(unchecked: 1, 1000)
private let period33: Int64 = 8_589_934_592  // 2^33

private func pkt(_ pts: Int64?, _ dts: Int64?, _ duration: Int64 = 0) -> PacketTiming {
    PacketTiming(pts: pts, dts: dts, duration: duration)
}

private func mapAll(_ timeline: inout TrackTimeline, _ packets: [PacketTiming]) throws(TimelineError) -> [PacketTiming] {
    var out: [PacketTiming] = []
    for p in packets { out.append(try timeline.map(p)) }
    return out
}

@Suite("TrackTimeline")
struct TrackTimelineTests {
    // MARK: Time base change

    @Test("1/90000 → 1/1000 rounds pts, dts and duration to nearest")
    func timeBaseChange() throws {
        var t = try TrackTimeline(source: .mpegClock, target: ms, order: .nonDecreasing)
        let out = try mapAll(&t, [pkt(3003, 0, 3003), pkt(9009, 3003, 3003), pkt(6006, 6006, 3003)])
        // 3003/90 = 33.37 → 33, 9009/90 = 100.1 → 100, 6006/90 = 66.73 → 67
        #expect(out == [pkt(33, 0, 33), pkt(100, 33, 33), pkt(67, 67, 33)])
        #expect(t.corrections.total == 0)
    }

    @Test("halfway values round away from zero",
          arguments: [(Int64(45), Int64(1)), (44, 0), (135, 2), (3015, 34), (3014, 33), (-45, -1), (-44, 0)])
    func halfway(input: Int64, expected: Int64) throws {
        // input/90 ms: 0.5 → 1, 0.49 → 0, 1.5 → 2, 33.5 → 34, 33.49 → 33, −0.5 → −1, −0.49 → 0
        var t = try TrackTimeline(source: .mpegClock, target: ms, order: .strictlyIncreasing)
        #expect(try t.map(pkt(input, input)) == pkt(expected, expected))
    }

    // MARK: Start shift

    @Test("StartPolicy.zero with AAC priming at −1024@1/48000 shifts by +1024 ticks")
    func shiftPriming() throws {
        let shift = StartPolicy.zero.shift(earliestStart: Timestamp(-1024, tb(1, 48_000)))
        #expect(shift.value == 1024)
        #expect(shift.timeBase == tb(1, 48_000))

        var same = try TrackTimeline(source: tb(1, 48_000), target: tb(1, 48_000), shift: shift, order: .strictlyIncreasing)
        #expect(same.shift == 1024)
        #expect(try mapAll(&same, [pkt(-1024, -1024, 1024), pkt(0, 0, 1024), pkt(1024, 1024, 1024)])
            == [pkt(0, 0, 1024), pkt(1024, 1024, 1024), pkt(2048, 2048, 1024)])

        // Into milliseconds: 1024/48 = 21.33 → 21, 2048/48 = 42.67 → 43.
        var toMs = try TrackTimeline(source: tb(1, 48_000), target: ms, shift: shift, order: .strictlyIncreasing)
        #expect(try mapAll(&toMs, [pkt(-1024, -1024, 1024), pkt(0, 0, 1024), pkt(1024, 1024, 1024)])
            == [pkt(0, 0, 21), pkt(21, 21, 21), pkt(43, 43, 21)])
    }

    @Test("StartPolicy.zero with a start of 1.4 s (in microseconds) shifts every track by −1.4 s")
    func shiftPositiveStart() throws {
        let shift = StartPolicy.zero.shift(earliestStart: Timestamp(1_400_000, .microseconds))
        #expect(shift == Timestamp(-1_400_000, .microseconds))

        // Video at 1/90000: 1.4 s = 126000 ticks.
        var video = try TrackTimeline(source: .mpegClock, target: .mpegClock, shift: shift, order: .strictlyIncreasing)
        #expect(video.shift == -126_000)
        #expect(try mapAll(&video, [pkt(129_003, 126_000, 3003), pkt(135_009, 129_003, 3003)])
            == [pkt(3003, 0, 3003), pkt(9009, 3003, 3003)])

        // Audio at 1/48000 starting 0.1 s after the video: 1.4 s = 67200 ticks, 1.5 s = 72000.
        var audio = try TrackTimeline(source: tb(1, 48_000), target: tb(1, 48_000), shift: shift, order: .strictlyIncreasing)
        #expect(audio.shift == -67_200)
        #expect(try audio.map(pkt(72_000, 72_000, 1024)) == pkt(4800, 4800, 1024))
    }

    @Test("the shift is rounded to nearest once, in the source time base")
    func shiftRounding() throws {
        // −1500 µs in 1/1000 = −1.5 → −2 (half away from zero)
        var t = try TrackTimeline(source: ms, target: ms, shift: Timestamp(-1500, .microseconds), order: .nonDecreasing)
        #expect(t.shift == -2)
        #expect(try t.map(pkt(10, 10)) == pkt(8, 8))
    }

    @Test("StartPolicy without a usable start, or .keep, gives no shift")
    func startPolicy() {
        #expect(StartPolicy.keep.shift(earliestStart: Timestamp(1_400_000, .microseconds)).value == 0)
        #expect(StartPolicy.zero.shift(earliestStart: nil).value == 0)
        // −Int64.min does not exist.
        #expect(StartPolicy.zero.shift(earliestStart: Timestamp(.min, ms)).value == 0)
        #expect(StartPolicy.zero.shift(earliestStart: Timestamp(.max, ms)) == Timestamp(-.max, ms))
    }

    // MARK: DTS order

    @Test("decodeLead lowers every DTS alike: PTS before DTS put right with the display times kept, nothing counted")
    func decodeLeadLowersEveryDTS() throws {
        // An iPhone clip's decode order as libavformat gives it: the last two PTS before their DTS.
        let read = [pkt(0, 0, 20), pkt(80, 20, 20), pkt(40, 40, 20), pkt(20, 60, 20), pkt(60, 80, 20)]
        var lowered = try TrackTimeline(source: tb(1, 600), target: tb(1, 600), order: .strictlyIncreasing, decodeLead: 40)
        let out = try mapAll(&lowered, read)
        #expect(out.map(\.pts) == read.map(\.pts))
        #expect(out.map(\.dts) == [-40, -20, 0, 20, 40])
        #expect(lowered.corrections.total == 0)
        // Without it two PTS are raised: frames shown late, two at one time.
        var raised = try TrackTimeline(source: tb(1, 600), target: tb(1, 600), order: .strictlyIncreasing)
        #expect(try mapAll(&raised, read).map(\.pts) == [0, 80, 40, 60, 80])
        #expect(raised.corrections.ptsRaised == 2)
    }

    @Test("strictlyIncreasing: a repeated DTS is bumped by one tick and counted")
    func strictRepeatedDTS() throws {
        var t = try TrackTimeline(source: ms, target: ms, order: .strictlyIncreasing)
        let out = try mapAll(&t, [pkt(10, 0), pkt(20, 0), pkt(30, 0)])
        #expect(out == [pkt(10, 0), pkt(20, 1), pkt(30, 2)])
        #expect(t.corrections.dtsBumped == 2)
        #expect(t.corrections.total == 2)
    }

    @Test("strictlyIncreasing: distinct DTS that round to the same target tick are separated")
    func strictCollapsedByRounding() throws {
        var t = try TrackTimeline(source: .mpegClock, target: ms, order: .strictlyIncreasing)
        // dts 30/90 = 0.33 ms → 0, the same as dts 0; pts 9000 → 100, 9030 → 100.33 → 100.
        let out = try mapAll(&t, [pkt(9000, 0), pkt(9030, 30)])
        #expect(out == [pkt(100, 0), pkt(100, 1)])
        #expect(t.corrections.dtsBumped == 1)
    }

    @Test("nonDecreasing allows equal DTS, and raises a backward DTS to the previous one")
    func nonDecreasing() throws {
        var t = try TrackTimeline(source: ms, target: ms, order: .nonDecreasing)
        #expect(try mapAll(&t, [pkt(10, 0), pkt(20, 0), pkt(30, 0)]) == [pkt(10, 0), pkt(20, 0), pkt(30, 0)])
        #expect(t.corrections.total == 0)
        #expect(try t.map(pkt(40, -5)) == pkt(40, 0))
        #expect(t.corrections.dtsBumped == 1)
    }

    @Test("repair .refuse: a backward DTS throws nonMonotonicDTS with the target values")
    func refuseBackwards() throws {
        var t = try TrackTimeline(source: .mpegClock, target: ms, order: .strictlyIncreasing, repair: .refuse)
        #expect(try t.map(pkt(9000, 9000)) == pkt(100, 100))
        // 8910/90 = 99
        #expect(throws: TimelineError.nonMonotonicDTS(previous: 100, current: 99, timeBase: ms)) {
            try t.map(pkt(9900, 8910))
        }
        // 9001/90 = 100.01 → 100: equal, which strictlyIncreasing forbids.
        #expect(throws: TimelineError.nonMonotonicDTS(previous: 100, current: 100, timeBase: ms)) {
            try t.map(pkt(9900, 9001))
        }
        // A refused packet does not move the timeline: 101 still follows 100.
        #expect(try t.map(pkt(9090, 9090)) == pkt(101, 101))
    }

    @Test("repair .refuse with nonDecreasing: equal DTS pass, backward DTS throws")
    func refuseNonDecreasing() throws {
        var t = try TrackTimeline(source: ms, target: ms, order: .nonDecreasing, repair: .refuse)
        #expect(try mapAll(&t, [pkt(5, 5), pkt(6, 5)]) == [pkt(5, 5), pkt(6, 5)])
        #expect(throws: TimelineError.nonMonotonicDTS(previous: 5, current: 4, timeBase: ms)) {
            try t.map(pkt(6, 4))
        }
    }

    // MARK: PTS and DTS

    @Test("PTS earlier than DTS is raised to the DTS and counted, or refused")
    func ptsBeforeDTS() throws {
        var fix = try TrackTimeline(source: ms, target: ms, order: .strictlyIncreasing)
        #expect(try fix.map(pkt(5, 10)) == pkt(10, 10))
        #expect(fix.corrections.ptsRaised == 1)
        // After a DTS bump the PTS is compared with the bumped DTS: dts 10 → 11, pts 10 → 11.
        #expect(try fix.map(pkt(10, 10)) == pkt(11, 11))
        #expect(fix.corrections.dtsBumped == 1)
        #expect(fix.corrections.ptsRaised == 2)

        var refuse = try TrackTimeline(source: ms, target: ms, order: .strictlyIncreasing, repair: .refuse)
        #expect(throws: TimelineError.ptsBeforeDTS(pts: 5, dts: 10, timeBase: ms)) {
            try refuse.map(pkt(5, 10))
        }
    }

    @Test("an unknown PTS is the DTS")
    func unknownPTS() throws {
        var t = try TrackTimeline(source: .mpegClock, target: ms, order: .strictlyIncreasing)
        #expect(try t.map(pkt(nil, 900)) == pkt(10, 10))
        #expect(t.corrections.filled == 1)
    }

    @Test("an unknown DTS is the PTS when that keeps the order, else the smallest legal step")
    func unknownDTS() throws {
        var strict = try TrackTimeline(source: ms, target: ms, order: .strictlyIncreasing)
        #expect(try mapAll(&strict, [pkt(10, 10), pkt(20, nil), pkt(15, nil)])
            == [pkt(10, 10), pkt(20, 20), pkt(21, 21)])
        #expect(strict.corrections.filled == 2)
        #expect(strict.corrections.ptsRaised == 1)  // 15 → 21
        #expect(strict.corrections.dtsBumped == 0)

        var loose = try TrackTimeline(source: ms, target: ms, order: .nonDecreasing)
        #expect(try mapAll(&loose, [pkt(10, 10), pkt(20, nil), pkt(15, nil)])
            == [pkt(10, 10), pkt(20, 20), pkt(20, 20)])
    }

    @Test("both unknown on the first packet throws unknownTimestamps")
    func bothUnknownFirst() throws {
        var t = try TrackTimeline(source: ms, target: ms, order: .strictlyIncreasing)
        #expect(throws: TimelineError.unknownTimestamps) { try t.map(pkt(nil, nil, 20)) }
        // Nothing was recorded: the next packet is still the first.
        #expect(throws: TimelineError.unknownTimestamps) { try t.map(pkt(nil, nil, 20)) }
        #expect(try t.map(pkt(7, 7)) == pkt(7, 7))
    }

    @Test("a still image without timestamps goes to the origin when allowed")
    func untimedStillImage() throws {
        var t = try TrackTimeline(source: ms, target: Rational(unchecked: 1, 90_000),
                                  shift: Timestamp(-5, ms), order: .strictlyIncreasing, untimedAtOrigin: true)
        #expect(try t.map(pkt(nil, nil, 0)) == pkt(0, 0, 0))
        #expect(t.corrections.filled == 2)
        // A later timed packet is mapped as usual: (10 − 5) ms = 450 ticks of 1/90000.
        #expect(try t.map(pkt(10, 10, 0)) == pkt(450, 450, 0))
    }

    @Test("both unknown later: previous DTS + previous duration (at least one tick when strict)")
    func bothUnknownLater() throws {
        var strict = try TrackTimeline(source: ms, target: ms, order: .strictlyIncreasing)
        let out = try mapAll(&strict, [pkt(100, 100, 20), pkt(nil, nil, 20), pkt(nil, nil, 0), pkt(nil, nil, 0)])
        #expect(out == [pkt(100, 100, 20), pkt(120, 120, 20), pkt(140, 140, 0), pkt(141, 141, 0)])
        #expect(strict.corrections.filled == 6)  // pts and dts, three times
        #expect(strict.corrections.dtsBumped == 0)

        var loose = try TrackTimeline(source: ms, target: ms, order: .nonDecreasing)
        #expect(try mapAll(&loose, [pkt(100, 100, 0), pkt(nil, nil, 0)]) == [pkt(100, 100, 0), pkt(100, 100, 0)])

        // The previous duration is taken in target ticks: 3003/90 = 33.37 → 33.
        var video = try TrackTimeline(source: .mpegClock, target: ms, order: .strictlyIncreasing)
        #expect(try mapAll(&video, [pkt(0, 0, 3003), pkt(nil, nil, 3003)]) == [pkt(0, 0, 33), pkt(33, 33, 33)])
    }

    @Test("a negative duration is clamped to zero and counted")
    func negativeDuration() throws {
        var t = try TrackTimeline(source: ms, target: ms, order: .strictlyIncreasing)
        #expect(try t.map(pkt(0, 0, -5)) == pkt(0, 0, 0))
        #expect(t.corrections.durationsClamped == 1)
        // The clamped duration is what an unknown packet follows on from: 0, so one tick.
        #expect(try t.map(pkt(nil, nil, 10)) == pkt(1, 1, 10))
    }

    // MARK: Errors

    @Test("a shift that does not fit in the source time base throws overflow")
    func initOverflow() {
        // Int64.max s in 1/90000 ticks
        #expect(throws: TimelineError.overflow) {
            try TrackTimeline(source: .mpegClock, target: ms, shift: Timestamp(.max, tb(1, 1)), order: .nonDecreasing)
        }
    }

    @Test("timestamps that overflow when shifted or rescaled throw overflow")
    func mapOverflow() throws {
        // Shifted by +1000 ticks past Int64.max.
        var shifted = try TrackTimeline(source: ms, target: ms, shift: Timestamp(1000, ms), order: .nonDecreasing)
        #expect(throws: TimelineError.overflow) { try shifted.map(pkt(.max - 10, 0)) }
        #expect(throws: TimelineError.overflow) { try shifted.map(pkt(0, .max - 10)) }

        // 2^50 s is 2^50·90000 ≈ 1.0e20 ticks of 1/90000: more than Int64.max ≈ 9.2e18.
        var seconds = try TrackTimeline(source: tb(1, 1), target: .mpegClock, order: .nonDecreasing)
        #expect(throws: TimelineError.overflow) { try seconds.map(pkt(1 << 50, 0)) }
        #expect(throws: TimelineError.overflow) { try seconds.map(pkt(0, 0, 1 << 50)) }

        // Bumping a DTS already at Int64.max.
        var strict = try TrackTimeline(source: ms, target: ms, order: .strictlyIncreasing)
        #expect(try strict.map(pkt(.max, .max)) == pkt(.max, .max))
        #expect(throws: TimelineError.overflow) { try strict.map(pkt(.max, .max)) }
    }

    @Test("an inferred DTS past Int64.max is an overflow, not a backward DTS")
    func inferredDTSOverflow() throws {
        var fix = try TrackTimeline(source: ms, target: ms, order: .strictlyIncreasing)
        #expect(try fix.map(pkt(.max, .max)) == pkt(.max, .max))
        #expect(throws: TimelineError.overflow) { try fix.map(pkt(nil, nil)) }

        // With .refuse the inferred DTS (previous + step, computed with &+) wraps to Int64.min
        // and is reported as a DTS going from Int64.max to Int64.min, a value never in the input.
        var refuse = try TrackTimeline(source: ms, target: ms, order: .strictlyIncreasing, repair: .refuse)
        #expect(try refuse.map(pkt(.max, .max)) == pkt(.max, .max))
        #expect(throws: TimelineError.overflow) { try refuse.map(pkt(nil, nil)) }
        #expect(throws: TimelineError.overflow) { try refuse.map(pkt(.max, nil)) }
    }

    @Test("an invalid source or target time base throws invalidTimeBase")
    func invalidTimeBase() {
        #expect(throws: TimelineError.invalidTimeBase(tb(0, 1))) {
            try TrackTimeline(source: tb(0, 1), target: ms, order: .nonDecreasing)
        }
        #expect(throws: TimelineError.invalidTimeBase(tb(-1, 1000))) {
            try TrackTimeline(source: ms, target: tb(-1, 1000), order: .nonDecreasing)
        }
        #expect(throws: TimelineError.invalidTimeBase(tb(-1, 1000))) {
            try TrackTimeline(source: tb(1, -1000), target: ms, order: .nonDecreasing)
        }
    }

    @Test func errorDescriptions() {
        #expect(TimelineError.nonMonotonicDTS(previous: 100, current: 99, timeBase: ms).description
            == "DTS goes from 100 to 99 (time base 1/1000), which the container does not allow")
        #expect(TimelineError.ptsBeforeDTS(pts: 5, dts: 10, timeBase: ms).description
            == "PTS 5 is earlier than DTS 10 (time base 1/1000)")
        #expect(TimelineError.invalidTimeBase(tb(0, 1)).description == "invalid time base 0/1")
    }

    @Test func correctionsSum() {
        var a = TimelineCorrections()
        a.dtsBumped = 1
        a.filled = 2
        var b = TimelineCorrections()
        b.ptsRaised = 3
        b.durationsClamped = 4
        b.wraps = 5
        let sum = a + b
        #expect(sum.dtsBumped == 1 && sum.ptsRaised == 3 && sum.filled == 2)
        #expect(sum.durationsClamped == 4 && sum.wraps == 5)
        #expect(sum.total == 15)
        #expect(TimelineCorrections().total == 0)
    }

    // MARK: 33-bit wrap

    @Test("audio crossing the 33-bit wrap comes out continuous, with one wrap counted")
    func wrapAudio() throws {
        var t = try TrackTimeline(source: .mpegClock, target: .mpegClock, order: .strictlyIncreasing,
                                  repair: .refuse, wrapBits: 33)
        // 1024 samples at 48 kHz = 1920 ticks of 1/90000; start 3 packets before 2^33.
        let continuous = (0..<7).map { period33 - 3 * 1920 + Int64($0) * 1920 }
        let out = try mapAll(&t, continuous.map { pkt($0 % period33, $0 % period33, 1920) })
        #expect(out == continuous.map { pkt($0, $0, 1920) })
        #expect(t.corrections.wraps == 1)
        #expect(t.corrections.total == 1)
    }

    /// Decode order I0 P3 B1 B2 P6 B4 B5 P9 B7 B8 at 29.97 fps, 2 frames of delay, dts crossing 2^33
    /// at the 6th packet while some pts already crossed it earlier.
    private static let reorderedAcrossWrap: [(pts: Int64, dts: Int64)] = {
        let display: [Int64] = [0, 3, 1, 2, 6, 4, 5, 9, 7, 8]
        let base = period33 - 5 * 3003
        return display.enumerated().map { k, d in (base + (d + 2) * 3003, base + Int64(k) * 3003) }
    }()

    @Test("reordered video crossing the 33-bit wrap stays continuous and strictly ordered")
    func wrapReorderedVideo() throws {
        var t = try TrackTimeline(source: .mpegClock, target: .mpegClock, order: .strictlyIncreasing,
                                  repair: .refuse, wrapBits: 33)
        let input = Self.reorderedAcrossWrap.map { pkt($0.pts % period33, $0.dts % period33, 3003) }
        // The raw input really does wrap: pts of the 2nd packet is 0 (= 2^33 mod 2^33).
        #expect(input[1].pts == 0)
        let out = try mapAll(&t, input)
        #expect(out == Self.reorderedAcrossWrap.map { pkt($0.pts, $0.dts, 3003) })
        for (a, b) in zip(out, out.dropFirst()) { #expect(a.dts! < b.dts!) }
        for p in out { #expect(p.pts! >= p.dts!) }
    }

    @Test("reordered video crossing the wrap counts one wrap")
    func wrapReorderedVideoCount() throws {
        var t = try TrackTimeline(source: .mpegClock, target: .mpegClock, order: .strictlyIncreasing,
                                  repair: .refuse, wrapBits: 33)
        _ = try mapAll(&t, Self.reorderedAcrossWrap.map { pkt($0.pts % period33, $0.dts % period33, 3003) })
        // The PTS correction goes 0 → 2^33 at packet 1 (disp 3 = 2^33), back to 0 for the
        // B-frames shown before it, and 2^33 again: one real wrap, counted once.
        #expect(t.corrections.wraps == 1)
    }

    // MARK: Properties

    @Test("valid input in the same time base passes through unchanged with no corrections")
    func identityOnValidInput() async {
        await propertyCheck(
            count: 300,
            input: Gen.int64(in: -(1 << 40)...(1 << 40)),
            zip(Gen.int64(in: 1...10_000), Gen.int64(in: 0...10_000), Gen.int64(in: 0...5000)).array(of: 1...100)
        ) { start, steps in
            var dts = start
            let input = steps.map { step, ptsOffset, duration in
                dts += step
                return pkt(dts + ptsOffset, dts, duration)
            }
            var t = try TrackTimeline(source: ms, target: ms, order: .strictlyIncreasing, repair: .refuse)
            #expect(try mapAll(&t, input) == input)
            #expect(t.corrections.total == 0)
        }
    }

    @Test("with steps of at least one target tick, 1/90000 → 1/1000 needs no repair and equals rescale")
    func rescaleOnValidInput() async {
        await propertyCheck(
            count: 300,
            input: Gen.int64(in: -(1 << 40)...(1 << 40)),
            zip(Gen.int64(in: 90...100_000), Gen.int64(in: 0...100_000)).array(of: 1...100)
        ) { start, steps in
            var dts = start
            let input = steps.map { step, ptsOffset in
                dts += step
                return pkt(dts + ptsOffset, dts, 3003)
            }
            var t = try TrackTimeline(source: .mpegClock, target: ms, order: .strictlyIncreasing, repair: .refuse)
            let out = try mapAll(&t, input)
            #expect(out == input.map { pkt(rescale($0.pts!, from: .mpegClock, to: ms),
                                           rescale($0.dts!, from: .mpegClock, to: ms), 33) })
        }
    }

    static let timeBases: [Rational] = [.mpegClock, ms, tb(1, 48_000), tb(1001, 30_000), tb(1, 1), .microseconds]
    static let anyTimeBase = Gen<Rational?>.element(of: timeBases).map { $0! }
    static let anyTimestamp = Gen.oneOf(
        Gen.int64(in: -1000...100_000),
        Gen.int64(in: -period33...(2 * period33)),
        Gen.int64(in: .min ... .max),
        Gen.int64(in: (.max - 1000) ... .max),
        Gen.int64(in: .min ... (.min + 1000))
    )
    static let anyDuration = Gen.oneOf(Gen.int64(in: -100...5000), Gen.int64(in: .min ... .max))
    static let anyPacket = zip(anyTimestamp.optional(valueRate: 0.8), anyTimestamp.optional(valueRate: 0.8), anyDuration)
        .map { t in PacketTiming(pts: t.0, dts: t.1, duration: t.2) }
    /// A mostly increasing stream with jitter, holes and repeats, like real files.
    static let plausibleStream = zip(
        Gen.int64(in: -(1 << 34)...(1 << 34)),
        zip(Gen.int64(in: -3003...9009).optional(valueRate: 0.9), Gen.int64(in: -6006...9009).optional(valueRate: 0.9),
            Gen.int64(in: -10...3003)).array(of: 1...200)
    ).map { start, deltas in
        var dts = start
        return deltas.map { step, ptsOffset, duration in
            if let step { dts += step }
            return PacketTiming(pts: ptsOffset.map { dts + $0 }, dts: step.map { _ in dts }, duration: duration)
        }
    }

    @Test("any input: map throws a TimelineError or yields ordered, complete timestamps")
    func invariantsOnArbitraryInput() async {
        await propertyCheck(
            count: 1000,
            input: zip(Self.anyTimeBase, Self.anyTimeBase, Gen.bool, Gen.bool, Gen.bool),
            zip(Self.anyTimestamp, Self.anyTimeBase),
            Gen.oneOf(Self.anyPacket.array(of: 1...60), Self.plausibleStream)
        ) { config, shift, packets in
            let (source, target, strict, refuse, wraps) = config
            guard let timeline = try? TrackTimeline(
                source: source, target: target, shift: Timestamp(shift.0, shift.1),
                order: strict ? .strictlyIncreasing : .nonDecreasing,
                repair: refuse ? .refuse : .fix, wrapBits: wraps ? 33 : nil)
            else { return }  // only an unrepresentable shift can fail here
            var t = timeline
            checkInvariants(&t, packets)
        }
    }
}

/// Maps every packet, checking each output against the previous successful one.
private func checkInvariants(_ t: inout TrackTimeline, _ packets: [PacketTiming]) {
    var previousDTS: Int64?
    for packet in packets {
        do throws(TimelineError) {
            let out = try t.map(packet)
            guard let pts = out.pts, let dts = out.dts else {
                Issue.record("unknown timestamp in output \(out) for \(packet)")
                continue
            }
            if let prev = previousDTS {
                if t.order == .strictlyIncreasing {
                    #expect(dts > prev, "\(packet) → \(out) after dts \(prev)")
                } else {
                    #expect(dts >= prev, "\(packet) → \(out) after dts \(prev)")
                }
            }
            #expect(pts >= dts, "\(packet) → \(out)")
            #expect(out.duration >= 0, "\(packet) → \(out)")
            previousDTS = dts
        } catch {
            switch error {
            case .overflow: break
            case .unknownTimestamps:
                #expect(previousDTS == nil, "unknownTimestamps after a packet with a DTS: \(packet)")
            case .nonMonotonicDTS, .ptsBeforeDTS:
                #expect(t.repair == .refuse, "\(error) with repair .fix")
            case .invalidTimeBase:
                Issue.record("invalidTimeBase from map: \(packet)")
            }
        }
    }
    if t.repair == .refuse {
        #expect(t.corrections.dtsBumped == 0 && t.corrections.ptsRaised == 0)
    }
}
