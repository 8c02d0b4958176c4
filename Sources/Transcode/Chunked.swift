import Dispatch
import Glibc
import FoundationEssentials
import Threads
import Media
import Pipeline
import Sync

/// What every chunk of one chunked transcode shares, written first into the
/// chunk directory (`manifest.json`): the source, the video stream, the
/// core's `ChunkPlan`, and the encoder's settings as one line (the chunks'
/// fingerprint). Every task computes it from the same file and options and
/// must find the same one there.
public struct ChunkManifest: Codable, Equatable, Sendable {
    public var format = 1
    /// The source as the tasks name it (an absolute path on a cluster's shared filesystem).
    public var source: String
    public var sourceBytes: Int64
    public var videoStream: Int
    /// The chunks asked for: the tasks and files. The plan may have fewer
    /// (a video with fewer keyframes); the chunks past it are empty.
    public var chunks: Int
    /// The video's time base (the chunks' timestamps are on it), `num/den`.
    public var timeBase: String
    public var plan: ChunkPlan
    /// The video encoder's settings and version: chunks encoded otherwise do not join.
    public var settings: String
    /// The choices the settings came from, for the join.
    public var choices: VideoChoices

    public var count: Int { chunks }
}

/// The options that decide how the video is encoded (and so must be the
/// same in every chunk).
public struct VideoChoices: Codable, Equatable, Sendable {
    public var crf: Double?
    public var bitRate: Int64?
    public var bitsPerPixel: Double?
    public var preset: String
    public var tune: String?
    public var x265Params: String?
    public var keyframeInterval: Int?
    public var tenBit: Bool
    public var width: Int?
    public var height: Int?

    public init(_ o: TranscodeOptions) {
        switch o.rate {
        case .crf(let c): crf = c
        case .bitrate(let b): bitRate = b
        case .bitsPerPixel(let b): bitsPerPixel = b
        }
        preset = o.preset
        tune = o.tune
        x265Params = o.x265Params
        keyframeInterval = o.keyframeInterval
        tenBit = o.tenBit
        width = o.size?.width
        height = o.size?.height
    }

    /// `options` with these choices in place of its own.
    public func applied(to options: TranscodeOptions) -> TranscodeOptions {
        var o = options
        o.rate = crf.map { .crf($0) } ?? bitRate.map { .bitrate($0) } ?? bitsPerPixel.map { .bitsPerPixel($0) } ?? o.rate
        o.preset = preset
        o.tune = tune
        o.x265Params = x265Params
        o.keyframeInterval = keyframeInterval
        o.tenBit = tenBit
        o.size = width.flatMap { w in height.map { (w, $0) } }
        return o
    }
}

/// A chunk's ledger entry, written beside it once it is complete
/// (`chunk-0003-of-0008.json`): its presence with the manifest's settings
/// is what marks the chunk done, so a rerun encodes only the others.
public struct ChunkRecord: Codable, Sendable {
    public var number: Int
    public var count: Int
    /// The chunk's file, in the chunk directory.
    public var file: String
    public var bytes: Int64
    public var frames: Int
    /// The first frame's and the chunk's bounds, on the video's time base.
    public var firstPTS: Int64?
    public var lower: Int64?
    public var upper: Int64?
    public var settings: String
    /// The encoder's parameter sets, hex: every chunk's must be the same.
    public var extradata: String
    public var elapsedSeconds: Double
    public var host: String
}

/// What one chunk task did.
public struct ChunkReport: Sendable, Codable {
    public var input: String
    public var directory: String
    public var number: Int
    public var count: Int
    /// `encoded`, or `done-before` when the ledger already held it.
    public var status: String
    public var frames: Int
    public var startSeconds: Double?
    public var endSeconds: Double?
    public var outputBytes: Int64
    public var elapsedSeconds: Double
    /// The chunk's keyframe was no clean entry point (its pictures decoded
    /// damaged after a seek): it was decoded from the file's start.
    public var decodedFromStart = false
    public var warnings: [String] = []
}

