import ISOBMFF
import Media
import Sync

/// Where a mux session writes.
public enum MuxDestination {
    /// A file: written to a temporary beside `path` and renamed onto it only
    /// when complete. It may not be one of `inputs`; an existing file is
    /// replaced only with `overwrite`.
    case file(String, overwrite: Bool, inputs: [String])
    /// A file whose target was checked, and its temporary reserved, before
    /// the session (so a verb that reads a while before writing fails fast).
    case staged(StagedOutput)
    /// One of several files named together: written like `staged`, left
    /// without its name for the caller to commit with the others.
    case part(StagedOutput)
    /// Memory, called `name` in errors (the fuzz harness): nothing touches
    /// the filesystem, and faststart (a rewrite by reopening) does not apply.
    case memory(MemoryOutput, name: String)

    /// What errors and reports call the output.
    public var name: String {
        switch self {
        case .file(let path, _, _): path
        case .staged(let s), .part(let s): s.target
        case .memory(_, let name): name
        }
    }
}

/// One output being written, the only place packets reach a muxer: the
/// staged output (file or memory), the `OutputFile` with its fixed stream
/// set, one `TrackTimeline` per track that every packet's timing goes
/// through, cancellation between packets, and the counts a report needs.
/// Verbs and track writers hand it packets in their source's time base.
public final class MuxSession {
    public let name: String
    public let container: Container
    public let cancellation: Cancellation
    let staged: StagedOutput?
    /// The caller names the file (`MuxDestination.part`).
    private let namedByCaller: Bool
    private let memory: MemoryOutput?
    let output: OutputFile
    /// What the output will not hold of its tags, when a trial found it.
    private let expectedTagLosses: [TagLoss]?
    var tracks: [Track]
    private let began = ContinuousClock.now
    /// The track and output DTS of the last packet written (for progress).
    private var last: (track: Int, dts: Int64)?
    /// Boxes of copied video sample entries the muxer does not write, added
    /// after its trailer with the carried tracks (`IndexCompletion`).
    private let entryAdditions: [IndexCompletion.EntryAdditions]
    /// Boxes for the index's `udta` the muxer does not write (`LocationUserData`).
    private let userData: [BoxNode]
    /// The index is moved in front of the media after the additions, not by the muxer.
    private let faststartAfterCompletion: Bool
    /// Sample descriptions added after the first, by track (`describe`).
    var descriptions: [Int: IndexCompletion.Descriptions] = [:]
    /// A check of the written file's bytes beyond what was handed over (given
    /// its temporary path), run after `OutputCheck` and before it is named:
    /// repair compares its rebuilt PCM with the bytes it came from.
    public var bytesCheck: ((String) throws(MediaError) -> Void)?

    struct Track {
        /// The muxer's stream for the track; nil for a carried one.
        var muxerIndex: Int?
        /// A track the muxer cannot write, gathered here (`CarriedTrack`).
        var carried: CarriedTrack?
        /// The input stream the track is made from (its first segment's).
        var input: InputStream?
        var timeline: TrackTimeline?
        /// The input stream the current timeline reads, for errors.
        var source: (path: String, stream: Int)?
        /// Copied AMR into MP4/MOV/3GP, whose packets are written a frame each
        /// (`AMRFrames.cut`): its frames, sample rate and time base.
        var amr: (frames: AMRFrames, sampleRate: Int32, timeBase: Rational?)?
        /// What was handed over for it, which the written file must hold (`OutputCheck`).
        var plan = PlannedTrack(type: .unknown, codec: "", timeBase: .microseconds)
        var packets: Int { plan.packets }
        var bytes: Int64 { plan.bytes }
        /// Where the frames end in presentation: all of them, and those not
        /// flagged discard (what the input shows).
        var end: Int64 { plan.end ?? .min }
        var shownEnd = Int64.min
        /// Frames at or after this presentation time (source ticks) are
        /// written as references but not shown (`hideFrames`).
        var hiddenFrom: Int64?
        /// The last shown frame's presentation time, and those of the frames
        /// not shown (few: a cut's or an input's hidden tail, priming).
        var lastShown = Int64.min
        var hiddenStarts: [Int64] = []
        /// Where the input's own edit ended (source ticks, `showUntil`), and
        /// that place in output ticks once a shown frame was found across it.
        var showUntil: Int64?
        var shownUntil: Int64?

