import Sync
import Testing

private let v = Rational(unchecked: 1, 12_800)      // a 25 fps MP4 track
private let v90 = Rational(unchecked: 1, 90_000)    // MPEG-TS
private let ms = Rational(unchecked: 1, 1000)       // Matroska
private let a48 = Rational(unchecked: 1, 48_000)

private func video(_ tb: Rational, start: Int64?, pts: Int64?, dts: Int64?, duration: Int64 = 512,
                   reorder: Int = 0, length: Int64? = nil) -> SegmentVideoTiming {
    SegmentVideoTiming(timeBase: tb, startTime: start.map { Timestamp($0, tb) },
                       first: PacketTiming(pts: pts, dts: dts, duration: duration), reorderDelay: reorder,
                       duration: length.map { Timestamp($0, tb) })
}

private func audio(_ tb: Rational, start: Int64?, pts: Int64?, length: Int64? = nil) -> SegmentAudioTiming {
    SegmentAudioTiming(timeBase: tb, startTime: start.map { Timestamp($0, tb) }, firstPTS: pts,
                       duration: length.map { Timestamp($0, tb) })
}

@Suite("AssemblyPlan")
struct AssemblyPlanTests {
    @Test("merge, aligned at the start: video's first frame at 0, audio's first audible sample at 0")
    func mergeAtStart() throws {
        var plan = AssemblyPlan(videoTimeBase: v, sampleRate: 48_000, end: .video, segments: 1)
        // Video starts at 0.1 s (1280), audio at 1024 samples of priming (−1024 → first audible at 0).
        let p = try plan.begin(video: video(v, start: 1280, pts: 1280, dts: 768),
                               audio: audio(a48, start: 0, pts: -1024), alignment: .start)
        #expect(p.videoShift == -1280)
        #expect(p.joint == 0)
        #expect(p.jointSamples == 0)
        #expect(p.audioShift == 0)
        #expect(p.offsetSamples == 0)
        #expect(p.audioPosition(pts: 4800, timeBase: a48) == 4800)
        #expect(p.video(PacketTiming(pts: 1792, dts: 1280, duration: 512)) == PacketTiming(pts: 512, dts: 0, duration: 512))
        #expect(plan.offsetSamples == 0)
        #expect(plan.videoStart == 0)
    }

    @Test("an offset of 250 ms moves the audio 12,000 samples later; −0.5 s earlier")
    func offsets() throws {
        var plan = AssemblyPlan(videoTimeBase: v, sampleRate: 48_000, end: .video, segments: 1)
        let later = try plan.begin(video: video(v, start: 0, pts: 0, dts: 0), audio: audio(a48, start: 0, pts: 0),
                                   alignment: .start, offset: Timestamp(.milliseconds(250)))
        #expect(later.audioShift == 12_000)
        #expect(later.offsetSamples == 12_000)
        var plan2 = AssemblyPlan(videoTimeBase: v, sampleRate: 48_000, end: .video, segments: 1)
        let earlier = try plan2.begin(video: video(v, start: 0, pts: 0, dts: 0), audio: audio(a48, start: 0, pts: 0),
                                      alignment: .start, offset: Timestamp(.milliseconds(-500)))
        #expect(earlier.audioShift == -24_000)
    }

    @Test("timestamps alignment keeps the files' own clocks, relative to the video's start")
    func timestampsAlignment() throws {
        var plan = AssemblyPlan(videoTimeBase: v90, sampleRate: 48_000, end: nil, segments: 1)
        // Video at 1 s (90,000), audio at 1.5 s (72,000 samples): audio 0.5 s late.
        let p = try plan.begin(video: video(v90, start: 90_000, pts: 90_000, dts: 87_000, duration: 3000),
                               audio: audio(a48, start: 72_000, pts: 72_000), alignment: .timestamps)
        #expect(p.videoShift == -90_000)
        #expect(p.audioShift == -48_000)
        #expect(p.offsetSamples == 24_000)
    }