/// What a join adds to the transcode report.
public struct ChunkJoin: Sendable, Codable {
    public var count: Int
    /// Where each chunk after the first starts, in output seconds.
    public var seamsSeconds: [Double]
    public var framesPerChunk: [Int]
    /// The chunks' encoding times (their tasks' own), summed.
    public var encodeSeconds: Double
    /// The join's own time.
    public var joinSeconds: Double
}

/// The chunk directory's files.
public enum ChunkFiles {
    public static let manifest = "manifest.json"
    static func name(_ number: Int, of count: Int) -> String {
        "chunk-" + padded(number) + "-of-" + padded(count)
    }
    /// Chunk `number`'s packets (`chunk-0003-of-0008.packets`).
    public static func media(_ number: Int, of count: Int) -> String { name(number, of: count) + ".packets" }
    static func record(_ number: Int, of count: Int) -> String { name(number, of: count) + ".json" }
    private static func padded(_ n: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }
}

// MARK: Planning

/// The manifest a chunked transcode of `input` in `count` chunks has,
/// computed from the file (its keyframes) and the video choices.
func chunkManifest(input: InputFile, count: Int, options: TranscodeOptions,
                   cancellation: Cancellation) throws(MediaError) -> (ChunkManifest, VideoPlan, Media.InputStream) {
    guard count >= 1 && count <= 4096 else {
        throw MediaError.invalidOption("'chunks' must be between 1 and 4096", options: ["chunks"])
    }
    if options.frameRate != nil {
        throw MediaError.invalidOption("--fps cannot be combined with chunks: a constant rate is made over the whole file",
                                       options: ["fps", "chunks"])
    }
    if options.salvage {
        throw MediaError.invalidOption("--salvage cannot be combined with chunks", options: ["salvage", "chunks"])
    }
    let v = try mainVideo(input)
    let times = try PresentationTimes(of: v, cancellation: cancellation)
    guard let start = times.start, let end = times.end else {
        throw MediaError.invalid("could not transcode", path: input.path, stream: v.index,
                                 message: "the video stream has no packets")
    }
    let plan = ChunkPlan(keyframes: times.times, start: start, end: end, count: count)
    let video = try VideoPlan(v, options: options, globalHeader: true, cancellation: cancellation)
    let tb = v.timeBase!
    // The source by its absolute path: tasks and the join may start elsewhere.
    let source = URL(fileURLWithPath: input.path).standardizedFileURL.path
    let manifest = ChunkManifest(source: source, sourceBytes: input.size ?? 0, videoStream: v.index, chunks: count,
                                 timeBase: "\(tb.numerator)/\(tb.denominator)", plan: plan,
                                 settings: settingsLine(video.settings), choices: VideoChoices(options))
    return (manifest, video, v)
}

/// The output's container, one chunks can be joined into: MP4, MOV or
/// Matroska, which keep the parameter sets in the header.
func chunkedContainer(_ options: TranscodeOptions, output: String, operation: String) throws(MediaError) -> Container {
    let container = try resolveContainer(options.container, output: output)
    guard container.isISOBMFF || container.muxer == "matroska" else {
        throw MediaError.invalid(operation, path: output,
                                 message: "chunks join into MP4, MOV or Matroska (their parameter sets are in the header), not \(container.name)",
                                 hint: "write .mp4, .mov or .mkv")
    }
    return container
}

/// The video stream a transcode encodes.
func mainVideo(_ input: InputFile) throws(MediaError) -> Media.InputStream {
    guard let v = input.streams.first(where: { $0.mediaType == .video && !$0.isAttachedPicture }), v.timeBase != nil else {
        throw MediaError.invalid("could not transcode", path: input.path, message: "no video stream to encode")
    }
    return v
}

