import Sync
import Testing

private func tb(_ n: Int32, _ d: Int32) -> Rational { Rational(n, d)! }
private let ms1000 = Rational(unchecked: 1, 1000)

private func scanner(_ timeBase: Rational, _ rate: Int32, tolerance: Int64? = nil, keepAtMost: Int = 1000) -> AudioGapScanner {
    AudioGapScanner(timeBase: timeBase, sampleRate: rate, toleranceSamples: tolerance, keepAtMost: keepAtMost)!
}

/// The fields of an `AudioDiscontinuity`, so whole values can be compared and printed.
private struct Found: Equatable, CustomStringConvertible {
    let expected: Int64, actual: Int64, samplePosition: Int64, samples: Int64

    var description: String { "expected \(expected) actual \(actual) at sample \(samplePosition): \(samples)" }
}

private extension AudioGapScanner {
    var found: [Found] {
        discontinuities.map { Found(expected: $0.expected, actual: $0.actual, samplePosition: $0.samplePosition, samples: $0.samples) }
    }
}

/// `x·1000/44100` rounded half up, for x ≥ 0: the millisecond a muxer writes for sample x.
private func msAt44100(sample x: Int64) -> Int64 { (2 * x * 1000 + 44_100) / 88_200 }

@Suite("AudioGapScanner")
struct AudioGapScannerTests {
    @Test("contiguous 1024-sample AAC packets at 1/48000: no discontinuity")
    func contiguous() {
        var s = scanner(tb(1, 48_000), 48_000)
        for n in 0..<1000 { s.add(pts: Int64(n) * 1024, samples: 1024) }
        #expect(s.discontinuityCount == 0)
        #expect(s.discontinuities.isEmpty)
        #expect(s.totalSamples == 1_024_000)
        #expect(s.gapSamples == 0 && s.overlapSamples == 0)
    }

    @Test("a one-second gap is found with its exact size and position")
    func gap() {
        var s = scanner(tb(1, 48_000), 48_000)
        for n in 0..<10 { s.add(pts: Int64(n) * 1024, samples: 1024) }
        // Packet 10 should start at 10240 but starts 48000 samples later.
        for n in 10..<20 { s.add(pts: Int64(n) * 1024 + 48_000, samples: 1024) }
        #expect(s.found == [Found(expected: 10_240, actual: 58_240, samplePosition: 10_240, samples: 48_000)])
        #expect(s.discontinuityCount == 1)
        #expect(s.gapSamples == 48_000)
        #expect(s.overlapSamples == 0)
        #expect(s.totalSamples == 20 * 1024)
    }

    @Test("a gap measured in 1/90000 ticks is converted to samples exactly")
    func gapInMPEGClock() {
        // 1024 samples at 48 kHz = 1920 ticks; 0.5 s = 45000 ticks = 24000 samples.
        var s = scanner(.mpegClock, 48_000)
        for n in 0..<5 { s.add(pts: 90_000 + Int64(n) * 1920, samples: 1024) }
        s.add(pts: 90_000 + 5 * 1920 + 45_000, samples: 1024)
        #expect(s.found == [Found(expected: 99_600, actual: 144_600, samplePosition: 5120, samples: 24_000)])
    }

    @Test("an overlap is a negative discontinuity")
    func overlap() {
        var s = scanner(tb(1, 48_000), 48_000)
        for n in 0..<10 { s.add(pts: Int64(n) * 1024, samples: 1024) }
        // Packet 10 starts 2048 samples early; the following ones continue from there.
        for n in 10..<20 { s.add(pts: Int64(n) * 1024 - 2048, samples: 1024) }
        #expect(s.found == [Found(expected: 10_240, actual: 8192, samplePosition: 10_240, samples: -2048)])
        #expect(s.discontinuityCount == 1)
        #expect(s.overlapSamples == 2048)
        #expect(s.gapSamples == 0)
    }

