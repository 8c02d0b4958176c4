/// What the target container demands of decoding timestamps.
public enum DTSOrder: String, Sendable, Codable {
    /// MP4/MOV: each DTS greater than the one before.
    case strictlyIncreasing
    /// Matroska, MPEG-TS: equal DTS allowed, never backwards.
    case nonDecreasing
}

/// What to do with timestamps the target would reject.
public enum TimestampRepair: String, Sendable, Codable {
    /// Make the smallest change that satisfies the container, and count it.
    case fix
    /// Stop with `TimelineError`.
    case refuse
}

/// Counts of every change a `TrackTimeline` made, for reports.
public struct TimelineCorrections: Hashable, Sendable, Codable {
    /// DTS raised to keep the order the container demands.
    public var dtsBumped = 0
    /// PTS raised to be no earlier than the DTS.
    public var ptsRaised = 0
    /// Unknown PTS or DTS filled in from the other or from the previous packet.
    public var filled = 0
    /// Negative durations set to zero.
    public var durationsClamped = 0
    /// Counter wraps undone (MPEG-TS 33-bit).
    public var wraps = 0

    public init() {}

    public var total: Int { dtsBumped + ptsRaised + filled + durationsClamped + wraps }

    public static func + (a: Self, b: Self) -> Self {
        var r = a
        r.dtsBumped += b.dtsBumped
        r.ptsRaised += b.ptsRaised
        r.filled += b.filled
        r.durationsClamped += b.durationsClamped
        r.wraps += b.wraps
        return r
    }
}

public enum TimelineError: Error, Hashable, Sendable, CustomStringConvertible {
    /// DTS went backwards (or repeated where the container forbids it) and repair is `.refuse`.
    case nonMonotonicDTS(previous: Int64, current: Int64, timeBase: Rational)
    /// PTS earlier than DTS and repair is `.refuse`.
    case ptsBeforeDTS(pts: Int64, dts: Int64, timeBase: Rational)
    /// A packet with neither PTS nor DTS and nothing before it to infer from.
    case unknownTimestamps
    /// A timestamp does not fit in 64 bits after shifting or rescaling.
    case overflow
    /// A time base that is zero or negative.
    case invalidTimeBase(Rational)

    public var description: String {
        switch self {
        case let .nonMonotonicDTS(p, c, tb):
            "DTS goes from \(p) to \(c) (time base \(tb)), which the container does not allow"
        case let .ptsBeforeDTS(p, d, tb):
            "PTS \(p) is earlier than DTS \(d) (time base \(tb))"
        case .unknownTimestamps:
            "a packet has no timestamps and none can be inferred"
        case .overflow:
            "a timestamp does not fit in 64 bits"
        case let .invalidTimeBase(tb):
            "invalid time base \(tb)"
        }
    }
}

/// Where the output timeline starts.
public enum StartPolicy: String, Sendable, Codable, CaseIterable {
    /// Shift every track by the same amount so the earliest starts at 0; the
    /// offsets between tracks are kept.
    case zero
    /// Keep the input's timestamps as they are.
    case keep

    /// The shift to add to every timestamp, given the earliest start of all
    /// kept tracks (unknown means no shift).
    public func shift(earliestStart: Timestamp?) -> Timestamp {
        guard self == .zero, let start = earliestStart, start.value != .min else {
            return .zero(.microseconds)
        }
        return Timestamp(-start.value, start.timeBase)
    }
}

