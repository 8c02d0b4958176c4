import PropertyBased
import Sync
import Testing

// Timestamps as broken files deliver them — negative, going backwards,
// huge, near Int64's ends, wrapping, unknown — through every part of the
// core the verbs chain together. The promise: each step either refuses
// (nil, a thrown error) or gives values that keep the muxer's invariants
// (DTS strictly increasing / non-decreasing, PTS ≥ DTS, nothing unknown,
// no overflow). A trap anywhere here would crash the test process.

private let period33: Int64 = 1 << 33

enum Hostile {
    static let timeBases: [Rational] = [
        .mpegClock, Rational(unchecked: 1, 1000), Rational(unchecked: 1, 48_000), Rational(unchecked: 1001, 30_000),
        Rational(unchecked: 1, 1), .microseconds, Rational(unchecked: 1, Int32.max), Rational(unchecked: Int32.max, 1),
    ]
    static let timeBase = Gen<Rational?>.element(of: timeBases).map { $0! }
    /// The values where arithmetic breaks, drawn often.
    static let edges: [Int64] = [.min, .min + 1, -period33, -1, 0, 1, period33 - 1, period33, .max - 1, .max]
    static let value = Gen.oneOf(
        Gen<Int64?>.element(of: edges).map { $0! },
        Gen.int64(in: -1000...100_000),
        Gen.int64(in: -period33...(2 * period33)),
        Gen.int64(in: .min ... .max),
        Gen.int64(in: (.max - 1000) ... .max),
        Gen.int64(in: .min ... (.min + 1000))
    )
    static let count = Gen.oneOf(Gen.int64(in: -10...4096), Gen.int64(in: .min ... .max), Gen.int64(in: (.max - 10) ... .max))
    static let packet = zip(value.optional(valueRate: 0.8), value.optional(valueRate: 0.8), count)
        .map { t in PacketTiming(pts: t.0, dts: t.1, duration: t.2) }
    /// Mostly increasing, with jitter, repeats, holes and unknowns, from anywhere.
    static let plausible = zip(
        value,
        zip(Gen.int64(in: -3003...9009).optional(valueRate: 0.9), Gen.int64(in: -6006...9009).optional(valueRate: 0.9),
            Gen.int64(in: -10...3003)).array(of: 1...80)
    ).map { start, deltas in
        var dts = start
        return deltas.map { step, ptsOffset, duration in
            if let step { dts = dts &+ step }
            return PacketTiming(pts: ptsOffset.map { dts &+ $0 }, dts: step.map { _ in dts }, duration: duration)
        }
    }
    static let packets = Gen.oneOf(packet.array(of: 1...40), plausible)
}

/// Checks one track's output as a muxer would; `nil` after a refusal.
struct MuxerCheck {
    let order: DTSOrder
    var lastDTS: Int64?

    mutating func accept(_ out: PacketTiming, for input: PacketTiming, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let pts = out.pts, let dts = out.dts else {
            Issue.record("unknown timestamp in \(out) for \(input)", sourceLocation: sourceLocation)
            return
        }
        if let last = lastDTS {
            let ordered = order == .strictlyIncreasing ? dts > last : dts >= last
            #expect(ordered, "DTS \(dts) after \(last) for \(input)", sourceLocation: sourceLocation)
        }
        #expect(pts >= dts, "\(out) for \(input)", sourceLocation: sourceLocation)
        #expect(out.duration >= 0, "\(out) for \(input)", sourceLocation: sourceLocation)
        lastDTS = dts
    }
}