    @Test("differences up to the tolerance are rounding, beyond it a discontinuity")
    func toleranceBoundary() {
        // Default tolerance at 48 kHz in 1/48000 is 48 samples (1 ms).
        var within = scanner(tb(1, 48_000), 48_000)
        within.add(pts: 0, samples: 1024)
        within.add(pts: 1024 + 48, samples: 1024)
        within.add(pts: 2048 - 48, samples: 1024)
        #expect(within.discontinuityCount == 0)

        var beyond = scanner(tb(1, 48_000), 48_000)
        beyond.add(pts: 0, samples: 1024)
        beyond.add(pts: 1024 + 49, samples: 1024)
        #expect(beyond.discontinuities.map(\.samples) == [49])

        var strict = scanner(tb(1, 48_000), 48_000, tolerance: 0)
        strict.add(pts: 0, samples: 1024)
        strict.add(pts: 1023, samples: 1024)
        #expect(strict.discontinuities.map(\.samples) == [-1])
    }

    @Test("Matroska: 44.1 kHz in 1/1000 with pts rounded to ms gives no false gap over 10,000 packets")
    func matroskaNoDrift() {
        var s = scanner(ms1000, 44_100)
        // Start 777 samples in, so the ms rounding of the start and of each packet differ.
        for n in Int64(0)..<10_000 { s.add(pts: msAt44100(sample: 777 + 1024 * n), samples: 1024) }
        #expect(s.discontinuityCount == 0)
        #expect(s.totalSamples == 10_240_000)

        // Truncated instead of rounded timestamps are within one tick too.
        var t = scanner(ms1000, 44_100)
        for n in Int64(0)..<10_000 { t.add(pts: (777 + 1024 * n) * 1000 / 44_100, samples: 1024) }
        #expect(t.discontinuityCount == 0)
    }

