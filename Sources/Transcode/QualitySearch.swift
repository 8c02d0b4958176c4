import FoundationEssentials
import Filters
import Media
import Pipeline
import Sync

/// What `transcode --quality` found: the CRF, what its samples predict,
/// and how the search went.
public struct QualityReport: Sendable, Codable, Equatable {
    public var metric: QualityMetric
    public var target: Double
    public var minCRF: Double
    public var maxCRF: Double
    /// The CRF the whole (or the chunk) is encoded with.
    public var crf: Double
    /// The weakest sample's and the samples' mean score at `crf`, as measured.
    public var predictedWeakest: Double
    public var predictedMean: Double
    /// The output video's size and the encode's time, from the samples' at `crf`.
    public var predictedBytes: Int64
    public var predictedSeconds: Double
    /// The sample stretches (seconds of the input) and the probes made.
    public var samples: [SampleWindow]
    public var probes: [CRFSearch.Probe]
    /// Probes taken from the cache (made by an earlier run).
    public var cachedProbes: Int
    public var searchSeconds: Double
    /// With `--chunks`: each chunk's own search, in chunk order.
    public var chunks: [QualityReport]?
    /// With `--verify-quality`: the whole output measured against the source,
    /// and its weakest 2 seconds.
    public var measured: Double?
    public var measuredWeakestWindow: Double?

    public struct SampleWindow: Sendable, Codable, Equatable {
        public var startSeconds: Double?
        public var endSeconds: Double?
    }

    /// One CRF for parts that differ: the promise holds the weakest to the
    /// target, so the whole lands above it, by more than the ±0.003 (SSIM)
    /// or 0.3 dB (PSNR) the target is met within. Said, with the way to an
    /// even quality; nil when the samples agree, or each chunk has its CRF.
    public var spreadNote: String? {
        let (limit, digits) = metric == .ssim ? (0.003, 4) : (0.3, 2)
        guard chunks == nil, predictedMean - predictedWeakest > limit else { return nil }
        return "its samples differ: the weakest (\(fixed(predictedWeakest, digits))) holds the target at CRF \(fixed(crf, 1)), "
            + "so the whole will be near \(fixed(predictedMean, digits)), above it; --chunks N gives each part a CRF of its own"
    }
}

/// `transcode --quality`'s search alone (`--dry-run`): the CRF the whole
/// video, or each of its `chunks`, would be encoded with, and the predictions.
public func searchQuality(input inputPath: String, output outputPath: String, chunks: Int? = nil, options: TranscodeOptions,
                          cancellation: Cancellation = .shared,
                          progress: ((TranscodeProgress) -> Void)? = nil) throws(MediaError) -> QualityReport {
    try options.validate()
    guard let target = options.quality else {
        throw MediaError.invalidOption("a quality search needs 'quality'", options: ["quality"])
    }
    let input = try InputFile(path: inputPath, cancellation: cancellation)
    let container = try resolveContainer(options.container, output: outputPath)
    let plan = try TranscodePlan(input, container: container, options: options, cancellation: cancellation)
    guard let chunks else {
        return try searchQuality(input, plan: plan, target: target, cancellation: cancellation, progress: progress)
    }
    let (manifest, video, stream) = try chunkManifest(input: input, count: chunks, options: options, cancellation: cancellation)
    return try searchQuality(manifest.plan, stream: stream, video: video, target: target, cancellation: cancellation,
                             progress: progress)
}

/// The whole video's search, for a transcode's `plan`.
func searchQuality(_ input: InputFile, plan: TranscodePlan, target: QualityTarget, cancellation: Cancellation,
                   progress: ((TranscodeProgress) -> Void)?) throws(MediaError) -> QualityReport {
    let whole = ChunkPlan(boundaries: [])
    let video = (settings: plan.videoSettings, toneMap: plan.toneMap)
    return try searchQuality(whole, stream: plan.video, video: video, target: target, cancellation: cancellation,
                             progress: progress).chunks![0]
}

/// Each chunk's search (`only` that chunk's: a `--chunk K/N` task).
func searchQuality(_ chunks: ChunkPlan, only: Int? = nil, stream: Media.InputStream, video: VideoPlan, target: QualityTarget,
                   cancellation: Cancellation, progress: ((TranscodeProgress) -> Void)?) throws(MediaError) -> QualityReport {
    try searchQuality(chunks, only: only, stream: stream, video: (video.settings, video.toneMap), target: target,
                      cancellation: cancellation, progress: progress)
}