/// The encoder's settings as one line: what must match between chunks.
func settingsLine(_ s: VideoEncoderSettings) -> String {
    var parts = [s.codec + (LibraryVersions.x265.map { " " + $0 } ?? ""),
                 "\(s.width)x\(s.height)", s.pixelFormat,
                 "tb=\(s.timeBase.numerator)/\(s.timeBase.denominator)"]
    if let f = s.frameRate { parts.append("fps=\(f.numerator)/\(f.denominator)") }
    if let a = s.sampleAspectRatio { parts.append("sar=\(a.numerator):\(a.denominator)") }
    parts += s.options.map { "\($0.0)=\($0.1)" }
    return parts.joined(separator: " ")
}

// MARK: The chunk directory

/// A chunk directory: its manifest and ledger. A chunked transcode without
/// a directory of the user's keeps its chunks in unnamed files in the
/// output's folder instead (`unnamed`), and the manifest and ledger in
/// memory, so a kill leaves nothing behind.
final class ChunkDirectory: Sendable {
    /// The directory, or for unnamed chunks the output's folder.
    let path: String
    private let unnamed: Locked<(files: [String: StagedOutput], texts: [String: Data])>?

    init(path: String) {
        self.path = path
        unnamed = nil
    }

    /// Unnamed chunks beside `output`; nil where its filesystem has no unnamed files.
    init?(unnamedBeside output: String) throws(MediaError) {
        let probe = try StagedOutput(target: output + ".chunk", overwrite: true, inputs: [], counted: false)
        guard probe.isUnnamed else { return nil }
        path = StagedOutput.split(output).dir
        unnamed = Locked(([:], [:]))
    }

    func file(_ name: String) -> String {
        if let unnamed { return unnamed.withLock { $0.files[name]?.temporary } ?? "" }
        return path.hasSuffix("/") ? path + name : path + "/" + name
    }

    /// A writer of chunk file `name`, which takes that name when committed.
    func writer(_ name: String) throws(MediaError) -> ChunkPacketWriter {
        guard let unnamed else { return try ChunkPacketWriter(path: file(name)) }
        let staged = try StagedOutput(target: path + "/" + name, overwrite: true, inputs: [], counted: false)
        return try ChunkPacketWriter(staged: staged, name: name) { unnamed.withLock { $0.files[name] = staged } }
    }

    /// The bytes of the manifest or a record, nil when it is not there.
    private func contents(_ name: String) -> Data? {
        if let unnamed { return unnamed.withLock { $0.texts[name] } }
        return FileManager.default.contents(atPath: file(name))
    }

    /// Makes the directory if needed and puts `manifest` there, or checks
    /// that the one there (another task's) is the same; several tasks may
    /// start at once, and exactly one manifest wins.
    func settle(_ manifest: ChunkManifest) throws(MediaError) {
        if unnamed == nil, let why = FileBytes.makeDirectories(path) {
            throw MediaError.invalid("could not use chunk directory", path: path, message: why)
        }
        let name = ChunkFiles.manifest
        if contents(name) == nil {
            // Named only once complete; if another task's manifest came
            // first, this one is not written and that one is checked.
            do {
                try write(manifest, to: name, overwrite: false)
            } catch where contents(name) != nil {}
        }
        let existing: ChunkManifest = try read(name)
        if let difference = difference(existing, manifest) {
            throw MediaError.invalid("could not use chunk directory", path: path,
                                     message: "it holds chunks of another transcode: \(difference)",
                                     hint: "use an empty directory for each transcode, or the same options for every task")
        }
    }

    /// The manifest of a directory made by chunk tasks.
    func manifest() throws(MediaError) -> ChunkManifest {
        guard contents(ChunkFiles.manifest) != nil else {
            throw MediaError.invalid("could not join", path: path,
                                     message: "no \(ChunkFiles.manifest): not a chunk directory, or no chunk task has started",
                                     hint: "run 'avtool transcode IN --chunk K/N --chunk-dir DIR' for each chunk first")
        }
        return try read(ChunkFiles.manifest)
    }