    @Test("audio alone: its start lands at 0, its packets keep their distances, its end is the output's")
    func audioOnly() throws {
        var plan = AssemblyPlan(audioOnlySampleRate: 48_000)
        #expect(plan.end == nil)
        #expect(plan.videoTimeBase == a48)
        // MPEG-TS audio starting at 1.5 s (135,000 on 90 kHz).
        let p = try plan.begin(audioOnly: audio(v90, start: 135_000, pts: 135_000))
        #expect(p.joint == 0 && p.jointSamples == 0)
        #expect(p.audioAnchor == 72_000)
        #expect(p.audioShift == -72_000)
        #expect(p.audioPosition(pts: 135_000, timeBase: v90) == 0)
        // A packet 2 s later (after a hole) stays 2 s later.
        #expect(p.audioPosition(pts: 315_000, timeBase: v90) == 96_000)
        plan.end(p, videoEnd: 480_000)
        #expect(plan.duration == Timestamp(480_000, a48))
        #expect(plan.offsetSamples == nil)
        // An .m4a with encoder priming: the stream starts at 0, the first packet at −1024.
        var m4a = AssemblyPlan(audioOnlySampleRate: 44_100)
        let q = try m4a.begin(audioOnly: audio(Rational(unchecked: 1, 44_100), start: 0, pts: -1024))
        #expect(q.audioShift == 0)
        #expect(q.audioPosition(pts: -1024, timeBase: Rational(unchecked: 1, 44_100)) == -1024)
        // No start and no PTS: from 0.
        var bare = AssemblyPlan(audioOnlySampleRate: 8000)
        #expect(try bare.begin(audioOnly: audio(ms, start: nil, pts: nil)).audioShift == 0)
    }

    @Test("audio alone joined: each segment starts where the one before ended, to the sample")
    func audioOnlySegments() throws {
        var plan = AssemblyPlan(audioOnlySampleRate: 48_000)
        let one = try plan.begin(audioOnly: audio(a48, start: 0, pts: 0))
        #expect(one.joint == 0)
        plan.end(one, videoEnd: 49_152)
        // A second memo whose stream starts at 0 lands at the first one's end.
        let two = try plan.begin(audioOnly: audio(a48, start: 0, pts: 0))
        #expect(two.joint == 49_152 && two.jointSamples == 49_152)
        #expect(two.audioPosition(pts: 0, timeBase: a48) == 49_152)
        #expect(two.audioPosition(pts: 1024, timeBase: a48) == 50_176)
        plan.end(two, videoEnd: 98_304)
        // A third from MPEG-TS, starting at 1.5 s on 90 kHz.
        let three = try plan.begin(audioOnly: audio(v90, start: 135_000, pts: 135_000))
        #expect(three.audioPosition(pts: 135_000, timeBase: v90) == 98_304)
        plan.end(three, videoEnd: 120_000)
        #expect(plan.duration == Timestamp(120_000, a48))
        // A memo whose edit list shows 0.8 s of its 1.024 s (38,400 of 49,152 samples), joined
        // after the third: where another segment follows, it is cut and ends at its edit's end
        // (the 512 samples its last packet holds past it are not heard); as the last segment,
        // its packets run on and the output's edit list hides them.
        var trimmed = audio(a48, start: 0, pts: 0)
        trimmed.editEnd = 38_400
        let four = try plan.begin(audioOnly: trimmed)
        #expect(four.audioShownEnd == 158_400)
        #expect(four.audioAloneLimit(followed: true) == 158_400 && four.audioAloneLimit(followed: false) == nil)
        #expect(four.audioAloneEnd(audioEnd: 158_912, followed: true) == 158_400)
        #expect(four.audioAloneEnd(audioEnd: 158_912, followed: false) == 158_912)
        // Without an edit list, or one past the audio, the audio's own end.
        #expect(three.audioShownEnd == nil && three.audioAloneEnd(audioEnd: 120_000, followed: true) == 120_000)
        #expect(four.audioAloneEnd(audioEnd: 150_000, followed: true) == 150_000)
        // A start that cannot be moved to the joint is refused, not wrapped.
        var edge = AssemblyPlan(audioOnlySampleRate: 48_000)
        let e = try edge.begin(audioOnly: audio(a48, start: 0, pts: 0))
        edge.end(e, videoEnd: 10)
        #expect(throws: AssemblyPlanError.overflow) { try edge.begin(audioOnly: audio(a48, start: .min + 1, pts: nil)) }
    }

