import Media
import Pipeline
import Sync

/// What a packet-only read found about copying the audio.
struct CopiedAudioScan {
    /// Why whole packets cannot keep the audio in sync (re-encode then), or
    /// `nil` when they can.
    var reencodeReason: String?
    /// The packets re-encoded onto the copied frames' grid, when gaps or
    /// overlaps that are not whole frames put some on another grid.
    var reencoded: ReencodedPackets?
    /// With several segments: where each lands and where its video ends, and
    /// the plan after the last. The run writes by this layout (it does not
    /// place the segments again), so what it writes is what was laid out here.
    var layout: PlannedLayout?
}

/// Segments placed before anything is written.
struct PlannedLayout {
    var placements: [SegmentPlacement]
    /// Each segment's video end on the output timeline.
    var videoEnds: [Int64]
    /// Each segment's frames hidden at its end that a joint leaves out (by DTS).
    var hiddenTails: [Set<Int64>] = []
    /// The plan once every segment is placed (joints, start, end, offset).
    var plan: AssemblyPlan
}

/// Lays the audio out in whole packets, with silent frames, exactly as
/// `AudioCopyTrack` will, from a read of packet timings only (nothing
/// decoded, nothing written), to decide before the output exists whether
/// stream copy lands every sample within the tolerance. Segments are placed
/// by the run's own `place`. One segment needs only its audio packets: the
/// cut at the video's end only drops packets, so what the run writes is laid
/// out as here. Several segments also need each segment's video end, which
/// moves the next joint (audio alone: its audio's end). Each segment is
/// opened in turn and let go once scanned.
func scanCopiedAudio(_ segments: Segments, silence: SilentAudio, options: AssemblyOptions, verb: String,
                     open: InputOpener, cancellation: Cancellation) throws(MediaError) -> CopiedAudioScan {
    let stream = segments.first.audio!.stream
    var plan = AssemblyPlan(segments, sampleRate: stream.sampleRate, end: options.end)
    var assembler = AudioAssembler(sampleRate: stream.sampleRate, frameSize: silence.quantum,
                                   toleranceSamples: copyTolerance(stream, options: options))
    var layout = PlannedLayout(placements: [], videoEnds: [], plan: plan)
    var grid = FrameGridPlan(frameSize: silence.quantum, toleranceSamples: assembler.toleranceSamples)
    // Per segment: the packet ordinals where a run of the grid plan starts, and its number.
    var runStarts: [[(ordinal: Int, run: Int)]] = []
    // Per segment: the packets at its start re-encoded with the joint before it.
    var jointPackets: [[Range<Int>]] = []
    // The last packets of the segment before that are written (not cut at its end).
    var lastWritten: [Int] = []
    // Whether silence was laid at the end of the segment before.
    var padded = false
    for k in 0..<segments.count {
        let seg = try segments.segment(k)
        runStarts.append([])
        jointPackets.append([])
        let placement = try place(seg, index: k, in: &plan, verb: verb)
        var videoEnd = placement.joint
        let followed = k < segments.count - 1
        var limit = seg.video == nil ? placement.audioAloneLimit(followed: followed) : nil
        var hiddenTail: Set<Int64> = []
        // (One segment's end matters only where no silence can pad it.)
        if let v = seg.video, segments.count > 1 || silence.unavailable != nil && plan.end != nil {
            let f = try timingsOpening(v.stream.file, open: open, cancellation: cancellation)
            (videoEnd, hiddenTail) = try scanVideoEnd(f, seg, placement: placement, plan: &plan, open: open,
                                                      cancellation: cancellation)
            limit = plan.audioLimit(videoEnd: videoEnd, placement: placement)
        }
        if let a = seg.audio {
            let packets = try audioTimings(a, open: open, cancellation: cancellation)
            let before = lastWritten
            lastWritten.removeAll()
            // (As the audio writer does: priming kept at the output's start, a trim's hidden audio not.)
            for (i, p) in packets.enumerated() where (k == 0 && !seg.spliced) || !p.isDiscard {
                let samples = p.samples > 0 ? p.samples
                    : placement.audioSamples(duration: p.duration, timeBase: a.stream.timeBase!) ?? 0
                let at = placement.audioPosition(pts: p.pts, timeBase: a.stream.timeBase!)
                var trial = assembler
                let step = trial.place(at: at, samples: samples, limit: limit)
                if let why = silence.unavailable, step.silence > 0 {
                    return CopiedAudioScan(reencodeReason: gapNeedsSilence(why, step: step, plan: plan))
                }
                if k > 0, runStarts[k].isEmpty, silence.overlapsFrames,
                   padded || step.silence != 0 || step.trimStart != 0 || step.residual != 0 {
                    markJoint(before: k, firstWritten: i, packets: packets.count, lastWritten: before, in: &jointPackets)
                }
                if step.residual != 0, step.writes, let at {
                    // Not whole frames from the packets before: a run on another grid.
                    guard silence.encoderSettings != nil else {
                        let seconds = Timestamp(step.position, plan.sampleTimeBase).seconds
                        return CopiedAudioScan(reencodeReason: "a gap or overlap at \(fixed(seconds, 3)) s is not a whole number of \(a.stream.codecName) frames (\(step.residual) samples off)")
                    }
                    assembler.rebase(at: at)
                    _ = assembler.place(at: at, samples: samples, limit: limit)
                    grid.startRun(at: at)
                    runStarts[k].append((i, grid.runs.count - 1))
                } else {
                    assembler = trial
                    if grid.runs.isEmpty {
                        grid.startRun(at: step.position)
                        runStarts[k].append((i, 0))
                    } else if runStarts[k].isEmpty {
                        runStarts[k].append((i, grid.runs.count - 1))
                    }
                }
                if step.writes {
                    grid.addPacket()
                    lastWritten.append(i)
                    if lastWritten.count > CopiedAudioScan.jointFrames { lastWritten.removeFirst() }
                }
            }
            // Audio alone ends where its audio does, and the next segment joins there.
            let audioEnd = assembler.cursor ?? placement.jointSamples
            if seg.video == nil { videoEnd = placement.audioAloneEnd(audioEnd: audioEnd, followed: followed) }
            if let why = silence.unavailable,
               let reason = endNeedsSilence(why, plan: plan, videoEnd: videoEnd, audioEnd: audioEnd, frame: silence.quantum) {
                return CopiedAudioScan(reencodeReason: reason)
            }
            padded = false
            if segments.count > 1, let target = plan.padEnd(videoEnd: videoEnd, audioEnd: audioEnd) {
                assembler.start(at: placement.jointSamples)
                padded = assembler.pad(to: target) > 0
            }
        }
        if segments.count > 1 {
            layout.placements.append(placement)
            layout.videoEnds.append(videoEnd)
            layout.hiddenTails.append(hiddenTail)
        }
        plan.end(placement, videoEnd: videoEnd)
    }
    layout.plan = plan
    return CopiedAudioScan(reencodeReason: nil,
                           reencoded: reencodedPackets(grid, runStarts: runStarts, joints: jointPackets, silence: silence),
                           layout: segments.count > 1 ? layout : nil)
}

