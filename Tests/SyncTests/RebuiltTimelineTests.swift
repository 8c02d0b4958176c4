import Sync
import Testing

@Suite("rebuilt timeline")
struct RebuiltTimelineTests {
    @Test func audioOnTheSampleGrid() throws {
        let t = try #require(RebuiltTimeline(count: 5, durationNumerator: 1024, durationDenominator: 1, origin: -1024))
        let expected: [PacketTiming] = (0..<5).map { (n: Int) -> PacketTiming in
            let at = Int64(n - 1) * 1024
            return PacketTiming(pts: at, dts: at, duration: 1024)
        }
        let timings = (0..<5).map { t.timing($0) }
        #expect(timings == expected)
        #expect(t.delay == 0)
    }

    /// PCM chunks of different lengths at 48 kHz in a 1/48000 time base:
    /// each starts after the sample frames before it.
    @Test func chunksOnASampleCounter() throws {
        let t = try #require(RebuiltTimeline(lengths: [1024, 2048, 1024, 512], durationNumerator: 1, durationDenominator: 1, origin: 0))
        #expect((0..<4).map { t.timing($0) } == [
            PacketTiming(pts: 0, dts: 0, duration: 1024), PacketTiming(pts: 1024, dts: 1024, duration: 2048),
            PacketTiming(pts: 3072, dts: 3072, duration: 1024), PacketTiming(pts: 4096, dts: 4096, duration: 512),
        ])
        // 44.1 kHz samples on a 1/600 clock: 147/11025 ticks a frame, floored from the count, no drift.
        let s = try #require(RebuiltTimeline(lengths: Array(repeating: 44100, count: 10), durationNumerator: 600,
                                             durationDenominator: 44100, origin: 60))
        #expect(s.timing(9) == PacketTiming(pts: 60 + 5400, dts: 60 + 5400, duration: 600))
        // Samples sharing one time (a data track whose samples all sit at 0).
        let d = try #require(RebuiltTimeline(lengths: [1, 1, 1], durationNumerator: 0, durationDenominator: 1, origin: 7))
        #expect((0..<3).map { t in d.timing(t).pts } == [7, 7, 7])
        #expect(RebuiltTimeline(lengths: [1024, 0], durationNumerator: 1, durationDenominator: 1, origin: 0) == nil)
        #expect(RebuiltTimeline(lengths: [1024], durationNumerator: -1, durationDenominator: 1, origin: 0) == nil)
    }

    /// 29.97 fps in a 1/600 time base: 20.02 ticks a frame, kept as a
    /// fraction, so frame 3000 is at 60060 exactly.
    @Test func fractionalDurationsDoNotDrift() throws {
        let t = try #require(RebuiltTimeline(count: 3001, durationNumerator: 60060, durationDenominator: 3000, origin: 0))
        #expect(t.timing(3000).pts == 60060)
        #expect(t.timing(1).pts == 20)
        let durations = Set((0..<3000).map { t.timing($0).duration })
        #expect(durations == [20, 21])
        for n in 1..<3001 { #expect(t.timing(n).dts! > t.timing(n - 1).dts!) }
    }

    /// I P B B (decode order) shown as I B B P: DTS one frame behind, PTS at or after DTS.
    @Test func reorderedFrames() throws {
        let rank = [0, 3, 1, 2, 4]
        let t = try #require(RebuiltTimeline(count: 5, durationNumerator: 512, durationDenominator: 1, origin: 0, displayRank: rank))
        #expect(t.delay == 1)
        let timings = (0..<5).map { t.timing($0) }
        #expect(timings.map(\.pts) == [0, 1536, 512, 1024, 2048])
        #expect(timings.map(\.dts) == [-512, 0, 512, 1024, 1536])
        for x in timings { #expect(x.pts! >= x.dts!) }
    }

    @Test func displayRankFromDecoderOutput() {
        #expect(RebuiltTimeline.displayRank(outputOrder: [0, 2, 3, 1, 4], count: 5) == [0, 3, 1, 2, 4])
        // A frame never output is shown after the one decoded before it; strays ignored.
        #expect(RebuiltTimeline.displayRank(outputOrder: [0, 2, 9, 2, 3], count: 5) == [0, 1, 2, 3, 4])
        #expect(RebuiltTimeline.displayRank(outputOrder: [3, 2], count: 4) == [0, 1, 3, 2])
    }

    @Test func refusesWhatIsNotATimeline() {
        #expect(RebuiltTimeline(count: 2, durationNumerator: 1, durationDenominator: 2, origin: 0) == nil)
        #expect(RebuiltTimeline(count: 3, durationNumerator: 10, durationDenominator: 1, origin: 0, displayRank: [0, 0, 1]) == nil)
    }
}
