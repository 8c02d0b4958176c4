import Sync
import Testing

@Suite("split part starts")
struct PartStartsTests {
    static let ntsc = Rational(unchecked: 1, 30000)
    static func frame(_ n: Int64) -> Timestamp { Timestamp(n * 1001, ntsc) }
    static func us(_ v: Int64) -> Timestamp { Timestamp(v, .microseconds) }

    /// A keyframe whose time is not a whole microsecond (frame 50 at
    /// 30000/1001 fps: 1,668,333.33 µs) starts the part exactly, asked for
    /// by its time as ffprobe prints it (1.668333 s) or any later point.
    @Test func partsStartExactlyOnTheirKeyframe() {
        let keyframes = [Self.frame(0), Self.frame(50), Self.frame(101), Self.frame(152)]
        let starts = PartStarts.starts(origin: Self.frame(0), boundaries: keyframes,
                                        asked: [Self.us(1_668_333), Self.us(4_000_000)])
        #expect(starts == [Self.frame(0), Self.frame(50), Self.frame(101)])
        #expect(starts[1].timeBase == Self.ntsc && starts[1].value == 50_050)
        // A microsecond earlier is the keyframe before.
        #expect(PartStarts.starts(origin: Self.frame(0), boundaries: keyframes, asked: [Self.us(1_668_332)])
            == [Self.frame(0)])
    }

    /// Points between the same two keyframes, or before the first after the
    /// start, make one part; points come in any order.
    @Test func pointsInOneStretchMakeOnePart() {
        let keyframes = [Self.frame(0), Self.frame(90), Self.frame(180)]
        let starts = PartStarts.starts(origin: Self.frame(0), boundaries: keyframes,
                                        asked: [Self.us(6_500_000), Self.us(1_000_000), Self.us(3_100_000), Self.us(3_500_000)])
        #expect(starts == [Self.frame(0), Self.frame(90), Self.frame(180)])
    }

    /// Without video every point starts a part as asked.
    @Test func withoutVideoThePointsAsAsked() {
        let starts = PartStarts.starts(origin: Self.us(0), boundaries: [], asked: [Self.us(2_000_000), Self.us(5_000_000)])
        #expect(starts == [Self.us(0), Self.us(2_000_000), Self.us(5_000_000)])
    }
}