    @Test("Matroska's missing first DTS is inferred from the reorder delay, as TrackTimeline does")
    func inferredFirstDTS() throws {
        #expect(TrackTimeline.inferredFirstDTS(pts: 80, duration: 40, reorderDelay: 2) == 0)
        #expect(TrackTimeline.inferredFirstDTS(pts: 80, duration: 0, reorderDelay: 2) == 78)
        #expect(TrackTimeline.inferredFirstDTS(pts: 80, duration: 40, reorderDelay: 0) == 80)
        #expect(TrackTimeline.inferredFirstDTS(pts: nil, duration: 40, reorderDelay: 2) == nil)
        #expect(TrackTimeline.inferredFirstDTS(pts: .min, duration: 40, reorderDelay: 2) == nil)
        // Concat: segment 2's first frame at 80 ms decodes 80 ms earlier (DTS 0);
        // at the joint (1000 ms, segment 1's video end) that DTS lands at 920 ms,
        // after segment 1's last DTS (900 ms), so the joint stays.
        var plan = AssemblyPlan(videoTimeBase: ms, sampleRate: 0, end: .video, segments: 2)
        let one = try plan.begin(video: video(ms, start: 0, pts: 0, dts: 0, duration: 40), audio: nil, alignment: .timestamps)
        plan.wroteVideo(dts: 900)
        plan.end(one, videoEnd: 1000)
        let two = try plan.begin(video: video(ms, start: nil, pts: 80, dts: nil, duration: 40, reorder: 2),
                                 audio: nil, alignment: .timestamps)
        #expect(two.joint == 1000)
        #expect(two.videoShift == 920)
        // With the last DTS at 990 and a lead of 3 frames (DTS −40 → 880 ≤ 990)
        // the joint moves later, to keep DTS increasing.
        var plan2 = AssemblyPlan(videoTimeBase: ms, sampleRate: 0, end: .video, segments: 2)
        let a = try plan2.begin(video: video(ms, start: 0, pts: 0, dts: 0, duration: 40), audio: nil, alignment: .timestamps)
        plan2.wroteVideo(dts: 990)
        plan2.end(a, videoEnd: 1000)
        let b = try plan2.begin(video: video(ms, start: nil, pts: 80, dts: nil, duration: 40, reorder: 3),
                                audio: nil, alignment: .timestamps)
        #expect(b.videoShift == 991 - (-40))
        #expect(b.joint == 80 + 1031)
        #expect(plan2.joints == [0, 1111])
    }

    @Test("concat: each segment starts at the previous one's video end; audio follows its segment")
    func concatJoints() throws {
        var plan = AssemblyPlan(videoTimeBase: v, sampleRate: 48_000, end: nil, segments: 2)
        #expect(plan.end == .video)  // several segments always end at each video
        let one = try plan.begin(video: video(v, start: 0, pts: 0, dts: -512), audio: audio(a48, start: -1024, pts: -1024),
                                 alignment: .timestamps)
        plan.wroteVideo(dts: 126_976)  // 250 frames from DTS −512
        plan.end(one, videoEnd: 128_000)  // 10 s
        let two = try plan.begin(video: video(v, start: 0, pts: 0, dts: -512), audio: audio(a48, start: -1024, pts: -1024),
                                 alignment: .timestamps)
        #expect(two.joint == 128_000)
        #expect(two.jointSamples == 480_000)
        #expect(two.audioShift == 480_000)
        #expect(two.audioPosition(pts: -1024, timeBase: a48) == 478_976)
        #expect(plan.duration == Timestamp(128_000, v))
        plan.end(two, videoEnd: 256_000)
        #expect(plan.duration == Timestamp(256_000, v))
        #expect(plan.joints == [0, 128_000])
    }

