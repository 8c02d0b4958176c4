/// Where `transcode --quality` takes its sample encodes from: `count`
/// stretches of `length` spread evenly through the presentation times
/// `start ..< end` (a stretch centred on each `count`th of it), the one
/// nearest the hardest stretch moved onto it, or the whole of it when that
/// is not much longer than the samples together. The hardest stretch is the
/// one the source's own encoder spent the most bytes on: a scene change, a
/// pan, a burst of detail costs it more, wherever the even spread falls.
public struct QualitySamples: Sendable, Equatable {
    /// The stretches in time order, as chunks numbered from 1 (`nil` bounds: the whole range).
    public let windows: [ChunkPlan.Chunk]

    public static let defaultCount = 3
    /// Seconds per stretch.
    public static let defaultLength = 2.0

    /// One frame of the source as its packet gives it: when it is shown and its coded size.
    public struct Frame: Sendable, Equatable {
        public var pts: Int64
        public var bytes: Int
        public init(pts: Int64, bytes: Int) {
            self.pts = pts
            self.bytes = bytes
        }
    }

    /// `start`/`end` in `timeBase`; a range shorter than twice the samples
    /// together is one window, `lower`…`upper` as given (`nil`: unbounded).
    /// `frames` (any order; those outside the range are not looked at) find
    /// the hardest stretch; without them the stretches are evenly spread.
    public init(start: Int64, end: Int64, timeBase: Rational, lower: Int64? = nil, upper: Int64? = nil,
                frames: [Frame] = [], count: Int = defaultCount, length: Double = defaultLength) {
        let ticksPerSecond = Double(timeBase.denominator) / Double(timeBase.numerator)
        let span = end - start
        let each = Int64((length * ticksPerSecond).rounded())
        guard count > 0, each > 0, span > 2 * Int64(count) * each else {
            windows = [ChunkPlan.Chunk(number: 1, lower: lower, upper: upper)]
            return
        }
        var starts = (0..<count).map { k in start + span / Int64(2 * count) * Int64(2 * k + 1) - each / 2 }
        if let hardest = Self.busiest(frames, length: each, start: start, end: end) {
            let nearest = starts.indices.min { abs(starts[$0] - hardest) < abs(starts[$1] - hardest) }!
            starts[nearest] = hardest
            starts.sort()
        }
        windows = starts.enumerated().map { ChunkPlan.Chunk(number: $0.offset + 1, lower: $0.element, upper: $0.element + each) }
    }

    /// The start of the `length` ticks within `start ..< end`, beginning on a
    /// frame, whose frames hold the most bytes; nil without frames there.
    static func busiest(_ frames: [Frame], length: Int64, start: Int64, end: Int64) -> Int64? {
        let inside = frames.filter { $0.pts >= start && $0.pts < end }.sorted { $0.pts < $1.pts }
        var best: (start: Int64, bytes: Int)?
        var upTo = 0, held = 0
        for (i, f) in inside.enumerated() where f.pts <= end - length {
            while upTo < inside.count && inside[upTo].pts < f.pts + length {
                held += inside[upTo].bytes
                upTo += 1
            }
            if held > best?.bytes ?? -1 { best = (f.pts, held) }
            held -= inside[i].bytes
        }
        return best?.start
    }

    /// Seconds of media the windows cover (the whole range when unbounded).
    public func seconds(start: Int64, end: Int64, timeBase: Rational) -> Double {
        windows.reduce(0) { total, w in
            total + Timestamp((w.upper ?? end) - (w.lower ?? start), timeBase).seconds
        }
    }
}
