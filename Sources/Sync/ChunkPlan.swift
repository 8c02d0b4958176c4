/// How one recording's video is cut into chunks encoded apart (on several
/// cores or machines) and joined again: each chunk is a range of
/// presentation times on the video's own time base, starting on a source
/// keyframe, the ranges end to end so that every frame falls in exactly one.
/// A chunk's encoder gets the frames shown in its range and nothing else; it
/// decodes from the keyframe at its start and on past the next chunk's
/// start until every frame of its range has been shown (the leading frames
/// of an open GOP come after their keyframe in decode order but belong to
/// the range before it).
///
/// The plan depends only on the keyframes' times and the count asked for,
/// so every machine that computes it from the same file gets the same one.
public struct ChunkPlan: Hashable, Sendable, Codable {
    /// The chunks' starts after the first (the first has no lower bound):
    /// keyframe presentation times, increasing.
    public let boundaries: [Int64]

    /// One chunk: the presentation times `lower ..< upper` (`nil`: unbounded).
    public struct Chunk: Hashable, Sendable, Codable {
        /// 1-based, as users count them (`--chunk 2/8`).
        public let number: Int
        public let lower: Int64?
        public let upper: Int64?

        public init(number: Int, lower: Int64?, upper: Int64?) {
            self.number = number
            self.lower = lower
            self.upper = upper
        }

        /// Whether a frame shown at `pts` is this chunk's.
        public func contains(_ pts: Int64) -> Bool {
            (lower.map { pts >= $0 } ?? true) && (upper.map { pts < $0 } ?? true)
        }

        /// Whether a frame shown at `pts` comes after this chunk (its
        /// encoder has every frame once the decoder shows one such).
        public func isPast(_ pts: Int64) -> Bool { upper.map { pts >= $0 } ?? false }
    }

    public var count: Int { boundaries.count + 1 }

    public var chunks: [Chunk] {
        (0..<count).map { chunk($0 + 1) }
    }

    /// Chunk `number` (1-based).
    public func chunk(_ number: Int) -> Chunk {
        precondition(number >= 1 && number <= count, "chunk \(number) of \(count)")
        return Chunk(number: number, lower: number == 1 ? nil : boundaries[number - 2],
                     upper: number == count ? nil : boundaries[number - 1])
    }

    public init(boundaries: [Int64]) {
        self.boundaries = boundaries
    }

    /// `count` chunks of about equal duration between `start` and `end`
    /// (the video's first and last presentation times): each boundary is the
    /// keyframe nearest to its share of the duration, after the one before
    /// and after `start`. With too few keyframes there are fewer chunks
    /// (never an empty one); a single chunk has no boundary.
    public init(keyframes: [Int64], start: Int64, end: Int64, count: Int) {
        let keys = Array(Set(keyframes.filter { $0 > start && $0 < end })).sorted()
        var boundaries: [Int64] = []
        guard count > 1, !keys.isEmpty, end > start else {
            self.init(boundaries: [])
            return
        }
        let span = Double(end) - Double(start)
        var from = 0
        for k in 1..<count {
            let target = Double(start) + span * Double(k) / Double(count)
            // The keyframes still free: after the last boundary, leaving one
            // for each boundary still to come where possible.
            let remaining = count - 1 - k
            let last = keys.count - 1 - min(remaining, max(keys.count - 1 - from, 0))
            guard from < keys.count, from <= last else { break }
            var best = from
            for i in from...last where abs(Double(keys[i]) - target) < abs(Double(keys[best]) - target) {
                best = i
            }
            boundaries.append(keys[best])
            from = best + 1
        }
        self.init(boundaries: boundaries)
    }
}