        /// Where the track's edit must end so that hidden frames after the
        /// shown ones stay hidden: where the first of them starts (exact even
        /// where packets carry no duration), or earlier inside the last shown
        /// frame where the input's own edit ended there; else where the shown
        /// frames end; nil when nothing after them is hidden.
        var editEnd: Int64? {
            guard shownEnd > Int64.min else { return nil }
            if let next = hiddenStarts.filter({ $0 > lastShown }).min() {
                if let until = shownUntil, until > lastShown, until < next { return until }
                return next
            }
            return end > shownEnd ? shownEnd : nil
        }
    }

    /// Checks the destination, then creates the output with exactly
    /// `streams` and writes its header (format metadata and chapters from
    /// `metadataSource`; for MP4/MOV, faststart when asked and a movie
    /// timescale of `audioSampleRate`, see `muxerOptions`). `expectedBytes`,
    /// an estimate of the output's size (a stream copy's: its input's), is
    /// reserved on the disk up front. Packets whose payloads are references
    /// to their input's bytes (`PayloadReferences`) need `payloads` and a
    /// file destination.
    public init(_ destination: MuxDestination, container: Container, streams: [OutputStreamSource],
                metadataSource: InputFile?, edits: MetadataEdits = MetadataEdits(), faststart: Bool = true,
                audioSampleRate: Int32? = nil, reservedIndex: Int? = nil, expectedBytes: Int64? = nil,
                payloads: PayloadReferences? = nil, cancellation: Cancellation) throws(MediaError) {
        name = destination.name
        self.container = container
        self.cancellation = cancellation
        tracks = Array(repeating: Track(), count: streams.count)
        if case .part = destination { namedByCaller = true } else { namedByCaller = false }
        // Into an MP4/MOV file, what the muxer cannot write is carried: data
        // tracks of MP4/MOV inputs, and their copied video's entry boxes.
        var muxed: [OutputStreamSource] = []
        var additions: [IndexCompletion.EntryAdditions] = []
        let completes: Bool
        if case .memory = destination { completes = false } else { completes = container.isISOBMFF }
        for (j, source) in streams.enumerated() {
            tracks[j].input = source.inputStream
            if completes, case .copy(let input, _) = source, let carried = CarriedTrack(input) {
                tracks[j].carried = carried
                continue
            }
            tracks[j].muxerIndex = muxed.count
            if completes, let a = Self.entryAdditions(source, track: muxed.count) { additions.append(a) }
            muxed.append(source)
        }
        entryAdditions = additions
        let streams = muxed
        let (keys, expected) = Self.tagTrial(container, streams: streams, metadataSource: metadataSource,
                                             edits: edits, audioSampleRate: audioSampleRate)
        expectedTagLosses = expected
        userData = completes ? LocationUserData.boxes(container, keys: keys, metadataSource: metadataSource, edits: edits) : []
        // An exact cut's HEVC stretches may get a sample description of their own (`describe`).
        let describing = completes && streams.contains { if case .spliced(_, _, let tag) = $0 { tag == "hvc1" } else { false } }
        let completing = !additions.isEmpty || tracks.contains { $0.carried != nil } || !userData.isEmpty || describing
        faststartAfterCompletion = completing && faststart
        let faststart = faststart && !completing
        // Room reserved for the index (measured without what is added after
        // the trailer) grows by what the additions may take.
        let added = tracks.compactMap(\.carried).reduce(0) { $0 + $1.source.indexBytes + 256 }
            + additions.reduce(0) { $0 + $1.boxes.reduce(16) { $0 + $1.count } } + userData.reduce(8) { $0 + $1.encodedSize }
            + (describing ? 4096 : 0)
        let reservedIndex = reservedIndex.map { $0 + added }
        switch destination {
        case let .file(path, overwrite, inputs):
            staged = try StagedOutput(target: path, overwrite: overwrite, inputs: inputs)
            memory = nil
        case .staged(let s), .part(let s):
            staged = s
            memory = nil
        case let .memory(m, _):
            staged = nil
            memory = m
        }
        if let staged {
            output = try OutputFile(path: staged.temporary, reportingAs: staged.target, container: container,
                                    streams: streams, metadataSource: metadataSource, edits: edits,
                                    options: muxerOptions(container, faststart: faststart, audioSampleRate: audioSampleRate,
                                                          metadataKeys: keys, reservedIndex: reservedIndex),
                                    expectedSize: expectedBytes, payloads: payloads, cancellation: cancellation)
        } else {
            output = try OutputFile(memory: memory!, name: name, container: container, streams: streams,
                                    metadataSource: metadataSource, edits: edits,
                                    options: muxerOptions(container, faststart: false, audioSampleRate: audioSampleRate,
                                                          metadataKeys: keys),
                                    cancellation: cancellation)
        }
        for j in tracks.indices { tracks[j].plan = plan(track: j) }
    }

