import PropertyBased
import Sync
import Testing

/// A plain O(n²) real DFT: the reference the core's correlator is checked
/// with (the product uses libavutil's av_tx, checked against this too).
final class PlainDFT: RealFourierTransform {
    let size: Int
    init(size: Int) { self.size = size }

    func forward(_ input: inout [Float], into output: inout [ComplexFloat]) {
        output = (0...size / 2).map { k in
            var re = 0.0, im = 0.0
            for n in 0..<size {
                let a = -2 * Double.pi * Double(k * n % size) / Double(size)
                re += Double(input[n]) * cosine(a)
                im += Double(input[n]) * sine(a)
            }
            return ComplexFloat(Float(re), Float(im))
        }
    }

    func inverse(_ input: inout [ComplexFloat], into output: inout [Float]) {
        output = (0..<size).map { n in
            var s = Double(input[0].re) + (size % 2 == 0 ? Double(input[size / 2].re) * (n % 2 == 0 ? 1 : -1) : 0)
            for k in 1..<(size / 2) {
                let a = 2 * Double.pi * Double(k * n % size) / Double(size)
                s += 2 * (Double(input[k].re) * cosine(a) - Double(input[k].im) * sine(a))
            }
            return Float(s)
        }
    }
}

/// Taylor series are enough for the test's DFT (no Foundation in this target).
func sine(_ x: Double) -> Double {
    var x = x.truncatingRemainder(dividingBy: 2 * .pi)
    if x > .pi { x -= 2 * .pi } else if x < -.pi { x += 2 * .pi }
    var term = x, sum = x
    for k in 1..<20 {
        term *= -x * x / Double((2 * k) * (2 * k + 1))
        sum += term
    }
    return sum
}

func cosine(_ x: Double) -> Double { sine(x + .pi / 2) }

/// A deterministic noise source.
struct Noise {
    var state: UInt64
    mutating func next() -> Float {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Float(Int64(bitPattern: state >> 11) % 2000 - 1000) / 1000
    }
}

@Suite("waveform sync core")
struct WaveformSyncTests {
    // MARK: peaks

    @Test("property: a parabola's vertex is found exactly")
    func parabola() async {
        await propertyCheck(count: 200, input: Gen.int(in: -499...499), Gen.int(in: 1...100)) { d, k in
            let v = Double(d) / 1000, a = Double(k)
            func y(_ x: Double) -> Double { 5 - a * (x - v) * (x - v) }
            #expect(abs(CorrelationPeak.parabolicOffset(y(-1), y(0), y(1)) - v) < 1e-9)
        }
    }

    @Test("the largest magnitude wins, an inverted peak too; the ratio is against the largest beyond the exclusion")
    func findPeak() {
        var c = [Float](repeating: 0.1, count: 100)
        c[40] = -2; c[39] = -1; c[41] = -1
        c[43] = 1.5  // inside the exclusion zone: not a sidelobe
        c[80] = 0.5
        let p = CorrelationPeak.find(in: c, search: 0..<100, sidelobes: 0..<100, exclusion: 5)!
        #expect(p.index == 40 && p.value == -2 && p.position == 40)
        #expect(p.ratio == 4)
        // Searching elsewhere finds the best there.
        #expect(CorrelationPeak.find(in: c, search: 60..<100, sidelobes: 0..<100, exclusion: 5)?.index == 80)
        #expect(CorrelationPeak.find(in: [Float](repeating: 0, count: 10), search: 0..<10, sidelobes: 0..<10, exclusion: 1) == nil)
    }

    @Test("the tracker keeps separated candidates and the best's ratio")
    func tracker() {
        var t = PeakTracker(exclusion: 10)
        t.offer(position: 100, magnitude: 5)
        t.offer(position: 105, magnitude: 6)  // same neighbourhood: replaces
        t.offer(position: 500, magnitude: 2)
        t.offer(position: 900, magnitude: 3)
        #expect(t.best?.position == 105)
        #expect(t.ratio == 2)
        #expect(t.candidates.count == 3)
    }

