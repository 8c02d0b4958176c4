import Sync
import Testing

@Suite("CutPartPlan")
struct CutPartPlanTests {
    static let video = CutTrack(.video, timeBase: Rational(unchecked: 1, 15_360))
    static let aac = CutTrack(.audio(frameSamples: 1024, sampleRate: 48_000), timeBase: Rational(unchecked: 1, 48_000))
    static let subtitles = CutTrack(.subtitle, timeBase: Rational(unchecked: 1, 1000))
    static let cover = CutTrack(.coverArt, timeBase: Rational(unchecked: 1, 90_000))

    static func micros(_ seconds: Double) -> Timestamp { Timestamp(Int64((seconds * 1e6).rounded()), .microseconds) }

    /// A keyframe cut into MP4: the range's start rounds down and its end up
    /// on each clock; the AAC keeps one frame of pre-roll for the edit list
    /// to trim; the video shows frames up to the end, no further.
    @Test func cutWithEditList() throws {
        // 3.5 s and 8.2 s on a 15360 Hz clock are 53760 and 125952 exactly; 1/3 s is not.
        let plan = try CutPartPlan(start: Self.micros(3.5), to: Self.micros(8.2), split: false, first: false, editList: true,
                                   audioHead: true, tracks: [Self.video, Self.aac, Self.subtitles, Self.cover])
        #expect(plan.shift == Timestamp(-3_500_000, .microseconds))
        let v = plan.tracks[0], a = plan.tracks[1], s = plan.tracks[2], c = plan.tracks[3]
        #expect(v.selection == CutSelection(.video, from: 53_760, to: 125_952))
        #expect(v.shownEnd == 125_952 && !v.audioHead && !v.clampsToStart)
        #expect(a.selection == CutSelection(.timed(preroll: 1024), from: 168_000, to: 393_600))
        #expect(!a.audioHead && a.shownEnd == nil, "the edit list trims the audio: no re-encoded head")
        #expect(s.selection == CutSelection(.timed(preroll: 0), from: 3500, to: 8200) && s.clampsToStart)
        #expect(c.selection == CutSelection(.always, from: Int64.min / 2, to: nil), "cover art whatever the range")
        // A demuxer opened without probing gives the picture no time: it is kept all the same, in every part.
        for split in [false, true] {
            var picture = try CutPartPlan(start: Self.micros(0), to: Self.micros(2), split: split, first: true, editList: !split,
                                          audioHead: false, tracks: [Self.cover]).tracks[0].selection
            #expect(picture.offer(pts: nil, duration: 0, keyframe: true) == .keep(releaseHeld: 0), "split \(split)")
        }

        let third = try CutPartPlan(start: Self.micros(1.0 / 3), to: Self.micros(2.0 / 3), split: false, first: false,
                                    editList: true, audioHead: false, tracks: [Self.video])
        #expect(third.tracks[0].from == 5119 && third.tracks[0].to == 10_241, "from rounds down, to up (2/3 s is 666667 µs)")
    }

    /// A data track (GoPro telemetry on a 1 kHz clock): a sample that began
    /// before the range starts at its start, shortened by as much; one
    /// inside keeps its time, so it lands at its source time minus the start.
    @Test func dataSampleSpanningTheStartIsClipped() throws {
        let gpmd = CutTrack(.other, timeBase: Rational(unchecked: 1, 1000))
        let plan = try CutPartPlan(start: Self.micros(2.469), to: Self.micros(7.3), split: false, first: false, editList: true,
                                   audioHead: false, tracks: [gpmd])
        let t = plan.tracks[0]
        #expect(t.clampsToStart)
        #expect(t.clamped(PacketTiming(pts: 2002, dts: 2002, duration: 1001)) == PacketTiming(pts: 2469, dts: 2469, duration: 534))
        #expect(t.clamped(PacketTiming(pts: 3003, dts: 3003, duration: 1001)) == PacketTiming(pts: 3003, dts: 3003, duration: 1001))
        let split = try CutPartPlan(start: Self.micros(2.469), to: nil, split: true, first: false, editList: false,
                                    audioHead: false, tracks: [gpmd])
        #expect(!split.tracks[0].clampsToStart, "a split's parts take the samples that start in them, unclipped")
    }

    /// No edit list (Matroska): the audio's head is re-encoded, with its pre-roll frame decoded; nothing is hidden.
    @Test func cutWithoutEditList() throws {
        let plan = try CutPartPlan(start: Self.micros(2), to: nil, split: false, first: false, editList: false,
                                   audioHead: true, tracks: [Self.video, Self.aac])
        #expect(plan.tracks[0].shownEnd == nil && plan.tracks[0].to == nil)
        #expect(plan.tracks[1].audioHead && plan.tracks[1].selection == CutSelection(.timed(preroll: 1024), from: 96_000, to: nil))
        // A joined range leaves the audio's start to the concat engine: no head, no pre-roll.
        let joined = try CutPartPlan(start: Self.micros(2), to: nil, split: false, first: false, editList: false,
                                     audioHead: false, tracks: [Self.aac])
        #expect(!joined.tracks[0].audioHead && joined.tracks[0].selection == CutSelection(.timed(preroll: 0), from: 96_000, to: nil))
    }