@Suite("hostile timestamps")
struct HostileTimestampTests {
    @Test("SyncPlan: any starts, offsets and time bases give nil or shifts that put the audio exactly at the offset")
    func syncPlan() async {
        await propertyCheck(
            count: 2000,
            input: zip(Hostile.value, Hostile.timeBase), zip(Hostile.value, Hostile.timeBase),
            zip(Hostile.value, Hostile.timeBase), Gen.bool
        ) { video, audio, offset, timestamps in
            let v = Timestamp(video.0, video.1), a = Timestamp(audio.0, audio.1)
            guard let plan = SyncPlan(videoStart: v, audioStart: a, alignment: timestamps ? .timestamps : .start,
                                      offset: Timestamp(offset.0, offset.1)) else { return }
            #expect(plan.videoShift.timeBase == v.timeBase && plan.audioShift.timeBase == a.timeBase)
            #expect(v.value &+ plan.videoShift.value == 0, "the video's first frame is 0")
            #expect(a.value.addingReportingOverflow(plan.audioShift.value) == (plan.offset.value, false))
            if !timestamps, let o = Timestamp(offset.0, offset.1).rescaled(to: a.timeBase) {
                #expect(plan.offset.value == o.value, "--align start: the audio starts at the offset")
            }
        }
    }