    /// An iPhone 14 Pro clip (1/600): frames at 0, 20, 40, 60 shown, one at
    /// 80 decoded second and hidden (flag D), the edit ending at 64, 4 ticks
    /// into the last frame shown. Demuxed (pts, dts): (0, 0), (80, 20),
    /// (40, 40), (20, 60), (60, 80). Joined to itself, the next clip starts
    /// at 64 (each clip 0.1067 s, not 0.1333 s), as its last group is
    /// re-encoded without the hidden frame and decoded in the order shown.
    @Test("concat: a segment whose edit ends inside its last frame ends there")
    func editEndInsideTheLastFrame() throws {
        let tb = Rational(unchecked: 1, 600), a44 = Rational(unchecked: 1, 44_100)
        let frames: [(pts: Int64, dts: Int64, hidden: Bool)] = [(0, 0, false), (80, 20, true), (40, 40, false),
                                                                (20, 60, false), (60, 80, false)]
        func clip(reencodedTail: Bool) -> SegmentVideoTiming {
            SegmentVideoTiming(timeBase: tb, startTime: Timestamp(0, tb), first: PacketTiming(pts: 0, dts: 0, duration: 20),
                               duration: Timestamp(64, tb), editEnd: 64, reencodedTail: reencodedTail)
        }
        func join(reencodedTail: Bool) throws -> (AssemblyPlan, SegmentPlacement) {
            var plan = AssemblyPlan(videoTimeBase: tb, sampleRate: 44_100, end: nil, segments: 2)
            let one = try plan.begin(video: clip(reencodedTail: reencodedTail), audio: audio(a44, start: 0, pts: -2112),
                                     alignment: .timestamps)
            var end = one.joint
            for f in frames {
                let t = one.video(PacketTiming(pts: f.pts, dts: f.dts, duration: 20))
                if !f.hidden, let e = one.shownEnd(of: t) { end = max(end, e) }
                if let d = one.decodeTime(of: t, hidden: f.hidden) { plan.wroteVideo(dts: d) }
            }
            #expect(end == 64)
            plan.end(one, videoEnd: end)
            let two = try plan.begin(video: clip(reencodedTail: false), audio: audio(a44, start: 0, pts: -2112),
                                     alignment: .timestamps)
            return (plan, two)
        }
        let (plan, two) = try join(reencodedTail: true)
        #expect(two.joint == 64 && two.videoShift == 64)
        #expect(two.jointSamples == 4704)  // 64/600 s at 44.1 kHz
        #expect(two.shownEnd == 128)
        #expect(two.shownEnd(of: two.video(PacketTiming(pts: 60, dts: 80, duration: 20))) == 128)
        #expect(two.shownEnd(of: two.video(PacketTiming(pts: 40, dts: 40, duration: 20))) == 124)
        #expect(plan.joints == [0, 64])
        // Its audio's edit ends 4631 samples in, inside its last packet (4032 + 1024):
        // cut there, not at the video's end (4704), the 73 samples between padded.
        var withAudio = AssemblyPlan(videoTimeBase: tb, sampleRate: 44_100, end: nil, segments: 2)
        let shown = SegmentAudioTiming(timeBase: a44, startTime: Timestamp(0, a44), firstPTS: -2112,
                                       duration: Timestamp(4631, a44), editEnd: 4631)
        let a = try withAudio.begin(video: clip(reencodedTail: true), audio: shown, alignment: .timestamps)
        #expect(a.audioShownEnd == 4631)
        #expect(withAudio.audioLimit(videoEnd: 64, placement: a) == 4631)
        #expect(withAudio.padLength(videoEnd: 64, audioEnd: 4631) == 73)
        #expect(withAudio.audioLimit(videoEnd: 64, placement: two) == 4704)  // no audio edit end known
        // Copied as it is, the tail is decoded up to 80: the next clip's first
        // DTS (0) must come after it, so the joint moves to 81.
        #expect(try join(reencodedTail: false).1.joint == 81)
        // Without an edit end (not MP4/MOV), a frame ends where it ends.
        var plain = AssemblyPlan(videoTimeBase: tb, sampleRate: 0, end: .video, segments: 1)
        let p = try plain.begin(video: video(tb, start: 0, pts: 0, dts: 0, duration: 20), audio: nil, alignment: .timestamps)
        #expect(p.shownEnd(of: PacketTiming(pts: 60, dts: 80, duration: 20)) == 80)
        #expect(p.decodeTime(of: PacketTiming(pts: 60, dts: 80, duration: 20), hidden: false) == 80)
    }