    // MARK: correlation

    @Test("GCC-PHAT finds a delay through a different EQ, with the plain DFT")
    func correlatorFindsDelay() {
        let n = 256, delay = 37
        var noise = Noise(state: 7)
        let source = (0..<(n + delay)).map { _ in noise.next() }
        // b: the source; a: the source delayed, through a crude lowpass and at another level.
        let b = Array(source[delay..<(delay + 150)])
        var a = [Float](repeating: 0, count: n)
        for i in 1..<min(n, delay + 150) {
            let j = i - delay
            let x = j >= 0 && j < 150 ? b[j] : 0
            let xp = j - 1 >= 0 && j - 1 < 150 ? b[j - 1] : 0
            a[i] = 0.3 * (x + 0.6 * xp)
        }
        let corr = CrossCorrelator(fft: PlainDFT(size: n), sampleRate: Double(n), band: 1...Double(n / 2 - 1))
        var c: [Float] = []
        corr.correlate(corr.spectrum(a), corr.spectrum(b), into: &c)
        let p = CorrelationPeak.find(in: c, search: 0..<n, sidelobes: 0..<n, exclusion: 3)!
        #expect(p.index == delay)
        #expect(p.ratio > 3, "ratio \(p.ratio)")
        // Unrelated noise: no clear peak.
        let other = (0..<150).map { _ in noise.next() }
        corr.correlate(corr.spectrum(a), corr.spectrum(other), into: &c)
        let q = CorrelationPeak.find(in: c, search: 0..<n, sidelobes: 0..<n, exclusion: 3)!
        #expect(q.ratio < 2, "ratio \(q.ratio)")
    }

    @Test("the band keeps only the bins inside it")
    func band() {
        let corr = CrossCorrelator(fft: PlainDFT(size: 64), sampleRate: 6400, band: 250...1000)
        #expect(corr.bins == 3..<11)
    }

    // MARK: line fit

    @Test("least squares on points of a line is exact")
    func leastSquares() {
        let pts = (0..<10).map { (x: Double($0), y: 3 - 0.5 * Double($0)) }
        let f = LineFit.leastSquares(pts)!
        #expect(abs(f.slope + 0.5) < 1e-12 && abs(f.intercept - 3) < 1e-12 && f.rms < 1e-12)
        #expect(LineFit.leastSquares([(x: 2, y: 7)])?.slope == 0)
        #expect(LineFit.leastSquares([]) == nil)
    }