/// Each chunk's search (one chunk: the whole video), and what they add up to:
/// the lowest CRF and weakest score, the mean of the means, the sums of sizes and times.
private func searchQuality(_ chunks: ChunkPlan, only: Int? = nil, stream: Media.InputStream,
                           video: (settings: VideoEncoderSettings, toneMap: ToneMapSettings?), target: QualityTarget,
                           cancellation: Cancellation,
                           progress: ((TranscodeProgress) -> Void)?) throws(MediaError) -> QualityReport {
    let times = try PresentationTimes(of: stream, sizes: true, cancellation: cancellation)
    guard let start = times.start, let end = times.end, let tb = stream.timeBase else {
        throw MediaError.invalid("could not transcode", path: stream.file.path, stream: stream.index,
                                 message: "the video stream has no packets")
    }
    var reports: [QualityReport] = []
    for chunk in chunks.chunks where only == nil || only == chunk.number {
        let (lo, hi) = (chunk.lower ?? start, chunk.upper ?? end)
        let samples = QualitySamples(start: lo, end: hi, timeBase: tb, lower: chunk.lower, upper: chunk.upper, frames: times.frames)
        let search = QualitySearch(stream: stream, settings: video.settings, toneMap: video.toneMap, target: target,
                                   samples: samples, start: lo, end: hi, cancellation: cancellation)
        let label = chunks.count > 1 ? "quality search, chunk \(chunk.number)/\(chunks.count)" : "quality search"
        // A chunk that is better than the target even at the highest CRF takes that CRF.
        reports.append(try search.run(acceptingBetter: chunks.count > 1) { probes, crf in
            progress?(TranscodeProgress(frames: 0, position: 0, duration: nil,
                                        phase: "\(label): CRF \(fixed(crf, 1)) (probe \(probes + 1))"))
        })
    }
    guard var all = reports.first else {
        throw MediaError.invalid("could not transcode", path: stream.file.path, stream: stream.index,
                                 message: "chunk \(only ?? 0) has no frames to search a quality for")
    }
    all.crf = reports.map(\.crf).min()!
    all.predictedWeakest = reports.map(\.predictedWeakest).min()!
    all.predictedMean = reports.map(\.predictedMean).reduce(0, +) / Double(reports.count)
    all.predictedBytes = reports.map(\.predictedBytes).reduce(0, +)
    all.predictedSeconds = reports.map(\.predictedSeconds).reduce(0, +)
    all.samples = reports.flatMap(\.samples)
    all.probes = reports.count == 1 ? all.probes : []
    all.cachedProbes = reports.map(\.cachedProbes).reduce(0, +)
    all.searchSeconds = reports.map(\.searchSeconds).reduce(0, +)
    all.chunks = reports
    return all
}

/// The search for one stretch of the video (the whole, or a chunk): the
/// samples, encoded and measured at each CRF `CRFSearch` asks for, the
/// probes kept in `QualityCache` so another target's search reuses them.
struct QualitySearch {
    let stream: Media.InputStream
    let settings: VideoEncoderSettings
    let toneMap: ToneMapSettings?
    let target: QualityTarget
    let samples: QualitySamples
    /// The presentation times searched (the whole video, or a chunk's).
    let start: Int64, end: Int64
    let cancellation: Cancellation

    /// Runs the search to a CRF; a target no CRF within the bounds reaches is refused, naming the closest,
    /// unless `acceptingBetter` (a chunk of several) and even the highest CRF gives more than the target: that CRF.
    func run(acceptingBetter: Bool = false, progress: ((Int, Double) -> Void)?) throws(MediaError) -> QualityReport {
        let began = ContinuousClock.now
        let tb = stream.timeBase!
        let cache = QualityCache(key: cacheKey)
        let cached = cache.probes()
        var search = CRFSearch(target: target, probes: cached)
        var made = 0
        while case .probe(let crf) = search.next() {
            try cancellation.check()
            progress?(search.probes.count, crf)
            search.add(try probe(crf))
            made += 1
            cache.save(search.probes)
        }
        let choice: CRFSearch.Choice
        switch search.next() {
        case .chosen(let c): choice = c
        case let .unreachable(_, crf, false) where acceptingBetter:
            choice = search.choice(at: search.probes.first { $0.crf == crf }!)
        case let .unreachable(best, crf, tooHigh): throw unreachable(best: best, crf: crf, tooHigh: tooHigh)
        case .probe: fatalError("the search loop ends on a choice")
        }
        let covered = samples.seconds(start: start, end: end, timeBase: tb)
        let whole = Timestamp(end - start, tb).seconds
        let scale = covered > 0 ? max(whole / covered, 1) : 1
        return QualityReport(
            metric: target.metric, target: target.value, minCRF: target.minCRF, maxCRF: target.maxCRF, crf: choice.crf,
            predictedWeakest: choice.weakest, predictedMean: choice.mean,
            predictedBytes: Int64((choice.bytes * scale).rounded()), predictedSeconds: choice.seconds * scale,
            samples: samples.windows.map {
                .init(startSeconds: $0.lower.map { Timestamp($0, tb).seconds }, endSeconds: $0.upper.map { Timestamp($0, tb).seconds })
            },
            probes: search.probes, cachedProbes: search.probes.count - made,
            searchSeconds: (ContinuousClock.now - began).seconds)
    }

