import Foundation
import Testing
@testable import Sync

/// The meter's DSP (K-weighting, gating, the true-peak filter) against
/// BS.1770's figures and FFmpeg's `ebur128` / libswresample design.
@Suite("loudness meter")
struct LoudnessMeterTests {
    /// Measures `channels` (one array per channel) in stretches of `frame` samples.
    static func measure(_ channels: [[Float]], rate: Int, weights: [Double]? = nil,
                        frame: Int = 1024) -> LoudnessMeasurement {
        var m = LoudnessMeasurement(sampleRate: rate, channelWeights: weights ?? channels.map { _ in 1 })
        let n = channels[0].count
        var at = 0
        while at < n {
            let k = min(frame, n - at)
            let copies = channels.map { Array($0[at..<at + k]) }
            let pointers = copies.map { c -> UnsafeMutablePointer<Float> in
                let p = UnsafeMutablePointer<Float>.allocate(capacity: k)
                p.initialize(from: c, count: k)
                return p
            }
            defer { pointers.forEach { $0.deallocate() } }
            let planes = pointers.map { UnsafePointer($0) }
            planes.withUnsafeBufferPointer { m.add($0, count: k) }
            at += k
        }
        return m
    }

    static func sine(_ frequency: Double, amplitude: Double, seconds: Double, rate: Int, phase: Double = 0) -> [Float] {
        (0..<Int(seconds * Double(rate))).map { Float(amplitude * sin(2 * .pi * frequency * Double($0) / Double(rate) + phase)) }
    }

    @Test func kWeightingAt48kHzIsTheStandardsTable() {
        let k = KWeighting(sampleRate: 48000)
        #expect(abs(k.pre.b0 - 1.53512485958697) < 1e-9)
        #expect(abs(k.pre.b1 - -2.69169618940638) < 1e-9)
        #expect(abs(k.pre.b2 - 1.19839281085285) < 1e-9)
        #expect(abs(k.pre.a1 - -1.69065929318241) < 1e-9)
        #expect(abs(k.pre.a2 - 0.73248077421585) < 1e-9)
        #expect(abs(k.rlb.a1 - -1.99004745483398) < 1e-9)
        #expect(abs(k.rlb.a2 - 0.99007225036621) < 1e-9)
        #expect(k.rlb.b0 == 1 && k.rlb.b1 == -2 && k.rlb.b2 == 1)
    }

    @Test func channelWeights() {
        #expect(LoudnessChannelWeight.weight(channel: 0) == 1)   // FL
        #expect(LoudnessChannelWeight.weight(channel: 2) == 1)   // FC
        #expect(LoudnessChannelWeight.weight(channel: 3) == 0)   // LFE
        #expect(LoudnessChannelWeight.weight(channel: 4) == 1.41) // BL (5.1)
        #expect(LoudnessChannelWeight.weight(channel: 9) == 1.41) // SL (5.1(side))
    }

    /// A 1 kHz sine at -20 dBFS in one channel reads -23.0 LUFS (BS.1770's
    /// calibration: 0 dBFS reads -3.01), at 48 and 44.1 kHz; its range is 0.
    @Test(arguments: [48000, 44100])
    func sineReadsItsCalibratedLoudness(_ rate: Int) {
        let m = Self.measure([Self.sine(1000, amplitude: 0.1, seconds: 10, rate: rate)], rate: rate).figures
        #expect(abs(m.integratedLUFS - -23.01) < 0.05, "\(m)")
        #expect(m.rangeLU < 0.05)
        #expect(abs(m.samplePeakDBFS - -20) < 0.01)
    }

    /// Silence is gated out: -70 LUFS, no range, no peak.
    @Test func silenceIsGatedOut() {
        let m = Self.measure([[Float](repeating: 0, count: 48000 * 3)], rate: 48000).figures
        #expect(m.isGatedOut && m.integratedLUFS == -70 && m.rangeLU == 0)
        #expect(m.truePeakDBTP == -.infinity && m.samplePeakDBFS == -.infinity)
    }

    /// 10 s at -20 dBFS then 10 s 15 dB lower: the quiet half is under the
    /// relative gate of the integrated loudness (-10 LU) but over the range's
    /// (-20 LU), so the integrated loudness is the loud half's and the range
    /// spans both (3 s short-term blocks, 10th to 95th percentile).
    @Test func relativeGatesLeaveTheQuietPartOutOfTheIntegratedLoudnessOnly() {
        let rate = 48000
        let loud = Self.sine(1000, amplitude: 0.1, seconds: 10, rate: rate)
        let quiet = Self.sine(1000, amplitude: 0.1 / 5.623, seconds: 10, rate: rate)
        let m = Self.measure([loud + quiet], rate: rate).figures
        #expect(abs(m.integratedLUFS - -23.01) < 0.15, "\(m)")
        #expect(abs(m.rangeLU - 15) < 0.5, "\(m)")
    }

