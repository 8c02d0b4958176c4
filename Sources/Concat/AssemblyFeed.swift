import Media
import Pipeline
import Sync

/// Where an assembly stands on its output timeline: the core's plan, the
/// segment being written and its placement, the output time written last.
/// Shared by the feed, which places and orders, and the audio writer, which
/// lays each packet where the placement puts it.
final class AssemblyClock {
    var plan: AssemblyPlan
    /// Where the segments land, when the copied-audio scan placed them.
    let layout: PlannedLayout?
    /// The segment being written, and its audio's time base.
    private var placement: SegmentPlacement?
    private var audioTimeBase: Rational?
    /// The output time of the last packet that told it (video, or audio alone).
    var position: Timestamp?

    init(plan: AssemblyPlan, layout: PlannedLayout?) {
        self.plan = plan
        self.layout = layout
    }

    func begin(_ placement: SegmentPlacement, audioTimeBase: Rational?) {
        self.placement = placement
        self.audioTimeBase = audioTimeBase
    }

    /// The output sample where an audio packet of the segment belongs.
    func audioPosition(pts: Int64?) -> Int64? {
        guard let placement, let audioTimeBase else { return nil }
        return placement.audioPosition(pts: pts, timeBase: audioTimeBase)
    }
}

/// The packets of every segment of an assembly, one segment after another,
/// each in output-time order across its readers (video, audio, the
/// original audio, data), for the run loop: a `PacketFeed` like a single
/// file's `PacketSource`. Each segment is opened when its turn comes and let
/// go once written (`Segments`). Between segments it places the next one on the
/// timeline, ends the audio's segment and pads it; within one, it carries
/// the cuts: audio limited at the video's end, video and data cut at the
/// audio's end (`--end shortest`).
struct AssemblyFeed: PacketFeed {
    let segments: Segments
    let clock: AssemblyClock
    let session: MuxSession
    let verb: String
    /// Output tracks; `nil` where the output has none.
    let videoTrack: Int?
    let audio: (any AudioTrackWriter)?
    let originalTrack: Int?
    /// Each data track with every segment's matching stream.
    let data: [(track: Int, streams: [Int?])]
    /// The video's writer (which re-encodes a segment's trimmed start).
    let video: SplicedVideoWriter?
    /// Where each segment joins the one before (output seconds), as placed.
    private(set) var joints: [Double] = []
    /// The same, in output samples.
    private(set) var jointsSamples: [Int64] = []

    /// The state of the segment being written.
    private struct SegmentState {
        let placement: SegmentPlacement
        /// The segment's reader for each data track, nil where it has none.
        let data: [StreamReader?]
        var videoEnded: Bool
        var audioEnded: Bool
        /// Video from this output time on is left out (`--end shortest`).
        var videoCut: Int64? = nil
        /// The end of the last frame so far (output time).
        var videoEnd: Int64
    }

    mutating func readWhile(_ take: (borrowing Packet, Int) throws(MediaError) -> Bool) throws(MediaError) {
        for k in 0..<segments.count {
            let seg = try segments.segment(k)
            var state = try beginSegment(seg, k)
            while let (reader, track) = try next(seg, k, &state) {
                let more = try take(reader.packet, track)
                reader.consume()
                if !more { return }
            }
            try endSegment(seg, k, state)
        }
    }

