import PropertyBased
import Sync
import Testing

@Suite("AudioAssembler")
struct AudioAssemblerTests {
    @Test("exact mode: a gap becomes that many samples of silence, an overlap is trimmed, the limit cuts")
    func exact() {
        var a = AudioAssembler(sampleRate: 48_000, toleranceSamples: 48)
        #expect(a.place(at: 1000, samples: 1024) == AudioStep(keep: 1024, position: 1000))
        #expect(a.place(at: 2024 + 5000, samples: 1024) == AudioStep(silence: 5000, keep: 1024, position: 7024))
        #expect(a.place(at: 8048 - 300, samples: 1024) == AudioStep(trimStart: 300, keep: 724, position: 8048))
        #expect(a.place(at: nil, samples: 1024, limit: 9000) == AudioStep(keep: 228, position: 8772))
        #expect(a.place(at: nil, samples: 1024, limit: 9000) == AudioStep(keep: 0, position: 9000))
        #expect(a.silenceInserted == 5000)
        #expect(a.samplesTrimmed == 300 + (1024 - 228) + 1024)
        #expect(a.cursor == 9000 && a.origin == 1000)
    }

    @Test("within the tolerance the running count wins")
    func tolerance() {
        var a = AudioAssembler(sampleRate: 44_100, toleranceSamples: 45)
        _ = a.place(at: 0, samples: 1024)
        #expect(a.place(at: 1024 + 40, samples: 1024) == AudioStep(keep: 1024, position: 1024))
        #expect(a.place(at: 2048 - 45, samples: 1024) == AudioStep(keep: 1024, position: 2048))
        #expect(a.repairs.isEmpty)
    }

    /// Timestamps that run steadily late (a clock 1.5 % slow: each 1024-sample
    /// packet stamped 15 samples later than the one before would put it):
    /// every step is under the tolerance, but the packets are laid back to
    /// back only while each stays within it of its own timestamp; then
    /// silence brings the cursor back, so no packet ever lands farther.
    @Test("absorbed jitter never adds up to drift", arguments: [Int64?.none, 1024])
    func jitterDoesNotAccumulate(frameSize: Int64?) {
        let tolerance: Int64 = 882
        var a = AudioAssembler(sampleRate: 44_100, frameSize: frameSize, toleranceSamples: tolerance)
        var worst: Int64 = 0, filled = 0
        for k in Int64(0)..<400 {
            let at = k * (1024 + 15)
            let step = a.place(at: at, samples: 1024)
            if step.silence > 0 { filled += 1 }
            if step.residual == 0 { worst = max(worst, abs(step.position - at)) }
        }
        #expect(worst <= tolerance, "a packet \(worst) samples from its timestamp")
        #expect(a.largestShift <= tolerance)
        // 400 × 15 samples late in all: filled, not absorbed.
        #expect(filled > 0 && a.silenceInserted >= 400 * 15 - tolerance - 1024, "\(a.silenceInserted) samples of silence")
    }

    @Test("whole packets: a gap of 3 frames gets 3 silent frames, in sync")
    func wholeFrames() {
        var a = AudioAssembler(sampleRate: 48_000, frameSize: 1024, toleranceSamples: 48)
        _ = a.place(at: 0, samples: 1024)
        let s = a.place(at: 1024 + 3 * 1024 + 10, samples: 1024)
        #expect(s.silence == 3 * 1024 && s.residual == 0 && s.keep == 1024 && s.position == 4096)
        #expect(a.worstResidual == 10)
    }

