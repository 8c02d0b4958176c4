import Sync
import Testing

@Suite("CutSelection")
struct CutSelectionTests {
    typealias D = CutSelection.Decision

    /// Decode order I P B B P B B I with display times 0 3 1 2 6 4 5 7, cut [1, 5).
    @Test func videoKeepsReferencesOfFramesBeforeTheEnd() {
        var s = CutSelection(.video, from: 1, to: 5)
        let frames: [(Int64, Bool)] = [(0, true), (3, false), (1, false), (2, false), (6, false), (4, false), (5, false), (7, true)]
        let decisions = frames.map { s.offer(pts: $0.0, duration: 1, keyframe: $0.1) }
        // The P shown at 6 is held, then kept as the reference of the B shown at 4; the B at 5 is held and dropped at the keyframe.
        #expect(decisions == [.keep(releaseHeld: 0), .keep(releaseHeld: 0), .keep(releaseHeld: 0), .keep(releaseHeld: 0),
                              .hold, .keep(releaseHeld: 1), .hold, .end])
        #expect(s.startPTS == 0 && s.ended)
    }

    @Test func videoStartsAtTheFirstKeyframeAndDropsLeadingFrames() {
        var s = CutSelection(.video, from: 10, to: nil)
        #expect(s.offer(pts: 4, duration: 1, keyframe: false) == .drop)
        #expect(s.offer(pts: 8, duration: 1, keyframe: true) == .keep(releaseHeld: 0))
        // An open GOP's leading frame, shown before the keyframe.
        #expect(s.offer(pts: 7, duration: 1, keyframe: false) == .drop)
        #expect(s.offer(pts: 9, duration: 1, keyframe: false) == .keep(releaseHeld: 0))
        #expect(s.offer(pts: nil, duration: 1, keyframe: false) == .drop)
    }

    @Test func audioOverlappingTheRangeWithPreroll() {
        var s = CutSelection(.timed(preroll: 1024), from: 5000, to: 9000)
        let starts: [Int64] = [2048, 3072, 4096, 5120, 8192, 9216]
        let d = starts.map { s.offer(pts: $0, duration: 1024, keyframe: true) }
        // 2048–3072 ends before 5000 − 1024; 3072–4096 is the pre-roll; 4096–5120 holds --from.
        #expect(d == [.drop, .keep(releaseHeld: 0), .keep(releaseHeld: 0), .keep(releaseHeld: 0), .keep(releaseHeld: 0), .end])
        var plain = CutSelection(.timed(preroll: 0), from: 5000, to: nil)
        #expect(plain.offer(pts: 3072, duration: 1024, keyframe: true) == .drop)
        #expect(plain.offer(pts: 4096, duration: 1024, keyframe: true) == .keep(releaseHeld: 0))
    }

    @Test func holdingIsBounded() {
        var s = CutSelection(.video, from: 0, to: 1)
        #expect(s.offer(pts: 0, duration: 1, keyframe: true) == .keep(releaseHeld: 0))
        for _ in 0..<CutSelection.holdLimit { #expect(s.offer(pts: 100, duration: 1, keyframe: false) == .hold) }
        #expect(s.offer(pts: 100, duration: 1, keyframe: false) == .end)
        #expect(s.offer(pts: 0, duration: 1, keyframe: false) == .end)
    }
}

@Suite("CutSelection of split parts")
struct SplitSelectionTests {
    /// Parts [0, 7) and [7, 14) of I P B B P B B | I B B P (open GOP: the B's after the second I are shown before it).
    @Test func partsTogetherHoldEveryPacketOnce() {
        let frames: [(Int64, Bool)] = [(0, true), (3, false), (1, false), (2, false), (6, false), (4, false), (5, false),
                                       (9, true), (7, false), (8, false), (12, false)]
        var first = CutSelection(.videoPart, from: 0, to: 9), second = CutSelection(.videoPart, from: 9, to: nil)
        let a = frames.map { first.offer(pts: $0.0, duration: 1, keyframe: $0.1) }
        #expect(a == Array(repeating: .keep(releaseHeld: 0), count: 7) + [.end, .end, .end, .end])
        let b = frames.map { second.offer(pts: $0.0, duration: 1, keyframe: $0.1) }
        #expect(b == Array(repeating: .drop, count: 7) + Array(repeating: .keep(releaseHeld: 0), count: 4))
    }

    @Test func audioByStart() {
        var s = CutSelection(.starting, from: 1000, to: 3000)
        #expect([0, 1024, 2048, 3072].map { s.offer(pts: Int64($0), duration: 1024, keyframe: true) }
                == [.drop, .keep(releaseHeld: 0), .keep(releaseHeld: 0), .end])
    }
}

@Suite("ChapterWindow")
struct ChapterWindowTests {
    @Test func clipsAndMovesChapters() {
        let w = ChapterWindow(start: Timestamp(2_500_000, .microseconds), end: Timestamp(7_000_000, .microseconds))
        let ms = Rational(unchecked: 1, 1000)
        #expect(w.clip(start: 0, end: 2000, timeBase: ms) == nil)
        #expect(w.clip(start: 2000, end: 4000, timeBase: ms)! == (0, 1500))
        #expect(w.clip(start: 4000, end: 6000, timeBase: ms)! == (1500, 3500))
        #expect(w.clip(start: 6000, end: 9000, timeBase: ms)! == (3500, 4500))
        #expect(w.clip(start: 7000, end: 9000, timeBase: ms) == nil)
        let open = ChapterWindow(start: Timestamp(2_500_000, .microseconds), end: nil)
        #expect(open.clip(start: 6000, end: 9000, timeBase: ms)! == (3500, 6500))
    }
}
