import Glibc
import FoundationEssentials
import Threads
import Media
import Pipeline
import Sync

// MARK: The join

/// The chunks' packets one after another, one packet ahead.
private final class ChunkReader {
    private let paths: [String]
    private let timeBase: Rational
    private var next = 0
    private var file: ChunkPacketReader?
    let packet: Packet
    private(set) var loaded = false
    /// Each chunk's first PTS, as read.
    private(set) var firstPTS: [Int64?] = []
    private(set) var packets = 0

    init(paths: [String], timeBase: Rational) throws(MediaError) {
        self.paths = paths
        self.timeBase = timeBase
        packet = try Packet()
    }

    /// Loads the next packet if none is loaded; false after the last chunk.
    func peek() throws(MediaError) -> Bool {
        if loaded { return true }
        while true {
            if file == nil {
                guard next < paths.count else { return false }
                file = try ChunkPacketReader(path: paths[next])
                firstPTS.append(nil)
                next += 1
            }
            if try file!.next(into: packet) {
                if firstPTS[firstPTS.count - 1] == nil { firstPTS[firstPTS.count - 1] = packet.timing.pts }
                loaded = true
                return true
            }
            file = nil
        }
    }

    /// The loaded packet's decode time (for interleaving); nil when it has none.
    var decodeTime: Timestamp? {
        let t = packet.timing
        return (t.dts ?? t.pts).map { Timestamp($0, timeBase) }
    }

    /// Whether the loaded packet goes before a packet decoded at `t` (nil:
    /// at the end): exact, across time bases; one without a time goes first.
    func goes(before t: Timestamp?) -> Bool {
        guard let mine = decodeTime else { return true }
        return t.map { mine <= $0 } ?? true
    }

    func consume() {
        loaded = false
        packets += 1
    }
}

/// The join's video track: the chunks' packets, each sent once the
/// source's packets decoded after it come (`AfterChunks`), the rest at the
/// end; the source's own video packets are left out.
private final class ChunkSeams: TrackWriter {
    let track: Int
    private let chunks: ChunkReader
    private let video: any TrackWriter
    private let cancellation: Cancellation
    private let start: Double, duration: Double?
    private let progress: ((TranscodeProgress) -> Void)?
    private var lastProgress = -1.0

    init(chunks: ChunkReader, video: any TrackWriter, cancellation: Cancellation, start: Double, duration: Double?,
         progress: ((TranscodeProgress) -> Void)?) {
        self.chunks = chunks
        self.video = video
        track = video.track
        self.cancellation = cancellation
        self.start = start
        self.duration = duration
        self.progress = progress
    }

    /// Each chunk's first PTS, as read.
    var firstPTS: [Int64?] { chunks.firstPTS }

    /// (Packets the demuxer buffered while it probed come before the discard takes hold.)
    func send(_ packet: borrowing Packet) {}

    /// The chunks' packets decoded up to `t` (nil: all of them).
    func video(upTo t: Timestamp?) throws(MediaError) {
        while try chunks.peek(), chunks.goes(before: t) {
            try cancellation.check()
            let position = (chunks.decodeTime?.seconds ?? start) - start
            try video.send(chunks.packet)
            chunks.consume()
            if let progress, position - lastProgress >= 0.5 {
                lastProgress = position
                progress(TranscodeProgress(frames: chunks.packets, position: position, duration: duration))
            }
        }
    }

    func finish() throws(MediaError) {
        try video(upTo: nil)
        try video.finish()
    }
}

/// A track of the source in a join: each packet after the chunks' packets
/// decoded before it (exact, across time bases), so the tracks interleave.
private final class AfterChunks: TrackWriter {
    private let inner: any TrackWriter
    private let timeBase: Rational
    private let seams: ChunkSeams
    var track: Int { inner.track }

    init(_ inner: any TrackWriter, timeBase: Rational, seams: ChunkSeams) {
        self.inner = inner
        self.timeBase = timeBase
        self.seams = seams
    }

    func send(_ packet: borrowing Packet) throws(MediaError) {
        let t = packet.timing
        // A packet without a time waits for no video.
        if let time = t.dts ?? t.pts { try seams.video(upTo: Timestamp(time, timeBase)) }
        try inner.send(packet)
    }

    func finish() throws(MediaError) {
        try seams.video(upTo: nil)
        try inner.finish()
    }
}

/// Why chunk `number` cannot be joined: missing, of other settings, or damaged.
private func unusable(_ number: Int, _ manifest: ChunkManifest, in dir: ChunkDirectory) -> MediaError {
    let count = manifest.count
    let name = ChunkFiles.record(number, of: count)
    let rerun = "rerun its task: 'avtool transcode \(manifest.source) --chunk \(number)/\(count) --chunk-dir \(dir.path)'"
    guard let record = dir.rawRecord(name) else {
        return MediaError.invalid("could not join", path: dir.path,
                                  message: "chunk \(number) of \(count) is missing (its task has not finished, or failed)",
                                  hint: rerun)
    }
    if record.settings != manifest.settings {
        return MediaError.invalid("could not join", path: dir.file(record.file),
                                  message: "chunk \(number) of \(count) was encoded with other settings ('\(record.settings)', not '\(manifest.settings)')",
                                  hint: "delete it and " + rerun)
    }
    return MediaError.invalid("could not join", path: dir.file(record.file),
                              message: "chunk \(number) of \(count) is damaged: \(fileSize(dir.file(record.file)).map { "\($0) bytes" } ?? "no file"), the ledger says \(record.bytes) bytes",
                              hint: "delete it and " + rerun)
}