/// Maps one input track's packet timestamps onto one output track: undoes
/// counter wraps, applies the start shift, changes time base (nearest), and
/// keeps the container's invariants — DTS ordered, PTS ≥ DTS, none unknown —
/// fixing with the smallest change and counting it, or refusing.
public struct TrackTimeline: Sendable {
    public let source: Rational
    public let target: Rational
    public let order: DTSOrder
    public let repair: TimestampRepair
    /// The shift in `source` ticks (rounded to nearest once, up front).
    public let shift: Int64
    /// Frames the decoder holds back for reordering (B-frames), from the
    /// stream's codec parameters; used to infer leading unknown DTS.
    public let reorderDelay: Int
    /// A still image (cover art) has one packet and no timestamps: place it
    /// at the output's origin (0) instead of refusing it.
    public let untimedAtOrigin: Bool
    /// Source ticks every DTS is lowered by, for a stream the demuxer gives
    /// with some PTS before their DTS that lowering every DTS alike puts
    /// right (the display order and times kept, where raising those PTS would
    /// show frames late and two at one time).
    public let decodeLead: Int64
    // PTS and DTS each get their own: near a wrap, a reordered PTS may have
    // wrapped while the DTS has not.
    private var ptsUnwrapper: WrapUnwrapper?
    private var dtsUnwrapper: WrapUnwrapper?
    private var packetsSeen = 0
    private var firstSourcePTS: Int64?
    private var sourceDTSSeen = false
    private var lastDTS: Int64?
    private var lastDuration: Int64 = 0
    private var fixes = TimelineCorrections()

    public var corrections: TimelineCorrections {
        var c = fixes
        c.wraps = fixes.wraps + max(ptsUnwrapper?.wraps ?? 0, dtsUnwrapper?.wraps ?? 0)
        return c
    }

    /// - Parameters:
    ///   - shift: added to every timestamp (e.g. `StartPolicy.shift`).
    ///   - wrapBits: the input counter's width when it wraps (33 for MPEG-TS), else `nil`.
    ///   - reorderDelay: the decoder's reorder depth in frames (`video_delay`), 0 if none.
    ///   - decodeLead: source ticks to lower every known DTS by (see `decodeLead`).
    public init(source: Rational, target: Rational, shift: Timestamp = .zero(.microseconds),
                order: DTSOrder, repair: TimestampRepair = .fix, wrapBits: Int? = nil,
                reorderDelay: Int = 0, untimedAtOrigin: Bool = false, decodeLead: Int64 = 0) throws(TimelineError) {
        guard source.isValidTimeBase else { throw .invalidTimeBase(source) }
        guard target.isValidTimeBase else { throw .invalidTimeBase(target) }
        guard let s = shift.rescaled(to: source) else { throw .overflow }
        self.source = source
        self.target = target
        self.order = order
        self.repair = repair
        self.shift = s.value
        self.ptsUnwrapper = wrapBits.flatMap { WrapUnwrapper(bits: $0) }
        self.dtsUnwrapper = self.ptsUnwrapper
        self.reorderDelay = max(reorderDelay, 0)
        self.untimedAtOrigin = untimedAtOrigin
        self.decodeLead = max(decodeLead, 0)
    }

