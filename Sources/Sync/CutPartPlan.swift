/// One kept track of a cut's input, as its part plan needs it.
public struct CutTrack: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case video
        /// `frameSamples`: samples per coded frame (0 when unknown or free).
        case audio(frameSamples: Int64, sampleRate: Int32)
        case subtitle
        /// An attached picture: one packet, kept whatever the range.
        case coverArt
        case other
    }

    public var kind: Kind
    public var timeBase: Rational

    public init(_ kind: Kind, timeBase: Rational) {
        self.kind = kind
        self.timeBase = timeBase
    }
}

/// A time of the range that a track's clock cannot hold (an absurd time
/// base, or a range beyond the clock's reach): the cut refuses the track
/// instead of reading the range as "from the start" or "to the end".
public struct CutPlanError: Error, Hashable, Sendable, CustomStringConvertible {
    public let track: Int
    public let what: String

    public init(track: Int, what: String) {
        self.track = track
        self.what = what
    }

    public var description: String { "the \(what) cannot be expressed on the stream's clock" }
}

/// What one part of a cut or split keeps of each track, in the tracks' own
/// ticks: the `CutSelection` that decides packet by packet, whether the
/// audio's first frames are re-encoded (no edit lists), the subtitle clamp
/// and the video's shown end. `start` is where the part's timeline starts
/// (the output's 0), on the input's timeline.
///
/// The range's ends: a cut's `from` rounds down and its `to` up (a packet
/// that overlaps the range is kept); a split's are keyframe times that
/// round back to the same ticks (nearest). With an edit list the output
/// shows frames up to `to`: a frame at or after it kept only as a reference
/// of frames before it is decoded but not shown (`shownEnd`), so a keyframe
/// cut lasts the range to the frame.
public struct CutPartPlan: Sendable, Equatable {
    public struct Track: Sendable, Equatable {
        public var selection: CutSelection
        /// The range's start on the track's clock (`Int64.min / 2` for
        /// "everything before": a split's first part, cover art).
        public var from: Int64
        /// The range's end on the track's clock; nil: to the end.
        public var to: Int64?
        /// Audio without an edit list: its frames around `from` re-encoded
        /// so it starts at the sample (`AudioHeadPlan`).
        public var audioHead: Bool
        /// Subtitles and data (a telemetry or timed-metadata sample): one
        /// that began before `from` starts at `from`, shortened by as much.
        public var clampsToStart: Bool
        /// Video with an edit list: frames shown at or after this tick are
        /// not shown (they are kept as references).
        public var shownEnd: Int64?

        /// A subtitle's or data sample's timing clamped to the part's start; others as they are.
        public func clamped(_ t: PacketTiming) -> PacketTiming {
            guard clampsToStart, let pts = t.pts, pts < from else { return t }
            return PacketTiming(pts: from, dts: from, duration: max(t.duration.minus(from.minus(pts)), 0))
        }
    }

    public let start: Timestamp
    /// Added to every timestamp (the part starts at 0).
    public var shift: Timestamp { Timestamp(start.value.negated, start.timeBase) }
    public let tracks: [Track]

    /// - Parameters:
    ///   - start: the part's 0 on the input's timeline.
    ///   - to: the range's end on the input's timeline; nil: to the end.
    ///   - first: a split's first part (everything before its end).
    ///   - editList: the output has edit lists (MP4/MOV, not a split).
    ///   - audioHead: re-encode the audio's first frames where there is no edit list.
    public init(start: Timestamp, to: Timestamp?, split: Bool, first: Bool, editList: Bool, audioHead: Bool,
                tracks: [CutTrack]) throws(CutPlanError) {
        self.start = start
        var planned: [Track] = []
        for (j, track) in tracks.enumerated() {
            planned.append(try Self.track(j, track, start: start, to: to, split: split, first: first, editList: editList,
                                          audioHead: audioHead))
        }
        self.tracks = planned
    }

    private static func track(_ j: Int, _ track: CutTrack, start: Timestamp, to: Timestamp?, split: Bool, first: Bool,
                              editList: Bool, audioHead: Bool) throws(CutPlanError) -> Track {
        let tb = track.timeBase
        let coverArt = track.kind == .coverArt
        let from: Int64
        if first || coverArt {
            from = Int64.min / 2
        } else {
            guard let f = start.rescaled(to: tb, rounding: split ? .nearest : .down)?.value else {
                throw CutPlanError(track: j, what: "start \(start)")
            }
            from = f
        }
        var end: Int64?
        if let to, !coverArt {
            guard let t = to.rescaled(to: tb, rounding: split ? .nearest : .up)?.value else {
                throw CutPlanError(track: j, what: "end \(to)")
            }
            end = t
        }
        var head = false
        let kind: CutSelection.Kind
        switch track.kind {
        case .coverArt:
            kind = .always
        case .video:
            kind = split ? .videoPart : .video
        case .audio(let frameSamples, let rate) where !split:
            head = !editList && audioHead && !first
            // AAC (and any codec with overlapping frames) needs the frame
            // before to decode the first heard: trimmed by the edit list, or
            // decoded for the re-encoded head.
            var preroll: Int64 = 0
            if (editList || head) && frameSamples > 0 && rate > 0 {
                guard let p = rescale(frameSamples, from: Rational(unchecked: 1, rate), to: tb, rounding: .up) else {
                    throw CutPlanError(track: j, what: "audio frame of \(frameSamples) samples")
                }
                preroll = p
            }
            kind = .timed(preroll: preroll)
        default:
            kind = split ? .starting : .timed(preroll: 0)
        }
        return Track(selection: CutSelection(kind, from: from, to: end), from: from, to: end, audioHead: head,
                     clampsToStart: (track.kind == .subtitle || track.kind == .other) && !split,
                     shownEnd: track.kind == .video && editList && !split ? end : nil)
    }
}