    @Test("property: the robust fit recovers a line with noise and 30 % wild outliers")
    func robustFit() async {
        await propertyCheck(count: 100, input: Gen.int(in: -300...300), Gen.int(in: -30_000...30_000), Gen.int(in: 1...1_000_000)) { ppm, lagMs, seed in
            var noise = Noise(state: UInt64(seed))
            let slope = Double(ppm) * 1e-6, intercept = Double(lagMs) / 1000
            let pts = (0..<40).map { i -> (x: Double, y: Double, weight: Double) in
                let x = Double(i) * 15
                if i % 10 < 3 { return (x, intercept + Double(noise.next()) * 2, 1) }  // outlier
                return (x, intercept + slope * x + Double(noise.next()) * 20e-6, 1)
            }
            let f = LineFit.robust(pts, tolerance: 0.0005, maxSlope: 300e-6, floor: 0.0001)!
            #expect(abs(f.slope - slope) < 0.2e-6, "slope \(f.slope) vs \(slope)")
            #expect(abs(f.intercept - intercept) < 50e-6)
            // Every point of the line is kept, and nothing far from it (an
            // outlier that happens to land on the line is rightly kept too).
            #expect(f.inliers.count >= 28 && (0..<40).allSatisfy { $0 % 10 < 3 || f.inliers.contains($0) })
            #expect(f.inliers.allSatisfy { abs(pts[$0].y - (intercept + slope * pts[$0].x)) < 0.0005 },
                    "inliers \(f.inliers)")
        }
    }

    // MARK: clocks

    @Test("property: reference and other time are inverses; the constant lag splits the drift")
    func clockRelation() async {
        await propertyCheck(count: 200, input: Gen.int(in: -300...300), Gen.int(in: -60_000...60_000), Gen.int(in: 0...3600)) { ppm, lagMs, u in
            let r = ClockRelation(intercept: Double(lagMs) / 1000, slope: -Double(ppm) * 1e-6)
            let t = Double(u)
            #expect(abs(r.referenceTime(atOther: r.otherTime(atReference: t)) - t) < 1e-9)
            #expect(abs(r.drift - Double(ppm) * 1e-6) < 1e-15)
            // Copying with the constant lag over [0, 600] s of the other clock: zero error mid-way, ± half the drift at the ends.
            let lag = r.constantLag(over: 0...600)
            let errAtEnd = (600 + lag) - r.referenceTime(atOther: 600)
            let errAtStart = lag - r.referenceTime(atOther: 0)
            #expect(abs(errAtEnd + errAtStart) < 1e-9)
            #expect(abs(abs(errAtEnd) - DriftPolicy.copyError(drift: r.drift, span: 600 / (1 + r.drift))) < 1e-9)
        }
    }

    @Test("drift policy: resample when a constant offset would use more than half the tolerance at the ends")
    func driftPolicy() {
        // 10 minutes, 1 ms: the line is at 1.67 ppm.
        #expect(!DriftPolicy.needsResampling(drift: 1.5e-6, span: 600, tolerance: 0.001))
        #expect(DriftPolicy.needsResampling(drift: 1.8e-6, span: 600, tolerance: 0.001))
        #expect(DriftPolicy.needsResampling(drift: -20e-6, span: 600, tolerance: 0.001))
        // An hour: 0.28 ppm.
        #expect(DriftPolicy.needsResampling(drift: 0.3e-6, span: 3600, tolerance: 0.001))
        #expect(!DriftPolicy.needsResampling(drift: 0, span: 3600, tolerance: 0.001))
    }

    @Test("drift correction: integer rates for libswresample, exact to 0.05 ppm; positions mapped with the same ratio")
    func driftCorrection() {
        let d = DriftCorrection(drift: 80e-6, inputRate: 48_000, outputRate: 48_000)!
        #expect(d.scale == 625)
        #expect(d.scaledOutputRate == 30_000_000 && d.scaledInputRate == 30_002_400)
        #expect(Int64(d.scaledInputRate) << DriftCorrection.phaseShift < 1 << 30)
        // An hour of input at its nominal rate becomes an hour of output on the reference clock.
        let hour = Int64(48_000 * 3600)
        let real = Double(hour) * 1.00008
        #expect(abs(Double(d.outputCount(ofInput: Int64(real))) - Double(hour)) <= 1)
        #expect(d.map(1000, anchor: 1000) == 1000)
        #expect(abs(Double(d.map(1000 + Int64(real), anchor: 1000) - 1000) - Double(hour)) <= 1)
        // 44.1 kHz in, 48 kHz out.
        let e = DriftCorrection(drift: -20e-6, inputRate: 44_100, outputRate: 48_000)!
        let ratio = Double(e.scaledOutputRate) / Double(e.scaledInputRate)
        #expect(abs(ratio / (48_000.0 / 44_100 / (1 - 20e-6)) - 1) < 5e-8)
        #expect(DriftCorrection(drift: 0.02, inputRate: 48_000, outputRate: 48_000) == nil)
        #expect(DriftCorrection(drift: 0, inputRate: 0, outputRate: 48_000) == nil)
    }

    // MARK: plans and verdicts

    @Test("templates spread over the recording, at most the limit, the whole recording when short")
    func templatePlan() {
        let s = WaveformSyncSettings()
        let long = TemplatePlan(duration: 600, settings: s)
        #expect(long.length == 8 && long.starts.count == 12)
        #expect(long.starts.first == 0 && long.starts.last == 592)
        let short = TemplatePlan(duration: 4.6, settings: s)
        #expect(short.length == 4.6 && short.starts == [0])
        #expect(TemplatePlan(duration: 20, settings: s).starts == [0, 12])
    }

    @Test("windows lie inside the overlap; the radius grows away from the anchor")
    func windowPlan() {
        let s = WaveformSyncSettings()
        let r = ClockRelation(intercept: 2, slope: -50e-6)
        let w = WindowPlan.windows(overlap: 10...610, length: 1.5, relation: r, anchor: 310, base: 0.008,
                                   slopeUncertainty: 20e-6, settings: s)
        #expect(w.count == 64)
        #expect(w.allSatisfy { $0.center - 0.75 >= 10 && $0.center + 0.75 <= 610 })
        #expect(w.allSatisfy { abs($0.predictedLag - r.lag(at: $0.center)) < 1e-12 })
        #expect(abs(w[0].radius - (0.008 + 20e-6 * (310 - w[0].center))) < 1e-12)
        #expect(WindowPlan.windows(overlap: 0...1, length: 1.5, relation: r, anchor: 0, base: 0.01,
                                   slopeUncertainty: 0, settings: s).isEmpty)
    }

    @Test("coarse consensus: three agreeing templates decide even when weak; a lone weak one does not")
    func coarseConsensus() throws {
        let s = WaveformSyncSettings()
        let slope = -40e-6
        let agreeing = [50.0, 250, 450].map { LagMeasurement(time: $0, lag: 12 + slope * $0, ratio: 1.3) }
        let wild = [LagMeasurement(time: 150, lag: -40, ratio: 1.2), LagMeasurement(time: 350, lag: 77, ratio: 1.4)]
        let c = try CoarseConsensus.decide(agreeing + wild, templateLength: 8, settings: s).get()
        #expect(c.agreeing == 3)
        #expect(abs(c.relation.slope - slope) < 1e-9 && abs(c.relation.intercept - 12) < 1e-9)
        #expect(c.slopeUncertainty < s.maxDrift)
        #expect(throws: CoarseConsensus.Refusal.self) {
            try CoarseConsensus.decide([agreeing[0]] + wild, templateLength: 8, settings: s).get()
        }
        // A single strong peak is enough, with the drift left open.
        let strong = try CoarseConsensus.decide([LagMeasurement(time: 3, lag: 0.7, ratio: 9)], templateLength: 4.6, settings: s).get()
        #expect(strong.relation.slope == 0 && strong.slopeUncertainty == s.maxDrift)
        #expect(throws: CoarseConsensus.Refusal.self) { try CoarseConsensus.decide([], templateLength: 8, settings: s).get() }
    }

    @Test("a fit needs enough agreeing windows; confidence falls with weak peaks")
    func syncFit() throws {
        let s = WaveformSyncSettings()
        let good = (0..<20).map { LagMeasurement(time: Double($0) * 10, lag: 1 - 20e-6 * Double($0) * 10, ratio: 12) }
        let f = try #require(SyncFit(good, windows: 20, settings: s))
        #expect(f.accepted(by: s) && f.agreeing == 20 && f.confidence == 1)
        #expect(abs(f.relation.drift - 20e-6) < 1e-12)
        // Two of twenty windows agree (the rest scattered): refused.
        var noise = Noise(state: 3)
        let scattered = (0..<18).map { LagMeasurement(time: Double($0) * 10 + 5, lag: Double(noise.next()), ratio: 1.6) }
        let g = try #require(SyncFit(Array(good.prefix(2)) + scattered, windows: 20, settings: s))
        #expect(!g.accepted(by: s))
        // Weak peaks lower the confidence.
        let weak = good.map { LagMeasurement(time: $0.time, lag: $0.lag, ratio: 2) }
        #expect(try #require(SyncFit(weak, windows: 20, settings: s)).confidence == 0.5)
        // No clear peak at all: no fit.
        #expect(SyncFit(weak.map { LagMeasurement(time: $0.time, lag: $0.lag, ratio: 1.1) }, windows: 20, settings: s) == nil)
    }
}