    /// The ledger's record of chunk `number` if the chunk is complete with
    /// `settings` (its file there, of the size recorded); `nil` otherwise.
    func completed(_ number: Int, of count: Int, settings: String) -> ChunkRecord? {
        guard let record: ChunkRecord = try? read(ChunkFiles.record(number, of: count)),
              record.settings == settings, size(of: file(record.file)) == record.bytes else { return nil }
        return record
    }

    func record(_ record: ChunkRecord) throws(MediaError) {
        try write(record, to: ChunkFiles.record(record.number, of: record.count), overwrite: true)
    }

    /// `value` as JSON under `name`, which names it only once it is complete
    /// (a kill leaves the old record or none, never a part).
    private func write<T: Encodable>(_ value: T, to name: String, overwrite: Bool) throws(MediaError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let target = file(name)
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            throw MediaError.invalid("could not write", path: target, message: "\(error)")
        }
        if let unnamed {
            unnamed.withLock { if overwrite || $0.texts[name] == nil { $0.texts[name] = data } }
            return
        }
        let staged = try StagedOutput(target: target, overwrite: overwrite, inputs: [], counted: false)
        let fd = try FileBytes.create(staged.temporary, reportingAs: target)
        defer { close(fd) }
        try FileBytes.write(fd, Array(data), path: target)
        try staged.commit()
    }

    private func read<T: Decodable>(_ name: String) throws(MediaError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: contents(name) ?? Data())
        } catch {
            throw MediaError.invalid("could not read", path: file(name), message: "not a chunk manifest or ledger this version reads")
        }
    }

    /// The record `name` as it is, nil when absent or unreadable.
    func rawRecord(_ name: String) -> ChunkRecord? { try? read(name) }

    private func difference(_ a: ChunkManifest, _ b: ChunkManifest) -> String? {
        if a.source != b.source { return "of '\(a.source)', not '\(b.source)'" }
        if a.sourceBytes != b.sourceBytes { return "of a \(a.sourceBytes)-byte file, this one has \(b.sourceBytes) bytes" }
        if a.count != b.count { return "in \(a.count) chunks, not \(b.count)" }
        if a.settings != b.settings { return "encoded with '\(a.settings)', not '\(b.settings)'" }
        if a != b { return "planned otherwise (stream, time base or boundaries)" }
        return nil
    }
}

func size(of path: String) -> Int64? { fileSize(path) }

// MARK: One chunk

/// `avtool transcode IN --chunk K/N --chunk-dir DIR`: encodes chunk `number`
/// of `count` of the video into DIR (a Slurm array task), unless the ledger
/// there already has it. The video only: the audio is the join's, once over
/// the whole file.
public func transcodeChunk(input inputPath: String, number: Int, of count: Int, directory: String,
                           options: TranscodeOptions, cancellation: Cancellation = .shared,
                           progress: ((TranscodeProgress) -> Void)? = nil) throws(MediaError) -> ChunkReport {
    try options.validate()
    guard number >= 1 && number <= count else {
        throw MediaError.invalidOption("--chunk \(number)/\(count): the chunk number must be between 1 and \(count)",
                                       options: ["chunk"])
    }
    let input = try InputFile(path: inputPath, cancellation: cancellation)
    if let cut = input.cutOffError("could not transcode") { throw cut }
    let (manifest, video, stream) = try chunkManifest(input: input, count: count, options: options, cancellation: cancellation)
    let dir = ChunkDirectory(path: directory)
    try dir.settle(manifest)
    return try encodeChunk(number, manifest: manifest, video: video, stream: stream, prime: options.primeChunkDecoder,
                           directory: dir,
                           cancellation: cancellation, progress: progress)
}

