/// How a cut's audio starts in a container without edit lists (Matroska,
/// MPEG-TS), where the first packet cannot be trimmed to `from`: the frames
/// around `from` are decoded and encoded again on the source's frame grid
/// — silent before `from`, the source's samples from it — and the source's
/// packets are copied again from a frame boundary on.
///
/// A codec whose frames overlap (AAC: each frame's transform spans two
/// frame lengths, the second half summed with the next frame's first) needs
/// the frame before the first one heard: the run starts one frame before
/// the frame holding `from`, so the frame a cold decoder cannot rebuild is
/// silent, and the packet before it is decoded (not written) so the frame
/// holding `from` decodes right. The run ends `rejoinFrames` frames after
/// the one holding `from`; the source's packets from there are copied, and
/// `lookahead` of them are decoded too so the encoder's last frames see
/// what follows. Frames that stand alone (PCM) need none of that: the run is
/// the packet holding `from`, from `from`.
///
/// Packets are offered in decode order, timestamps in the stream's ticks.
public struct AudioHeadPlan: Sendable, Equatable {
    public enum Action: Sendable, Equatable {
        /// Before the run: not needed.
        case drop
        /// The last packet before the one holding `from` so far: kept back
        /// (replacing the one kept before) to be decoded first.
        case preroll
        /// Decoded for the run (the first such: decode the pre-roll before it).
        case decode
        /// Decoded for the encoder's look-ahead, and written after the run.
        case decodeAndCopy
        /// Copied as it is (the run, if any, is over).
        case copy
    }

    public let from: Int64
    public let overlapping: Bool
    public let rejoinFrames: Int
    public let lookahead: Int
    /// Where the re-encoded packets start (ticks): one frame before the
    /// frame holding `from` (overlapping frames), or `from`. Nil until the
    /// packet holding `from` is seen, and when nothing needs re-encoding.
    public private(set) var runStart: Int64?
    /// The first copied packet's PTS: re-encoded packets end before it.
    /// Nil while the run goes on (and when the audio ends inside it).
    public private(set) var rejoin: Int64?
    /// Whether the run has begun and every packet from now on is copied.
    public private(set) var copying = false
    private var previous: Int64?
    /// Packets since the one holding `from` (-1 before it).
    private var after = -1

    public init(from: Int64, overlapping: Bool, rejoinFrames: Int = 2, lookahead: Int = 3) {
        self.from = from
        self.overlapping = overlapping
        self.rejoinFrames = overlapping ? max(rejoinFrames, 1) : 1
        self.lookahead = overlapping ? max(lookahead, 0) : 0
    }

    /// Whether the packets offered so far begin a run (then the re-encoded
    /// packets must be written before the next `.copy`).
    public var inRun: Bool { runStart != nil && !copying }

    public mutating func offer(pts: Int64, duration: Int64) -> Action {
        if copying { return .copy }
        if after < 0 {
            if pts.plus(max(duration, 1)) <= from {
                previous = pts
                return overlapping ? .preroll : .drop
            }
            // The packet holding `from`, or the first after it.
            if pts >= from && (!overlapping || previous == nil) {
                // Starts on a frame boundary with nothing before it to decode
                // wrong (or frames that stand alone): copy as it is.
                copying = true
                return .copy
            }
            after = 0
            runStart = overlapping ? (previous ?? pts.minus(max(duration, 1))) : from
            return .decode
        }
        after += 1
        if after < rejoinFrames { return .decode }
        if after == rejoinFrames { rejoin = pts }
        if after < rejoinFrames + lookahead { return .decodeAndCopy }
        copying = true
        return .copy
    }

    /// Whether a re-encoded packet at `pts` (same ticks) is written: inside
    /// `[runStart, rejoin)`, the rejoin point by the nearest frame boundary
    /// (`frame` ticks: timestamps rounded to a coarse time base still match).
    public func keepsEncoded(pts: Int64, frame: Int64, to: Int64?) -> Bool {
        guard let runStart, pts >= runStart.minus(frame / 2) else { return false }
        if let rejoin, pts > rejoin.minus(frame / 2) { return false }
        if let to, pts >= to { return false }
        return true
    }
}
