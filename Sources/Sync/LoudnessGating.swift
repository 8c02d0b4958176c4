#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// EBU R128's integration of the K-weighted power, as FFmpeg's `ebur128`
/// does it: every 100 ms (a tenth of the rate, in samples) the mean power
/// of the last 400 ms (momentary, for the integrated loudness) and of the
/// last 3 s (short-term, for the loudness range), once that much has come.
/// Blocks at or above -70 LUFS go into a histogram of 0.01 LU bins; the
/// relative gate (-10 LU for I, -20 LU for LRA) is set by the mean power of
/// those blocks, and what passes it is read back from the bins — so the
/// figures are FFmpeg's to its own rounding, not only to the standard's.
public struct LoudnessGating: Sendable {
    /// The last 3 s of powers; the momentary window is its last 400 ms.
    private var ring: [Double]
    private let momentaryLength: Int
    private var position = 0
    private var momentaryPosition: Int
    private var momentarySum = 0.0, shortTermSum = 0.0
    private var seen = 0
    private var integrated = LoudnessHistogram()
    private var range = LoudnessHistogram()
    private let hop: Int
    private var sinceBlock = 0

    public init(sampleRate: Int) {
        momentaryLength = max(sampleRate * 4 / 10, 1)
        ring = Array(repeating: 0, count: max(sampleRate * 3, momentaryLength))
        momentaryPosition = ring.count - momentaryLength
        hop = max(sampleRate / 10, 1)
    }

    /// Adds samples' channel-weighted K-weighted powers, in order.
    public mutating func add(_ power: UnsafePointer<Double>, count: Int) {
        var n = 0
        while n < count {
            let run = min(count - n, hop - sinceBlock)
            slide(power + n, count: run)
            n += run
            sinceBlock += run
            if sinceBlock == hop {
                sinceBlock = 0
                endBlock()
            }
        }
    }

    /// FFmpeg's running sums: each window's sum plus the new power less the
    /// one that leaves it (the slot `length` samples back, zero at first);
    /// the difference first, so each sum waits on one addition a sample.
    private mutating func slide(_ power: UnsafePointer<Double>, count: Int) {
        let length = ring.count
        var p = position, q = momentaryPosition, m = momentarySum, s = shortTermSum
        ring.withUnsafeMutableBufferPointer { r in
            for i in 0..<count {
                let v = power[i]
                m += v - r[q]
                s += v - r[p]
                r[p] = v
                p += 1
                if p == length { p = 0 }
                q += 1
                if q == length { q = 0 }
            }
        }
        (position, momentaryPosition, momentarySum, shortTermSum) = (p, q, m, s)
        seen += count
    }

    /// The mean over a window; FFmpeg's 1e-12 floor (-120.7 LUFS) before it is full.
    private func mean(_ sum: Double, length: Int) -> Double {
        seen >= length ? (1e-12 + sum) / Double(length) : 1e-12
    }

    private mutating func endBlock() {
        let m = mean(momentarySum, length: momentaryLength), s = mean(shortTermSum, length: ring.count)
        let lm = LoudnessHistogram.loudness(m), ls = LoudnessHistogram.loudness(s)
        if lm >= LoudnessHistogram.absoluteGate { integrated.add(power: m, loudness: lm) }
        if ls >= LoudnessHistogram.absoluteGate { range.add(power: s, loudness: ls) }
    }

    /// The integrated loudness, LUFS: -70 when no block passed the absolute gate.
    public var integratedLUFS: Double { integrated.integrated(relativeGate: -10) ?? LoudnessHistogram.absoluteGate }

    /// The loudness range, LU: 0 when no short-term block passed the absolute gate.
    public var rangeLU: Double { range.range(relativeGate: -20) ?? 0 }
}

/// Blocks' loudnesses in 0.01 LU bins from -70 to +10 LUFS, with the mean
/// power of every block added (FFmpeg's `ebur128` histogram).
public struct LoudnessHistogram: Sendable {
    public static let absoluteGate = -70.0
    static let grain = 100.0
    static let size = 80 * 100 + 1
    private var counts = [Int](repeating: 0, count: size)
    private var powerSum = 0.0
    private var blocks = 0

    public init() {}

    public static func loudness(_ power: Double) -> Double { -0.691 + 10 * log10(power) }
    static func power(_ loudness: Double) -> Double { pow(10, (loudness + 0.691) / 10) }
    static func bin(_ loudness: Double) -> Int { min(max(Int((loudness - absoluteGate) * grain), 0), size - 1) }
    static func binLoudness(_ bin: Int) -> Double { Double(bin) / grain + absoluteGate }

    /// Adds a block that passed the absolute gate.
    public mutating func add(power: Double, loudness: Double) {
        counts[Self.bin(loudness)] += 1
        powerSum += power
        blocks += 1
    }

    /// The bin of the relative gate: `gate` LU under the blocks' mean power.
    private func gateBin(_ gate: Double) -> Int? {
        guard blocks > 0 else { return nil }
        var mean = powerSum / Double(blocks)
        if mean == 0 { mean = 1e-12 }
        return Self.bin(Self.loudness(mean) + gate)
    }

    /// The mean power of the bins at or over the relative gate, as loudness.
    public func integrated(relativeGate gate: Double) -> Double? {
        guard let from = gateBin(gate) else { return nil }
        var n = 0, energy = 0.0
        for i in from..<Self.size where counts[i] > 0 {
            n += counts[i]
            energy += Double(counts[i]) * Self.power(Self.binLoudness(i))
        }
        return n > 0 ? Self.loudness(energy / Double(n)) : nil
    }

    /// EBU Tech 3342: from the 10th to the 95th percentile of the bins at or
    /// over the relative gate, as FFmpeg counts them.
    public func range(relativeGate gate: Double) -> Double? {
        guard let from = gateBin(gate) else { return nil }
        let total = counts[from...].reduce(0, +)
        guard total > 0 else { return nil }
        var low = Self.binLoudness(from), high = low
        var n = 0
        let lowCount = Int(10 * Double(total) / 100 + 0.5)
        for i in from..<Self.size {
            n += counts[i]
            if n >= lowCount { low = Self.binLoudness(i); break }
        }
        n = total
        let highCount = Int(95 * Double(total) / 100 + 0.5)
        for i in stride(from: Self.size - 1, through: 0, by: -1) {
            n -= counts[i]
            if n < highCount { high = Self.binLoudness(i); break }
        }
        return high - low
    }
}
