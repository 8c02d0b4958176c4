#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A look-ahead true-peak limiter: a gain, then every sample times one
/// gain curve shared by the channels, so that the signal's true peak (its
/// 4× interpolation as `TruePeakMeter` finds it) stays at or under a ceiling.
///
/// The envelope is the meter's own filter (`TruePeakMeter`, run over short
/// stretches): each stretch of outputs over the ceiling asks for the gain
/// that brings it down, on every sample the filter reads for those outputs
/// (`guardBand` either side). The gain curve is the lowest of those asks
/// over the next `attack` samples, let back up towards 1 by `release`, then
/// averaged over `attack` samples: a ramp down of `attack` samples that
/// ends on the peak, and every sample under a peak's filter at or under its
/// ask. A sample no ask reaches keeps a gain of exactly 1: a signal under
/// the ceiling comes out as it went in, times the gain.
///
/// The samples come out `latency` samples after they went in (`take`); after
/// `finish`, every one of them, so the output is as long as the input.
public struct TruePeakLimiter: Sendable {
    public let sampleRate: Int
    public let channelCount: Int
    /// The gain before limiting (linear).
    public let gain: Double
    /// How far under the ceiling the limiter aims (dB): under a peak's
    /// filter the gain is at or under the peak's ask but not constant (the
    /// ramp, an earlier peak's release), which can lift an interpolated
    /// value by a few thousandths of a dB.
    public static let allowance = 0.01
    /// The ceiling aimed at (linear): the true-peak ceiling less `allowance`.
    public let ceiling: Double
    /// Samples the gain takes to come down to a peak's.
    public let attack: Int
    /// Samples either side of an output its filter reads.
    public let guardBand: Int
    /// How much of the way back to 1 the gain goes each sample.
    private let releaseStep: Double
    private var detector: TruePeakMeter
    /// The input not yet handed out, channel by channel, from `base`.
    private var held: [[Float]]
    private var base = 0
    private var received = 0
    /// Each position's ask (1: none), from `asksBase`.
    private var asks: [Double] = []
    private var asksBase = 0
    /// The last position with an ask under 1 (before the first sample: none).
    private var lastAsk = Int.min
    /// Positions (their asks rising) whose lowest is the next `attack`'s lowest.
    private var window: [Int] = []
    private var windowHead = 0
    /// The next position whose gain is worked out: from `attack - 1` before
    /// the first sample, so the gain is down at a peak on the very first.
    private var next: Int
    private var released = 1.0
    /// The last `attack` released values (`next`'s slot: `next` modulo
    /// `attack`, kept as it steps: a division a sample cost more than the
    /// rest of the step), their sum and how many are under 1.
    private var recent: [Double]
    private var slot: Int
    private var recentSum: Double
    private var recentUnder = 0
    /// Gains of `base..<next`.
    private var gains: [Double] = []
    private var finished = false

    /// The lowest gain applied (over the gain before limiting), and how many samples it was under 1 for.
    public private(set) var lowestGain = 1.0
    public private(set) var limitedSamples = 0

    /// `gainDB`: the gain before limiting; `ceilingDBTP`: the true peak
    /// the output stays at or under; `attack` and `release` in seconds.
    public init(sampleRate: Int, channels: Int, gainDB: Double, ceilingDBTP: Double,
                attack: Double = 0.005, release: Double = 0.08) {
        self.sampleRate = sampleRate
        channelCount = channels
        gain = pow(10, gainDB / 20)
        ceiling = pow(10, (ceilingDBTP - Self.allowance) / 20)
        detector = TruePeakMeter(sampleRate: sampleRate, channels: channels, stretch: 48)
        self.attack = max(Int(attack * Double(sampleRate)), 1)
        guardBand = detector.bank.length / 2 + 1
        releaseStep = 1 - exp(-1 / max(release * Double(sampleRate), 1))
        held = Array(repeating: [], count: channels)
        recent = Array(repeating: 1, count: self.attack)
        recentSum = Double(self.attack)
        next = 1 - self.attack
        slot = Self.slot(of: next, attack: self.attack)
    }

    private static func slot(of position: Int, attack: Int) -> Int { (position % attack + attack) % attack }

    /// Samples between going in and coming out, at most: the filter's
    /// length (the envelope waits for it), its guard band and the attack.
    public var latency: Int { detector.bank.length * 2 + guardBand + attack }

    /// How far under the input the loudest peak was brought, dB (0: not limited).
    public var largestReductionDB: Double { -20 * log10(lowestGain) }

    /// Samples ready to `take`.
    public var available: Int { max(next - base, 0) }

