import ISOBMFF
import Media
import Pipeline
import Sync
import Threads

public struct RemuxOptions: Sendable, Equatable {
    /// The output container; `nil` means from the output's extension.
    public var container: Container?
    public var start: StartPolicy = .zero
    /// Tag, creation-time and rotation changes made as the output is written.
    public var edits = MetadataEdits()
    public var repair: TimestampRepair = .fix
    public var streams = StreamSelection()
    /// MP4/MOV/M4A: put the index (moov) before the media data.
    public var faststart = true
    public var overwrite = false
    /// Keep every complete packet of a damaged or cut-off input (instead of
    /// refusing it) and report what was lost.
    public var salvage = false
    /// Added to the index's reservation (tests: a negative one forces the
    /// fallback to a second pass).
    package var indexReservationAdjustment = 0
    /// MP4/MOV into MP4/MOV with faststart: the payloads named by their
    /// place in the input and copied from there, not read and written
    /// (`ReferencedPackets`); tests turn it off to compare the two ways.
    package var payloadsByReference = true
    /// An MP4/MOV/M4A into the same kind of file with nothing else asked:
    /// the media data copied as it is and the index moved in front
    /// (`bulkRemux`); false always writes through libavformat.
    public var bulk = true
    /// Audio that is not AAC encoded to AAC (`remux --audio aac`: the video
    /// copied, PCM or another codec the container cannot hold made AAC);
    /// AAC is copied.
    public var encodeAudioToAAC = false
    /// The AAC bit rate for all channels (nil: 64 kb/s per channel).
    public var audioBitRate: Int64?

    public init() {}
}

/// Options as data (a request body, a recipe): keys are the properties'
/// names; a key left out keeps its default. Metadata edits are not carried.
extension RemuxOptions: Codable {
    private enum CodingKeys: String, CodingKey {
        case container, start, repair, streams, faststart, overwrite, salvage, bulk, encodeAudioToAAC, audioBitRate
    }

    public init(from decoder: any Swift.Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        container = try c.decodeIfPresent(Container.self, forKey: .container)
        start = try c.decodeIfPresent(StartPolicy.self, forKey: .start) ?? start
        repair = try c.decodeIfPresent(TimestampRepair.self, forKey: .repair) ?? repair
        streams = try c.decodeIfPresent(StreamSelection.self, forKey: .streams) ?? streams
        faststart = try c.decodeIfPresent(Bool.self, forKey: .faststart) ?? faststart
        overwrite = try c.decodeIfPresent(Bool.self, forKey: .overwrite) ?? overwrite
        salvage = try c.decodeIfPresent(Bool.self, forKey: .salvage) ?? salvage
        bulk = try c.decodeIfPresent(Bool.self, forKey: .bulk) ?? bulk
        encodeAudioToAAC = try c.decodeIfPresent(Bool.self, forKey: .encodeAudioToAAC) ?? encodeAudioToAAC
        audioBitRate = try c.decodeIfPresent(Int64.self, forKey: .audioBitRate)
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(container, forKey: .container)
        try c.encode(start, forKey: .start)
        try c.encode(repair, forKey: .repair)
        try c.encode(streams, forKey: .streams)
        try c.encode(faststart, forKey: .faststart)
        try c.encode(overwrite, forKey: .overwrite)
        try c.encode(salvage, forKey: .salvage)
        try c.encode(bulk, forKey: .bulk)
        try c.encode(encodeAudioToAAC, forKey: .encodeAudioToAAC)
        try c.encodeIfPresent(audioBitRate, forKey: .audioBitRate)
    }
}

/// Progress of a running remux, reported every few packets.
public struct RemuxProgress: Sendable {
    public let bytesRead: Int64
    public let inputSize: Int64?
    /// Output position in seconds (from the last written timestamp).
    public let position: Double
    public let duration: Double?

    /// A progress value (what a test or a client's own reporting makes).
    public init(bytesRead: Int64, inputSize: Int64?, position: Double, duration: Double?) {
        self.bytesRead = bytesRead
        self.inputSize = inputSize
        self.position = position
        self.duration = duration
    }

    /// 0…1, from the position when the duration is known, else from bytes.
    public var fraction: Double? {
        if let d = duration, d > 0 { return min(max(position / d, 0), 1) }
        if let s = inputSize, s > 0 { return min(Double(bytesRead) / Double(s), 1) }
        return nil
    }
}