    /// What the muxer does not write into the sample entry of `source`'s
    /// track: a copied video's source boxes (those of an exact cut's video
    /// too, whose `hev1` entry becomes `dvhe` with Dolby Vision), an encoded
    /// video's Dolby Vision record when its RPUs are carried.
    private static func entryAdditions(_ source: OutputStreamSource, track: Int) -> IndexCompletion.EntryAdditions? {
        switch source {
        case .copy(let input, _):
            return IndexCompletion.entryAdditions(for: input, track: track)
        case let .spliced(input, _, tag):
            guard var a = IndexCompletion.entryAdditions(for: input, track: track) else { return nil }
            if tag == "hev1", a.type == "dvh1" { a.type = "dvhe" }
            return a
        case .encoded(let e), .chunks(let e, _):
            guard let dv = e.dolbyVision else { return nil }
            return IndexCompletion.EntryAdditions(track: track, type: dv.compatibilityID == 0 ? "dvh1" : nil, boxes: [dv.box])
        }
    }

    /// For MP4/MOV, a trial write in memory: whether the file's tags must be
    /// written as metadata keys (when the fixed `udta`/iTunes set loses some
    /// that keys keep: a phone's `com.apple.quicktime.*`, `com.android.*`;
    /// not with cover art, which only the iTunes set holds), and what the
    /// output will then not hold — so the written file need not be read back.
    /// `(false, nil)` for other containers, or when the trial cannot be made.
    private static func tagTrial(_ container: Container, streams: [OutputStreamSource], metadataSource: InputFile?,
                                 edits: MetadataEdits, audioSampleRate: Int32?) -> (keys: Bool, losses: [TagLoss]?) {
        guard container.isISOBMFF else { return (false, nil) }
        func trial(_ keys: Bool) -> [TagLoss]? {
            OutputFile.trialTagLosses(container: container, streams: streams, metadataSource: metadataSource, edits: edits,
                                      options: muxerOptions(container, faststart: false, audioSampleRate: audioSampleRate,
                                                            metadataKeys: keys))
        }
        guard let plain = trial(false) else { return (false, nil) }
        let coverArt = streams.contains { if case .copy(let s, _) = $0 { s.isAttachedPicture } else { false } }
        guard plain.contains(where: { $0.stream == nil }), !coverArt, let keyed = trial(true),
              keyed.count < plain.count else { return (false, plain) }
        return (true, keyed)
    }

    /// The output's `trak` (the muxer's stream) that `track` is written as;
    /// nil for a track the muxer cannot write, carried after the others.
    public func muxerTrack(_ track: Int) -> Int? { tracks[track].muxerIndex }

    /// Each track's time base, as the muxer chose it in the header (a
    /// carried track's: its source's).
    public var timeBases: [Rational] { tracks.indices.map(timeBase) }

    func timeBase(_ track: Int) -> Rational {
        if let m = tracks[track].muxerIndex { output.timeBases[m] } else { tracks[track].carried?.timeBase ?? .microseconds }
    }

