import Glibc
import FoundationEssentials
import Threads
import Media
import Pipeline
import Sync

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
    let (manifest, planned, stream) = try chunkManifest(input: input, count: count, options: options, cancellation: cancellation)
    let dir = ChunkDirectory(path: directory)
    try dir.settle(manifest)
    var video = planned
    if let target = options.quality, number <= manifest.plan.count, dir.completed(number, of: count, settings: manifest.settings) == nil {
        let q = try searchQuality(manifest.plan, only: number, stream: stream, video: video, target: target,
                                  cancellation: cancellation, progress: progress)
        video = video.encoding(crf: q.crf)
    }
    return try encodeChunk(number, manifest: manifest, video: video, stream: stream, prime: options.primeChunkDecoder,
                           directory: dir,
                           cancellation: cancellation, progress: progress)
}

/// Encodes one chunk of `manifest` (skipped when the ledger has it): the
/// source read from the keyframe at the chunk's start, frames outside the
/// chunk decoded and let go, the rest encoded by an encoder of their own
/// (so the chunk starts with an IDR), written with the source's
/// timestamps, then recorded in the ledger.
/// `measures`: each encoded picture measured against its source (`--verify-quality`).
func encodeChunk(_ number: Int, manifest: ChunkManifest, video: VideoPlan, stream: Media.InputStream, prime: Bool = true,
                 directory dir: ChunkDirectory, measures: ChunkQualityMeasures? = nil, cancellation: Cancellation,
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
        report.outputBytes = fileSize(dir.file(name)) ?? 0
        report.warnings.append("the video has keyframes for \(manifest.plan.count) chunks only: chunk \(number) is empty")
        try dir.record(ChunkRecord(number: number, count: count, file: ChunkFiles.media(number, of: count),
                                   bytes: report.outputBytes, frames: 0, firstPTS: nil, lower: nil, upper: nil,
                                   settings: manifest.settings, extradata: "", elapsedSeconds: 0,
                                   host: ProcessInfo.processInfo.hostName))
        return report
    }
    let writer = { () throws(MediaError) in try dir.writer(name) }
    var first = try encodeWindow(chunk, stream: stream, video: video, target: writer, seek: true,
                                 prime: prime, measures: measures, cancellation: cancellation, progress: progress)
    if let lower = chunk.lower, first.firstPTS != lower || first.damaged > 0 {
        // The demuxer's seek landed after the chunk's keyframe (an index
        // that lists it late), or the pictures after it decode damaged (a
        // stream that is no clean entry point there): decoded from the
        // start instead, as the single pass decodes it.
        first = try encodeWindow(chunk, stream: stream, video: video, target: writer, seek: false,
                                 measures: measures, cancellation: cancellation, progress: progress)
        guard first.firstPTS == lower else {
            throw MediaError.invalid("could not transcode", path: stream.file.path, stream: stream.index,
                                     message: "chunk \(number)'s first frame (at \(Timestamp(lower, tb).seconds) s) does not decode")
        }
        report.decodedFromStart = true
    }
    report.frames = first.frames
    report.outputBytes = fileSize(dir.file(name)) ?? 0
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
                          prime: Bool = true, measures: ChunkQualityMeasures? = nil, cancellation: Cancellation,
                          progress: ((TranscodeProgress) -> Void)?)
    throws(MediaError) -> (frames: Int, firstPTS: Int64?, extradata: [UInt8], damaged: Int) {
    let input = try InputFile(path: stream.file.path, cancellation: cancellation, sameAs: stream.file)
    let s = input.streams[stream.index]
    input.discardAll(except: [s.index])
    let encoder = try VideoReencoder(stream: s, settings: video.settings, frameRate: nil, carrying: video.carrying)
    encoder.filter = video.filter(for: s)
    encoder.window = chunk
    let meter = try measures.map { (m) throws(MediaError) in try QualityMeter(m.metric, measuring: encoder, of: s) }
    let writer = try target()
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
    let read = try readWindow(input, stream: s, into: encoder, seek: seek, prime: prime, operation: "could not transcode",
                              cancellation: cancellation) { (p) throws(MediaError) in try writer.write(p) }
    switch read {
    case .unseekable:
        return try encodeWindow(chunk, stream: stream, video: video, target: target, seek: false,
                                measures: measures, cancellation: cancellation, progress: progress)
    case .damaged(let pictures):
        return (0, encoder.firstInWindow, [], pictures)
    case .read:
        break
    }
    try encoder.finish { (p) throws(MediaError) in try writer.write(p) }
    if let measures, let meter { try measures.record(chunk.number, meter) }
    try writer.commit()
    return (encoder.framesEncoded, encoder.firstInWindow, encoder.encoder.extradata, 0)
}
