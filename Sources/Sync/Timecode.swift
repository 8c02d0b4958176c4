/// A SMPTE timecode (`HH:MM:SS:FF`; `;` before the frames marks drop-frame)
/// as a count of frames from 00:00:00:00, at a nominal whole rate (24, 25,
/// 30, 50, 60, …). Drop-frame (29.97 and 59.94 fps) skips the first 2 (or
/// 4) labels of every minute except each tenth, so labels keep to the clock.
public struct Timecode: Sendable, Equatable, CustomStringConvertible {
    /// Frames since 00:00:00:00 (real frames, not labels).
    public private(set) var frame: Int64
    public let nominalRate: Int
    public let dropFrame: Bool

    private var dropped: Int64 { dropFrame ? Int64(nominalRate / 15) : 0 }
    private var framesPerDay: Int64 {
        let n = Int64(nominalRate)
        return dropFrame ? 144 * (n * 600 - 9 * dropped) : 24 * 3600 * n
    }

    /// Parses `text` for a stream shown at `rate` frames per second (the
    /// nominal rate is the rate rounded up: 29.97 → 30). Nil for a label
    /// that does not fit the rate or is not a timecode.
    public init?(_ text: String, rate: Rational) {
        guard rate.numerator > 0, rate.denominator > 0 else { return nil }
        let nominal = Int((Int64(rate.numerator) + Int64(rate.denominator) - 1) / Int64(rate.denominator))
        dropFrame = text.contains(";") || text.contains(".")
        guard nominal > 0, !dropFrame || nominal % 30 == 0 else { return nil }
        nominalRate = nominal
        let fields = text.split(whereSeparator: { $0 == ":" || $0 == ";" || $0 == "." }).map { Int64($0) }
        guard fields.count == 4, let h = fields[0], let m = fields[1], let s = fields[2], let f = fields[3],
              (0..<24).contains(h), (0..<60).contains(m), (0..<60).contains(s), (0..<Int64(nominal)).contains(f) else { return nil }
        frame = 0
        let minutes = 60 * h + m
        if dropFrame, m % 10 != 0, s == 0, f < dropped { return nil }  // a label drop-frame skips
        frame = ((minutes * 60 + s) * Int64(nominal) + f) - dropped * (minutes - minutes / 10)
    }

    /// The timecode `frames` later (earlier when negative), wrapping at 24 hours.
    public func adding(frames n: Int64) -> Timecode {
        var t = self
        let day = framesPerDay
        t.frame = ((frame &+ n) % day + day) % day
        return t
    }

    public var description: String {
        let n = Int64(nominalRate)
        var f = frame
        if dropFrame {
            let perTen = n * 600 - 9 * dropped, perMinute = n * 60 - dropped
            let tens = f / perTen, rest = f % perTen
            f += dropped * 9 * tens + (rest > dropped ? dropped * ((rest - dropped) / perMinute) : 0)
        }
        let ff = f % n, s = (f / n) % 60, m = (f / n / 60) % 60, h = (f / n / 3600) % 24
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(two(h)):\(two(m)):\(two(s))\(dropFrame ? ";" : ":")\(two(ff))"
    }
}
