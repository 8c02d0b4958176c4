import Sync
import Testing

@Suite("FrameTimestamps")
struct FrameTimestampsTests {
    @Test("nominal duration from the frame rate: 30000/1001 fps at 1/90000 is 3003 ticks")
    func nominal() {
        // 1001/30000 s × 90000 = 3003 exactly.
        #expect(FrameTimestamps(frameRate: Rational(unchecked: 30000, 1001), timeBase: .mpegClock).nominalDuration == 3003)
        // 1/25 s at 1/1000 = 40.
        #expect(FrameTimestamps(frameRate: Rational(unchecked: 25, 1), timeBase: Rational(unchecked: 1, 1000)).nominalDuration == 40)
        #expect(FrameTimestamps(frameRate: nil, timeBase: .mpegClock).nominalDuration == 0)
    }

    @Test("decoder timestamps pass through; a missing one follows the last frame")
    func passThrough() {
        var t = FrameTimestamps(nominalDuration: 40)
        #expect(t.frame(timestamp: 1000, duration: 0) == (1000, 40))
        #expect(t.frame(timestamp: 1033, duration: 33) == (1033, 33))   // VFR: kept as given
        // No timestamp: 1033 + the last frame's 33 = 1066; no duration: the nominal 40.
        #expect(t.frame(timestamp: nil, duration: 0) == (1066, 40))
    }

    @Test("B-frame order: packets find their frame's duration by PTS, and the table empties")
    func packetDurations() {
        var t = FrameTimestamps(nominalDuration: 0)
        _ = t.frame(timestamp: 0, duration: 10)
        _ = t.frame(timestamp: 10, duration: 12)
        _ = t.frame(timestamp: 22, duration: 9)
        #expect(t.pendingCount == 3)
        // Encoder output in decode order I P B: pts 0, 22, 10.
        #expect(t.packetDuration(pts: 0, duration: 0) == 10)
        #expect(t.packetDuration(pts: 22, duration: 0) == 9)
        #expect(t.packetDuration(pts: 10, duration: 0) == 12)
        #expect(t.pendingCount == 0)
        // Unknown PTS: the last frame's duration.
        #expect(t.packetDuration(pts: nil, duration: 0) == 9)
        // A packet that has its own duration keeps it.
        #expect(t.packetDuration(pts: 5, duration: 7) == 7)
    }

    @Test("33-bit MPEG-TS timestamps are unwrapped, so frames keep going forward across the wrap")
    func unwrapsTimestamps() {
        var t = FrameTimestamps(nominalDuration: 3003, wrapBits: 33)
        let wrap = Int64(1) << 33
        let before = t.frame(timestamp: wrap - 3003, duration: 3003)
        let after = t.frame(timestamp: 0, duration: 3003)
        let next = t.frame(timestamp: 3003, duration: 3003)
        #expect(before.pts == wrap - 3003)
        #expect(after.pts == wrap)
        #expect(next.pts == wrap + 3003)
    }
}