    /// Surround channels count 1.41 times, the LFE not at all.
    @Test func surroundAndLowFrequencyWeights() {
        let rate = 48000, s = Self.sine(1000, amplitude: 0.1, seconds: 5, rate: rate)
        let front = Self.measure([s], rate: rate).figures.integratedLUFS
        let back = Self.measure([s], rate: rate, weights: [1.41]).figures.integratedLUFS
        let lfe = Self.measure([s, s], rate: rate, weights: [1, 0]).figures.integratedLUFS
        #expect(abs(back - front - 10 * log10(1.41)) < 0.01)
        #expect(abs(lfe - front) < 0.01)
    }

    /// libswresample's bank: 4 phases from 48 kHz, 640 from 44.1 kHz (one
    /// output per 147 phases), 32 taps; phase 0 passes the sample through;
    /// every phase keeps DC within 1e-5.
    @Test func filterBankIsLibswresamples() {
        let b48 = TruePeakFilterBank(sampleRate: 48000)
        #expect(b48.length == 32 && b48.phaseCount == 4 && b48.stepRemainder == 0 && b48.stepPhases == 1)
        #expect(b48.phaseZeroIsSample && b48.firstWindow == 17)
        let b44 = TruePeakFilterBank(sampleRate: 44100)
        #expect(b44.phaseCount == 640 && b44.stepPhases == 147 && b44.stepRemainder == 0)
        #expect(abs(b44.gainBound - 2.35216) < 1e-4)
        for b in [b48, b44] {
            for ph in 0..<b.phaseCount {
                let dc = b.coefficients[ph * b.length..<(ph + 1) * b.length].reduce(0, +)
                #expect(abs(dc - 1) < 1.1e-5)
            }
        }
        let b22 = TruePeakFilterBank(sampleRate: 22050)
        #expect(b22.phaseCount == 1024 && b22.stepRemainder != 0)
    }

    /// A 12 kHz sine at 48 kHz sampled 45° off its crests: the samples are
    /// 3 dB under the waveform's peak, which the true peak finds. (Faded in:
    /// libswresample's mirrored head would make an abrupt start overshoot.)
    @Test func truePeakFindsTheInterSamplePeak() {
        var s = Self.sine(12000, amplitude: 0.5, seconds: 1, rate: 48000, phase: .pi / 4)
        for i in 0..<960 { s[i] *= Float(0.5 - 0.5 * cos(Double.pi * Double(i) / 960)) }
        let m = Self.measure([s], rate: 48000).figures
        #expect(abs(m.samplePeakDBFS - (20 * log10(0.5) - 3.01)) < 0.01)
        #expect(abs(m.truePeakDBTP - 20 * log10(0.5)) < 0.05, "\(m)")
    }

    /// Stretches that cannot reach the peak are stepped over, and the peak
    /// (never under the sample peak) is the one every output of the filter
    /// (in doubles) gives: at 48 kHz (8 positions at a time), 44.1 kHz and
    /// 22.05 kHz (1024 phases, a fractional step).
    @Test(arguments: [48000, 44100, 22050])
    func skippingIsExact(_ rate: Int) {
        var x = Self.sine(5000, amplitude: 0.9, seconds: 0.5, rate: rate, phase: 0.3)
        x += Self.sine(7000, amplitude: 0.05, seconds: 2, rate: rate)
        x += Self.sine(9000, amplitude: 0.95, seconds: 0.2, rate: rate, phase: 1.1)
        var meter = TruePeakMeter(sampleRate: rate, channels: 1)
        var at = 0
        while at < x.count {
            let n = min(1000, x.count - at)
            x.withUnsafeBufferPointer { b in [b.baseAddress! + at].withUnsafeBufferPointer { meter.add($0, count: n) } }
            at += n
        }
        #expect(meter.skipped > meter.filtered)
        let reference = max(Self.referencePeak(x, bank: meter.bank), Double(x.map(abs).max()!))
        #expect(abs(Double(max(meter.peak, meter.samplePeak)) - reference) < 1e-5)
    }

    /// Every output libswresample would give (mirrored head, no flush), in doubles.
    static func referencePeak(_ x: [Float], bank b: TruePeakFilterBank) -> Double {
        let l = b.length
        let padded = (0..<l).map { Double(x[l - $0]) } + x.map(Double.init)
        var window = b.firstWindow, phase = 0, fraction = 0, top = 0.0
        while window + l <= padded.count {
            var v = 0.0
            for i in 0..<l { v += padded[window + i] * b.coefficients[phase * l + i] }
            top = max(top, abs(v))
            fraction += b.stepRemainder
            phase += b.stepPhases
            if fraction >= b.sourceIncrement { fraction -= b.sourceIncrement; phase += 1 }
            window += phase / b.phaseCount
            phase %= b.phaseCount
        }
        return top
    }
}
