#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One stream's loudness measured as FFmpeg's `ebur128=peak=true+sample`
/// measures it, from its decoded samples (planar 32-bit floats): each
/// channel K-weighted (`KWeightingFilter`) into the weighted power the
/// gating integrates (`LoudnessGating`), and run through the true-peak
/// filter (`TruePeakMeter`); the sample peak from the samples themselves.
public struct LoudnessMeasurement: Sendable {
    public let sampleRate: Int
    public let channelCount: Int
    private var filters: [KWeightingFilter]
    private var gating: LoudnessGating
    private var truePeak: TruePeakMeter
    private var power: [Double]
    /// Samples per channel measured so far.
    public private(set) var samples = 0

    /// Samples per channel the power is gathered in at a time.
    static let chunk = 4096

    /// `channelWeights`: each channel's weight (`LoudnessChannelWeight`).
    public init(sampleRate: Int, channelWeights: [Double]) {
        self.sampleRate = sampleRate
        channelCount = channelWeights.count
        let k = KWeighting(sampleRate: sampleRate)
        filters = channelWeights.map { KWeightingFilter(weighting: k, channelWeight: $0) }
        gating = LoudnessGating(sampleRate: sampleRate)
        truePeak = TruePeakMeter(sampleRate: sampleRate, channels: channelWeights.count)
        power = [Double](repeating: 0, count: Self.chunk)
    }

    /// Adds `count` samples of every channel: `channels[c]` is channel c's.
    public mutating func add(_ channels: UnsafeBufferPointer<UnsafePointer<Float>>, count: Int) {
        precondition(channels.count == channelCount)
        var at = 0
        while at < count {
            let n = min(count - at, Self.chunk)
            // Moved out while filled (the filters are this value's too).
            var power = self.power
            self.power = []
            power.withUnsafeMutableBufferPointer { p in
                p.baseAddress!.update(repeating: 0, count: n)
                kWeight(channels, from: at, count: n, addingTo: p.baseAddress!)
                gating.add(UnsafePointer(p.baseAddress!), count: n)
            }
            self.power = power
            let stretch = channels.map { $0 + at }
            stretch.withUnsafeBufferPointer { truePeak.add($0, count: n) }
            at += n
        }
        samples += count
    }

    /// The weighted channels two at a time, the odd one out alone.
    private mutating func kWeight(_ channels: UnsafeBufferPointer<UnsafePointer<Float>>, from at: Int, count n: Int,
                                  addingTo power: UnsafeMutablePointer<Double>) {
        let weighted = (0..<channelCount).filter { filters[$0].channelWeight != 0 }
        var i = 0
        while i + 1 < weighted.count {
            let c = weighted[i], d = weighted[i + 1]
            var a = filters[c], b = filters[d]
            KWeightingFilter.run(&a, &b, channels[c] + at, channels[d] + at, count: n, addingTo: power)
            (filters[c], filters[d]) = (a, b)
            i += 2
        }
        if i < weighted.count { filters[weighted[i]].run(channels[weighted[i]] + at, count: n, addingTo: power) }
    }

    /// The figures so far. The true peak is never under the sample peak
    /// (the filter leaves the last half-window out, and at 44.1 kHz its
    /// 192 kHz grid meets a sample only every 147).
    public var figures: LoudnessFigures {
        let sample = truePeak.samplePeak, peak = max(truePeak.peak, sample)
        return LoudnessFigures(integratedLUFS: gating.integratedLUFS, rangeLU: gating.rangeLU,
                               truePeakDBTP: decibels(Double(peak)), samplePeakDBFS: decibels(Double(sample)))
    }
}

private func decibels(_ linear: Double) -> Double { linear > 0 ? 20 * log10(linear) : -.infinity }
