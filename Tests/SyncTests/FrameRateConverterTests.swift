import PropertyBased
import Sync
import Testing

/// The assembler's exact mode with timestamps in a container time base, as
/// the audio re-encoder feeds it.
@Suite("AudioAssembler timing")
struct AudioAssemblerTimingTests {
    @Test("millisecond timestamps of 44.1 kHz audio (rounded to 1 ms) never move the count")
    func coarseTimeBase() {
        var a = AudioAssembler(sampleRate: 44_100,
                               toleranceSamples: AudioGapScanner.defaultTolerance(timeBase: Rational(unchecked: 1, 1000), sampleRate: 44_100))
        let perSample = Rational(unchecked: 1, 44_100)
        for n in Int64(0)..<10_000 {
            let ms = (2 * n * 1024 * 1000 + 44_100) / 88_200
            let at = rescale(ms, from: Rational(unchecked: 1, 1000), to: perSample)!
            #expect(a.place(at: at, samples: 1024) == AudioStep(keep: 1024, position: n * 1024))
        }
        #expect(a.silenceInserted == 0 && a.samplesTrimmed == 0)
    }

    @Test("a gap of exactly 0.5 s at 48 kHz (90 kHz timestamps) asks for 24 000 samples of silence, once")
    func gap() {
        var a = AudioAssembler(sampleRate: 48_000, toleranceSamples: 48)
        let tb = Rational(unchecked: 1, 90_000), st = Rational(unchecked: 1, 48_000)
        func at(_ t: Int64) -> Int64 { rescale(t, from: tb, to: st)! }
        #expect(a.place(at: at(0), samples: 1024).silence == 0)
        #expect(a.place(at: at(1920 + 45_000), samples: 1024).silence == 24_000)
        #expect(a.place(at: at(1920 + 45_000 + 1920), samples: 1024).silence == 0)
        #expect(a.silenceInserted == 24_000)
        #expect(a.written == 3 * 1024 + 24_000)
        #expect(a.repairs == [AudioRepair(position: 1024, samples: 24_000)])
    }
}

@Suite("FrameRateConverter")
struct FrameRateConverterTests {
    private func run(_ frames: [(Int64, Int64)], fps: Rational, tb: Rational) -> (ranges: [Range<Int64>], c: FrameRateConverter) {
        var c = FrameRateConverter(frameRate: fps, inputTimeBase: tb)!
        var ranges: [Range<Int64>] = []
        for (i, f) in frames.enumerated() {
            let r = c.add(pts: f.0, duration: f.1)
            if i > 0 { ranges.append(r) } else { #expect(r.isEmpty) }
        }
        ranges.append(c.finish())
        return (ranges, c)
    }

    @Test("same rate: each frame fills exactly its own slot")
    func identity() {
        let frames = (0..<30).map { (Int64($0) * 512, Int64(512)) }
        let (r, c) = run(frames, fps: Rational(unchecked: 30, 1), tb: Rational(unchecked: 1, 15_360))
        let expected: [Range<Int64>] = (Int64(0)..<30).map { n in n..<(n + 1) }
        #expect(r == expected)
        #expect(c.dropped == 0 && c.duplicated == 0 && c.framesOut == 30)
    }

    @Test("60 → 30 fps drops every other frame; 30 → 60 doubles every frame")
    func halveAndDouble() {
        let sixty = (0..<60).map { (Int64($0) * 1000, Int64(1000)) }
        let (r1, c1) = run(sixty, fps: Rational(unchecked: 30, 1), tb: Rational(unchecked: 1, 60_000))
        #expect(c1.framesOut == 30)
        #expect(c1.dropped == 30)
        let total = r1.reduce(0) { $0 + $1.count }
        #expect(total == 30)
        let thirty = (0..<30).map { (Int64($0) * 2000, Int64(2000)) }
        let (r2, c2) = run(thirty, fps: Rational(unchecked: 60, 1), tb: Rational(unchecked: 1, 60_000))
        #expect(c2.framesOut == 60 && c2.duplicated == 30)
        #expect(r2.allSatisfy { $0.count == 2 })
    }

    @Test("a VFR hole is filled by repeating the frame before it; output starts at the first frame's slot")
    func vfrHole() {
        // 1/1000 time base, frames at 1000, 1033, 1067, then a 200 ms hole.
        let frames: [(Int64, Int64)] = [(1000, 33), (1033, 34), (1067, 33), (1300, 33)]
        let (r, c) = run(frames, fps: Rational(unchecked: 30, 1), tb: Rational(unchecked: 1, 1000))
        #expect(r.first?.lowerBound == 30)
        let expected: [Range<Int64>] = [30..<31, 31..<32, 32..<39, 39..<40]
        #expect(r == expected)
        #expect(c.framesOut == 10)
    }

    @Test("property: output indices are contiguous, and the count matches the covered time")
    func contiguousOutput() async {
        await propertyCheck(
            count: 200,
            input: Gen.int64(in: 1...5000), Gen.int32(in: 1...120), Gen.int64(in: 0...100_000)
        ) { step, fps, start in
            var c = FrameRateConverter(frameRate: Rational(unchecked: fps, 1), inputTimeBase: Rational(unchecked: 1, 90_000))!
            var expected: Int64?
            var pts = start
            for k in 0..<50 {
                let r = c.add(pts: pts, duration: step)
                if let e = expected, !r.isEmpty { #expect(r.lowerBound == e) }
                if !r.isEmpty { expected = r.upperBound }
                pts += step * Int64(1 + k % 3)
            }
            let last = c.finish()
            #expect(!last.isEmpty)
            if let e = expected { #expect(last.lowerBound == e) }
            #expect(c.framesOut == Int64(c.framesIn - c.dropped) + c.duplicated)
        }
    }
}