/// Encodes one chunk of `manifest` (skipped when the ledger has it): the
/// source read from the keyframe at the chunk's start, frames outside the
/// chunk decoded and let go, the rest encoded by an encoder of their own
/// (so the chunk starts with an IDR), written with the source's
/// timestamps, then recorded in the ledger.
func encodeChunk(_ number: Int, manifest: ChunkManifest, video: VideoPlan, stream: Media.InputStream, prime: Bool = true,
                 directory dir: ChunkDirectory, cancellation: Cancellation,
                 progress: ((TranscodeProgress) -> Void)?) throws(MediaError) -> ChunkReport {
    let began = ContinuousClock.now
    let count = manifest.count
    let tb = stream.timeBase!
    let chunk = number <= manifest.plan.count ? manifest.plan.chunk(number) : nil
    var report = ChunkReport(input: manifest.source, directory: dir.path, number: number, count: count,
                             status: "encoded", frames: 0,
                             startSeconds: chunk?.lower.map { Timestamp($0, tb).seconds },
                             endSeconds: chunk?.upper.map { Timestamp($0, tb).seconds }, outputBytes: 0, elapsedSeconds: 0)
    if let done = dir.completed(number, of: count, settings: manifest.settings) {
        report.status = "done-before"
        report.frames = done.frames
        report.outputBytes = done.bytes
        return report
    }
    let name = ChunkFiles.media(number, of: count)
    guard let chunk else {
        // Fewer keyframes than chunks: this one is empty, recorded as such.
        let empty = try dir.writer(name)
        try empty.commit()
        report.status = "empty"
        report.outputBytes = size(of: dir.file(name)) ?? 0
        report.warnings.append("the video has keyframes for \(manifest.plan.count) chunks only: chunk \(number) is empty")
        try dir.record(ChunkRecord(number: number, count: count, file: ChunkFiles.media(number, of: count),
                                   bytes: report.outputBytes, frames: 0, firstPTS: nil, lower: nil, upper: nil,
                                   settings: manifest.settings, extradata: "", elapsedSeconds: 0,
                                   host: ProcessInfo.processInfo.hostName))
        return report
    }
    let writer = { () throws(MediaError) in try dir.writer(name) }
    var first = try encodeWindow(chunk, stream: stream, video: video, target: writer, seek: true,
                                 prime: prime, cancellation: cancellation, progress: progress)
    if let lower = chunk.lower, first.firstPTS != lower || first.damaged > 0 {
        // The demuxer's seek landed after the chunk's keyframe (an index
        // that lists it late), or the pictures after it decode damaged (a
        // stream that is no clean entry point there): decoded from the
        // start instead, as the single pass decodes it.
        first = try encodeWindow(chunk, stream: stream, video: video, target: writer, seek: false,
                                 cancellation: cancellation, progress: progress)
        guard first.firstPTS == lower else {
            throw MediaError.invalid("could not transcode", path: stream.file.path, stream: stream.index,
                                     message: "chunk \(number)'s first frame (at \(Timestamp(lower, tb).seconds) s) does not decode")
        }
        report.decodedFromStart = true
    }
    report.frames = first.frames
    report.outputBytes = size(of: dir.file(name)) ?? 0
    report.elapsedSeconds = (ContinuousClock.now - began).seconds
    try dir.record(ChunkRecord(number: number, count: count, file: ChunkFiles.media(number, of: count),
                               bytes: report.outputBytes, frames: first.frames, firstPTS: first.firstPTS,
                               lower: chunk.lower, upper: chunk.upper, settings: manifest.settings,
                               extradata: hex(first.extradata),
                               elapsedSeconds: report.elapsedSeconds, host: ProcessInfo.processInfo.hostName))
    return report
}

