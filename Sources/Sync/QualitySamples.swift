/// Where `transcode --quality` takes its sample encodes from: `count`
/// stretches of `length` spread evenly through the presentation times
/// `start ..< end` (a stretch centred on each `count`th of it), or the
/// whole of it when that is not much longer than the samples together.
public struct QualitySamples: Sendable, Equatable {
    /// The stretches, as chunks numbered from 1 (`nil` bounds: the whole range).
    public let windows: [ChunkPlan.Chunk]

    public static let defaultCount = 3
    /// Seconds per stretch.
    public static let defaultLength = 2.0

    /// `start`/`end` in `timeBase`; a range shorter than twice the samples
    /// together is one window, `lower`…`upper` as given (`nil`: unbounded).
    public init(start: Int64, end: Int64, timeBase: Rational, lower: Int64? = nil, upper: Int64? = nil,
                count: Int = defaultCount, length: Double = defaultLength) {
        let ticksPerSecond = Double(timeBase.denominator) / Double(timeBase.numerator)
        let span = end - start
        let each = Int64((length * ticksPerSecond).rounded())
        guard count > 0, each > 0, span > 2 * Int64(count) * each else {
            windows = [ChunkPlan.Chunk(number: 1, lower: lower, upper: upper)]
            return
        }
        windows = (0..<count).map { k in
            let centre = start + span / Int64(2 * count) * Int64(2 * k + 1)
            return ChunkPlan.Chunk(number: k + 1, lower: centre - each / 2, upper: centre - each / 2 + each)
        }
    }

    /// Seconds of media the windows cover (the whole range when unbounded).
    public func seconds(start: Int64, end: Int64, timeBase: Rational) -> Double {
        windows.reduce(0) { total, w in
            total + Timestamp((w.upper ?? end) - (w.lower ?? start), timeBase).seconds
        }
    }
}