    /// Every sample encoded at `crf` and measured.
    private func probe(_ crf: Double) throws(MediaError) -> CRFSearch.Probe {
        let began = ContinuousClock.now
        var scores: [Double] = [], bytes: Int64 = 0
        for w in samples.windows {
            let (runs, b) = try measure(w, crf: crf)
            // A stretch without a picture (a gap in a sparse stream) has no score.
            scores += runs.filter { !$0.isNaN }
            bytes += b
        }
        if scores.isEmpty {
            throw MediaError.invalid("could not measure the quality of", path: stream.file.path, stream: stream.index,
                                     message: "no picture was encoded in the samples")
        }
        return CRFSearch.Probe(crf: crf, scores: scores, bytes: bytes, seconds: (ContinuousClock.now - began).seconds)
    }

    /// One sample encoded at `crf` by the transcode's own encoder setup
    /// (`VideoReencoder`: the same settings, tone mapping and conversion),
    /// its packets decoded again and each picture measured against the one
    /// the encoder was given. The scores of its 2-second runs (one for a
    /// 2-second sample; a short file's or chunk's whole sample is held to
    /// its weakest 2 seconds as a long file is to its weakest sample), and
    /// its encoded bytes.
    /// A sample is read from the keyframe before it (`readWindow`), or from
    /// the start where that entry decodes damaged: its pictures are then the
    /// ones the whole encode is given.
    private func measure(_ window: ChunkPlan.Chunk, crf: Double, seek: Bool = true) throws(MediaError) -> ([Double], Int64) {
        let input = try InputFile(path: stream.file.path, cancellation: cancellation, sameAs: stream.file)
        let s = input.streams[stream.index]
        input.discardAll(except: [s.index])
        let video = try VideoReencoder(stream: s, settings: settings.encoding(crf: crf), frameRate: nil)
        video.filter = toneMap.map { ToneMapper($0, stream: s) }
        if window.lower != nil || window.upper != nil { video.window = window }
        let meter = try QualityMeter(target.metric, measuring: video, of: s)
        var bytes: Int64 = 0
        let emit = { (p: borrowing Packet) throws(MediaError) in bytes += Int64(p.size) }
        // (A stream that cannot seek, or whose entry there decodes damaged, is read from its start.)
        guard case .read = try readWindow(input, stream: s, into: video, seek: seek, operation: "could not measure the quality of",
                                          cancellation: cancellation, emit: emit) else {
            return try measure(window, crf: crf, seek: false)
        }
        try video.finish(emit: emit)
        _ = try meter.finish()
        let seconds = Timestamp((window.upper ?? end) - (window.lower ?? start), stream.timeBase!).seconds
        return (meter.runs(over: seconds), bytes)
    }

    private func unreachable(best: Double, crf: Double, tooHigh: Bool) -> MediaError {
        let name = target.metric.rawValue.uppercased()
        let b = fixed(best, target.metric == .ssim ? 4 : 2)
        let what = tooHigh
            ? "\(name) \(target.value) cannot be reached with a CRF of \(crfText(target.minCRF)) or more: the best the weakest sample reaches is \(b) (CRF \(crfText(crf)))"
            : "\(name) \(target.value) is below what a CRF of \(crfText(target.maxCRF)) gives: the lowest the weakest sample reaches is \(b) (CRF \(crfText(crf)))"
        return MediaError.invalid("could not transcode", path: stream.file.path, stream: stream.index, message: what,
                                  hint: tooHigh ? "ask for --quality \(b) or less, or lower --min-crf"
                                                : "ask for --quality \(b) or more, or raise --max-crf")
    }

    private func crfText(_ v: Double) -> String { v == v.rounded() ? String(Int(v)) : String(v) }

    /// The cache's key: the input (its identity on disk), the stream, the
    /// encoder's settings but the CRF, the tone mapping, the metric and the samples.
    private var cacheKey: String {
        var parts = ["v2", QualityCache.identity(of: stream.file.path) ?? stream.file.path, "stream=\(stream.index)",
                     settingsLine(settings.encoding(crf: nil)), "metric=\(target.metric.rawValue)"]
        if let t = toneMap { parts.append("tone-map=\(t.toneMap.rawValue):\(t.pixelFormat)") }
        parts += samples.windows.map { "sample=\($0.lower.map(String.init) ?? "-")..\($0.upper.map(String.init) ?? "-")" }
        return parts.joined(separator: " ")
    }
}