    private mutating func beginSegment(_ seg: Segment, _ k: Int) throws(MediaError) -> SegmentState {
        let placement: SegmentPlacement
        if let layout = clock.layout { placement = layout.placements[k] } else { placement = try place(seg, index: k, in: &clock.plan, verb: verb) }
        clock.begin(placement, audioTimeBase: seg.audio?.stream.timeBase)
        if let v = seg.video, let videoTrack {
            try session.beginTimeline(track: videoTrack, stream: v.stream, shift: placement.videoShiftTimestamp)
            // Where the output's edit list ends if this segment is the last and hides frames after its shown ones.
            session.showUntil(track: videoTrack, seg.editEnd)
            if let coding = try segments.coding(for: seg, index: k) {
                video?.splicer = try Splicer(coding: coding, plan: SmartCutPlan(from: seg.shownStart, to: seg.splicedUntil),
                                             session: session, track: videoTrack)
            }
        }
        joints.append(Timestamp(placement.joint, clock.plan.videoTimeBase).seconds)
        jointsSamples.append(placement.jointSamples)
        if let a = seg.audio, let audio {
            // A trimmed start re-encoded: the audio the trim hides is left out too.
            try audio.begin(a.stream, segment: k, shift: placement.audioShift, drift: seg.spec.drift,
                            anchor: placement.audioAnchor, dropHidden: seg.spliced)
            if seg.video == nil {
                audio.limit = placement.audioAloneLimit(followed: k < segments.count - 1)
            } else if let layout = clock.layout {
                audio.limit = clock.plan.audioLimit(videoEnd: layout.videoEnds[k], placement: placement)
            }
        }
        if let o = seg.original, let originalTrack {
            // The camera's audio keeps its place against the camera's video.
            try session.beginTimeline(track: originalTrack, stream: o.stream,
                                      shift: placement.videoShift(in: o.stream.timeBase!))
        }
        let readers = data.map { seg.dataReader($0.streams[k]) }
        for (d, (track, _)) in zip(readers, data) {
            // Data keeps its place against the video, as the original audio does.
            if let d {
                try session.beginTimeline(track: track, stream: d.stream, shift: placement.videoShift(in: d.stream.timeBase!))
            }
        }
        return SegmentState(placement: placement, data: readers, videoEnded: seg.video == nil,
                            audioEnded: seg.audio == nil, videoEnd: placement.joint)
    }

    private func endSegment(_ seg: Segment, _ k: Int, _ state: SegmentState) throws(MediaError) {
        var state = state
        try video?.endSegment()
        let videoEnd = clock.layout?.videoEnds[k] ?? state.videoEnd
        if seg.audio != nil, let audio {
            try audio.endSegment()
            // Audio alone: the output ends where its audio does (on the
            // plan's time base, which is then the samples').
            if seg.video == nil {
                state.videoEnd = state.placement.audioAloneEnd(audioEnd: audio.summary.end ?? state.placement.joint,
                                                               followed: k < segments.count - 1)
            }
            let end = audio.summary.end ?? state.placement.jointSamples
            if let target = clock.plan.padEnd(videoEnd: videoEnd, audioEnd: end) {
                try audio.pad(to: target, startingAt: state.placement.jointSamples)
            }
        }
        if clock.layout == nil { clock.plan.end(state.placement, videoEnd: state.videoEnd) }
    }

    /// The reader whose packet goes next, with its output track; nil when
    /// the segment is written. Packets a cut leaves out are passed over.
    private func next(_ seg: Segment, _ k: Int, _ state: inout SegmentState) throws(MediaError) -> (StreamReader, Int)? {
        while true {
            let hasVideo = try seg.video?.peek() ?? false
            let hasAudio = try seg.audio?.peek() ?? false
            if !hasVideo && !state.videoEnded {  // (never for audio alone: ended from the start)
                state.videoEnded = true
                // The video's end is known: from here the audio may be cut there.
                if clock.layout == nil, seg.audio != nil {
                    audio?.limit = clock.plan.audioLimit(videoEnd: state.videoEnd, placement: state.placement)
                }
            }
            if !hasAudio && !state.audioEnded {
                state.audioEnded = true
                if hasVideo { state.videoCut = clock.plan.videoCut(audioEnd: audio?.summary.end ?? 0) }
            }
            let videoTime = hasVideo ? state.placement.videoTime(seg.video!.packet.timing) : nil
            let audioTime = hasAudio ? clock.audioPosition(pts: seg.audio!.packet.timing.pts).map { Timestamp($0, clock.plan.sampleTimeBase) } : nil
            // Companions (data, the original audio) go first when not later than both.
            func due(_ r: StreamReader) throws(MediaError) -> Timestamp? {
                guard try r.peek() else { return nil }
                // Cover art has no time: it goes first.
                if r.stream.isAttachedPicture { return Timestamp(0, r.stream.timeBase!) }
                guard let t = state.placement.companionTime(r.packet.timing, timeBase: r.stream.timeBase!),
                      !hasVideo || videoTime.map({ t <= $0 }) ?? true,
                      !hasAudio || audioTime.map({ t <= $0 }) ?? true else { return nil }
                return t
            }
            if let (d, track, t) = try dueData(state.data, due) {
                // Past a cut video's end (`--end shortest`), the data goes no further.
                if let cut = state.videoCut, t.value >= cut { d.consume(); continue }
                return (d, track)
            }
            if let o = seg.original, let originalTrack, try due(o) != nil { return (o, originalTrack) }
            if !hasVideo && !hasAudio { return nil }
            let takeVideo: Bool
            if hasVideo && hasAudio, let vt = videoTime, let at = audioTime {
                takeVideo = vt <= at
            } else {
                takeVideo = hasVideo
            }
            if takeVideo {
                guard let v = seg.video, let videoTrack else { return nil }
                // A frame the input hides at its end, which nothing after it needs: left out at a joint,
                // where it would be shown (at the output's end it is kept, and hidden as in the input).
                if k < segments.count - 1, let tail = clock.layout?.hiddenTails[k],
                   let d = v.packet.timing.dts ?? v.packet.timing.pts, tail.contains(d) {
                    v.consume()
                    continue
                }
                if try placeVideo(seg, &state) { return (v, videoTrack) }
                v.consume()
            } else if let a = seg.audio, let audio {
                if seg.video == nil { clock.position = audioTime }
                return (a, audio.track)
            }
        }
    }

