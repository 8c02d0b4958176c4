/// Which packets of one track a keyframe-mode cut keeps, in the track's
/// time base, fed in decode order.
///
/// Video starts at the first keyframe offered (the reader seeks so it is at
/// or before `from`); frames shown before that keyframe (an open GOP's
/// leading frames, which refer to the GOP before) are dropped. At the end,
/// a frame shown at or after `to` is held back: it is kept only when a
/// frame shown before `to` follows it in decode order (it is a reference
/// for that frame), and the track ends at the next keyframe shown at or
/// after `to`. Audio and subtitles keep every packet that overlaps
/// `[from - preroll, to)`.
///
/// A split's parts must together hold every packet once: there, video
/// keeps an open GOP's leading frames (they follow the keyframe in decode
/// order) and other tracks keep the packets that start in `[from, to)`.
public struct CutSelection: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case video
        /// Video of a split part: every packet from the first keyframe to
        /// the keyframe at `to`, in decode order.
        case videoPart
        /// `preroll`: ticks before `from` still kept (AAC's overlap: the frame
        /// before the first one heard, trimmed by an edit list).
        case timed(preroll: Int64)
        /// Packets that start in `[from, to)` (a split part).
        case starting
        /// Every packet, timed or not (cover art: a picture every part shows).
        case always
    }

    public enum Decision: Sendable, Equatable {
        case drop
        /// Write it, after the packets held so far (`releaseHeld` of them).
        case keep(releaseHeld: Int)
        /// Keep it back until a later packet shows whether it is needed.
        case hold
        /// Nothing more of this track is kept; held packets are dropped.
        case end
    }

    public let kind: Kind
    public let from: Int64
    public let to: Int64?
    /// The first kept keyframe's PTS (video).
    public private(set) var startPTS: Int64?
    public private(set) var held = 0
    public private(set) var ended = false
    /// Frames held past `to` before the track is ended regardless.
    public static let holdLimit = 64

    public init(_ kind: Kind, from: Int64, to: Int64?) {
        self.kind = kind
        self.from = from
        self.to = to
    }

    /// The decision for the next packet in decode order.
    public mutating func offer(pts: Int64?, duration: Int64, keyframe: Bool) -> Decision {
        guard !ended else { return .end }
        switch kind {
        case .always:
            return .keep(releaseHeld: 0)
        case .timed(let preroll):
            guard let pts else { return .drop }
            if let to, pts >= to { return stop() }
            return pts.plus(max(duration, 1)) > from.minus(preroll) ? .keep(releaseHeld: 0) : .drop
        case .starting:
            guard let pts else { return .drop }
            if let to, pts >= to { return stop() }
            return pts >= from ? .keep(releaseHeld: 0) : .drop
        case .videoPart:
            guard startPTS != nil else {
                guard keyframe, let pts, pts >= from else { return .drop }
                startPTS = pts
                return .keep(releaseHeld: 0)
            }
            if keyframe, let to, let pts, pts >= to { return stop() }
            return .keep(releaseHeld: 0)
        case .video:
            guard let start = startPTS else {
                guard keyframe, let pts else { return .drop }
                startPTS = pts
                return .keep(releaseHeld: 0)
            }
            guard let pts else { return .drop }
            if pts < start { return .drop }
            if let to, pts >= to {
                if keyframe || held >= Self.holdLimit { return stop() }
                held += 1
                return .hold
            }
            defer { held = 0 }
            return .keep(releaseHeld: held)
        }
    }

    private mutating func stop() -> Decision {
        ended = true
        held = 0
        return .end
    }
}

/// The part of the input's timeline an output keeps, for its chapters: a
/// chapter that overlaps the window is clipped to it and moved so the
/// window starts at 0; one outside it is left out.
public struct ChapterWindow: Sendable, Equatable, Hashable {
    public var start: Timestamp
    public var end: Timestamp?

    public init(start: Timestamp, end: Timestamp?) {
        self.start = start
        self.end = end
    }

    /// A chapter `[start, end)` in `timeBase`, clipped and moved; nil when
    /// it lies outside the window.
    public func clip(start s: Int64, end e: Int64, timeBase: Rational) -> (start: Int64, end: Int64)? {
        guard let ws = start.rescaled(to: timeBase, rounding: .nearest)?.value else { return nil }
        let we = end.flatMap { $0.rescaled(to: timeBase, rounding: .nearest)?.value }
        let lo = max(s, ws), hi = we.map { min(e, $0) } ?? e
        guard hi > lo else { return nil }
        return (lo.minus(ws), hi.minus(ws))
    }
}