/// The packets re-encoded onto the chosen grid: the runs not copied, and
/// the frames around each joint (`markJoint`); nil for none.
private func reencodedPackets(_ grid: FrameGridPlan, runStarts: [[(ordinal: Int, run: Int)]], joints: [[Range<Int>]],
                              silence: SilentAudio) -> ReencodedPackets? {
    guard grid.counts.reencoded > 0 || joints.contains(where: { !$0.isEmpty }),
          let settings = silence.encoderSettings, let phase = grid.chosenPhase else { return nil }
    var ranges = reencodedRanges(runStarts, copied: grid.copied)
    for (k, r) in joints.enumerated() { ranges[k] += r }
    return ReencodedPackets(ranges: ranges, phase: phase, frameSize: silence.quantum, settings: settings)
}

extension CopiedAudioScan {
    /// Frames of a segment's start re-encoded with the joint before it (after its priming).
    static let jointFrames = 2
}

/// A frame's transform overlaps the next frame's and holds what its own
/// recording went on with: at the joint before segment `k` that is not the
/// packets' own continuation (a split's parts are), the last frames before
/// it and the first after it are re-encoded from the spliced sound (with
/// any priming before them decoded first).
private func markJoint(before k: Int, firstWritten i: Int, packets: Int, lastWritten: [Int], in joints: inout [[Range<Int>]]) {
    joints[k].append(0..<min(i + CopiedAudioScan.jointFrames, packets))
    if let last = lastWritten.dropLast(CopiedAudioScan.jointFrames - 1).last {
        joints[k - 1].append(last..<Int.max)
    }
}

