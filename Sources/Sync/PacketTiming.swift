/// The timestamps of one packet, in its stream's time base.
public struct PacketTiming: Hashable, Sendable, CustomStringConvertible {
    public var pts: Int64?
    public var dts: Int64?
    public var duration: Int64

    public init(pts: Int64?, dts: Int64?, duration: Int64) {
        self.pts = pts
        self.dts = dts
        self.duration = duration
    }

    /// Where the frame ends: PTS + duration (a negative duration counts as
    /// 0; saturating at Int64's ends); `nil` without a PTS.
    public var end: Int64? { pts.map { $0.plus(max(duration, 0)) } }

    /// This timing with `nominal` ticks as its duration when it has none
    /// (a demuxer that leaves durations out: the frame period), so the last
    /// frame still has a length.
    public func orDuration(_ nominal: Int64?) -> PacketTiming {
        guard duration <= 0, let nominal, nominal > 0 else { return self }
        return PacketTiming(pts: pts, dts: dts, duration: nominal)
    }

    /// One frame at `frameRate` (frames per second) in ticks of `timeBase`; `nil` if unknown.
    public static func framePeriod(frameRate: Rational?, timeBase: Rational) -> Int64? {
        guard let r = frameRate, r.numerator > 0, r.denominator > 0,
              let period = Rational(r.denominator, r.numerator) else { return nil }
        return Timestamp(1, period).rescaled(to: timeBase)?.value
    }

    public var description: String {
        "pts=\(pts.map(String.init) ?? "?") dts=\(dts.map(String.init) ?? "?") dur=\(duration)"
    }
}