    @Test("end policy, through SyncPlan.ends", arguments: [
        // policy, audio limit at video end 10 s, video cut when audio ends at 9 s, pad at 10 s / 9 s
        (EndPolicy?.some(.video), Int64?.some(480_000), Int64?.none, Int64?.some(480_000)),
        (.some(.shortest), .some(480_000), .some(115_200), .none),
        (.some(.longest), .none, .none, .some(480_000)),
        (.none, .none, .none, .none),
    ])
    func ends(policy: EndPolicy?, limit: Int64?, cut: Int64?, pad: Int64?) {
        let plan = AssemblyPlan(videoTimeBase: v, sampleRate: 48_000, end: policy, segments: 1)
        #expect(plan.audioLimit(videoEnd: 128_000) == limit)
        #expect(plan.videoCut(audioEnd: 432_000) == cut)
        #expect(plan.padEnd(videoEnd: 128_000, audioEnd: 432_000) == pad)
    }

    @Test("audio that an offset puts entirely outside the video is refused")
    func outside() {
        var plan = AssemblyPlan(videoTimeBase: v, sampleRate: 48_000, end: .video, segments: 1)
        #expect(throws: AssemblyPlanError.audioOutsideVideo) {
            try plan.begin(video: video(v, start: 0, pts: 0, dts: 0, length: 128_000),
                           audio: audio(a48, start: 0, pts: 0, length: 96_000), alignment: .start,
                           offset: Timestamp(.seconds(20)))
        }
    }

    @Test("a joint beyond what samples can count gives an error, not a trap")
    func overflow() throws {
        let seconds = Rational(unchecked: 1, 1)
        var plan = AssemblyPlan(videoTimeBase: seconds, sampleRate: 48_000, end: .video, segments: 2)
        let one = try plan.begin(video: video(seconds, start: 0, pts: 0, dts: 0, duration: 1),
                                 audio: audio(a48, start: 0, pts: 0), alignment: .timestamps)
        plan.end(one, videoEnd: .max / 1000)
        #expect(throws: AssemblyPlanError.overflow) {
            try plan.begin(video: video(seconds, start: 0, pts: 0, dts: 0, duration: 1),
                           audio: audio(a48, start: 0, pts: 0), alignment: .timestamps)
        }
    }

    @Test("durations become whole microseconds, rounded to nearest, without trapping",
          arguments: [(Duration.milliseconds(250), Int64(250_000)), (.seconds(-0.5), -500_000),
                      (.nanoseconds(1500), 2), (.nanoseconds(-1500), -2), (.seconds(Int64.max), .max)])
    func durations(d: Duration, micro: Int64) {
        #expect(Timestamp(d) == Timestamp(micro, .microseconds))
    }
}