/// The frames of `chunk` encoded into `target` (complete or absent), with
/// the source's timestamps; decoded from the chunk's keyframe (`seek`) or
/// from the start. A seek attempt stops at the first damaged picture of the
/// chunk and writes nothing (`damaged` > 0).
private func encodeWindow(_ chunk: ChunkPlan.Chunk, stream: Media.InputStream, video: VideoPlan,
                          target: () throws(MediaError) -> ChunkPacketWriter, seek: Bool,
                          prime: Bool = true, cancellation: Cancellation, progress: ((TranscodeProgress) -> Void)?)
    throws(MediaError) -> (frames: Int, firstPTS: Int64?, extradata: [UInt8], damaged: Int) {
    let input = try InputFile(path: stream.file.path, cancellation: cancellation, sameAs: stream.file)
    let s = input.streams[stream.index]
    input.discardAll(except: [s.index])
    let encoder = try VideoReencoder(stream: s, settings: video.settings, frameRate: nil)
    encoder.window = chunk
    let writer = try target()
    if seek, let lower = chunk.lower {
        // The stream's first packet is decoded (and let go) before the
        // seek: decoder state a stream sets up once at its start (x264's
        // version SEI, which changes how its 4:4:4 pictures decode; parameter
        // sets sent in band) is then as a decode from the start has it.
        let first = try Packet()
        while prime, try input.read(into: first) {
            guard first.streamIndex == s.index else { continue }
            try encoder.send(first) { (p) throws(MediaError) in try writer.write(p) }
            break
        }
        guard input.seek(stream: s.index, toKeyframeBefore: lower) else {
            return try encodeWindow(chunk, stream: stream, video: video, target: target, seek: false,
                                    cancellation: cancellation, progress: progress)
        }
    }
    if let progress {
        let tb = s.timeBase!
        let fileStart: Double = s.file.startTime?.seconds ?? 0
        let from: Double = chunk.lower.map { Timestamp($0, tb).seconds } ?? (s.startTime?.seconds ?? fileStart)
        var duration: Double?
        if let upper = chunk.upper {
            duration = Timestamp(upper, tb).seconds - from
        } else if let d = s.file.duration {
            duration = d.seconds + fileStart - from
        }
        encoder.progress = { (frames: Int, t: Timestamp) in
            progress(TranscodeProgress(frames: frames, position: max(0, t.seconds - from), duration: duration))
        }
    }
    var source = try PacketSource(input, kept: [s], salvage: false, operation: "could not transcode")
    let stopOnDamage = seek && chunk.lower != nil
    try source.readWhile { (packet, _) throws(MediaError) -> Bool in
        try cancellation.check()
        try encoder.send(packet) { (p) throws(MediaError) in try writer.write(p) }
        return !encoder.isPastWindow && !(stopOnDamage && encoder.damagedInWindow > 0)
    }
    if stopOnDamage && encoder.damagedInWindow > 0 {
        return (0, encoder.firstInWindow, [], encoder.damagedInWindow)
    }
    try encoder.finish { (p) throws(MediaError) in try writer.write(p) }
    try writer.commit()
    return (encoder.framesEncoded, encoder.firstInWindow, encoder.encoder.extradata, 0)
}

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

    /// The loaded packet's decode time in seconds (for interleaving).
    var seconds: Double {
        let t = packet.timing
        return (t.dts ?? t.pts).map { Timestamp($0, timeBase).seconds } ?? -.infinity
    }

    func consume() {
        loaded = false
        packets += 1
    }
}

/// Bytes as lowercase hex (the ledger's parameter sets).
func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
}

