import Sync
import Testing

@Suite("Timecode")
struct TimecodeTests {
    @Test func nonDropFrame() throws {
        let tc = try #require(Timecode("10:00:00:00", rate: Rational(unchecked: 25, 1)))
        #expect(tc.adding(frames: 37).description == "10:00:01:12")
        #expect(tc.adding(frames: 25 * 3600 * 14).description == "00:00:00:00")  // wraps at 24 h
        #expect(tc.adding(frames: -1).description == "09:59:59:24")
        #expect(Timecode("01:02:03:04", rate: Rational(unchecked: 24000, 1001))?.adding(frames: 20).description == "01:02:04:00")
    }

    @Test func dropFrameSkipsTwoLabelsAMinuteButEveryTenth() throws {
        let rate = Rational(unchecked: 30000, 1001)
        let zero = try #require(Timecode("00:00:00;00", rate: rate))
        #expect(zero.adding(frames: 1799).description == "00:00:59;29")
        #expect(zero.adding(frames: 1800).description == "00:01:00;02")
        #expect(zero.adding(frames: 17982).description == "00:10:00;00")
        #expect(Timecode("00:01:00;02", rate: rate)?.frame == 1800)
        // 00:01:00;00 is a label drop-frame never uses; a whole hour is 107892 frames.
        #expect(Timecode("00:01:00;00", rate: rate) == nil)
        #expect(Timecode("01:00:00;00", rate: rate)?.frame == 107_892)
        #expect(Timecode("00:00:00;00", rate: Rational(unchecked: 60000, 1001))?.adding(frames: 3600).description == "00:01:00;04")
    }

    @Test func refusesWhatIsNotATimecode() {
        let r = Rational(unchecked: 25, 1)
        for bad in ["", "10:00:00", "25:00:00:00", "00:60:00:00", "00:00:00:25", "a:b:c:d", "00:00:00;00"] {
            #expect(Timecode(bad, rate: r) == nil, "\(bad)")
        }
    }
}