/// Why audio without silence of its own is re-encoded after all: the end
/// policy pads it to the video's end by a frame or more (a shortfall under
/// one frame is left as it is: the audio ends that much early).
private func endNeedsSilence(_ why: String, plan: AssemblyPlan, videoEnd: Int64, audioEnd: Int64, frame: Int64) -> String? {
    guard let short = plan.padLength(videoEnd: videoEnd, audioEnd: audioEnd), short >= frame else { return nil }
    let ms = fixed(Timestamp(short, plan.sampleTimeBase).seconds * 1000, 1)
    return "\(why); the audio ends \(ms) ms before the video, and the end policy pads it with silence ('--end shortest' in merge, or fill-silence without '--to-video-end', copies it)"
}

/// Why audio without silence of its own is re-encoded after all: the gap
/// before a step needs its silence; a tolerance as wide as the gap leaves
/// it as it is and copies the audio.
private func gapNeedsSilence(_ why: String, step: AudioStep, plan: AssemblyPlan) -> String {
    let at = step.position - step.silence
    let seconds = Timestamp(step.silence, plan.sampleTimeBase).seconds
    let widest = Int((seconds * 1000).rounded(.up))
    return "\(why); a gap of \(fixed(seconds * 1000, 1)) ms at \(fixed(Timestamp(at, plan.sampleTimeBase).seconds, 3)) s needs silence (a '--tolerance' of \(widest)ms or more leaves it as it is and copies the audio)"
}

/// The ordinal ranges of each segment's packets in runs that are not copied.
private func reencodedRanges(_ runStarts: [[(ordinal: Int, run: Int)]], copied: [Bool]) -> [[Range<Int>]] {
    runStarts.map { starts in
        var ranges: [Range<Int>] = []
        for (j, s) in starts.enumerated() where !copied[s.run] {
            let end = j + 1 < starts.count ? starts[j + 1].ordinal : Int.max
            ranges.append(s.ordinal..<end)
        }
        return ranges
    }
}

/// What the scan needs of one audio packet.
private struct AudioPacketTiming {
    var pts: Int64?
    var duration: Int64
    /// Samples counted from the size (0: the codec cannot tell).
    var samples: Int64
    var isDiscard: Bool
}

/// The segment's audio packets from its start: from the demuxer's index
/// when it lists every packet (MP4/MOV; nothing is read), its first entry is
/// the packet the segment's reader holds (with the same PTS: a track with
/// composition offsets differs there) and every size tells its samples,
/// else read from an opening of its own (probed: without the probe, a
/// last packet's duration can be missing) (`StreamIndexTests` checks the
/// index against reads).
private func audioTimings(_ audio: StreamReader, open: InputOpener,
                          cancellation: Cancellation) throws(MediaError) -> [AudioPacketTiming] {
    let stream = audio.stream
    if let index = stream.indexedPackets, let first = index.first, try audio.peek(),
       audio.packet.timing.pts == first.timestamp, audio.packet.size == Int(first.size),
       audio.packet.isDiscard == first.isDiscard {
        var timings: [AudioPacketTiming] = []
        timings.reserveCapacity(index.count)
        for p in index {
            let samples = stream.samples(inPacketOf: p.size)
            guard samples > 0 else { timings = []; break }
            timings.append(AudioPacketTiming(pts: p.timestamp, duration: 0, samples: samples, isDiscard: p.isDiscard))
        }
        if !timings.isEmpty { return timings }
    }
    let reader = try StreamReader(file: try open(stream.file.path, cancellation), stream: stream.index)
    var timings: [AudioPacketTiming] = []
    while try reader.peek() {
        defer { reader.consume() }
        let timing = reader.packet.timing
        timings.append(AudioPacketTiming(pts: timing.pts, duration: timing.duration,
                                         samples: stream.samples(in: reader.packet), isDiscard: reader.packet.isDiscard))
    }
    return timings
}

/// Another opening of `file` to read video packet timings from: one for
/// packet reads only (the probe decodes frames, which costs more than the
/// reads) where that reads the same timings and finds the same streams,
/// else a full one.
private func timingsOpening(_ file: InputFile, open: InputOpener,
                            cancellation: Cancellation) throws(MediaError) -> InputFile {
    if file.timingsNeedNoProbe {
        let light = try open(file.path, cancellation, packetsOnly: true)
        if light.hasSameStreams(as: file) { return light }
    }
    return try open(file.path, cancellation)
}

