/// The strongest peak of a cross-correlation, refined between samples, and
/// how clearly it stands out.
public struct CorrelationPeak: Hashable, Sendable {
    /// Index of the largest |value| in the correlation.
    public var index: Int
    /// `index` plus the sub-sample correction from a parabola through the
    /// peak and its two neighbours.
    public var position: Double
    /// The correlation at `index` (its sign says whether one recording is inverted).
    public var value: Float
    /// |peak| divided by the largest |value| farther than the exclusion
    /// zone from it (the peak-to-sidelobe ratio): about 1 when nothing
    /// matches, large for a clear match; infinite when nothing else is nonzero.
    public var ratio: Double

    public init(index: Int, position: Double, value: Float, ratio: Double) {
        self.index = index
        self.position = position
        self.value = value
        self.ratio = ratio
    }

    /// The vertex of the parabola through `(-1, left)`, `(0, center)`,
    /// `(1, right)`, as an offset from the center in −0.5…0.5 (0 when the
    /// three points do not curve downward around the center).
    public static func parabolicOffset(_ left: Double, _ center: Double, _ right: Double) -> Double {
        let curvature = left - 2 * center + right
        guard curvature < 0 else { return 0 }
        let d = 0.5 * (left - right) / curvature
        return min(max(d, -0.5), 0.5)
    }

    /// The largest |c[k]| for `k` in `search`, refined with its neighbours,
    /// against the largest |c[k]| for `k` in `sidelobes` more than
    /// `exclusion` samples away. `nil` when `search` is empty or all zero.
    public static func find(in c: [Float], search: Range<Int>, sidelobes: Range<Int>, exclusion: Int) -> CorrelationPeak? {
        let search = search.clamped(to: 0..<c.count)
        let sidelobes = sidelobes.clamped(to: 0..<c.count)
        return c.withUnsafeBufferPointer { p -> CorrelationPeak? in
            var best = -1
            var bestValue: Float = 0
            for k in search where abs(p[k]) > bestValue {
                bestValue = abs(p[k])
                best = k
            }
            guard best >= 0, bestValue > 0 else { return nil }
            var second: Float = 0
            for k in sidelobes where abs(k - best) > exclusion && abs(p[k]) > second { second = abs(p[k]) }
            var position = Double(best)
            if best > 0 && best + 1 < p.count {
                position += parabolicOffset(Double(abs(p[best - 1])), Double(bestValue), Double(abs(p[best + 1])))
            }
            let ratio = second > 0 ? Double(bestValue) / Double(second) : .infinity
            return CorrelationPeak(index: best, position: position, value: p[best], ratio: ratio)
        }
    }

    /// The two largest separated peaks of `c` over `range`: the best, and the
    /// best more than `exclusion` away from it.
    public static func topTwo(in c: [Float], range: Range<Int>, exclusion: Int) -> [(position: Double, magnitude: Float)] {
        guard let first = find(in: c, search: range, sidelobes: range, exclusion: exclusion) else { return [] }
        var out = [(first.position, abs(first.value))]
        let range = range.clamped(to: 0..<c.count)
        var best = -1
        var value: Float = 0
        c.withUnsafeBufferPointer { p in
            for k in range where abs(k - first.index) > exclusion && abs(p[k]) > value {
                value = abs(p[k])
                best = k
            }
        }
        if best >= 0 {
            var position = Double(best)
            if best > 0 && best + 1 < c.count {
                position += parabolicOffset(Double(abs(c[best - 1])), Double(value), Double(abs(c[best + 1])))
            }
            out.append((position, value))
        }
        return out
    }
}

/// The best peaks seen over many correlation blocks (a template slid along
/// a whole recording), kept apart by an exclusion zone, so the best one's
/// peak-to-sidelobe ratio is known at the end.
public struct PeakTracker: Sendable {
    public struct Candidate: Hashable, Sendable {
        /// Position on the searched recording's timeline (samples).
        public var position: Double
        public var magnitude: Float
    }

    public let exclusion: Double
    public private(set) var candidates: [Candidate] = []
    private let keep = 4

    public init(exclusion: Double) { self.exclusion = exclusion }

    public mutating func offer(position: Double, magnitude: Float) {
        guard magnitude > 0 else { return }
        if let i = candidates.firstIndex(where: { abs($0.position - position) <= exclusion }) {
            if magnitude > candidates[i].magnitude { candidates[i] = Candidate(position: position, magnitude: magnitude) }
        } else {
            candidates.append(Candidate(position: position, magnitude: magnitude))
        }
        candidates.sort { $0.magnitude > $1.magnitude }
        if candidates.count > keep { candidates.removeLast(candidates.count - keep) }
    }

    public var best: Candidate? { candidates.first }

    /// Best over runner-up; infinite with a single candidate, 0 with none.
    public var ratio: Double {
        guard let b = candidates.first else { return 0 }
        guard candidates.count > 1, candidates[1].magnitude > 0 else { return .infinity }
        return Double(b.magnitude) / Double(candidates[1].magnitude)
    }
}