public struct RemuxReport: Sendable, Codable {
    public let input: String
    public let output: String
    public let container: String
    public var streams: [RemuxStreamReport]
    /// Input streams left out: index and why.
    public var dropped: [DroppedStream]
    /// What the target container could not keep (e.g. rotation in Matroska).
    public var warnings: [String] = []
    public var outputBytes: Int64 = 0
    public var durationSeconds: Double?
    public var elapsedSeconds: Double = 0
    /// With `salvage`: what was kept of a damaged or cut-off input.
    public var salvage: SalvageReport?
    /// MP4/MOV with faststart: how the index came to be in front — reserved
    /// and written in one pass, or moved there by a second pass.
    public var indexPlacement: String?

    public var corrections: TimelineCorrections { streams.reduce(TimelineCorrections()) { $0 + $1.corrections } }
}

/// Stream copy from one container into another: every packet's payload is
/// passed through untouched; only timestamps move, through the core's
/// `TrackTimeline` (one per track, in the mux session).
public func remux(input inputPath: String, output outputPath: String, options: RemuxOptions,
                  cancellation: Cancellation = .shared,
                  progress: ((RemuxProgress) -> Void)? = nil) throws(MediaError) -> RemuxReport {
    let container = try resolveContainer(options.container, output: outputPath)
    // The same kind of file with nothing else asked: from the file's own boxes, before libavformat opens it.
    if let report = try bulkRemux(path: inputPath, output: outputPath, container: container, options: options,
                                  cancellation: cancellation, progress: progress) {
        return report
    }
    let input = try InputFile(path: inputPath, cancellation: cancellation)
    let destination = MuxDestination.file(outputPath, overwrite: options.overwrite, inputs: [inputPath])
    if let report = try remuxByReference(input, output: outputPath, container: container, options: options,
                                         cancellation: cancellation, progress: progress) {
        return report
    }
    var reservation: Int?
    // (Encoded audio's packets are not known before: its index is moved to the front after.)
    if options.faststart && container.isISOBMFF && !options.encodeAudioToAAC {
        // A trial that fails for any reason leaves the two-pass way; the
        // real write then meets (and reports) whatever stopped it.
        reservation = (try? indexReservation(input, container: container, options: options, cancellation: cancellation)) ?? nil
        // The trial's memory (its demuxer's and its muxer's indexes) back to the system before the real write.
        releaseFreedMemory()
    }
    guard let reserved = reservation else {
        var report = try remux(input, to: destination, container: container, options: options, cancellation: cancellation,
                               progress: progress)
        if options.faststart && container.isISOBMFF { report.indexPlacement = "moved to the front in a second pass" }
        return report
    }
    do {
        var report = try remux(input, to: destination, container: container, options: options, reservedIndex: reserved,
                               cancellation: cancellation, progress: progress)
        report.indexPlacement = "written in front in one pass (\(reserved) bytes reserved)"
        return report
    } catch where error.isInvalidArgument && error.operation == "could not finish" {
        // The index outgrew its reservation (the trial and the real write
        // disagreed): written again, the index moved to the front after.
        let again = try InputFile(path: inputPath, cancellation: cancellation, sameAs: input)
        var report = try remux(again, to: destination, container: container, options: options, cancellation: cancellation,
                               progress: progress)
        report.indexPlacement = "moved to the front in a second pass (the \(reserved) bytes reserved for it were too few)"
        return report
    }
}