    /// Adds `count` samples of every channel (`channels[c]` is channel c's).
    public mutating func add(_ channels: UnsafeBufferPointer<UnsafePointer<Float>>, count: Int) {
        precondition(channels.count == channelCount && !finished)
        for c in 0..<channelCount { held[c].append(contentsOf: UnsafeBufferPointer(start: channels[c], count: count)) }
        received += count
        detect(channels, count: count)
        var scanned = Int.max
        for c in 0..<channelCount { scanned = min(scanned, detector.scanned(channel: c)) }
        advance(until: scanned - guardBand - attack + 1)
    }

    /// No more input: the filter's tail is run on silence, and every sample is ready.
    public mutating func finish() {
        guard !finished else { return }
        let zeros = [Float](repeating: 0, count: 2 * detector.bank.length + 2)
        zeros.withUnsafeBufferPointer { z in
            let planes = [UnsafePointer<Float>](repeating: z.baseAddress!, count: channelCount)
            planes.withUnsafeBufferPointer { detect($0, count: z.count) }
        }
        finished = true
        advance(until: received)
    }

    /// Hands out the next `count` samples (at most `available`) of every
    /// channel into `out`, limited.
    public mutating func take(_ count: Int, into out: UnsafeBufferPointer<UnsafeMutablePointer<Float>>) {
        precondition(count <= available && out.count == channelCount)
        for c in 0..<channelCount {
            held[c].withUnsafeBufferPointer { x in
                for i in 0..<count {
                    let g = gains[i]
                    out[c][i] = g == 1 ? Float(Double(x[i]) * gain) : Float(Double(x[i]) * (gain * g))
                }
            }
            held[c].removeFirst(count)
        }
        gains.removeFirst(count)
        base += count
    }

    /// The envelope of new input: each stretch over the ceiling asks for its gain.
    private mutating func detect(_ channels: UnsafeBufferPointer<UnsafePointer<Float>>, count: Int) {
        var over: [(Int, Int, Float)] = []
        let level = Float(ceiling / gain)
        for c in 0..<channelCount {
            detector.add(channel: c, channels[c], count: count, level: level) { over.append(($0, $1, $2)) }
        }
        for (from, to, top) in over {
            let ask = ceiling / (gain * Double(top))
            let lo = max(from - guardBand, asksBase), hi = to + guardBand
            if hi - asksBase > asks.count { asks.append(contentsOf: repeatElement(1, count: hi - asksBase - asks.count)) }
            guard lo < hi else { continue }
            for i in (lo - asksBase)..<(hi - asksBase) { asks[i] = min(asks[i], ask) }
            lastAsk = max(lastAsk, hi - 1)
        }
    }

    private func ask(_ position: Int) -> Double {
        let i = position - asksBase
        return i >= 0 && i < asks.count ? asks[i] : 1
    }

    /// Works out the gains of positions before `end` (at most the input's).
    private mutating func advance(until end: Int) {
        let end = min(end, received)
        // Nothing asked from here on and the gain back at 1: it stays 1.
        if next >= 0 && next < end && lastAsk < next && released == 1 && recentUnder == 0 {
            gains.append(contentsOf: repeatElement(1, count: end - next))
            next = end
            slot = Self.slot(of: next, attack: attack)
            recentSum = Double(attack)
            window = [next + attack - 2]
            windowHead = 0
        }
        while next < end {
            // The lowest ask of next..<next + attack, by a queue of rising asks.
            let entering = next + attack - 1
            let a = ask(entering)
            while window.count > windowHead && ask(window[window.count - 1]) >= a { window.removeLast() }
            window.append(entering)
            while window[windowHead] < next { windowHead += 1 }
            let lowest = ask(window[windowHead])
            released = min(lowest, released + (1 - released) * releaseStep)
            if released > 1 - 1e-9 { released = 1 }
            if recent[slot] < 1 { recentUnder -= 1 }
            if released < 1 { recentUnder += 1 }
            recentSum += released - recent[slot]
            recent[slot] = released
            let g = recentUnder == 0 ? 1 : min(recentSum / Double(attack), 1)
            next += 1
            slot = slot == attack - 1 ? 0 : slot + 1
            // Before the first sample: only the ramp down is worked out.
            guard next > 0 else { continue }
            if g < 1 {
                limitedSamples += 1
                lowestGain = min(lowestGain, g)
            }
            gains.append(g)
        }
        if window.count == windowHead || windowHead > 4096 {
            window.removeFirst(windowHead)
            windowHead = 0
        }
        // Asks before the queue's first position are not read again.
        let keep = min(next, window.count > windowHead ? window[windowHead] : next)
        if keep - asksBase > 65536 {
            asks.removeFirst(min(keep - asksBase, asks.count))
            asksBase = keep
        }
    }
}
