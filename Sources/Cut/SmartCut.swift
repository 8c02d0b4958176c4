import Media
import Pipeline
import Sync

/// How a cut treats the video where the range does not start (or end) on
/// a keyframe.
public enum CutMode: String, Sendable, Codable, CaseIterable {
    /// Start at the keyframe at or before `from`; every packet copied.
    case keyframe
    /// Re-encode the frames from `from` to the next clean start (and the
    /// last GOP when a frame before `to` refers to one after it); copy the rest.
    case exact
}

/// One stretch of re-encoded frames, in seconds from the recording's start.
public struct ReencodedStretchReport: Sendable, Codable, Equatable {
    public var from: Double
    public var to: Double
    public var frames: Int
}