/// The remux of `input` into `outputPath` through `ReferencedPackets`, where
/// it can be made: an MP4/MOV into MP4/MOV with the index in front, every
/// payload nameable, nothing encoded or salvaged; nil otherwise.
private func remuxByReference(_ input: InputFile, output outputPath: String, container: Container, options: RemuxOptions,
                              cancellation: Cancellation, progress: ((RemuxProgress) -> Void)?) throws(MediaError) -> RemuxReport? {
    guard options.payloadsByReference, options.faststart, container.isISOBMFF, !options.encodeAudioToAAC, !options.salvage,
          options.indexReservationAdjustment == 0 else { return nil }
    let began = ContinuousClock.now
    // What probing the input took and let go, back to the system before the indexes grow.
    releaseFreedMemory()
    // The streams the remux keeps (as it plans them: nothing is encoded here).
    let plan = try planStreams(input, container: container, selection: options.streams, audioRemedy: .encodeAudioOrDrop)
    guard var referenced = ReferencedPackets(input, kept: plan.kept, cancellation: cancellation) else { return nil }
    let target = try StagedOutput(target: outputPath, overwrite: options.overwrite, inputs: [input.path])
    // What the muxer writes, payloads left out: never named.
    let written = try StagedOutput(target: outputPath, overwrite: true, inputs: [input.path], counted: false)
    defer { written.discard() }
    var muxing = options
    muxing.faststart = false
    // Progress: the muxer's pass is the first half, the copy the second (they take about as long).
    var report = try remux(input, to: .part(written), container: container, options: muxing, referenced: referenced,
                           cancellation: cancellation, progress: progress.map { progress in
        { p in progress(RemuxProgress(bytesRead: 0, inputSize: p.inputSize, position: p.position / 2, duration: p.duration)) }
    })
    // The index read without media data goes before the output's is laid out.
    let payloads = referenced.payloads
    referenced = ReferencedPackets(payloads: payloads)
    releaseFreedMemory()
    let composed = try compose(written, with: payloads, into: target, duration: input.duration?.seconds, cancellation: cancellation,
                                          progress: progress)
    // The input must be the file whose index was read, the output hold the tracks the muxer wrote.
    if let changed = input.changedError() { throw changed }
    try OutputCheck.verify(path: target.temporary, name: outputPath, sameTracksAs: composed.layout.sourceIndex)
    try target.commit()
    report.outputBytes = composed.bytes
    report.elapsedSeconds = (ContinuousClock.now - began).seconds
    report.indexPlacement = "written in front: the media data copied from the input by its place in the file"
        + (composed.layout.widened > 0 ? " (\(composed.layout.widened) offset table(s) widened to 64 bits)" : "")
    return report
}

/// The exact size of the index (`moov`) the remux of `input` will write,
/// plus the 8 bytes of the smallest `free` box, for a one-pass write with
/// the index in front (`moov_size`); nil when it cannot be known before:
/// only an MP4/MOV input whose index lists every packet, of codecs whose
/// payloads the MP4 muxer does not read, can be measured. It is measured by
/// a trial remux of the same streams, with the same timelines and tags, of
/// the input read without its media data (`HollowFileInput`: sizes, timing
/// and flags come from the index) into an output that only counts
/// (`MemoryOutput(countsOnly:)`): what the trial writes after its media
/// data is the index.
package func indexReservation(_ input: InputFile, container: Container, options: RemuxOptions,
                              cancellation: Cancellation = Cancellation()) throws(MediaError) -> Int? {
    guard !options.salvage, input.formatName.hasPrefix("mov"),
          let boxes = TopLevelBoxes(path: input.path), !boxes.hasFragments, !boxes.cutShort, !boxes.mediaData.isEmpty else { return nil }
    var plan = try planStreams(input, container: container, selection: options.streams)
    // Tracks carried past the muxer are added after its trailer (the session reserves their room).
    plan.kept.removeAll { container.isISOBMFF && CarriedTrack.carries($0) }
    guard !plan.kept.isEmpty, plan.kept.allSatisfy({ s in
        payloadBlind(s) && (s.isAttachedPicture || s.hasWholeIndex)
    }) else { return nil }
    let hollow = try HollowFileInput(path: input.path, holes: boxes.mediaData.map { Int64($0.lowerBound)..<Int64($0.upperBound) })
    let trialInput = try InputFile(hollow: hollow, name: input.path, format: "mov", cancellation: cancellation)
    guard trialInput.streams.count == input.streams.count else { return nil }
    let sink = try MemoryOutput(limit: Int.max, countsOnly: true)
    let session = try MuxSession(.memory(sink, name: input.path), container: container, streams: plan.kept.map { .copy($0) },
                                 metadataSource: input, edits: options.edits, faststart: false,
                                 audioSampleRate: plan.kept.first { $0.mediaType == .audio }?.sampleRate,
                                 cancellation: cancellation)
    let header = Int(session.bytesWritten)
    try session.beginTimelines(plan.kept, start: options.start, repair: options.repair)
    var source = try PacketSource(trialInput, kept: plan.kept.map { trialInput.streams[$0.index] }, salvage: false,
                                  operation: "could not measure the index of")
    // As the real write: every packet, those the input hides at its end too.
    source.keepsHiddenEnd = true
    // The zeros outlive the session's end: its interleaving queue still
    // holds packets pointing there until the trailer is written.
    let zeros = ZeroPayload()
    try writeShapes(of: source, to: session, zeros: zeros)
    let result = try withExtendedLifetime(zeros) { () throws(MediaError) in try session.finish() }
    // What went into the media data; cover art goes into the index ('covr').
    let payload = zip(plan.kept, result.payloadBytes).reduce(Int64(0)) { $0 + ($1.0.isAttachedPicture ? 0 : $1.1) }
    var index = sink.size - header - Int(payload)
    guard index > 0 else { return nil }
    // Near 4 GiB the real offsets (larger by the reservation) may need
    // 64-bit chunk offsets where the trial's did not: 4 bytes more a chunk,
    // at most one chunk a packet.
    if abs(Int64(sink.size) - Int64(UInt32.max)) < Int64(index) + (1 << 24) { index += 4 * result.packets.reduce(0, +) }
    return index + 8
}

