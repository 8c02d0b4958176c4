import ISOBMFF
import Media

/// The index-less rebuild's walk through media data on its own, with no
/// file to write: a reference's plan made once (which tracks, how each
/// sample is found), then any bytes walked as a recording's whose index is
/// lost. The fuzz target runs it on every kind of bytes.
public final class RebuildScanner {
    private let plan: ReferencePlan

    /// What one walk found: the samples of each rebuilt track (in the
    /// reference's stream order), the stretches left out, the bytes after
    /// the last sample.
    public struct Result: Sendable {
        public var samples: [Int]
        public var bytes: Int
        public var gaps: Int
        public var ambiguous: Int
        public var unplacedBytes: Int
    }

    /// The plan for `reference`'s tracks written into `container`; throws
    /// as `repair` does for a reference it cannot rebuild with.
    public init(reference: InputFile, container: Container) throws(MediaError) {
        plan = try ReferencePlan(reference, container: container)
    }

    /// Walks `bytes` (a whole file: its top-level boxes, its media data).
    public func scan(_ bytes: UnsafeRawBufferPointer, cancellation: Cancellation = Cancellation()) throws(MediaError) -> Result {
        let scan = try MediaDataScan(bytes, boxes: TopLevelBoxes(bytes), tracks: plan.tracks, cancellation: cancellation)
        var found = [Int](repeating: 0, count: plan.kept.count)
        var total = 0
        for s in scan.samples {
            // Every sample lies within the bytes walked, as the rebuild copies it.
            precondition(s.offset >= 0 && s.size > 0 && s.offset + s.size <= bytes.count, "sample outside the media data")
            found[s.track] += 1
            total += s.size
        }
        return Result(samples: found, bytes: total, gaps: scan.gaps.count, ambiguous: scan.ambiguous.count,
                      unplacedBytes: scan.unplacedBytes)
    }
}