/// The end of a segment's last frame on the output timeline, and its last
/// DTS recorded in the plan (for the next joint), from the timings of the
/// video's last packets (`lastVideoTimings`). With it, the DTS of the frames
/// the input hides after the last one shown (`Segment.hiddenAtEnd`), which
/// do not count.
private func scanVideoEnd(_ file: InputFile, _ seg: Segment, placement: SegmentPlacement, plan: inout AssemblyPlan,
                          open: InputOpener, cancellation: Cancellation) throws(MediaError) -> (Int64, Set<Int64>) {
    let (timings, hidden) = try lastVideoTimings(file, seg, open: open, cancellation: cancellation)
    return (videoEnd(of: timings, seg, placement: placement, plan: &plan), hidden)
}

/// Whether `seg`'s video hides frames at its end that frames it shows are
/// decoded from (a trim's end inside a group of B-frames): written, they
/// would be shown at a joint, so the segment's last group is re-encoded
/// up to its shown end there. MP4/MOV inputs (edit lists) only.
func hidesReferencedTail(_ seg: Segment, open: InputOpener, cancellation: Cancellation) throws(MediaError) -> Bool {
    guard let v = seg.video, v.stream.file.formatName.hasPrefix("mov") else { return false }
    let file = try timingsOpening(v.stream.file, open: open, cancellation: cancellation)
    return try lastVideoTimings(file, seg, open: open, cancellation: cancellation).timings.contains { $0.hidden }
}

/// The timings of the video's last packets, up to the last frame shown:
/// the frame shown last is among the last few decoded (B-frames reorder
/// only a few), so the read starts at a keyframe near the end and goes back
/// further until it has enough packets; an input that cannot seek is read
/// whole. With them, the DTS of the hidden frames after that one.
private func lastVideoTimings(_ file: InputFile, _ seg: Segment, open: InputOpener, cancellation: Cancellation)
    throws(MediaError) -> (timings: [(timing: PacketTiming, hidden: Bool)], tail: Set<Int64>) {
    let stream = seg.video!.stream
    let reader = try StreamReader(file: file, stream: stream.index)
    let enough = 2 * stream.reorderDelay + 32
    var from = stream.duration.flatMap { d in stream.startTime.map { $0.value.addingReportingOverflow(d.value).partialValue } }
    for _ in 0..<6 {
        guard let target = from, file.seek(stream: stream.index, toKeyframeBefore: target) else { break }
        reader.restart()
        let read = try readTimings(reader, seg)
        guard read.0.count < enough, let first = read.0.first?.timing.dts ?? read.0.first?.timing.pts,
              first > Int64.min + 1 else { return read }
        // Too few: from the keyframe before this one.
        from = first - 1
    }
    let whole = try StreamReader(file: try timingsOpening(stream.file, open: open, cancellation: cancellation),
                                 stream: stream.index)
    return try readTimings(whole, seg)
}

/// The timings of `seg`'s video packets up to the last frame shown (in
/// decode order), each with whether the input hides it, and the DTS of the
/// frames after it, all hidden by the input at its end: nothing decoded
/// after them needs them.
private func readTimings(_ reader: StreamReader, _ seg: Segment) throws(MediaError) -> ([(timing: PacketTiming, hidden: Bool)], Set<Int64>) {
    var timings: [(timing: PacketTiming, hidden: Bool)] = []
    while try reader.peek() {
        timings.append((reader.packet.timing, seg.hiddenAtEnd(reader.packet)))
        reader.consume()
    }
    let shown = (timings.lastIndex { !$0.hidden } ?? -1) + 1
    let tail = Set(timings[shown...].compactMap { $0.timing.dts ?? $0.timing.pts })
    timings.removeSubrange(shown...)
    return (timings, tail)
}

/// A frame the input hides but a later one needs (an iPhone's hidden last
/// frame, decoded early as a reference) is written, and does not lengthen
/// the segment: the segment ends where its shown frames end, or earlier
/// where the input's edit list ends inside the last of them.
private func videoEnd(of timings: [(timing: PacketTiming, hidden: Bool)], _ seg: Segment, placement: SegmentPlacement,
                      plan: inout AssemblyPlan) -> Int64 {
    var end = placement.joint
    for (timing, hidden) in timings {
        let t = placement.video(seg.videoTiming(timing))
        if !hidden, let e = placement.shownEnd(of: t) { end = max(end, e) }
        if let d = placement.decodeTime(of: t, hidden: hidden) { plan.wroteVideo(dts: d) }
    }
    return end
}

