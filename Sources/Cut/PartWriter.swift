import Media
import Pipeline
import Sync

/// One track of a part, between the `PacketSource` and the `MuxSession`:
/// each packet goes through the track's `CutSelection` (from the core's
/// `CutPartPlan`), then is copied (a subtitle clamped to the part's
/// start) or passed to the audio's re-encoded head. Frames the selection
/// holds back (past the end, kept only if a frame before the end needs
/// them) wait here. Exact mode's video goes to a `Splicer` instead.
final class CutTrackWriter: TrackWriter {
    let track: Int
    private var selection: CutSelection
    private let plan: CutPartPlan.Track
    private let session: MuxSession
    private var held: [HeldPacket] = []
    /// The audio's re-encoded head, if its start is re-encoded.
    let head: AudioHead?

    init(track: Int, plan: CutPartPlan.Track, session: MuxSession, head: AudioHead?) {
        self.track = track
        selection = plan.selection
        self.plan = plan
        self.session = session
        self.head = head
    }

    var ended: Bool { selection.ended }

    func send(_ packet: borrowing Packet) throws(MediaError) {
        let t = packet.timing
        switch selection.offer(pts: t.pts ?? t.dts, duration: t.duration, keyframe: packet.isKeyframe) {
        case .drop:
            break
        case .hold:
            held.append(try HeldPacket(packet))
        case .keep(let n):
            for h in held.prefix(n) { try session.write(h.packet, track: track) }
            held.removeAll()
            if let head {
                try head.offer(packet)
                return
            }
            packet.timing = plan.clamped(t)
            try session.write(packet, track: track)
        case .end:
            held.removeAll()
            try head?.finish()
        }
    }

    func finish() throws(MediaError) {
        try head?.finish()
    }
}

/// A part's writers, one per kept track, and what the report needs of them.
struct PartWriters {
    let writers: [any TrackWriter]
    /// The audio tracks whose start is re-encoded, and why others' cannot be.
    let heads: [AudioHead]
    let headRefusals: [String]
    /// Exact mode: the video track's splicer.
    let splicer: Splicer?

    /// `spliced`: exact mode's video track, its coding and where its plan starts (ticks).
    init(session: MuxSession, plan: CutPartPlan, kept: [InputStream],
         spliced: (track: Int, coding: StretchCoding, from: Int64)?) throws(MediaError) {
        var writers: [any TrackWriter] = []
        var heads: [AudioHead] = [], refusals: [String] = []
        var splicer: Splicer?
        for (j, s) in kept.enumerated() {
            let track = plan.tracks[j]
            if let spliced, spliced.track == j {
                let splice = try Splicer(coding: spliced.coding, plan: SmartCutPlan(from: spliced.from, to: track.to),
                                         session: session, track: j)
                splicer = splice
                writers.append(splice)
                continue
            }
            var head: AudioHead?
            if track.audioHead {
                if let refusal = AudioHead.refusal(s) {
                    refusals.append("stream #\(s.index): \(refusal)")
                } else if let h = try AudioHead(track: j, stream: s, from: track.from, to: track.to, session: session) {
                    head = h
                    heads.append(h)
                } else {
                    refusals.append("stream #\(s.index): libavcodec's encoder does not write its codec record")
                }
            }
            writers.append(CutTrackWriter(track: j, plan: track, session: session, head: head))
        }
        self.writers = writers
        self.heads = heads
        headRefusals = refusals
        self.splicer = splicer
    }
}

extension CutSource {
    /// The core's plan of a part starting at `start`.
    func partPlan(_ spec: PartSpec, start: Timestamp, editList: Bool) throws(MediaError) -> CutPartPlan {
        let tracks = plan.kept.map { s in
            let kind: CutTrack.Kind = switch s.mediaType {
            case .video where s.isAttachedPicture: .coverArt
            case .video: .video
            case .audio: .audio(frameSamples: Int64(max(s.frameSize, 0)), sampleRate: s.sampleRate)
            case .subtitle: .subtitle
            default: s.isAttachedPicture ? .coverArt : .other
            }
            return CutTrack(kind, timeBase: s.timeBase ?? .microseconds)
        }
        do {
            return try CutPartPlan(start: start, to: spec.to, split: spec.split, first: spec.first, editList: editList,
                                   audioHead: spec.audioHead, tracks: tracks)
        } catch {
            throw MediaError.invalid(operation, path: input.path, stream: plan.kept[error.track].index, message: error.description)
        }
    }

    /// Opens the part's output: chapters clipped to the part, timecodes
    /// moved to its first frame, each track's timeline shifted to its start.
    func openSession(_ partPlan: CutPartPlan, to: Timestamp?, outputPath: String, destination: MuxDestination?,
                     container: Container, options: CutOptions, coding: StretchCoding?) throws(MediaError) -> MuxSession {
        var edits = options.edits
        edits.chapterWindow = ChapterWindow(start: partPlan.start, end: to)
        edits.tags.insert(contentsOf: shiftedTimecodes(start: partPlan.start), at: 0)
        let streams: [OutputStreamSource] = plan.kept.map { s in
            if let coding, s.index == video?.index { .spliced(s, extradata: coding.record, tag: coding.tag) } else { .copy(s) }
        }
        let session = try MuxSession(destination ?? .file(outputPath, overwrite: options.overwrite, inputs: [input.path]),
                                     container: container, streams: streams, metadataSource: input,
                                     edits: edits, faststart: options.faststart,
                                     audioSampleRate: plan.kept.first { $0.mediaType == .audio }?.sampleRate,
                                     cancellation: cancellation)
        for (j, s) in plan.kept.enumerated() {
            try session.beginTimeline(track: j, stream: s, shift: partPlan.shift)
            if let end = partPlan.tracks[j].shownEnd { session.hideFrames(track: j, from: end) }
        }
        return session
    }
}