    @Test("the largest shift counts jitter absorbed within the tolerance, early and late")
    func largestShift() {
        var a = AudioAssembler(sampleRate: 48_000, frameSize: 1024, toleranceSamples: 960)
        _ = a.place(at: 0, samples: 1024)
        #expect(a.largestShift == 0)
        // A messaging app's timestamps: 11 ms late, then 15 ms early, each laid back to back.
        _ = a.place(at: 1024 + 528, samples: 1024)
        #expect(a.largestShift == 528)
        _ = a.place(at: 2048 - 720, samples: 1024)
        #expect(a.largestShift == 720)
        // Continuing from the cursor (no timestamp) moves nothing.
        _ = a.place(at: nil, samples: 1024)
        #expect(a.largestShift == 720 && a.repairs.isEmpty)
        // A packet past the end limit is not written, so it moves nothing.
        _ = a.place(at: 90_000, samples: 1024, limit: 4096)
        #expect(a.largestShift == 720)
        // Exact mode counts it too.
        var e = AudioAssembler(sampleRate: 48_000, toleranceSamples: 48)
        _ = e.place(at: 0, samples: 1024)
        _ = e.place(at: 1024 - 30, samples: 1024)
        #expect(e.largestShift == 30)
    }

    @Test("whole packets: a gap of 2.5 frames cannot be filled in sync: the step says by how much")
    func wholeFramesResidual() {
        var a = AudioAssembler(sampleRate: 48_000, frameSize: 1024, toleranceSamples: 48)
        _ = a.place(at: 0, samples: 1024)
        let s = a.place(at: 1024 + 2560, samples: 1024)
        // Nearest whole number of frames: 3 (2.5 rounds up) → 512 samples late.
        #expect(s.silence == 3072)
        #expect(s.residual == -512)
    }

    @Test("whole packets: a packet inside what was written is dropped; a partial overlap keeps the nearer")
    func wholeOverlap() {
        var a = AudioAssembler(sampleRate: 48_000, frameSize: 1024, toleranceSamples: 48)
        _ = a.place(at: 0, samples: 1024)
        _ = a.place(at: 1024, samples: 1024)
        let dropped = a.place(at: 1024, samples: 1024)
        #expect(dropped.keep == 0 && dropped.trimStart == 1024 && dropped.residual == 0)
        // 1000 samples overlap: dropping it is 24 samples early (within tolerance).
        let early = a.place(at: 2048 - 1000, samples: 1024)
        #expect(early.keep == 0 && early.residual == 0)
        #expect(a.cursor == 2048)
    }

    @Test("whole packets: the packet that starts before the limit is kept whole; padding rounds up to frames")
    func wholeLimitAndPad() {
        var a = AudioAssembler(sampleRate: 48_000, frameSize: 1024, toleranceSamples: 48)
        _ = a.place(at: 0, samples: 1024, limit: 1500)
        #expect(a.place(at: 1024, samples: 1024, limit: 1500).keep == 1024)
        #expect(a.place(at: 2048, samples: 1024, limit: 1500).keep == 0)
        #expect(a.pad(to: 2048 + 100) == 1024)
        #expect(a.cursor == 3072)
        #expect(a.pad(to: 3000) == 0)
    }

    @Test("property (exact mode): every kept sample lands where its timestamp says, give or take the tolerance")
    func exactLandsOnTime() async {
        await propertyCheck(
            count: 300,
            input: Gen.int64(in: -100_000...100_000), Gen.int64(in: -5000...50_000), Gen.int64(in: 1...2048),
            Gen.int64(in: 0...100)
        ) { start, jump, size, tolerance in
            var a = AudioAssembler(sampleRate: 48_000, toleranceSamples: tolerance)
            var t = start
            for k in 0..<30 {
                let s = a.place(at: t, samples: size)
                #expect(s.silence >= 0 && s.trimStart >= 0 && s.keep >= 0 && s.keep <= size)
                if s.keep > 0 {
                    // The first kept sample is input sample trimStart, which belongs at t + trimStart.
                    #expect(abs(s.position - (t + s.trimStart)) <= tolerance)
                }
                t += size + (k == 15 ? jump : 0)
            }
        }
    }