    /// A split's parts hold each packet once: keyframe times back to the same ticks, packets by where they start.
    @Test func splitParts() throws {
        let keyframe = Timestamp(1578 * 1001, Rational(unchecked: 1, 30_000))
        let next = Timestamp(1638 * 1001, Rational(unchecked: 1, 30_000))
        let ntsc = CutTrack(.video, timeBase: Rational(unchecked: 1, 30_000))
        let plan = try CutPartPlan(start: keyframe, to: next, split: true, first: false, editList: false, audioHead: true,
                                   tracks: [ntsc, Self.aac, Self.subtitles])
        #expect(plan.tracks[0].selection == CutSelection(.videoPart, from: 1578 * 1001, to: 1638 * 1001))
        #expect(plan.tracks[1].selection.kind == .starting && !plan.tracks[1].audioHead)
        #expect(plan.tracks.allSatisfy { $0.shownEnd == nil && !$0.clampsToStart })
        let first = try CutPartPlan(start: .zero(.microseconds), to: keyframe, split: true, first: true, editList: false,
                                    audioHead: false, tracks: [ntsc])
        #expect(first.tracks[0].from == Int64.min / 2, "the first part keeps everything before its end")
    }

    /// A range a track's clock cannot hold is refused, naming the track, not read as "from the start" or "to the end".
    @Test func unreachableTimesAreRefused() {
        let fine = CutTrack(.video, timeBase: Rational(unchecked: 1, Int32.max))
        #expect(throws: CutPlanError(track: 1, what: "end \(Timestamp(.max / 4, .microseconds))")) {
            try CutPartPlan(start: Self.micros(1), to: Timestamp(.max / 4, .microseconds), split: false, first: false,
                            editList: true, audioHead: false, tracks: [Self.video, fine])
        }
    }

    @Test func subtitleShownSinceBeforeTheStartIsClamped() throws {
        let plan = try CutPartPlan(start: Self.micros(3.5), to: nil, split: false, first: false, editList: true,
                                   audioHead: false, tracks: [Self.subtitles])
        let t = plan.tracks[0]
        #expect(t.clamped(PacketTiming(pts: 3000, dts: 3000, duration: 2000)) == PacketTiming(pts: 3500, dts: 3500, duration: 1500))
        #expect(t.clamped(PacketTiming(pts: 3000, dts: 3000, duration: 200)) == PacketTiming(pts: 3500, dts: 3500, duration: 0))
        #expect(t.clamped(PacketTiming(pts: 4000, dts: 4000, duration: 10)) == PacketTiming(pts: 4000, dts: 4000, duration: 10))
        #expect(t.clamped(PacketTiming(pts: .min, dts: nil, duration: .max)).pts == 3500, "no trap on any timing")
    }

    /// Seeking again before a keyframe found too late: one tick, half a second, then twice as far.
    @Test func keyframeSearchStepsBack() throws {
        var search = try KeyframeSearch(at: Timestamp(10_000, Rational(unchecked: 1, 1000)), timeBase: Rational(unchecked: 1, 1000))
        #expect(search.target == 10_000 && search.reaches(10_000) && !search.reaches(10_001))
        search.stepBack(from: (pts: 10_040, dts: 9_960))
        #expect(search.target == 9_959)
        search.stepBack(from: (pts: 9_990, dts: nil))
        #expect(search.target == 9_459)
        search.stepBack(from: (pts: 9_990, dts: 9_000))
        #expect(search.target == 8_000)
        #expect(KeyframeSearch.target(withoutVideo: Self.micros(3), timeBase: Rational(unchecked: 1, 48_000)) == 96_000)
        #expect(throws: CutPlanError.self) {
            try KeyframeSearch(at: Timestamp(.max, .microseconds), timeBase: Rational(unchecked: 1, Int32.max))
        }
    }

    @Test func framesAndSamples() throws {
        let ntsc = Rational(unchecked: 30_000, 1001)
        #expect(frameCount(from: .zero(.microseconds), to: Timestamp(1001, Rational(unchecked: 1, 30_000)), rate: ntsc) == 1)
        #expect(frameCount(from: Self.micros(10), to: Self.micros(0), rate: ntsc) == -300)
        #expect(frameCount(from: Timestamp(.min, .microseconds), to: Timestamp(.max, .microseconds), rate: ntsc) == nil)
        let clock = try #require(SampleClock(timeBase: Rational(unchecked: 1, 90_000), sampleRate: 48_000))
        #expect(clock.ticks(1024) == 1920 && clock.samples(1920) == 1024)
        let t = clock.timing(PacketTiming(pts: 2048, dts: 0, duration: 1024), from: Rational(unchecked: 1, 48_000))
        #expect(t == PacketTiming(pts: 3840, dts: 3840, duration: 1920))
        #expect(SampleClock(timeBase: .microseconds, sampleRate: 0) == nil)
    }
}
