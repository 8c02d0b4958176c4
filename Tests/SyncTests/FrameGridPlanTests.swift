import Sync
import Testing

/// Runs of copied frames on different grids: the grid of the most packets
/// is copied, the rest re-encoded onto it.
@Suite struct FrameGridPlanTests {
    @Test func oneRunIsCopiedWhole() {
        var plan = FrameGridPlan(frameSize: 1024, toleranceSamples: 48)
        plan.startRun(at: -1024)
        for _ in 0..<100 { plan.addPacket() }
        #expect(plan.copied == [true])
        #expect(plan.counts == (100, 0))
        #expect(plan.chosenPhase == 0)
    }

    /// A gap of 448 samples after 94 packets: the 140 packets after it
    /// are the larger run and keep their frames; the first 94 are re-encoded.
    @Test func theLargerSideOfAnOddGapIsCopied() {
        var plan = FrameGridPlan(frameSize: 1024, toleranceSamples: 48)
        plan.startRun(at: 0)
        for _ in 0..<94 { plan.addPacket() }
        plan.startRun(at: 94 * 1024 + 448)
        for _ in 0..<140 { plan.addPacket() }
        #expect(plan.copied == [false, true])
        #expect(plan.counts == (140, 94))
        #expect(plan.chosenPhase == 448)
        // The re-encoded start lands on the copied grid, at or before the first sample.
        #expect(plan.gridStart(atOrBefore: 0) == 448 - 1024)
    }

    /// Runs that return to the first grid are copied with it (a joint and
    /// its reverse: the run between them is what is re-encoded).
    @Test func runsBackOnTheGridAreCopiedToo() {
        var plan = FrameGridPlan(frameSize: 1024, toleranceSamples: 48)
        plan.startRun(at: 0)
        for _ in 0..<50 { plan.addPacket() }
        plan.startRun(at: 50 * 1024 + 300)
        for _ in 0..<10 { plan.addPacket() }
        plan.startRun(at: 61 * 1024 + 20)  // within the tolerance of the first grid
        for _ in 0..<50 { plan.addPacket() }
        #expect(plan.copied == [true, false, true])
        #expect(plan.counts == (100, 10))
    }

    @Test func phasesCompareAroundTheFrame() {
        let plan = FrameGridPlan(frameSize: 1024, toleranceSamples: 48)
        #expect(plan.sameGrid(1020, 10))
        #expect(plan.sameGrid(-5, 1023))
        #expect(!plan.sameGrid(0, 512))
        #expect(plan.phase(of: -1) == 1023)
    }

    @Test func tiesKeepTheEarliestRunsGrid() {
        var plan = FrameGridPlan(frameSize: 1152, toleranceSamples: 0)
        plan.startRun(at: 0)
        for _ in 0..<10 { plan.addPacket() }
        plan.startRun(at: 10 * 1152 + 100)
        for _ in 0..<10 { plan.addPacket() }
        #expect(plan.copied == [true, false])
    }

    @Test func nearestFrameCountsWholeFramesFromTheOrigin() {
        #expect(FrameGridPlan.nearestFrame(to: 2048 + 500, from: 0, frameSize: 1024) == 2048)
        #expect(FrameGridPlan.nearestFrame(to: 2048 + 600, from: 0, frameSize: 1024) == 3072)
        #expect(FrameGridPlan.nearestFrame(to: -600, from: 0, frameSize: 1024) == -1024)
        #expect(FrameGridPlan.nearestFrame(to: 100 + 1024 * 5, from: 100, frameSize: 1024) == 100 + 5120)
    }
}