    @Test("SyncPlan.ends: the cut is one of the two ends, and only one track is cut")
    func ends() async {
        await propertyCheck(count: 500, input: zip(Hostile.value, Hostile.timeBase), zip(Hostile.value, Hostile.timeBase),
                            Gen<EndPolicy?>.element(of: EndPolicy.allCases).map { $0! }) { v, a, policy in
            let video = Timestamp(v.0, v.1), audio = Timestamp(a.0, a.1)
            let (audioEnd, videoCut) = SyncPlan.ends(video: video, audio: audio, policy: policy)
            #expect(audioEnd == nil || videoCut == nil)
            if let audioEnd { #expect(audioEnd == video) }
            if let videoCut { #expect(videoCut == audio && audio < video) }
        }
    }

    @Test("a merge's two tracks: SyncPlan shifts through TrackTimeline keep each track's invariants or refuse")
    func mergeTracks() async {
        await propertyCheck(
            count: 500,
            input: zip(Hostile.value, Hostile.value, Hostile.timeBase, Hostile.timeBase, Gen.bool),
            Hostile.packets, Hostile.packets
        ) { starts, videoPackets, audioPackets in
            let (videoStart, audioStart, videoTB, audioTB, strict) = starts
            guard let plan = SyncPlan(videoStart: Timestamp(videoStart, videoTB), audioStart: Timestamp(audioStart, audioTB),
                                      alignment: .timestamps) else { return }
            let order: DTSOrder = strict ? .strictlyIncreasing : .nonDecreasing
            for (shift, packets) in [(plan.videoShift, videoPackets), (plan.audioShift, audioPackets)] {
                guard var t = try? TrackTimeline(source: shift.timeBase, target: Rational(unchecked: 1, 90_000),
                                                 shift: shift, order: order) else { continue }
                var check = MuxerCheck(order: order)
                for p in packets {
                    guard let out = try? t.map(p) else { continue }
                    check.accept(out, for: p)
                }
                // Not a test that refusing everything would pass: a clean track
                // (a frame every 1024 ticks from its own start) through the
                // same shift is taken whole wherever its times fit the clock.
                guard (-(1 << 40))..<(1 << 40) ~= shift.value, shift.timeBase.numerator <= 1001,
                      var clean = try? TrackTimeline(source: shift.timeBase, target: Rational(unchecked: 1, 90_000),
                                                     shift: shift, order: order) else { continue }
                var cleanCheck = MuxerCheck(order: order)
                for k in Int64(0)..<8 {
                    let p = PacketTiming(pts: k * 1024 - shift.value, dts: k * 1024 - shift.value, duration: 1024)
                    let out = try? clean.map(p)
                    #expect(out != nil, "a clean packet \(p) refused with shift \(shift)")
                    if let out { cleanCheck.accept(out, for: p) }
                }
            }
        }
    }

    @Test("concat: SplicePlan joints through per-segment timelines resuming each other keep one ordered track")
    func splice() async {
        await propertyCheck(
            count: 500,
            input: Hostile.timeBase, Gen.bool,
            zip(Hostile.value, Hostile.value.optional(valueRate: 0.7), Hostile.packets).array(of: 1...5)
        ) { tb, strict, segments in
            let order: DTSOrder = strict ? .strictlyIncreasing : .nonDecreasing
            let target = Rational(unchecked: 1, 1000)
            var plan = SplicePlan(timeBase: tb)
            var check = MuxerCheck(order: order)
            var previous: TrackTimeline?
            for (videoStart, firstDTS, packets) in segments {
                let shift = plan.begin(videoStart: videoStart, firstDTS: firstDTS)
                #expect(plan.joints.count <= segments.count)
                guard var t = try? TrackTimeline(source: tb, target: target, shift: Timestamp(shift, tb), order: order)
                else { continue }
                if let previous { t.resume(after: previous) }
                var end = videoStart
                for p in packets {
                    guard let out = try? t.map(p) else { continue }
                    check.accept(out, for: p)
                    if let d = out.dts, let back = rescale(d, from: target, to: tb) { plan.wrote(dts: back) }
                    if let pts = p.pts { end = max(end, pts &+ max(p.duration, 0)) }
                }
                plan.end(videoEnd: end)
                previous = t
            }
        }
    }

    @Test("AudioGapScanner: any timestamps and sample counts: no trap, gaps and overlaps counted as magnitudes")
    func gapScanner() async {
        await propertyCheck(
            count: 1000,
            input: Hostile.timeBase, Gen.int32(in: 1...384_000), zip(Hostile.value.optional(valueRate: 0.85), Hostile.count).array(of: 1...60)
        ) { tb, rate, packets in
            guard var scanner = AudioGapScanner(timeBase: tb, sampleRate: rate, keepAtMost: 10) else { return }
            for (pts, samples) in packets { scanner.add(pts: pts, samples: samples) }
            #expect(scanner.gapSamples >= 0 && scanner.overlapSamples >= 0)
            #expect(scanner.discontinuities.count <= 10 && scanner.discontinuities.count <= scanner.discontinuityCount)
            for d in scanner.discontinuities {
                #expect(d.samples != 0 && d.samples.magnitude > UInt64(scanner.toleranceSamples))
            }
        }
    }

    @Test("AudioAssembler: any placements, limits and pads: counts are never negative and the cursor never goes back")
    func assembler() async {
        await propertyCheck(
            count: 1000,
            input: zip(Gen.int64(in: 1...4096).optional(valueRate: 0.5), Hostile.count),
            zip(Hostile.value.optional(valueRate: 0.8), Hostile.count, Hostile.value.optional(valueRate: 0.3), Gen.bool)
                .array(of: 1...40)
        ) { config, steps in
            let (frameSize, tolerance) = config
            var a = AudioAssembler(sampleRate: 48_000, frameSize: frameSize, toleranceSamples: tolerance, keepAtMost: 8)
            var cursor: Int64?
            for (at, samples, limit, pad) in steps {
                if pad, let end = at {
                    let n = a.pad(to: end)
                    #expect(n >= 0)
                    if let frameSize, n > 0 { #expect(n % frameSize == 0) }
                } else {
                    let s = a.place(at: at, samples: samples, limit: limit)
                    #expect(s.silence >= 0 && s.trimStart >= 0 && s.keep >= 0)
                    #expect(s.keep <= max(samples, 0) - s.trimStart)
                }
                if let c = cursor, let now = a.cursor { #expect(now >= c, "cursor went back from \(c) to \(now)") }
                cursor = a.cursor ?? cursor
                #expect(a.silenceInserted >= 0 && a.samplesTrimmed >= 0)
                #expect(a.repairs.count <= 8)
            }
        }
    }

    @Test("assembled audio through its TrackTimeline: the positions the assembler gives keep the muxer's order")
    func assembledAudioTimeline() async {
        await propertyCheck(
            count: 500,
            input: Gen.int64(in: 1...2048).optional(valueRate: 0.5),
            zip(Hostile.value.optional(valueRate: 0.8), Gen.int64(in: 0...4096)).array(of: 1...40)
        ) { frameSize, packets in
            let sampleTB = Rational(unchecked: 1, 48_000)
            var a = AudioAssembler(sampleRate: 48_000, frameSize: frameSize, toleranceSamples: 48)
            guard var t = try? TrackTimeline(source: sampleTB, target: sampleTB, order: .strictlyIncreasing) else { return }
            var check = MuxerCheck(order: .strictlyIncreasing)
            var refused = 0
            for (at, samples) in packets {
                let s = a.place(at: at, samples: samples)
                guard s.keep > 0 else { continue }
                let p = PacketTiming(pts: s.position, dts: s.position, duration: samples)
                guard let out = try? t.map(p) else {
                    refused += 1
                    continue
                }
                check.accept(out, for: p)
            }
            // Positions of ordinary packets (times within a few years of 0)
            // are all taken: a timeline that refused everything would fail here.
            if packets.allSatisfy({ $0.0.map { (-(1 << 42))..<(1 << 42) ~= $0 } ?? true }) {
                #expect(refused == 0, "\(refused) of \(packets.count) placed packets refused")
            }
        }
    }

    @Test("ExtentTracker and AVSkew: any packets and priming: no trap; an extent's start is never after its end")
    func extents() async {
        await propertyCheck(
            count: 1000,
            input: Hostile.timeBase, Hostile.count, Gen.int32(in: -10...384_000),
            zip(Hostile.value.optional(valueRate: 0.9), Hostile.count).array(of: 1...30)
        ) { tb, priming, rate, packets in
            var tracker = ExtentTracker(timeBase: tb)
            tracker.primingSamples = priming
            tracker.sampleRate = rate
            for (pts, duration) in packets { tracker.add(pts: pts, duration: duration) }
            guard let e = tracker.extent else { return }
            #expect(e.start.value <= e.end.value)
            _ = e.duration
            _ = AVSkew(video: e, audio: e, sampleRate: rate)
        }
    }

    @Test("WrapUnwrapper: any values and widths: no trap; each result is congruent to its input or the input itself")
    func unwrap() async {
        await propertyCheck(count: 1000, input: Gen.int(in: 2...62), Hostile.value.array(of: 1...50)) { bits, values in
            var u = WrapUnwrapper(bits: bits)!
            let period = Int64(1) << bits
            for v in values {
                let r = u.unwrap(v)
                #expect(((r % period) - (v % period)) % period == 0, "\(v) → \(r) (2^\(bits))")
            }
        }
    }

    @Test("FrameTimestamps: any decoder timestamps and durations: no trap, durations never negative")
    func frameTimestamps() async {
        await propertyCheck(
            count: 1000,
            input: Hostile.count, Gen.bool, zip(Hostile.value.optional(valueRate: 0.8), Hostile.count).array(of: 1...40)
        ) { nominal, wraps, frames in
            var f = FrameTimestamps(nominalDuration: nominal, wrapBits: wraps ? 33 : nil)
            for (pts, duration) in frames {
                let out = f.frame(timestamp: pts, duration: duration)
                #expect(out.duration >= 0)
                #expect(f.packetDuration(pts: out.pts, duration: 0) >= 0)
            }
            #expect(f.pendingCount == 0)
        }
    }

    @Test("FrameRateConverter: any frame times: no trap; output ranges are contiguous and never go back")
    func frameRate() async {
        await propertyCheck(
            count: 1000,
            input: Hostile.timeBase, Gen.int32(in: 1...240), Gen.int32(in: 1...1001),
            zip(Hostile.value, Hostile.count).array(of: 1...40)
        ) { tb, num, den, frames in
            guard var c = FrameRateConverter(frameRate: Rational(unchecked: num, den), inputTimeBase: tb) else { return }
            var next: Int64?
            for (pts, duration) in frames {
                let r = c.add(pts: pts, duration: duration)
                if !r.isEmpty, let n = next { #expect(r.lowerBound == n) }
                if !r.isEmpty { next = r.upperBound }
            }
            let r = c.finish()
            if !r.isEmpty, let n = next { #expect(r.lowerBound == n) }
            #expect(c.framesOut >= 0 && c.duplicated >= 0)
        }
    }
}
