import Glibc
import FoundationEssentials
import Threads
import Media
import Pipeline
import Sync

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
    // With --quality, each chunk's CRF from its own samples.
    let quality = try options.quality.map { (t) throws(MediaError) in
        try searchQuality(manifest.plan, stream: stream, video: video, target: t, cancellation: cancellation, progress: progress)
    }
    let crfs = quality?.chunks?.map(\.crf) ?? []
    let measures = options.verifyQuality ? options.quality.map { ChunkQualityMeasures($0.metric) } : nil
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
    let pool = WorkerPool(capacity: width)
    nonisolated(unsafe) let shared = (manifest: manifest, video: video, stream: stream)
    let prime = options.primeChunkDecoder
    // Called from the chunks' threads one at a time.
    let sink = Locked(progress)
    let reporting = progress != nil
    let encode: @Sendable (Int) -> Void = { k in
        let report = { (p: TranscodeProgress) in
            positions.withLock { $0[k - 1] = p.position }
            frames.withLock { $0[k - 1] = p.frames }
            let done = positions.withLock { $0.reduce(0, +) }
            let all = TranscodeProgress(frames: frames.withLock { $0.reduce(0, +) },
                                        position: total.map { min(done, $0) * 0.97 } ?? done, duration: total)
            sink.withLock { $0?(all) }
        }
        do throws(MediaError) {
            let video = k <= crfs.count ? shared.video.encoding(crf: crfs[k - 1]) : shared.video
            _ = try encodeChunk(k, manifest: shared.manifest, video: video, stream: shared.stream, prime: prime,
                                directory: dir, measures: measures, cancellation: stop, progress: reporting ? report : nil)
        } catch {
            failure.withLock { if $0 == nil || (MediaError.interrupted ~= $0! && !(MediaError.interrupted ~= error)) { $0 = error } }
            stop.cancel()
        }
    }
    for k in 1...n {
        guard pool.start(unless: { stop.isCancelled }, { encode(k) }) else { break }
    }
    pool.wait()
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
    report.quality = quality
    if let m = measures?.whole(count: manifest.plan.count, length: QualityMeter.windowPictures(of: stream)) {
        report.quality?.measured = m.score.isNaN ? nil : m.score
        report.quality?.measuredWeakestWindow = m.weakest.isNaN ? nil : m.weakest
    } else if measures != nil {
        report.warnings.append("--verify-quality: chunks encoded by an earlier run were not measured; the output's quality is not reported")
    }
    if manifest.plan.count < count {
        report.warnings.append("the video has keyframes for \(manifest.plan.count) chunks only (\(count) asked)")
    }
    report.elapsedSeconds = (ContinuousClock.now - began).seconds
    return report
}
