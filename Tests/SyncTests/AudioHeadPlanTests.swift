import Sync
import Testing

@Suite("AudioHeadPlan")
struct AudioHeadPlanTests {
    typealias A = AudioHeadPlan.Action

    /// Offers packets of `frame` ticks from `first` on; returns the actions.
    static func run(_ plan: inout AudioHeadPlan, first: Int64, frame: Int64, count: Int) -> [A] {
        (0..<count).map { plan.offer(pts: first + Int64($0) * frame, duration: frame) }
    }

    /// AAC: the frame before the one holding `from` is the pre-roll, the run
    /// starts a frame before the holding one and rejoins two frames after it.
    @Test func overlappingFramesInsideAFrame() {
        var plan = AudioHeadPlan(from: 2500, overlapping: true)
        let actions = Self.run(&plan, first: 0, frame: 1024, count: 9)
        // Packets at 0 and 1024 end before 2500; 2048 holds it.
        #expect(actions == [.preroll, .preroll, .decode, .decode, .decodeAndCopy, .decodeAndCopy, .decodeAndCopy, .copy, .copy])
        #expect(plan.runStart == 1024)
        #expect(plan.rejoin == 4096)
        #expect(plan.copying)
        // Encoded packets: the priming one before the run and those from the rejoin on are not written.
        #expect(!plan.keepsEncoded(pts: 0, frame: 1024, to: nil))
        #expect(plan.keepsEncoded(pts: 1024, frame: 1024, to: nil))
        #expect(plan.keepsEncoded(pts: 3072, frame: 1024, to: nil))
        #expect(!plan.keepsEncoded(pts: 4096, frame: 1024, to: nil))
        #expect(!plan.keepsEncoded(pts: 3072, frame: 1024, to: 3000))
    }

    /// Timestamps rounded to milliseconds (Matroska) still meet the rejoin.
    @Test func roundedTimestampsMeetTheRejoin() {
        var plan = AudioHeadPlan(from: 50, overlapping: true)
        // 21.333 ms frames rounded to ms: 0, 21, 43, 64, 85, 107
        for pts: Int64 in [0, 21, 43, 64, 85, 107] { _ = plan.offer(pts: pts, duration: 21) }
        #expect(plan.runStart == 21)
        #expect(plan.rejoin == 85)
        #expect(plan.keepsEncoded(pts: 64, frame: 21, to: nil))
        #expect(!plan.keepsEncoded(pts: 86, frame: 21, to: nil))
    }

    /// `from` on a frame boundary still re-encodes: the first frame heard
    /// needs the one before it, which is not written.
    @Test func onAFrameBoundary() {
        var plan = AudioHeadPlan(from: 2048, overlapping: true)
        let actions = Self.run(&plan, first: 0, frame: 1024, count: 4)
        #expect(actions == [.preroll, .preroll, .decode, .decode])
        #expect(plan.runStart == 1024)
    }

    /// The stream's first packet at or after `from`: nothing before it, copied.
    @Test func startOfTheStream() {
        var plan = AudioHeadPlan(from: 0, overlapping: true)
        #expect(Self.run(&plan, first: 0, frame: 1024, count: 3) == [.copy, .copy, .copy])
        #expect(plan.runStart == nil)
        #expect(!plan.keepsEncoded(pts: 0, frame: 1024, to: nil))
    }

    /// The first packet holds `from` with none before it: the run starts a frame earlier (silent).
    @Test func noPacketBefore() {
        var plan = AudioHeadPlan(from: 500, overlapping: true)
        _ = Self.run(&plan, first: 0, frame: 1024, count: 2)
        #expect(plan.runStart == -1024)
    }

    /// PCM: only the packet holding `from` is re-encoded, from `from`.
    @Test func framesThatStandAlone() {
        var plan = AudioHeadPlan(from: 1500, overlapping: false)
        let actions = Self.run(&plan, first: 0, frame: 1000, count: 4)
        #expect(actions == [.drop, .decode, .copy, .copy])
        #expect(plan.runStart == 1500)
        #expect(plan.rejoin == 2000)
        #expect(plan.keepsEncoded(pts: 1500, frame: 1000, to: nil))
        #expect(!plan.keepsEncoded(pts: 2000, frame: 1000, to: nil))
        var aligned = AudioHeadPlan(from: 2000, overlapping: false)
        #expect(Self.run(&aligned, first: 0, frame: 1000, count: 4) == [.drop, .drop, .copy, .copy])
        #expect(aligned.runStart == nil)
    }

    /// The audio ends inside the run: no rejoin, every re-encoded packet kept.
    @Test func endsInsideTheRun() {
        var plan = AudioHeadPlan(from: 1500, overlapping: true)
        _ = Self.run(&plan, first: 0, frame: 1024, count: 3)
        #expect(plan.inRun)
        #expect(plan.rejoin == nil)
        #expect(plan.keepsEncoded(pts: 9000, frame: 1024, to: nil))
    }
}
