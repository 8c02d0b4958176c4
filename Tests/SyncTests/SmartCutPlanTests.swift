import Sync
import Testing

@Suite("SmartCutPlan")
struct SmartCutPlanTests {
    typealias A = SmartCutPlan.Action

    /// `(pts, kind)` in decode order; keyframes are the clean starts and the
    /// `k` entries; DTS runs from `firstDTS` one tick a packet.
    static func packets(_ list: [(Int64, String)], firstDTS: Int64 = -2) -> [SmartCutPacket] {
        list.enumerated().map { i, e in
            let kind: PictureKind = switch e.1 {
            case "I": .cleanStart
            case "k": .other       // a keyframe that is not a clean start (open GOP I)
            case "RASL": .skippableLeading
            case "RADL": .decodableLeading
            default: .other
            }
            return SmartCutPacket(pts: e.0, dts: firstDTS + Int64(i), duration: 1, keyframe: e.1 == "I" || e.1 == "k", kind: kind)
        }
    }

    /// Runs the plan; checks every packet gets exactly one write or discard.
    static func run(_ plan: inout SmartCutPlan, _ ps: [SmartCutPacket]) -> [A] {
        var actions: [A] = []
        for p in ps where !plan.ended { actions += plan.offer(p) }
        actions += plan.finish()
        return actions
    }

    static func settled(_ actions: [A]) -> [Int: Int] {
        var count: [Int: Int] = [:]
        for a in actions {
            switch a {
            case .write(let n), .discard(let n): count[n, default: 0] += 1
            default: break
            }
        }
        return count
    }

    static func written(_ actions: [A]) -> [Int] { actions.compactMap { if case .write(let n) = $0 { n } else { nil } } }
    static func decoded(_ actions: [A]) -> [Int] { actions.compactMap { if case .decode(let n) = $0 { n } else { nil } } }
    static func stretches(_ actions: [A]) -> [ReencodedStretch] { actions.compactMap { if case .encode(let s) = $0 { s } else { nil } } }

    /// Two closed GOPs with B-frames (decode order I P B B P B B), cut from 2 to the end.
    @Test func headIsReencodedUpToTheNextCleanStart() {
        let ps = Self.packets([(0, "I"), (3, ""), (1, ""), (2, ""), (6, ""), (4, ""), (5, ""),
                               (7, "I"), (10, ""), (8, ""), (9, "")])
        var plan = SmartCutPlan(from: 2, to: nil)
        let actions = Self.run(&plan, ps)
        #expect(Self.decoded(actions) == Array(0...7))
        #expect(Self.stretches(actions) == [ReencodedStretch(from: 2, until: 7, after: nil, before: ps[7].dts)])
        #expect(Self.written(actions) == [7, 8, 9, 10])
        #expect(Self.settled(actions) == Dictionary(uniqueKeysWithValues: (0..<11).map { ($0, 1) }))
        // The stretch is encoded before the copied packets are written.
        let encodeAt = actions.firstIndex { if case .encode = $0 { true } else { false } }!
        let firstWrite = actions.firstIndex { if case .write = $0 { true } else { false } }!
        #expect(encodeAt < firstWrite)
    }

    /// An HEVC CRA with RASL pictures: they are decoded for the stretch, never copied.
    @Test func raslPicturesOfTheCopyStartAreReencoded() {
        let ps = Self.packets([(0, "I"), (4, ""), (2, ""), (1, ""), (3, ""),
                               (8, "I"), (6, "RASL"), (5, "RASL"), (7, "RASL"), (12, ""), (10, ""), (9, ""), (11, "")])
        var plan = SmartCutPlan(from: 2, to: nil)
        let actions = Self.run(&plan, ps)
        #expect(Self.decoded(actions) == Array(0...8))
        #expect(Self.stretches(actions).map(\.until) == [8])
        #expect(Self.written(actions) == [5, 9, 10, 11, 12])
        #expect(Self.settled(actions).count == ps.count && Self.settled(actions).values.allSatisfy { $0 == 1 })
    }

    /// RADL pictures are copied: the stretch ends where the first is shown.
    @Test func radlPicturesAreCopied() {
        let ps = Self.packets([(0, "I"), (4, ""), (2, ""), (1, ""), (3, ""),
                               (8, "I"), (6, "RADL"), (7, "RADL"), (12, ""), (10, ""), (9, ""), (11, "")])
        var plan = SmartCutPlan(from: 1, to: nil)
        let actions = Self.run(&plan, ps)
        #expect(Self.stretches(actions) == [ReencodedStretch(from: 1, until: 6, after: nil, before: ps[5].dts)])
        #expect(Self.written(actions) == [5, 6, 7, 8, 9, 10, 11])
        // A keyframe that is not a clean start is decoded through, not copied from.
        let open = Self.packets([(0, "I"), (2, ""), (1, ""), (4, "k"), (3, ""), (6, "I"), (7, "")])
        var plan2 = SmartCutPlan(from: 1, to: nil)
        let actions2 = Self.run(&plan2, open)
        #expect(Self.stretches(actions2).map(\.until) == [6])
        #expect(Self.written(actions2) == [5, 6])
    }

