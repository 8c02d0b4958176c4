/// Timestamps of decoded frames on their way through an encoder, in one
/// time base (the input stream's, so they pass through unchanged).
///
/// - A frame keeps the decoder's timestamp; one without follows the last
///   frame by its duration.
/// - A frame's duration is the decoder's, else the nominal frame duration,
///   else the last frame's.
/// - Encoders that emit packets without a duration (libx265) get the
///   duration of the frame with the same PTS. Entries are removed as they are
///   used, so the memory is bounded by the encoder's delay.
public struct FrameTimestamps: Sendable {
    /// One frame at the nominal rate, in the time base; 0 if unknown.
    public let nominalDuration: Int64
    private var pending: [Int64: Int64] = [:]
    private var lastPTS: Int64?
    private var lastDuration: Int64 = 0
    private var unwrapper: WrapUnwrapper?

    /// - Parameter wrapBits: the width of a wrapping timestamp counter
    ///   (33 for MPEG-TS): decoded timestamps are unwrapped, so the encoder
    ///   never sees time go back.
    public init(nominalDuration: Int64, wrapBits: Int? = nil) {
        self.nominalDuration = max(nominalDuration, 0)
        self.unwrapper = wrapBits.flatMap { WrapUnwrapper(bits: $0) }
    }

    /// One frame at `rate` frames per second, in `timeBase` ticks (nearest).
    public init(frameRate rate: Rational?, timeBase: Rational, wrapBits: Int? = nil) {
        var d: Int64 = 0
        if let rate, rate.numerator > 0, let period = Rational(rate.denominator, rate.numerator) {
            d = rescale(1, from: period, to: timeBase) ?? 0
        }
        self.init(nominalDuration: d, wrapBits: wrapBits)
    }

    /// The presentation time and duration to give the next decoded frame.
    public mutating func frame(timestamp: Int64?, duration: Int64) -> (pts: Int64, duration: Int64) {
        let d = duration > 0 ? duration : (nominalDuration > 0 ? nominalDuration : lastDuration)
        var timestamp = timestamp
        if let t = timestamp, var u = unwrapper {
            timestamp = u.unwrap(t)
            unwrapper = u
        }
        let pts = timestamp ?? lastPTS.map { $0 &+ max(lastDuration, 1) } ?? 0
        pending[pts] = d
        lastPTS = pts
        lastDuration = d
        return (pts, d)
    }

    /// The duration for an encoded packet: its own when set, else that of the
    /// frame with its PTS, else the last frame's.
    public mutating func packetDuration(pts: Int64?, duration: Int64) -> Int64 {
        if duration > 0 {
            if let pts { pending.removeValue(forKey: pts) }
            return duration
        }
        return pts.flatMap { pending.removeValue(forKey: $0) } ?? lastDuration
    }

    /// Frames whose packets have not come back yet.
    public var pendingCount: Int { pending.count }
}