    /// Starts `track`'s timeline: from `stream`'s time base (or `retimedIn`)
    /// to the track's, `shift` added, in the order the container demands.
    /// `retimedIn` is for packets whose timing this program set (an
    /// encoder's, or audio laid by a sample counter): no counter wraps to
    /// undo, no reorder delay to infer DTS from. It continues the order of
    /// the track's previous timeline (the previous segment's), so DTS stay
    /// ordered across a joint.
    public func beginTimeline(track: Int, stream: InputStream, retimedIn: Rational? = nil,
                              shift: Timestamp = .zero(.microseconds), repair: TimestampRepair = .fix) throws(MediaError) {
        do {
            var timeline = try TrackTimeline(
                source: retimedIn ?? stream.timeBase ?? .microseconds, target: timeBase(track), shift: shift,
                // A carried track's samples may share a time (GoPro's `fdsc`: all at 0), as its source's did.
                order: tracks[track].carried == nil ? container.dtsOrder : .nonDecreasing, repair: repair,
                wrapBits: retimedIn == nil ? stream.wrapBits : nil,
                reorderDelay: retimedIn == nil ? stream.reorderDelay : 0, untimedAtOrigin: stream.isAttachedPicture,
                decodeLead: retimedIn == nil ? stream.decodeLead : 0)
            if let previous = tracks[track].timeline { timeline.resume(after: previous) }
            tracks[track].carried?.use(stream)
            tracks[track].timeline = timeline
            tracks[track].source = (stream.file.path, stream.index)
            tracks[track].amr = retimedIn == nil && container.isISOBMFF
                ? stream.amrFrames.map { ($0, stream.sampleRate, stream.timeBase) } : nil
        } catch {
            throw timestampError(error, input: stream.file.path, stream: stream.index)
        }
    }

    /// Maps `packet`'s timing (in its timeline's source time base) onto
    /// `track` and writes it in interleaved order. Returns the output timing.
    /// The packet is blank afterwards.
    @discardableResult
    public func write(_ packet: borrowing Packet, track: Int) throws(MediaError) -> PacketTiming {
        try cancellation.check()
        precondition(tracks[track].timeline != nil, "MuxSession.write: track \(track) has no timeline")
        if let amr = tracks[track].amr, let frames = packet.withData({ amr.frames.frames(in: $0) }), frames.count > 1 {
            return try writeFrames(packet, frames, track: track)
        }
        var mapped: PacketTiming
        do {
            // Mapped in place: the timeline is not copied out and back per packet.
            mapped = try tracks[track].timeline!.map(packet.timing)
        } catch {
            let source = tracks[track].source
            throw timestampError(error, input: source?.path ?? name, stream: source?.stream ?? track)
        }
        let hidden = packet.isDiscard || tracks[track].hiddenFrom.map { (packet.timing.pts ?? .min) >= $0 } == true
        if tracks[track].plan.packets == 0, tracks[track].plan.codec == "aac", packet.withData(\.startsWithADTS) {
            tracks[track].plan.bytesKept = false  // the muxer takes the ADTS headers off
        }
        tracks[track].plan.count(size: packet.size, timing: mapped)
        if let fault = OutputFault.chosen, fault.falls(on: track, tracks[track].plan), fault.spoils(&mapped, number: tracks[track].plan.packets,
                                                                    longest: tracks[track].plan.longest) {
            packet.unref()
            return mapped
        }
        if let p = mapped.pts ?? mapped.dts {
            let end = p &+ max(mapped.duration, 0)
            if hidden {
                tracks[track].hiddenStarts.append(p)
            } else {
                tracks[track].shownEnd = max(tracks[track].shownEnd, end)
                tracks[track].lastShown = max(tracks[track].lastShown, p)
                noteShownUntil(packet.timing, at: p, track: track)
            }
        }
        if let d = mapped.dts { last = (track, d) }
        guard let m = tracks[track].muxerIndex else {
            let start = mapped.dts ?? mapped.pts ?? 0
            let path = tracks[track].source?.path
            packet.withData { tracks[track].carried?.append(start: start, duration: mapped.duration, data: $0,
                                                            position: packet.position, path: path) }
            packet.unref()
            return mapped
        }
        packet.timing = mapped
        packet.streamIndex = m
        try output.write(packet)
        return mapped
    }

    /// Frames of `track` presented at or after `from` (ticks of the source's
    /// time base, as packets are written) are written but not shown: in an
    /// MP4/MOV output the track's edit list ends where the frames before
    /// `from` end (a cut's end: the frame after it kept only as a
    /// reference of frames before it). Other containers show them.
    public func hideFrames(track: Int, from: Int64) {
        tracks[track].hiddenFrom = from
    }

    /// Bytes written to the output so far (buffered ones included).
    public var bytesWritten: Int64 { output.bytesWritten }

    /// The output time of the last packet written, in seconds (0 before any).
    public var position: Double {
        guard let last else { return 0 }
        return Timestamp(last.dts, timeBase(last.track)).seconds
    }

    /// The corrections `track`'s timelines have made so far.
    public func corrections(track: Int) -> TimelineCorrections {
        tracks[track].timeline?.corrections ?? TimelineCorrections()
    }

