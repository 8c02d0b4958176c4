/// Timestamps for the samples of one track recovered without an index (a
/// recording whose index was never written): the samples are known in
/// decode order only. Each lasts `duration` ticks on average — a fraction,
/// so a 29.97 fps track in a 1/600 time base does not drift — and, for
/// video with reordered frames, `displayRank[n]` is where sample `n` is
/// shown (a decoder's output order).
///
/// Sample `n` is shown at `origin + ⌊rank(n) · duration⌋` and decoded
/// `delay` samples earlier on the same grid, `delay` being the least that
/// keeps every PTS at or after its DTS: DTS strictly increase, PTS never
/// precede DTS, and a track without reordering has DTS equal to PTS.
public struct RebuiltTimeline: Sendable, Equatable {
    /// Average ticks per sample, as `numerator / denominator` (both > 0).
    public let durationNumerator: Int64
    public let durationDenominator: Int64
    /// The first shown sample's PTS, in ticks.
    public let origin: Int64
    /// For each sample in decode order, its place in display order; `nil`
    /// means display order is decode order.
    public let displayRank: [Int]?
    /// Samples by which decoding runs ahead of display.
    public let delay: Int
    /// For samples of different lengths (PCM chunks, counted in sample
    /// frames), where each starts on the grid: `starts[n]` units before
    /// sample `n`, one more entry than samples; `nil` means one unit each.
    public let starts: [Int64]?

    /// `displayRank` must be a permutation of `0..<count` (see
    /// `displayRank(outputOrder:count:)`); the duration at least one tick.
    public init?(count: Int, durationNumerator: Int64, durationDenominator: Int64, origin: Int64, displayRank: [Int]? = nil) {
        guard durationDenominator > 0, durationNumerator >= durationDenominator else { return nil }
        if let r = displayRank {
            guard r.count == count, Set(r) == Set(0..<count) else { return nil }
        }
        self.durationNumerator = durationNumerator
        self.durationDenominator = durationDenominator
        self.origin = origin
        self.displayRank = displayRank
        delay = displayRank.map { r in r.indices.map { $0 - r[$0] }.max() ?? 0 }.map { max($0, 0) } ?? 0
        starts = nil
    }

    /// Samples of `lengths` units each (PCM chunks in sample frames, all
    /// positive), decoded in order and shown as decoded: sample `n` starts
    /// at `origin + ⌊units before it · duration⌋`, so the timing follows a
    /// sample counter and never a sum of rounded durations. A duration of
    /// 0 puts every sample at `origin` (a data track whose samples all
    /// share one time, as a GoPro's `fdsc` does).
    public init?(lengths: [Int64], durationNumerator: Int64, durationDenominator: Int64, origin: Int64) {
        guard durationDenominator > 0, durationNumerator >= 0, lengths.allSatisfy({ $0 > 0 }) else { return nil }
        var starts: [Int64] = [0]
        starts.reserveCapacity(lengths.count + 1)
        for l in lengths {
            let (sum, overflow) = starts[starts.count - 1].addingReportingOverflow(l)
            guard !overflow else { return nil }
            starts.append(sum)
        }
        self.durationNumerator = durationNumerator
        self.durationDenominator = durationDenominator
        self.origin = origin
        displayRank = nil
        delay = 0
        self.starts = starts
    }

    /// The grid: the time of slot `k` (negative `k` before the origin).
    func slot(_ k: Int) -> Int64 { slot(units: Int64(k)) }

    /// The time of a point `units` after the origin.
    func slot(units k: Int64) -> Int64 {
        let ticks = k.multipliedReportingOverflow(by: durationNumerator)
        let whole = ticks.partialValue / durationDenominator
        let floored = ticks.partialValue % durationDenominator < 0 ? whole - 1 : whole
        return origin.plus(floored)
    }

    /// The timing of sample `n` (decode order).
    public func timing(_ n: Int) -> PacketTiming {
        if let starts {
            let pts = slot(units: starts[n])
            return PacketTiming(pts: pts, dts: pts, duration: slot(units: starts[n + 1]) - pts)
        }
        let shown = displayRank?[n] ?? n
        let pts = slot(shown)
        return PacketTiming(pts: pts, dts: slot(n - delay), duration: slot(shown + 1) - pts)
    }

    /// A display rank for `count` samples from the order a decoder output
    /// them (sample numbers; some may be missing where a frame could not be
    /// decoded, repeats and strays are ignored): a sample never output is
    /// shown right after the sample decoded before it.
    public static func displayRank(outputOrder: [Int], count: Int) -> [Int] {
        var seen = [Bool](repeating: false, count: count)
        var order: [Int] = []
        order.reserveCapacity(count)
        for n in outputOrder where n >= 0 && n < count && !seen[n] {
            seen[n] = true
            order.append(n)
        }
        if order.count < count {
            for n in 0..<count where !seen[n] {
                let after = n == 0 ? nil : order.firstIndex(of: n - 1)
                order.insert(n, at: after.map { $0 + 1 } ?? 0)
                seen[n] = true
            }
        }
        var rank = [Int](repeating: 0, count: count)
        for (place, n) in order.enumerated() { rank[n] = place }
        return rank
    }
}