/// Where a cut's reader seeks to find the keyframe shown at or before a
/// time, on the video's clock: first just before it; when the keyframe
/// found is shown after it (reordered frames are found by their decode
/// time), again before that keyframe's decode time, one tick back, then
/// half a second, then twice as far each time (formats without an index
/// land near a time, not on the keyframe before it).
public struct KeyframeSearch: Sendable, Equatable {
    public let at: Timestamp
    public let timeBase: Rational
    /// Where the next seek aims (ticks).
    public private(set) var target: Int64
    private var back: Int64 = 1
    private let halfSecond: Int64

    public init(at: Timestamp, timeBase: Rational) throws(CutPlanError) {
        guard let t = at.rescaled(to: timeBase, rounding: .down)?.value else {
            throw CutPlanError(track: 0, what: "time \(at)")
        }
        self.at = at
        self.timeBase = timeBase
        target = t
        halfSecond = max(rescale(1, from: Rational(unchecked: 1, 2), to: timeBase, rounding: .up) ?? 1, 1)
    }

    /// Where a track without video is sought for a part starting at `at`:
    /// any packet can start it, so a second early (the selection drops what
    /// is before); nil when that is out of the clock's reach.
    public static func target(withoutVideo at: Timestamp, timeBase: Rational) -> Int64? {
        guard let micros = at.microseconds else { return nil }
        return rescale(micros.minus(1_000_000), from: .microseconds, to: timeBase, rounding: .down)
    }

    /// Whether a keyframe shown at `pts` (ticks) is at or before the time.
    public func reaches(_ pts: Int64) -> Bool { Timestamp(pts, timeBase) <= at }

    /// The next target after a seek found a keyframe shown too late.
    public mutating func stepBack(from keyframe: (pts: Int64, dts: Int64?)) {
        target = min(keyframe.dts ?? keyframe.pts, target).minus(back)
        back = max(back.times(2), halfSecond)
    }
}

/// The frames of `rate` from `a` to `b` (negative when `b` is before),
/// nearest; nil when either time or the count is out of reach.
public func frameCount(from a: Timestamp, to b: Timestamp, rate: Rational) -> Int64? {
    guard rate.numerator > 0, rate.denominator > 0,
          let from = a.rescaled(to: .microseconds), let to = b.rescaled(to: .microseconds) else { return nil }
    let (difference, overflow) = to.value.subtractingReportingOverflow(from.value)
    guard !overflow else { return nil }
    return rescale(difference, from: .microseconds, to: Rational(unchecked: rate.denominator, rate.numerator), rounding: .nearest)
}

/// An audio stream's clock beside its sample clock: the re-encoded head of
/// a cut works in samples (the encoder's) and writes in the stream's ticks.
/// Nearest both ways; nil when a value is out of reach.
public struct SampleClock: Sendable, Equatable {
    public let timeBase: Rational
    public let sampleRate: Int32

    public init?(timeBase: Rational, sampleRate: Int32) {
        guard sampleRate > 0 else { return nil }
        self.timeBase = timeBase
        self.sampleRate = sampleRate
    }

    private var samplePeriod: Rational { Rational(unchecked: 1, sampleRate) }

    public func samples(_ ticks: Int64) -> Int64? { rescale(ticks, from: timeBase, to: samplePeriod, rounding: .nearest) }

    public func ticks(_ samples: Int64) -> Int64? { rescale(samples, from: samplePeriod, to: timeBase, rounding: .nearest) }

    /// A timing on `encoderTimeBase` (an encoder's packets) on the stream's clock.
    public func timing(_ t: PacketTiming, from encoderTimeBase: Rational) -> PacketTiming? {
        guard let pts = t.pts.flatMap({ rescale($0, from: encoderTimeBase, to: timeBase, rounding: .nearest) }),
              let duration = rescale(t.duration, from: encoderTimeBase, to: timeBase, rounding: .nearest) else { return nil }
        return PacketTiming(pts: pts, dts: pts, duration: duration)
    }
}