extension VideoEncoderSettings {
    /// The same settings at another CRF (rate control by CRF); `nil`: none set.
    func encoding(crf: Double?) -> VideoEncoderSettings {
        var s = self
        s.options.removeAll { $0.0 == "crf" || $0.0 == "b" }
        if let crf { s.options.insert(("crf", String(crf)), at: 1) }
        return s
    }
}

/// Measures what a `VideoReencoder` makes while it makes it: each packet
/// decoded again as it comes out, each picture compared with the one the
/// encoder was given (`PictureComparison`), so only the encoder's lag of
/// pictures is held. A sample's encode and `--verify-quality`'s whole one.
final class QualityMeter {
    let comparison: PictureComparison
    private let decoder: Decoder
    private let picture: Frame

    init(_ metric: QualityMetric, measuring video: VideoReencoder, of stream: Media.InputStream) throws(MediaError) {
        let comparison = try PictureComparison(metric, path: stream.file.path, stream: stream.index)
        let decoder = try Decoder(decoding: video.encoder, of: stream)
        picture = try Frame()
        self.comparison = comparison
        self.decoder = decoder
        video.encoderInput = { (f) throws(MediaError) in try comparison.sendSource(f) }
        video.encoderOutput = { [unowned self] (p) throws(MediaError) in
            while try !decoder.send(p) { try drain() }
            try drain()
        }
    }

    private func drain() throws(MediaError) {
        while case .ready = try decoder.receive(into: picture) {
            try comparison.sendEncoded(picture)
            picture.unref()
        }
    }

    /// The score of every picture (after the encoder is finished).
    func finish() throws(MediaError) -> Double {
        try decoder.sendEnd()
        try drain()
        return try comparison.finish()
    }

    /// The lowest score of `length` pictures in a row (the whole when there are fewer).
    func weakestRun(of length: Int) -> Double {
        PictureComparison.weakestRun(of: comparison.perPicture, length: length, metric: comparison.metric, peak: comparison.peak)
    }

    /// Pictures in the 2 seconds (`QualitySamples.defaultLength`) whose weakest
    /// run `--verify-quality` reports, at `stream`'s average frame rate (30 without one).
    static func windowPictures(of stream: Media.InputStream) -> Int {
        let fps = stream.averageFrameRate.map { Double($0.numerator) / Double($0.denominator) } ?? 30
        return Int(wholeClamped(QualitySamples.defaultLength * fps, to: 1...100_000))
    }

    /// The scores of the 2-second runs (`QualitySamples.defaultLength`) of
    /// the pictures measured, shown over `seconds` (after `finish`).
    func runs(over seconds: Double) -> [Double] {
        let pictures = comparison.perPicture.count
        let length = seconds > 0 ? Int((Double(pictures) * QualitySamples.defaultLength / seconds).rounded()) : pictures
        return PictureComparison.runs(of: comparison.perPicture, length: max(length, 1), metric: comparison.metric,
                                      peak: comparison.peak)
    }
}

/// `--verify-quality` over a chunked transcode: each chunk's pictures
/// measured as it is encoded (by its own `QualityMeter`), put together in
/// chunk order once every chunk is done.
final class ChunkQualityMeasures: Sendable {
    let metric: QualityMetric
    private let values = Locked<[Int: [Double]]>([:])
    private let peak = Locked(255.0)

    init(_ metric: QualityMetric) { self.metric = metric }

    /// Chunk `number`'s measure (its encoder finished).
    func record(_ number: Int, _ meter: QualityMeter) throws(MediaError) {
        _ = try meter.finish()
        let v = meter.comparison.perPicture, p = meter.comparison.peak
        values.withLock { $0[number] = v }
        peak.withLock { $0 = p }
    }

    /// The whole output's score and its weakest run of `length` pictures;
    /// nil unless each of the `count` chunks was measured in this run (one
    /// encoded before, by a run that did not measure, is not).
    func whole(count: Int, length: Int) -> (score: Double, weakest: Double)? {
        let all = values.withLock { v in (1...max(count, 1)).map { v[$0] } }
        guard all.allSatisfy({ $0 != nil }) else { return nil }
        let pictures = all.flatMap { $0! }, p = peak.withLock { $0 }
        guard !pictures.isEmpty else { return nil }
        return (PictureComparison.score(of: pictures[...], metric: metric, peak: p),
                PictureComparison.weakestRun(of: pictures, length: length, metric: metric, peak: p))
    }
}