/// `avtool transcode --join DIR OUT`: the chunks of DIR, every one complete
/// and encoded with the same settings, joined into OUT with the source's
/// other streams: audio copied, or encoded once over the whole file, as a
/// transcode of the source would; tags, rotation and colour as the source's.
/// The chunks' timestamps are the source's, so the video's are continuous
/// and no frame is lost or repeated at a seam.
public func joinChunks(directory: String, output outputPath: String, options: TranscodeOptions,
                       cancellation: Cancellation = .shared,
                       progress: ((TranscodeProgress) -> Void)? = nil) throws(MediaError) -> TranscodeReport {
    try joinChunks(ChunkDirectory(path: directory), output: outputPath, options: options, cancellation: cancellation,
                   progress: progress)
}

func joinChunks(_ dir: ChunkDirectory, output outputPath: String, options: TranscodeOptions,
                cancellation: Cancellation, progress: ((TranscodeProgress) -> Void)?) throws(MediaError) -> TranscodeReport {
    let began = ContinuousClock.now
    let manifest = try dir.manifest()
    var records: [ChunkRecord] = []
    for k in 1...manifest.count {
        guard let r = dir.completed(k, of: manifest.count, settings: manifest.settings) else {
            throw unusable(k, manifest, in: dir)
        }
        records.append(r)
    }
    let options = manifest.choices.applied(to: options)
    try options.validate()
    let container = try chunkedContainer(options, output: outputPath, operation: "could not join")
    let input = try InputFile(path: manifest.source, cancellation: cancellation)
    if let cut = input.cutOffError("could not transcode") { throw cut }
    guard input.size == manifest.sourceBytes else {
        throw MediaError.invalid("could not join", path: manifest.source,
                                 message: "the source has \(input.size ?? 0) bytes; the chunks were encoded from \(manifest.sourceBytes)")
    }
    let plan = try TranscodePlan(input, container: container, options: options, cancellation: cancellation)
    let line = chunkSettings(plan.videoSettings, quality: options.quality)
    guard plan.video.index == manifest.videoStream, line == manifest.settings else {
        throw MediaError.invalid("could not join", path: dir.path,
                                 message: "the chunks were encoded with '\(manifest.settings)'; here the encoder would be '\(line)'",
                                 hint: "join where the chunks were encoded (the same avtool and x265)")
    }
    let tb = plan.video.timeBase!
    // One set of parameter sets for every chunk (the track has one).
    let filled = records.filter { $0.frames > 0 }
    guard let reference = filled.first else {
        throw MediaError.invalid("could not join", path: dir.path, message: "every chunk is empty")
    }
    let extradata = bytes(hex: reference.extradata) ?? []
    for r in filled where r.extradata != reference.extradata {
        throw MediaError.invalid("could not join", path: dir.file(r.file),
                                 message: "chunk \(r.number)'s parameter sets differ from chunk 1's (another encoder version or settings)",
                                 hint: "encode every chunk with the same avtool and options")
    }
    let chunks = try ChunkReader(paths: records.map { dir.file($0.file) }, timeBase: tb)
    // The encoder, opened only for the track's parameters (colour, size, rate).
    let encoder = try Encoder(video: plan.videoSettings, source: plan.video)
    let kept = plan.streams.kept
    let out = try TranscodeOutput(plan, input: input, video: .chunks(encoder, extradata: extradata, timeBase: tb),
                                  destination: .file(outputPath, overwrite: options.overwrite,
                                                     inputs: [manifest.source] + records.map { dir.file($0.file) }),
                                  options: options, cancellation: cancellation)
    let (session, videoTrack) = (out.session, out.videoTrack)
    let seams = ChunkSeams(chunks: chunks, video: out.writers[videoTrack], cancellation: cancellation,
                           start: input.startTime?.seconds ?? 0, duration: input.duration.map(\.seconds), progress: progress)
    // Each of the source's packets goes after the chunks' packets decoded
    // before it; the source's own video is left out, and where the format
    // allows not even read: the chunks hold it.
    input.discardAll(except: Set(kept.map(\.index)).subtracting([plan.video.index]))
    let writers: [any TrackWriter] = out.writers.enumerated().map { j, w in
        j == videoTrack ? seams as any TrackWriter : AfterChunks(w, timeBase: kept[j].timeBase!, seams: seams)
    }
    var source = try PacketSource(input, kept: kept, salvage: false, operation: "could not transcode")
    try runTracks(&source, into: writers, cancellation: cancellation)
    // Every chunk starts on its boundary: no frame lost or repeated at a seam.
    for (k, r) in records.enumerated() where k > 0 && r.frames > 0 && seams.firstPTS[k] != r.lower {
        throw MediaError.invalid("could not join", path: dir.file(r.file), stream: 0,
                                 message: "chunk \(k + 1) does not start on its boundary (\(seams.firstPTS[k].map(String.init) ?? "no packet"), not \(r.lower.map(String.init) ?? "none"))")
    }
    let result = try session.finish()
    var report = plan.report(input: input, output: outputPath, audio: out.audio, result: result)
    report.framesEncoded = records.map(\.frames).reduce(0, +)
    report.framesDecoded = report.framesEncoded
    let origin = input.startTime?.seconds ?? 0
    report.chunks = ChunkJoin(count: filled.count,
                              seamsSeconds: records.dropFirst().compactMap { $0.lower.map { Timestamp($0, tb).seconds - origin } },
                              framesPerChunk: filled.map(\.frames),
                              encodeSeconds: records.map(\.elapsedSeconds).reduce(0, +),
                              joinSeconds: (ContinuousClock.now - began).seconds)
    report.elapsedSeconds = (ContinuousClock.now - began).seconds
    return report
}