/// Hex back to bytes; `nil` if it is not hex.
func bytes(hex text: String) -> [UInt8]? {
    let chars = Array(text.utf8)
    guard chars.count % 2 == 0 else { return nil }
    func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: c - 48
        case 97...102: c - 87
        default: nil
        }
    }
    var out: [UInt8] = []
    out.reserveCapacity(chars.count / 2)
    for i in stride(from: 0, to: chars.count, by: 2) {
        guard let h = nibble(chars[i]), let l = nibble(chars[i + 1]) else { return nil }
        out.append(h << 4 | l)
    }
    return out
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
                              message: "chunk \(number) of \(count) is damaged: \(size(of: dir.file(record.file)).map { "\($0) bytes" } ?? "no file"), the ledger says \(record.bytes) bytes",
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
    let line = settingsLine(plan.videoSettings)
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
    var audio: [Int: AudioReencoder] = [:]
    for (index, settings) in plan.audio {
        audio[index] = try AudioReencoder(settings: settings, source: input.streams[index])
        try audio[index]!.begin(input.streams[index])
    }
    let kept = plan.streams.kept
    let session = try MuxSession(
        .file(outputPath, overwrite: options.overwrite, inputs: [manifest.source] + records.map { dir.file($0.file) }),
        container: container,
        streams: kept.map {
            $0.index == plan.video.index ? .chunks(encoder, extradata: extradata)
                : audio[$0.index].map { .encoded($0.encoder) } ?? .copy($0)
        },
        metadataSource: input, edits: options.edits, faststart: options.faststart,
        audioSampleRate: kept.first { $0.mediaType == .audio }.map { audio[$0.index]?.encoder.sampleRate ?? $0.sampleRate },
        cancellation: cancellation)
    var retimed = [plan.video.index: tb]
    for (i, a) in audio { retimed[i] = a.encoder.timeBase }
    try session.beginTimelines(kept, start: options.start, repair: .fix, retimed: retimed)
    let videoTrack = kept.firstIndex { $0.index == plan.video.index }!
    let writers: [any TrackWriter] = kept.enumerated().map { j, s in
        if let a = audio[s.index] { return ReencodeWriter(a, track: j, session: session) }
        return CopyWriter(track: j, session: session)
    }
    let duration = input.duration.map(\.seconds), start = input.startTime?.seconds ?? 0
    var lastProgress = -1.0
    /// The chunks' packets up to decode time `t` (seconds), so the tracks interleave.
    func video(upTo t: Double) throws(MediaError) {
        while try chunks.peek(), chunks.seconds <= t {
            try cancellation.check()
            try writers[videoTrack].send(chunks.packet)
            let position = chunks.seconds - start
            chunks.consume()
            if let progress, position - lastProgress >= 0.5 {
                lastProgress = position
                progress(TranscodeProgress(frames: chunks.packets, position: position, duration: duration))
            }
        }
    }
    // The source's video is not read (where the format allows): the chunks hold it.
    input.discardAll(except: Set(kept.map(\.index)).subtracting([plan.video.index]))
    var source = try PacketSource(input, kept: kept, salvage: false, operation: "could not transcode")
    try source.run { (packet, j) throws(MediaError) in
        try cancellation.check()
        // (Packets the demuxer buffered while it probed come before the discard takes hold.)
        guard j != videoTrack else { return }
        let t = packet.timing
        let tbj = kept[j].timeBase!
        try video(upTo: (t.dts ?? t.pts).map { Timestamp($0, tbj).seconds } ?? -.infinity)
        try writers[j].send(packet)
    }
    try video(upTo: .infinity)
    // Every chunk starts on its boundary: no frame lost or repeated at a seam.
    for (k, r) in records.enumerated() where k > 0 && r.frames > 0 && chunks.firstPTS[k] != r.lower {
        throw MediaError.invalid("could not join", path: dir.file(r.file), stream: 0,
                                 message: "chunk \(k + 1) does not start on its boundary (\(chunks.firstPTS[k].map(String.init) ?? "no packet"), not \(r.lower.map(String.init) ?? "none"))")
    }
    for w in writers { try w.finish() }
    let result = try session.finish()
    var report = plan.report(input: input, output: outputPath, audio: audio, result: result)
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

// MARK: All chunks on this machine

