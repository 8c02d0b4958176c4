import Sync
import Testing

@Suite("ChunkPlan")
struct ChunkPlanTests {
    /// Keyframes every 2 s on a 1/1000 time base, 0 … 60 s.
    let every2s = stride(from: Int64(0), through: 60_000, by: 2000).map { $0 }

    @Test("four chunks of a minute: boundaries at the keyframes nearest to each quarter")
    func quarters() {
        let plan = ChunkPlan(keyframes: every2s, start: 0, end: 60_000, count: 4)
        #expect(plan.boundaries == [14_000, 30_000, 44_000])
        #expect(plan.count == 4)
        #expect(plan.chunks.map(\.number) == [1, 2, 3, 4])
        #expect(plan.chunk(1).lower == nil && plan.chunk(1).upper == 14_000)
        #expect(plan.chunk(4).lower == 44_000 && plan.chunk(4).upper == nil)
    }

    @Test("every presentation time falls in exactly one chunk, the boundary in the later one")
    func partition() {
        let plan = ChunkPlan(keyframes: every2s, start: 0, end: 60_000, count: 5)
        for pts in stride(from: Int64(-5000), through: 70_000, by: 250) {
            #expect(plan.chunks.filter { $0.contains(pts) }.count == 1, "\(pts)")
        }
        for b in plan.boundaries {
            let owner = plan.chunks.first { $0.contains(b) }!
            #expect(owner.lower == b)
            #expect(plan.chunk(owner.number - 1).isPast(b))
        }
        // The last chunk is never past anything.
        #expect(!plan.chunk(plan.count).isPast(.max))
    }

    @Test("one chunk, or no keyframe but the first: no boundary")
    func single() {
        #expect(ChunkPlan(keyframes: every2s, start: 0, end: 60_000, count: 1).boundaries == [])
        #expect(ChunkPlan(keyframes: [0], start: 0, end: 60_000, count: 8).boundaries == [])
        #expect(ChunkPlan(keyframes: [], start: 0, end: 60_000, count: 8).count == 1)
    }

    @Test("fewer keyframes than chunks asked: one chunk per keyframe, none empty")
    func fewKeyframes() {
        let plan = ChunkPlan(keyframes: [0, 10_000, 50_000], start: 0, end: 60_000, count: 8)
        #expect(plan.boundaries == [10_000, 50_000])
    }

    @Test("keyframes bunched at the end still give increasing boundaries")
    func bunched() {
        let plan = ChunkPlan(keyframes: [0, 57_000, 58_000, 59_000], start: 0, end: 60_000, count: 4)
        #expect(plan.boundaries == [57_000, 58_000, 59_000])
    }

    @Test("unsorted, repeated keyframes and a start that is not 0 (MPEG-TS)")
    func unsorted() {
        let start: Int64 = 126_000, step: Int64 = 90_000
        let keys = (0..<20).map { start + Int64($0) * step }.reversed() + [start + step]
        let plan = ChunkPlan(keyframes: Array(keys), start: start, end: start + 20 * step, count: 2)
        #expect(plan.boundaries == [start + 10 * step])
    }

    @Test("three chunks of a minute: the keyframes at a third and two thirds")
    func thirds() throws {
        let plan = ChunkPlan(keyframes: every2s, start: 0, end: 60_000, count: 3)
        #expect(plan.boundaries == [20_000, 40_000])
    }
}