    /// The output timing of the next packet, in `target` ticks.
    public mutating func map(_ input: PacketTiming) throws(TimelineError) -> PacketTiming {
        var sourcePTS = input.pts
        var sourceDTS = input.dts
        if let p = sourcePTS, var u = ptsUnwrapper {
            sourcePTS = u.unwrap(p)
            ptsUnwrapper = u
        }
        if let d = sourceDTS, var u = dtsUnwrapper {
            sourceDTS = u.unwrap(d)
            dtsUnwrapper = u
        }
        defer { packetsSeen += 1 }
        if firstSourcePTS == nil { firstSourcePTS = sourcePTS }
        if sourceDTS != nil { sourceDTSSeen = true }
        if decodeLead > 0, let d = sourceDTS {
            let (lowered, overflow) = d.subtractingReportingOverflow(decodeLead)
            guard !overflow else { throw .overflow }
            sourceDTS = lowered
        }
        // Demuxers without stored DTS (Matroska) cannot give one for the first
        // `reorderDelay` packets of a B-frame stream: they decode one frame
        // duration apart, ending where the first frame is shown.
        if sourceDTS == nil, !sourceDTSSeen, packetsSeen < reorderDelay,
           let guess = Self.inferredFirstDTS(pts: firstSourcePTS, duration: input.duration,
                                             reorderDelay: reorderDelay - packetsSeen) {
            let first = firstSourcePTS!
            sourceDTS = guess
            if sourcePTS == nil { sourcePTS = first }
            fixes.filled += 1
        }
        var pts = try sourcePTS.map { v throws(TimelineError) in try toTarget(v) }
        var dts = try sourceDTS.map { v throws(TimelineError) in try toTarget(v) }
        var duration = input.duration
        if duration < 0 {
            duration = 0
            fixes.durationsClamped += 1
        }
        guard let d = rescale(duration, from: source, to: target) else { throw .overflow }
        duration = d

        // Unknown timestamps: libavformat's rule (pts = dts, dts follows on).
        switch (pts, dts) {
        case (nil, nil):
            guard let last = lastDTS else {
                guard untimedAtOrigin else { throw .unknownTimestamps }
                pts = 0
                dts = 0
                fixes.filled += 2
                break
            }
            let (next, overflow) = last.addingReportingOverflow(max(lastDuration, minimumStep))
            guard !overflow else { throw .overflow }
            pts = next
            dts = next
            fixes.filled += 2
        case (nil, let d?):
            pts = d
            fixes.filled += 1
        case (let p?, nil):
            // Without the DTS a reordered stream can only be guessed: take the
            // PTS when it keeps the order, else the smallest legal step.
            dts = p
            if let last = lastDTS, !isOrdered(p, after: last) {
                let (next, overflow) = last.addingReportingOverflow(minimumStep)
                guard !overflow else { throw .overflow }
                dts = next
            }
            fixes.filled += 1
        default: break
        }
        guard var p = pts, var d = dts else { throw .unknownTimestamps }

        if let last = lastDTS, !isOrdered(d, after: last) {
            guard repair == .fix else { throw .nonMonotonicDTS(previous: last, current: d, timeBase: target) }
            let (bumped, overflow) = last.addingReportingOverflow(minimumStep)
            guard !overflow else { throw .overflow }
            d = bumped
            fixes.dtsBumped += 1
        }
        if p < d {
            guard repair == .fix else { throw .ptsBeforeDTS(pts: p, dts: d, timeBase: target) }
            p = d
            fixes.ptsRaised += 1
        }
        lastDTS = d
        lastDuration = duration
        return PacketTiming(pts: p, dts: d, duration: duration)
    }

    /// Continues the output order of `previous` (a track of the same output
    /// read from an earlier segment): DTS stay ordered across the joint, and
    /// the corrections add up. Each segment keeps its own source time base,
    /// shift, unwrapping and leading-DTS inference.
    public mutating func resume(after previous: TrackTimeline) {
        guard previous.target == target, let last = previous.lastDTS else { return }
        lastDTS = last
        lastDuration = previous.lastDuration
        fixes = fixes + previous.corrections
    }

    private var minimumStep: Int64 { order == .strictlyIncreasing ? 1 : 0 }

    private func isOrdered(_ dts: Int64, after last: Int64) -> Bool {
        order == .strictlyIncreasing ? dts > last : dts >= last
    }

    private func toTarget(_ value: Int64) throws(TimelineError) -> Int64 {
        let (shifted, overflow) = value.addingReportingOverflow(shift)
        guard !overflow, let r = rescale(shifted, from: source, to: target) else { throw .overflow }
        return r
    }
}

extension TrackTimeline {
    /// The DTS of a stream's first packet when the demuxer gives none
    /// (Matroska): with `reorderDelay` frames held back for B-frames, the
    /// first frame decodes that many frame durations before it is shown.
    public static func inferredFirstDTS(pts: Int64?, duration: Int64, reorderDelay: Int) -> Int64? {
        guard let pts else { return nil }
        guard reorderDelay > 0 else { return pts }
        let (back, o1) = Int64(reorderDelay).multipliedReportingOverflow(by: max(duration, 1))
        let (dts, o2) = pts.subtractingReportingOverflow(back)
        return o1 || o2 ? nil : dts
    }
}