    @Test("property (whole packets): positions are contiguous and residuals are reported, never hidden")
    func wholePacketsHonest() async {
        await propertyCheck(
            count: 300,
            input: Gen.int64(in: 0...100_000), Gen.int64(in: -3000...20_000)
        ) { start, jump in
            var a = AudioAssembler(sampleRate: 48_000, frameSize: 1024, toleranceSamples: 48)
            var t = start
            var cursor: Int64?
            for k in 0..<20 {
                let s = a.place(at: t, samples: 1024)
                if let c = cursor { #expect(s.position == c + s.silence) }
                if s.keep > 0 {
                    #expect(s.residual != 0 || abs(s.position - t) <= 48, "landed \(s.position) for \(t)")
                    cursor = s.position + s.keep
                } else if cursor == nil {
                    cursor = a.cursor
                }
                t += 1024 + (k == 10 ? jump : 0)
            }
        }
    }
}

@Suite("SyncPlan and SplicePlan")
struct SyncPlanTests {
    let us = Rational.microseconds
    let a48 = Rational(unchecked: 1, 48_000)
    let v = Rational(unchecked: 1, 12_800)

    @Test("align start: both first instants become zero; an offset moves the audio")
    func alignStart() {
        let p = SyncPlan(videoStart: Timestamp(1280, v), audioStart: Timestamp(4800, a48), alignment: .start,
                         offset: Timestamp(120_000, us))!
        #expect(p.videoShift == Timestamp(-1280, v))
        #expect(p.audioShift == Timestamp(-4800 + 5760, a48))
        #expect(p.offset == Timestamp(5760, a48))
    }

    @Test("align timestamps: the audio keeps its distance from the video's first frame")
    func alignTimestamps() {
        let p = SyncPlan(videoStart: Timestamp(12_800, v), audioStart: Timestamp(72_000, a48), alignment: .timestamps)!
        // Video at 1 s, audio at 1.5 s: audio lands at 0.5 s.
        #expect(p.offset == Timestamp(24_000, a48))
        #expect(p.audioShift == Timestamp(-48_000, a48))
    }

    @Test("ends: video pads or cuts the audio; shortest cuts the longer; longest only pads")
    func ends() {
        let ten = Timestamp(10, Rational(unchecked: 1, 1)), nine = Timestamp(9, Rational(unchecked: 1, 1))
        #expect(SyncPlan.ends(video: ten, audio: nine, policy: .video) == (ten, nil))
        #expect(SyncPlan.ends(video: nine, audio: ten, policy: .video) == (nine, nil))
        #expect(SyncPlan.ends(video: ten, audio: nine, policy: .shortest) == (nil, nine))
        #expect(SyncPlan.ends(video: nine, audio: ten, policy: .shortest) == (nine, nil))
        #expect(SyncPlan.ends(video: ten, audio: nine, policy: .longest) == (ten, nil))
        #expect(SyncPlan.ends(video: nine, audio: ten, policy: .longest) == (nil, nil))
    }

    @Test("splice: each segment starts at the previous one's video end")
    func splice() {
        var s = SplicePlan(timeBase: v)
        #expect(s.begin(videoStart: 1000, firstDTS: 500) == -1000)
        s.wrote(dts: 60_000)
        s.end(videoEnd: 65_000)
        #expect(s.joint == 64_000)
        // Segment 2 starts at 200 with DTS from −300: shift 63 800; DTS lands at 63 500 > 59 000.
        #expect(s.begin(videoStart: 200, firstDTS: -300) == 63_800)
        #expect(s.joints == [0, 64_000])
    }

    @Test("splice: a decode lead that would collide with the previous DTS moves the joint later")
    func spliceDTS() {
        var s = SplicePlan(timeBase: v)
        _ = s.begin(videoStart: 0, firstDTS: 0)
        s.wrote(dts: 9_990)
        s.end(videoEnd: 10_000)
        let shift = s.begin(videoStart: 0, firstDTS: -20)
        #expect(shift == 10_011)
        #expect(s.joints.last == 10_011)
    }
}
