/// How often a read loop reports progress: every 256th packet, so the
/// report's cost (a clock, a closure, a line) stays out of the per-packet
/// work. One throttle for every verb's loop.
public struct ProgressThrottle {
    public static let every = 256
    private var since = 0

    public init() {}

    /// Counts a packet; true when progress is due.
    public mutating func due() -> Bool {
        since += 1
        guard since >= Self.every else { return false }
        since = 0
        return true
    }
}
