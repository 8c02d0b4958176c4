import Media
import Pipeline
import Sync

/// The per-track stages of one part, between the `PacketSource` and the
/// `MuxSession`: each packet goes through its track's `CutSelection`
/// (from the core's `CutPartPlan`), then is copied (a subtitle clamped to
/// the part's start), passed to the audio's re-encoded head, or to the
/// video's splicer in exact mode. Frames the selection holds back (past the
/// end, kept only if a frame before the end needs them) wait here.
final class PartWriter {
    let session: MuxSession
    let plan: CutPartPlan
    private var selections: [CutSelection]
    private var held: [[HeldPacket]]
    /// The audio tracks whose start is re-encoded, and why others' cannot be.
    private(set) var heads: [Int: AudioHead] = [:]
    private(set) var headRefusals: [String] = []
    /// Exact mode: the video track's splicer.
    let splicer: Splicer?
    private let splicedTrack: Int?

    /// `spliced`: exact mode's video track, its coding and where its plan starts (ticks).
    init(session: MuxSession, plan: CutPartPlan, kept: [InputStream],
         spliced: (track: Int, coding: StretchCoding, from: Int64)?) throws(MediaError) {
        self.session = session
        self.plan = plan
        selections = plan.tracks.map(\.selection)
        held = Array(repeating: [], count: kept.count)
        splicedTrack = spliced?.track
        splicer = try spliced.map { s throws(MediaError) in
            try Splicer(coding: s.coding, plan: SmartCutPlan(from: s.from, to: plan.tracks[s.track].to), session: session,
                        track: s.track)
        }
        for (j, s) in kept.enumerated() where plan.tracks[j].audioHead {
            if let refusal = AudioHead.refusal(s) {
                headRefusals.append("stream #\(s.index): \(refusal)")
            } else if let head = try AudioHead(track: j, stream: s, from: plan.tracks[j].from, to: plan.tracks[j].to,
                                               session: session) {
                heads[j] = head
            } else {
                headRefusals.append("stream #\(s.index): libavcodec's encoder does not write its codec record")
            }
        }
    }

    /// Whether every track has ended (nothing more need be read).
    var ended: Bool {
        selections.indices.allSatisfy { j in j == splicedTrack ? splicer!.ended : selections[j].ended }
    }

    /// Takes the next packet of track `j`, in decode order.
    func offer(_ packet: borrowing Packet, track j: Int) throws(MediaError) {
        if j == splicedTrack {
            try splicer!.offer(packet)
            return
        }
        let t = packet.timing
        switch selections[j].offer(pts: t.pts ?? t.dts, duration: t.duration, keyframe: packet.isKeyframe) {
        case .drop:
            break
        case .hold:
            held[j].append(try HeldPacket(packet))
        case .keep(let n):
            for h in held[j].prefix(n) { try session.write(h.packet, track: j) }
            held[j].removeAll()
            if let head = heads[j] {
                try head.offer(packet)
                return
            }
            packet.timing = plan.tracks[j].clamped(t)
            try session.write(packet, track: j)
        case .end:
            held[j].removeAll()
            try heads[j]?.finish()
        }
    }

    /// Flushes what the stages hold (the splicer's last stretch, the heads' encoders).
    func finish() throws(MediaError) {
        try splicer?.finish()
        for head in heads.values { try head.finish() }
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