    private func dueData(_ readers: [StreamReader?], _ due: (StreamReader) throws(MediaError) -> Timestamp?) throws(MediaError) -> (StreamReader, Int, Timestamp)? {
        for (d, (track, _)) in zip(readers, data) {
            if let d, let t = try due(d) { return (d, track, t) }
        }
        return nil
    }

    /// Notes the loaded video packet on the timeline; false when a cut
    /// leaves it out.
    private func placeVideo(_ seg: Segment, _ state: inout SegmentState) throws(MediaError) -> Bool {
        guard let v = seg.video else { return false }
        // Output positions on the video time base, for ends and cuts.
        let t = state.placement.video(seg.videoTiming(v.packet.timing))
        if let cut = state.videoCut, let d = t.dts ?? t.pts, d >= cut { return false }
        // (A frame the input hides, kept as a reference, does not lengthen the
        // segment; the last one shown is shown up to the input's edit end.)
        let hidden = seg.hiddenAtEnd(v.packet)
        if !hidden, let e = state.placement.shownEnd(of: t) { state.videoEnd = max(state.videoEnd, e) }
        if clock.layout == nil, let d = state.placement.decodeTime(of: t, hidden: hidden) { clock.plan.wroteVideo(dts: d) }
        if let pts = t.pts { clock.position = Timestamp(pts, clock.plan.videoTimeBase) }
        return true
    }
}

/// An assembly's audio track in the run loop: each packet laid at the
/// output sample its timestamp gives under the segment's placement.
final class PlacedAudioWriter: TrackWriter {
    let audio: any AudioTrackWriter
    private let clock: AssemblyClock

    init(_ audio: any AudioTrackWriter, clock: AssemblyClock) {
        self.audio = audio
        self.clock = clock
    }

    var track: Int { audio.track }

    func send(_ packet: borrowing Packet) throws(MediaError) {
        try audio.send(packet, at: clock.audioPosition(pts: packet.timing.pts))
    }

    func finish() throws(MediaError) { try audio.finish() }
}

/// The video track in the run loop: packets copied, or, in a segment whose
/// trimmed start is re-encoded, through that segment's `Splicer`.
final class SplicedVideoWriter: TrackWriter {
    private let copy: CopyWriter
    /// The current segment's, while it is written.
    var splicer: Splicer?
    /// Frames re-encoded at trimmed starts.
    private(set) var framesReencoded = 0

    init(_ copy: CopyWriter) { self.copy = copy }

    var track: Int { copy.track }

    func send(_ packet: borrowing Packet) throws(MediaError) {
        if let splicer { try splicer.send(packet) } else { try copy.send(packet) }
    }

    /// Ends the segment: its splicer's last actions and held packet written.
    func endSegment() throws(MediaError) {
        guard let s = splicer else { return }
        splicer = nil
        try s.finish()
        framesReencoded += s.stretches.reduce(0) { $0 + $1.frames }
    }

    func finish() throws(MediaError) { try endSegment() }
}