/// `avtool transcode IN OUT --chunks N`: the video cut into `count` chunks at
/// keyframes, encoded by `jobs` encoders at once (several x265 instances
/// fill cores one cannot), then joined. The chunks go to `directory` (kept,
/// and reused by a rerun: only chunks missing from its ledger are encoded),
/// or to a temporary directory beside OUT, removed once joined.
public func transcode(input inputPath: String, output outputPath: String, chunks count: Int,
                      directory: String? = nil, jobs: Int? = nil, options: TranscodeOptions,
                      cancellation: Cancellation = .shared,
                      progress: ((TranscodeProgress) -> Void)? = nil) throws(MediaError) -> TranscodeReport {
    let began = ContinuousClock.now
    try options.validate()
    let container = try chunkedContainer(options, output: outputPath, operation: "could not transcode")
    // The output is checked before any work (it exists, or is an input).
    _ = try StagedOutput(target: outputPath, overwrite: options.overwrite, inputs: [inputPath])
    let input = try InputFile(path: inputPath, cancellation: cancellation)
    if let cut = input.cutOffError("could not transcode") { throw cut }
    // The join's own checks (audio, streams) before the encoding.
    _ = try TranscodePlan(input, container: container, options: options, cancellation: cancellation)
    let (manifest, video, stream) = try chunkManifest(input: input, count: count, options: options, cancellation: cancellation)
    // Without a directory of the user's, the chunks are unnamed files beside
    // OUT; where its filesystem has none, a hidden directory, removed when
    // the run ends, and by the next run into that folder if this one is killed.
    // (Each unnamed chunk holds a descriptor: many chunks go to the directory.)
    let unnamed = directory == nil && count <= 256 ? try ChunkDirectory(unnamedBeside: outputPath) : nil
    let working = directory == nil && unnamed == nil ? try WorkingDirectory(beside: outputPath) : nil
    defer { withExtendedLifetime(working) {} }
    let dir = unnamed ?? ChunkDirectory(path: directory ?? working!.path)
    try dir.settle(manifest)

    let n = manifest.count
    let width = max(1, min(jobs ?? ProcessInfo.processInfo.activeProcessorCount, n))
    // Progress: the chunks' positions summed, then the join (the last 3 %).
    let positions = Locked([Double](repeating: 0, count: n))
    let frames = Locked([Int](repeating: 0, count: n))
    let total = input.duration?.seconds
    let failure = Locked<MediaError?>(nil)
    // A stop of the whole run, or one chunk's failure, ends every chunk.
    let stop = Cancellation(parent: cancellation)
    let group = DispatchGroup()
    let slots = DispatchSemaphore(value: width)
    nonisolated(unsafe) let shared = (manifest: manifest, video: video, stream: stream)
    let prime = options.primeChunkDecoder
    // Called from the chunks' threads one at a time.
    let sink = Locked(progress)
    let reporting = progress != nil
    var workers: [WorkerThread] = []
    for k in 1...n {
        slots.wait()
        if stop.isCancelled {
            slots.signal()
            break
        }
        group.enter()
        let work: @Sendable () -> Void = {
            defer {
                slots.signal()
                group.leave()
            }
            let report = { (p: TranscodeProgress) in
                positions.withLock { $0[k - 1] = p.position }
                frames.withLock { $0[k - 1] = p.frames }
                let done = positions.withLock { $0.reduce(0, +) }
                let all = TranscodeProgress(frames: frames.withLock { $0.reduce(0, +) },
                                            position: total.map { min(done, $0) * 0.97 } ?? done, duration: total)
                sink.withLock { $0?(all) }
            }
            do throws(MediaError) {
                _ = try encodeChunk(k, manifest: shared.manifest, video: shared.video, stream: shared.stream, prime: prime,
                                    directory: dir, cancellation: stop, progress: reporting ? report : nil)
            } catch {
                failure.withLock { if $0 == nil || (MediaError.interrupted ~= $0! && !(MediaError.interrupted ~= error)) { $0 = error } }
                stop.cancel()
            }
        }
        // Where no thread can be started, the chunk is encoded on this one.
        if let t = try? WorkerThread(work) { workers.append(t) } else { work() }
    }
    group.wait()
    if let error = failure.withLock({ $0 }) { throw error }
    try cancellation.check()
    var report = try joinChunks(dir, output: outputPath, options: options, cancellation: cancellation,
                                progress: progress.map { report in
                                    { (p: TranscodeProgress) in
                                        let d = total ?? 0
                                        report(TranscodeProgress(frames: p.frames, position: d * 0.97 + p.position * 0.03,
                                                                 duration: total))
                                    }
                                })
    if manifest.plan.count < count {
        report.warnings.append("the video has keyframes for \(manifest.plan.count) chunks only (\(count) asked)")
    }
    report.elapsedSeconds = (ContinuousClock.now - began).seconds
    return report
}