    @Test("Matroska: a real one-second gap among 10,000 rounded packets is found once")
    func matroskaRealGap() {
        var s = scanner(ms1000, 44_100)
        for n in Int64(0)..<10_000 {
            let sample = 777 + 1024 * n + (n >= 5000 ? 44_100 : 0)
            s.add(pts: msAt44100(sample: sample), samples: 1024)
        }
        // anchor = round(777/44.1) = round(17.62) = 18 ms
        // expected = 18 + round(5000·1024/44.1) = 18 + round(116099.77) = 116118 ms
        // actual = round((777 + 5120000 + 44100)/44.1) = round(117117.39) = 117117 ms
        // 999 ms = 44055.9 → 44056 samples (the rounding of both ends costs one ms)
        #expect(s.found == [Found(expected: 116_118, actual: 117_117,
                                                         samplePosition: 5_120_000, samples: 44_056)])
        #expect(s.discontinuityCount == 1)
    }

    @Test("default tolerance: the larger of one tick and 1 ms, in samples, rounded up",
          arguments: [
              (tb(1, 48_000), Int32(48_000), Int64(48)),  // tick 1, 1 ms = 48
              (tb(1, 1000), 44_100, 45),   // tick 44.1 → 45, 1 ms = 44.1 → 45
              (tb(1, 90_000), 48_000, 48), // tick 0.53 → 1, 1 ms = 48
              (tb(1, 1000), 8000, 8),      // tick 8, 1 ms = 8
              (tb(1, 10), 8000, 800),      // tick 800, 1 ms = 8
              (tb(1, 44_100), 44_100, 45), // tick 1, 1 ms = 44.1 → 45
              (tb(1, 6), 8000, 1334),      // tick 1333.33 → 1334 (up, not nearest)
              (tb(1001, 30_000), 48_000, 1602), // tick 1001·48000/30000 = 1601.6 → 1602
              (tb(1, 48_000), 22_050, 23), // 1 ms = 22.05 → 23
          ])
    func defaultTolerance(timeBase: Rational, rate: Int32, expected: Int64) {
        #expect(AudioGapScanner.defaultTolerance(timeBase: timeBase, sampleRate: rate) == expected)
        #expect(scanner(timeBase, rate).toleranceSamples == expected)
    }

    @Test("the jitter default: 20 ms in samples, rounded up, at least one tick",
          arguments: [
              (tb(1, 44_100), Int32(44_100), Int64(882)), // 20 ms = 882
              (tb(1, 48_000), 48_000, 960),
              (tb(1, 16_000), 16_000, 320),
              (tb(1, 22_050), 22_050, 441),
              (tb(1, 1000), 8000, 160),   // tick 8
              (tb(1, 10), 8000, 800),     // tick 800 > 160
          ])
    func jitterDefault(timeBase: Rational, rate: Int32, expected: Int64) {
        #expect(ToleranceDefault.jitter.samples(timeBase: timeBase, sampleRate: rate) == expected)
        #expect(ToleranceDefault.rounding.samples(timeBase: timeBase, sampleRate: rate)
            == AudioGapScanner.defaultTolerance(timeBase: timeBase, sampleRate: rate))
    }

    @Test("keepAtMost caps the list; the count and totals keep going")
    func keepAtMost() {
        var s = scanner(tb(1, 48_000), 48_000, keepAtMost: 2)
        var pts: Int64 = 0
        for i in 0..<20 {
            if i % 4 == 3 { pts += 100 }  // gaps before packets 3, 7, 11, 15, 19
            s.add(pts: pts, samples: 1024)
            pts += 1024
        }
        #expect(s.discontinuityCount == 5)
        #expect(s.gapSamples == 500)
        #expect(s.found == [
            Found(expected: 3072, actual: 3172, samplePosition: 3072, samples: 100),
            // re-anchored at 3172: 4 packets later 3172 + 4096 = 7268
            Found(expected: 7268, actual: 7368, samplePosition: 7168, samples: 100),
        ])
    }

    @Test("packets without a timestamp continue the sample count")
    func unknownPTSInTheMiddle() {
        var s = scanner(tb(1, 48_000), 48_000)
        s.add(pts: 0, samples: 1024)
        s.add(pts: nil, samples: 1024)
        s.add(pts: 2048, samples: 1024)
        s.add(pts: nil, samples: 1024)
        s.add(pts: 4096 + 480, samples: 1024)  // 10 ms late
        #expect(s.totalSamples == 5 * 1024)
        #expect(s.found == [Found(expected: 4096, actual: 4576, samplePosition: 4096, samples: 480)])
    }

    @Test("packets without a timestamp before the first one with a timestamp do not shift the expectation")
    func unknownPTSAtTheStart() {
        var s = scanner(tb(1, 48_000), 48_000)
        s.add(pts: nil, samples: 1024)   // samples 0…1023, timestamp unknown
        s.add(pts: 1024, samples: 1024)  // consistent with the packet before
        s.add(pts: 2048, samples: 1024)  // contiguous
        s.add(pts: 3072, samples: 1024)
        #expect(s.totalSamples == 4096)
        // Counting the leading packet's samples from the first timestamp would expect
        // packet 3 at 1024 + 2048 = 3072 instead of 2048: a false overlap.
        #expect(s.discontinuityCount == 0)
        #expect(s.discontinuities.isEmpty)
    }

    @Test("defaultTolerance with a zero sample rate does not trap")
    func defaultToleranceZeroRate() async {
        // Rational.perSecond(0) is nil; the function must not unwrap it.
        await #expect(processExitsWith: .success) {
            _ = AudioGapScanner.defaultTolerance(timeBase: Rational(unchecked: 1, 1000), sampleRate: 0)
        }
    }

    @Test("a non-positive time base or sample rate is refused")
    func invalid() {
        #expect(AudioGapScanner(timeBase: tb(0, 1), sampleRate: 48_000) == nil)
        #expect(AudioGapScanner(timeBase: tb(-1, 48_000), sampleRate: 48_000) == nil)
        #expect(AudioGapScanner(timeBase: tb(1, 48_000), sampleRate: 0) == nil)
        #expect(AudioGapScanner(timeBase: tb(1, 48_000), sampleRate: -48_000) == nil)
    }
}
