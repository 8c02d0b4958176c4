import Media
import Pipeline
import Sync

/// What a packet-only read found about copying the audio.
struct CopiedAudioScan {
    /// Why whole packets cannot keep the audio in sync (re-encode then), or
    /// `nil` when they can.
    var reencodeReason: String?
    /// With several segments: each segment's video end on the output
    /// timeline (the joints depend on them). The run cuts each segment's
    /// audio there from the start, as the scan did, so both agree.
    var videoEnds: [Int64]?
}

/// Lays the audio out in whole packets, with silent frames, exactly as
/// `AudioCopyTrack` will, from a read of packet timings only (nothing
/// decoded, nothing written), to decide before the output exists whether
/// stream copy lands every sample within the tolerance. Segments are placed
/// by the run's own `place`. One segment needs only its audio packets: the
/// cut at the video's end only drops packets, so what the run writes is laid
/// out as here. Several segments also need each segment's video end, which
/// moves the next joint.
func scanCopiedAudio(_ segments: [Segment], silence: SilentAudio, options: AssemblyOptions, verb: String,
                     open: InputOpener, cancellation: Cancellation) throws(MediaError) -> CopiedAudioScan {
    let stream = segments[0].audio!.stream
    var plan = AssemblyPlan(videoTimeBase: segments[0].video.stream.timeBase!, sampleRate: stream.sampleRate,
                            end: options.end, segments: segments.count)
    var assembler = AudioAssembler(sampleRate: stream.sampleRate, frameSize: silence.quantum,
                                   toleranceSamples: copyTolerance(stream, options: options))
    var ends: [Int64] = []
    for (k, seg) in segments.enumerated() {
        let placement = try place(seg, index: k, in: &plan, verb: verb)
        var videoEnd = placement.joint
        var limit: Int64?
        if segments.count > 1 {
            videoEnd = try scanVideoEnd(seg, placement: placement, plan: &plan, open: open, cancellation: cancellation)
            ends.append(videoEnd)
            limit = plan.audioLimit(videoEnd: videoEnd)
        }
        guard let a = seg.audio else {
            plan.end(placement, videoEnd: videoEnd)
            continue
        }
        let reader = try StreamReader(file: try open(a.stream.file.path, cancellation), stream: a.stream.index)
        while try reader.peek() {
            defer { reader.consume() }
            if k > 0 && reader.packet.isDiscard { continue }
            let counted = reader.stream.samples(in: reader.packet)
            let samples = counted > 0 ? counted
                : Timestamp(reader.packet.timing.duration, reader.stream.timeBase!).rescaled(to: plan.sampleTimeBase)?.value ?? 0
            let at = placement.audioPosition(pts: reader.packet.timing.pts, timeBase: reader.stream.timeBase!)
            let step = assembler.place(at: at, samples: samples, limit: limit)
            if step.residual != 0 {
                let seconds = Timestamp(step.position, plan.sampleTimeBase).seconds
                return CopiedAudioScan(reencodeReason: "a gap or overlap at \(fixed(seconds, 3)) s is not a whole number of \(a.stream.codecName) frames (\(step.residual) samples off)")
            }
        }
        if segments.count > 1, let target = plan.padEnd(videoEnd: videoEnd, audioEnd: assembler.cursor ?? placement.jointSamples) {
            assembler.start(at: placement.jointSamples)
            _ = assembler.pad(to: target)
        }
        plan.end(placement, videoEnd: videoEnd)
    }
    return CopiedAudioScan(reencodeReason: nil, videoEnds: segments.count > 1 ? ends : nil)
}

/// The end of a segment's last frame on the output timeline, from a read
/// of its video packets' timings; records their DTS in the plan as the run
/// does, for the next joint.
private func scanVideoEnd(_ seg: Segment, placement: SegmentPlacement, plan: inout AssemblyPlan,
                          open: InputOpener, cancellation: Cancellation) throws(MediaError) -> Int64 {
    let stream = seg.video.stream
    let reader = try StreamReader(file: try open(stream.file.path, cancellation), stream: stream.index)
    var end = placement.joint
    while try reader.peek() {
        let t = placement.video(reader.packet.timing)
        if let e = t.end { end = max(end, e) }
        if let d = t.dts { plan.wroteVideo(dts: d) }
        reader.consume()
    }
    return end
}