    /// A range inside one GOP: everything decoded, nothing copied.
    @Test func rangeInsideOneGOP() {
        let ps = Self.packets([(0, "I"), (3, ""), (1, ""), (2, ""), (6, ""), (4, ""), (5, ""), (7, "I"), (8, "")])
        var plan = SmartCutPlan(from: 2, to: 5)
        let actions = Self.run(&plan, ps)
        #expect(Self.stretches(actions) == [ReencodedStretch(from: 2, until: 5, after: nil, before: nil)])
        #expect(Self.written(actions).isEmpty)
        #expect(Self.decoded(actions) == Array(0...6))
        #expect(plan.ended)
        #expect(Self.settled(actions).count == 8)
    }

    /// At the end, a B-frame shown before `to` refers to a P shown after it:
    /// the last GOP is re-encoded from its clean start.
    @Test func openEndIsReencodedFromTheLastCleanStart() {
        let ps = Self.packets([(0, "I"), (2, ""), (1, ""), (3, ""), (4, "I"), (7, ""), (5, ""), (6, ""), (8, "I"), (9, "")])
        var plan = SmartCutPlan(from: 0, to: 6)
        let actions = Self.run(&plan, ps)
        #expect(Self.written(actions) == [0, 1, 2, 3])
        #expect(Self.decoded(actions) == [4, 5, 6])
        // It keeps the PTS−DTS distance of its first packet (2 ticks).
        #expect(Self.stretches(actions) == [ReencodedStretch(from: 4, until: 6, after: ps[3].dts, before: nil, shift: 2)])
        #expect(Self.settled(actions).count == 9)   // the keyframe at 8 ends it; 9 is never offered
    }

    /// A closed end is copied: frames shown before `to` need none after it.
    @Test func closedEndIsCopied() {
        let ps = Self.packets([(0, "I"), (1, ""), (2, ""), (3, ""), (4, "I"), (5, ""), (6, ""), (7, "")])
        var plan = SmartCutPlan(from: 0, to: 6)
        let actions = Self.run(&plan, ps)
        #expect(Self.written(actions) == [0, 1, 2, 3, 4, 5])
        #expect(Self.stretches(actions).isEmpty)
        #expect(Self.settled(actions).count == 8)
    }

    /// A cut starting on a CRA drops its RASL pictures (they refer to the GOP before).
    @Test func cutOnACleanStartDropsItsRASL() {
        let ps = Self.packets([(4, "I"), (2, "RASL"), (3, "RASL"), (6, ""), (5, "")])
        var plan = SmartCutPlan(from: 2, to: nil)
        let actions = Self.run(&plan, ps)
        #expect(Self.stretches(actions).isEmpty)
        #expect(Self.written(actions) == [0, 3, 4])
    }

    /// The end's GOP cannot start at a CRA whose RASL pictures refer to the GOP before it.
    @Test func endStretchDoesNotStartAtACRAWithRASL() {
        let ps = Self.packets([(0, "I"), (1, ""), (2, ""), (5, "I"), (3, "RASL"), (4, "RASL"), (7, ""), (6, ""), (9, "I")])
        var plan = SmartCutPlan(from: 0, to: 7)
        let actions = Self.run(&plan, ps)
        #expect(Self.written(actions).isEmpty)
        #expect(Self.decoded(actions) == Array(0...7))
        #expect(Self.stretches(actions).map(\.from) == [0])
    }

    @Test func decodeTimesKeepTheSpacingAndEndBeforeTheCopy() {
        // Source with a two-frame reorder delay: the copy starts at PTS 70, DTS 50.
        let s = ReencodedStretch(from: 20, until: 70, after: nil, before: 50)
        #expect(s.decodeTimes(pts: [20, 30, 40, 50, 60], durations: [10, 10, 10, 10, 10]) == [0, 10, 20, 30, 40])
        // No reordering: DTS = PTS.
        let plain = ReencodedStretch(from: 20, until: 70, after: nil, before: 70)
        #expect(plain.decodeTimes(pts: [20, 30, 40, 50, 60], durations: [10, 10, 10, 10, 10]) == [20, 30, 40, 50, 60])
        // An end stretch after copied packets: its DTS stay as its PTS when they can.
        let tail = ReencodedStretch(from: 100, until: 130, after: 90, before: nil)
        #expect(tail.decodeTimes(pts: [100, 110, 120], durations: [10, 10, 10]) == [100, 110, 120])
        // Squeezed between both: the latest DTS that keep the order.
        let squeezed = ReencodedStretch(from: 100, until: 130, after: 98, before: 105)
        #expect(squeezed.decodeTimes(pts: [100, 110, 120], durations: [10, 10, 10]) == [100, 103, 104])
        #expect(s.decodeTimes(pts: [], durations: []) == [])
    }
}
