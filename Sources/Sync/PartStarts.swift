/// Where a split's parts start, on the input's timeline.
///
/// The recording's start, then for each point asked the last boundary (a
/// video keyframe, or in exact mode a frame) shown at or before it; points
/// that fall between the same two boundaries (or before the first) make one
/// part. Boundaries are kept exactly, on the video's clock: a part that
/// starts at a keyframe starts at that keyframe, and the part before ends
/// on the same tick. Points are compared at their own precision
/// (microseconds), so a keyframe asked for by its time as ffprobe prints it
/// is that keyframe even when its exact time lies a fraction above.
/// Without boundaries (no video) every point starts a part as asked.
public enum PartStarts {
    public static func starts(origin: Timestamp, boundaries: [Timestamp], asked: [Timestamp]) -> [Timestamp] {
        var starts = [origin]
        for point in asked.sorted() {
            let s = boundaries.isEmpty ? point
                : (boundaries.last { ($0.rescaled(to: point.timeBase) ?? $0) <= point } ?? origin)
            if s > starts.last! { starts.append(s) }
        }
        return starts
    }
}