/// The trial's packets into `session`, read on a thread of their own
/// (`ShapeFeed`); the packets the muxer gets point to `zeros`, which must
/// outlive the session's end (packets wait in its interleaving queue until then).
private func writeShapes(of source: PacketSource, to session: MuxSession, zeros: ZeroPayload) throws(MediaError) {
    var feed = ShapeFeed(source) { (packet, shape) throws(MediaError) in try zeros.fill(packet, as: shape) }
    try feed.readWhile { (packet, j) throws(MediaError) -> Bool in
        try session.write(packet, track: j)
        return true
    }
}

/// Codecs whose payloads the MP4 muxer writes without looking into them:
/// for them a trial write of the packets' sizes and timing alone gives the
/// real index, and a payload named by its place in the input is written
/// as the muxer would have written it. Checked against FFmpeg 5.1's movenc
/// (`ff_mov_write_packet`, the sample entry writers) and by writing each
/// codec's packets once as they are and once as zeros of the same sizes
/// into MP4 and MOV: the two indexes are the same byte for byte.
/// H.264/HEVC with avcC/hvcC (Annex B is converted), AAC (an ADTS first
/// packet is refused, see `ReferencedPackets.startsWithADTS`), ALAC, MP3,
/// Opus and FLAC (`dOps`/`dfLa` come from the extradata), `mov_text`,
/// `tmcd`, data and PCM. Not so: AC-3 and E-AC-3, whose every packet the
/// muxer parses (`handle_eac3`: a packet that is no frame is dropped, the
/// track left out when none is; `dac3`/`dec3` from the frames), DNxHD and
/// TrueHD (sample entries from the first packet), MPEG-2 and VC-1 (headers
/// read for sync samples), and any codec not listed.
func payloadBlind(_ s: InputStream) -> Bool {
    if s.isAttachedPicture { return true }
    switch s.codecName {
    case "h264", "hevc":
        // avcC/hvcC (version 1), not Annex B start codes.
        return s.extradata.first == 1
    case "aac", "alac", "mp3", "opus", "flac", "mov_text", "tmcd", "bin_data":
        return true
    default:
        return s.codecName.hasPrefix("pcm_")
    }
}

/// What an output without edit lists leaves out: the frames the input's
/// edit list hides at a track's end (shown, they would make it longer).
private func hiddenEndWarnings(_ counts: [Int], kept: [InputStream], container: Container) -> [String] {
    zip(counts, kept).compactMap { n, s in
        n == 0 ? nil : "stream #\(s.index) (\(s.codecName)): \(n) frame(s) the input's edit list hides at its end left out"
            + " (\(container.name) has no edit list to hide them)"
    }
}

/// The same stream copy from an opened input into memory (nothing touches
/// the filesystem): what the fuzz harness runs, and a check that the file
/// and memory paths write the same bytes. `options.faststart` does not
/// apply (it rewrites a file by reopening it).
public func remux(_ input: InputFile, into memory: MemoryOutput, container: Container, options: RemuxOptions,
                  cancellation: Cancellation = Cancellation()) throws(MediaError) -> RemuxReport {
    try remux(input, to: .memory(memory, name: "memory.\(container.name)"), container: container, options: options,
              cancellation: cancellation, progress: nil)
}

