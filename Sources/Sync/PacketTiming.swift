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

    public var description: String {
        "pts=\(pts.map(String.init) ?? "?") dts=\(dts.map(String.init) ?? "?") dur=\(duration)"
    }
}