    /// Writes the trailer, closes the output and (for a file) moves it onto
    /// its name. Nothing is named before every byte is written.
    public func finish() throws(MediaError) -> MuxResult {
        try cancellation.check()
        try output.finish()
        if container.isISOBMFF, let staged {
            // Frames the input hid at its end stay hidden (see `EditListEnd`),
            // and no data track is shown past the content's end.
            let content = contentEnd
            var ends: [EditListEnd] = []
            for j in tracks.indices {
                let end = tracks[j].plan.type == .data ? content.flatMap { rescale($0, from: .microseconds, to: timeBase(j)) } : nil
                tracks[j].carried?.contentEnd = end
                guard let m = tracks[j].muxerIndex, let e = [tracks[j].editEnd, end].compactMap({ $0 }).min() else { continue }
                ends.append(EditListEnd(track: m, shownEnd: e, firstDTS: tracks[j].plan.firstDTS ?? 0))
            }
            try complete(staged.temporary, ends: ends)
        }
        if let staged {
            try OutputCheck.verify(path: staged.temporary, name: name, container: container, plan: plans,
                                   cancellation: cancellation)
            try bytesCheck?(staged.temporary)
        }
        var result = MuxResult(packets: tracks.map(\.packets), payloadBytes: tracks.map(\.bytes),
                               corrections: tracks.indices.map(corrections(track:)), outputBytes: 0, elapsed: .zero)
        result.emptyTracks = emptyTracks
        if let expectedTagLosses { result.tagLosses = expectedTagLosses } else { checkTags(into: &result) }
        if !namedByCaller { try staged?.commit() }
        result.outputBytes = if let memory { Int64(memory.bytes.count) }
            else if namedByCaller, let staged { staged.bytesSoFar }
            else { staged.flatMap { fileSize($0.target) } ?? output.bytesWritten }
        result.elapsed = ContinuousClock.now - began
        return result
    }

    /// Adds what the muxer could not write (`IndexCompletion`, one pass): the carried tracks,
    /// with their references to the others, and video entry boxes; ends the edit lists at `ends`.
    private func complete(_ path: String, ends: [EditListEnd]) throws(MediaError) {
        let carried = tracks.compactMap { t -> IndexCompletion.Carried? in
            guard let c = t.carried, c.sampleCount > 0 else { return nil }
            return IndexCompletion.Carried(c, references: c.source.references.map { ref in
                (ref.type, ref.ids.compactMap { reference(to: $0, from: t.input) })
            })
        }
        // (The muxer was not asked for faststart: with nothing to add, the index is still moved.)
        let described = descriptions.keys.sorted().compactMap { descriptions[$0] }
        do throws(IndexCompletion.Failure) {
            try IndexCompletion.complete(path: path, ends: ends, entries: entryAdditions, carried: carried, userData: userData,
                                         descriptions: described, faststart: faststartAfterCompletion)
        } catch {
            throw MediaError(error, completing: name)
        }
    }

    /// The output track made from track `id` of `input`'s file, if any.
    private func reference(to id: Int, from input: InputStream?) -> IndexCompletion.TrackReference? {
        guard let file = input?.file else { return nil }
        var carriedIndex = 0
        for t in tracks {
            let match = t.input.map { $0.file === file && $0.id == id } ?? false
            if let m = t.muxerIndex, match { return .written(m) }
            if let c = t.carried, c.sampleCount > 0 {
                if match { return .carried(carriedIndex) }
                carriedIndex += 1
            }
        }
        return nil
    }

    /// Reads the written output's tags back (before it is named) and notes
    /// what the sources gave it that it does not hold (outputs no trial
    /// could stand for: Matroska, MPEG-TS).
    private func checkTags(into result: inout MuxResult) {
        do {
            let written: InputFile
            if let memory {
                written = try InputFile(memory: MemoryInput(memory.bytes), name: name, packetsOnly: true,
                                        format: container.demuxer)
            } else if let staged {
                written = try InputFile(path: staged.temporary, cancellation: cancellation, packetsOnly: true,
                                        format: container.demuxer)
            } else {
                return
            }
            result.tagLosses = TagCheck.losses(output.intendedTags, in: written)
        } catch {
            result.tagCheckFailure = error.message
        }
    }
}