/// remux.c's shape: plan the streams, open the output with exactly those,
/// copy every packet, finish.
private func remux(_ input: InputFile, to destination: MuxDestination, container: Container, options: RemuxOptions,
                   reservedIndex: Int? = nil, referenced: ReferencedPackets? = nil,
                   cancellation: Cancellation, progress: ((RemuxProgress) -> Void)?) throws(MediaError) -> RemuxReport {
    let encodings = options.encodeAudioToAAC
        ? try audioEncodings(input, container: container, selection: options.streams, bitRate: options.audioBitRate,
                             operation: "could not remux") { $0.codecName == "aac" ? nil : "aac" }
        : [:]
    // The video can stay as it is when only the audio needs encoding.
    let plan = try planStreams(input, container: container, selection: options.streams, audioRemedy: .encodeAudioOrDrop) {
        encodings[$0.index] != nil
    }
    let packets = referenced?.input ?? input
    var source = try PacketSource(packets, kept: plan.kept.map { packets.streams[$0.index] }, salvage: options.salvage,
                                  operation: "could not remux")
    // Frames the input's edit list hides at its end: kept where the output's edit list hides them too.
    let hidesFrames: Bool
    if case .memory = destination { hidesFrames = false } else { hidesFrames = container.isISOBMFF }
    source.keepsHiddenEnd = hidesFrames
    var audio: [Int: AudioReencoder] = [:]
    for (index, settings) in encodings {
        audio[index] = try AudioReencoder(settings: settings, source: input.streams[index])
        try audio[index]!.begin(input.streams[index])
    }
    let session = try MuxSession(destination, container: container,
                                 streams: plan.kept.map { s in audio[s.index].map { .encoded($0.encoder) } ?? .copy(s) },
                                 metadataSource: input, edits: options.edits, faststart: options.faststart,
                                 audioSampleRate: plan.kept.first { $0.mediaType == .audio }
                                    .map { audio[$0.index]?.encoder.sampleRate ?? $0.sampleRate },
                                 reservedIndex: reservedIndex.map { $0 + options.indexReservationAdjustment },
                                 // (The payloads' room is not taken in a file that leaves them out.)
                                 expectedBytes: referenced == nil ? input.size : nil, payloads: referenced?.payloads,
                                 cancellation: cancellation)
    try session.beginTimelines(plan.kept, start: options.start, repair: options.repair,
                               retimed: audio.mapValues { $0.encoder.timeBase })
    if hidesFrames && input.formatName.hasPrefix("mov") {
        // Where each track's edit list ends in the input (the demuxer's start and duration).
        for (j, s) in plan.kept.enumerated() where audio[s.index] == nil {
            if let start = s.startTime, let length = s.duration { session.showUntil(track: j, start.value + length.value) }
        }
    }
    let writers: [any TrackWriter] = plan.kept.enumerated().map { j, s -> any TrackWriter in
        if let a = audio[s.index] { return ReencodeWriter(a, track: j, session: session) }
        return CopyWriter(track: j, session: session)
    }
    let duration = input.duration.map(\.seconds), inputSize = input.size
    let tick = progress.map { progress in
        // (A feed read on its own thread tells no bytes: its demuxer is busy there.)
        { progress(RemuxProgress(bytesRead: referenced == nil ? input.bytesRead : 0, inputSize: inputSize,
                                 position: session.position, duration: duration)) }
    }
    if let referenced {
        var feed = referenced.feed(source, kept: plan.kept, container: container)
        try runTracks(&feed, into: writers, cancellation: cancellation, progress: tick)
    } else {
        try runTracks(&source, into: writers, cancellation: cancellation, progress: tick)
    }
    let result = try session.finish()

    var report = RemuxReport(
        input: input.path, output: session.name, container: container.name,
        streams: plan.kept.enumerated().map {
            var r = RemuxStreamReport(inputIndex: $1.index, outputIndex: $0, type: $1.mediaType,
                                      codec: audio[$1.index] == nil ? $1.reportedCodec : "aac",
                                      packets: result.packets[$0], bytes: result.payloadBytes[$0],
                                      corrections: result.corrections[$0])
            if audio[$1.index] != nil { r.encodedFrom = $1.codecName }
            return r
        },
        dropped: plan.dropped,
        warnings: [source.salvage?.warning].compactMap { $0 } + result.warnings(container: container) + plan.warnings
            + hiddenEndWarnings(source.discardedAtEnd, kept: plan.kept, container: container))
    report.salvage = source.salvage
    report.outputBytes = result.outputBytes
    report.durationSeconds = input.duration.map(\.seconds)
    report.elapsedSeconds = result.elapsed.seconds
    return report
}
