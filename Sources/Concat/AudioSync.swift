import Media
import Sync

/// What `avtool sync` found: where AUDIO belongs on VIDEO's timeline, how
/// fast its clock runs, and how sure the estimate is.
public struct AudioSyncReport: Sendable, Codable {
    public var video: String
    public var audio: String
    /// Where AUDIO's first audible sample belongs, relative to VIDEO's first
    /// frame (positive: later), on VIDEO's clock: merge's `--offset`.
    public var offsetMilliseconds: Double
    /// AUDIO's clock rate relative to VIDEO's, minus 1, in parts per million
    /// (positive: AUDIO's clock runs fast, its file is longer).
    public var driftPPM: Double
    /// Standard error of the drift from the line fit.
    public var driftErrorPPM: Double
    /// 0…1: share of windows agreeing with the fit, lowered when their peaks are weak.
    public var confidence: Double
    /// The constant offset that best fits the whole overlap (drift left in),
    /// and the largest error it leaves at the overlap's ends.
    public var copyOffsetMilliseconds: Double
    public var copyErrorMilliseconds: Double
    /// How long the recordings overlap (s, VIDEO's clock).
    public var overlapSeconds: Double
    /// VIDEO's own audio start relative to its first frame (ms).
    public var referenceStartMilliseconds: Double
    public var windows: Int
    public var windowsMeasured: Int
    public var windowsAgreeing: Int
    /// RMS distance of the agreeing windows from the fitted line (ms).
    public var residualMilliseconds: Double
    public var medianPeakRatio: Double
    public var templatesMatched: Int
    public var templates: Int
    public var coarseRate: Int32
    public var refineRate: Int32
    public var elapsedSeconds = 0.0
    public var warnings: [String] = []
}

/// Progress of an estimate: 0…1.
public typealias SyncProgress = (Double) -> Void

/// `avtool sync VIDEO AUDIO`: estimates where AUDIO belongs against VIDEO's
/// own audio track, and the drift between their clocks, by generalized
/// cross-correlation. Writes nothing.
///
/// 1. Coarse: templates cut from the shorter recording, downsampled and
///    band-limited, are slid along the whole longer one (FFT blocks, read
///    once front to back); the template matches that agree on a line give
///    the approximate lag.
/// 2. Fine: at full rate, windows spread over the overlap are correlated
///    around the predicted lag, each peak refined between samples; the
///    lags are fitted to a line by least squares, windows that disagree
///    rejected. The line's slope is the drift.
///
/// No clear peak (silence, unrelated recordings), too little overlap or too
/// few agreeing windows is an error, never a guess.
public func estimateSync(video: String, audio: String, settings: WaveformSyncSettings = WaveformSyncSettings(),
                         cancellation: Cancellation = .shared,
                         progress: SyncProgress? = nil) throws(MediaError) -> AudioSyncReport {
    let clock = ContinuousClock()
    let began = clock.now
    var estimator = try SyncEstimator(video: video, audio: audio, settings: settings, cancellation: cancellation)
    var report = try estimator.run(progress: progress)
    report.elapsedSeconds = (clock.now - began).seconds
    return report
}

/// One recording's audio stream and what the estimator knows of it.
private struct Recording {
    let path: String
    let role: String
    /// How errors speak of its audio: "VIDEO's audio", "AUDIO".
    let label: String
    let streamIndex: Int
    let rate: Int32
    let start: Double
    let duration: Double

    init(path: String, role: String, cancellation: Cancellation) throws(MediaError) {
        let file = try InputFile(path: path, cancellation: cancellation)
        let s = try mainStream(file, .audio, role: role)
        guard s.sampleRate > 0 else {
            throw MediaError.invalid("could not use \(role)", path: path, stream: s.index, message: "the audio stream has no sample rate",
                                     category: .invalidData)
        }
        self.path = path
        self.role = role
        label = role == "AUDIO" ? "AUDIO" : "\(role)'s audio"
        streamIndex = s.index
        rate = s.sampleRate
        start = s.startTime?.seconds ?? 0
        let container = file.duration.map { $0.seconds - (file.startTime?.seconds ?? 0) }
        guard let d = s.duration?.seconds ?? container, d > 0 else {
            throw MediaError.invalid("could not use \(role)", path: path, stream: s.index, message: "the audio stream's length is unknown",
                                     category: .invalidData)
        }
        duration = d
    }

    /// A fresh reader at `rate` (its own opening of the file).
    func reader(rate: Int32, cancellation: Cancellation) throws(MediaError) -> MonoAudioReader {
        let file = try InputFile(path: path, cancellation: cancellation)
        return try MonoAudioReader(stream: file.streams[streamIndex], sampleRate: rate)
    }
}

/// Random access to a reader's samples moving forward only: a window can
/// start before the previous one ended (kept in a buffer), never earlier
/// than the previous window's start. Outside the recording it reads zeros.
private final class ForwardWindow {
    let reader: MonoAudioReader
    private var buffer: [Float] = []
    private var bufferStart: Int64 = 0

    init(_ reader: MonoAudioReader) { self.reader = reader }

    func samples(from start: Int64, count: Int) throws(MediaError) -> [Float] {
        // Drop what lies before `start`.
        if start > bufferStart {
            let drop = Int(min(Int64(buffer.count), start - bufferStart))
            buffer.removeFirst(drop)
            bufferStart += Int64(drop)
            if buffer.isEmpty, start > bufferStart {
                bufferStart += try reader.skip(start - bufferStart)
                if bufferStart < start { bufferStart = start }  // past the end
            }
        }
        let end = start + Int64(count)
        let have = bufferStart + Int64(buffer.count)
        if end > have, have == reader.position {
            buffer += try reader.read(Int(end - have))
        }
        var out = [Float](repeating: 0, count: count)
        let from = max(start, bufferStart), to = min(end, bufferStart + Int64(buffer.count))
        if to > from {
            for i in from..<to { out[Int(i - start)] = buffer[Int(i - bufferStart)] }
        }
        return out
    }
}

private struct SyncEstimator {
    let reference: Recording  // VIDEO's own audio
    let other: Recording  // AUDIO
    let videoStart: Double
    let settings: WaveformSyncSettings
    let cancellation: Cancellation
    private var ffts: [Int: RealFFT] = [:]

    init(video: String, audio: String, settings: WaveformSyncSettings, cancellation: Cancellation) throws(MediaError) {
        reference = try Recording(path: video, role: "VIDEO", cancellation: cancellation)
        other = try Recording(path: audio, role: "AUDIO", cancellation: cancellation)
        let file = try InputFile(path: video, cancellation: cancellation)
        let v = file.streams.first { $0.mediaType == .video && !$0.isAttachedPicture }
        videoStart = v?.startTime?.seconds ?? reference.start
        self.settings = settings
        self.cancellation = cancellation
    }

    /// `category`: no-match unless said (too-short for a recording shorter than the overlap needed).
    private func refuse(_ message: String, hint: String? = nil, category: MediaError.Category = .noMatch) -> MediaError {
        MediaError.invalid("could not sync", path: other.path, message: message, hint: hint, category: category)
    }

    private mutating func fft(_ size: Int) throws(MediaError) -> RealFFT {
        if let f = ffts[size] { return f }
        let f = try RealFFT(size: size)
        ffts[size] = f
        return f
    }

    mutating func run(progress: SyncProgress?) throws(MediaError) -> AudioSyncReport {
        let need = settings.minimumOverlap
        for r in [reference, other] where r.duration < need {
            throw refuse("\(r.label) is \(fixed(r.duration, 2)) s long; at least \(fixed(need, 1)) s overlapping the other recording are needed",
                         hint: nil, category: .tooShort).about(path: r.path)
        }
        let (coarse, templateCount) = try coarseSearch(progress: progress)
        try cancellation.check()

        // The overlap on the reference clock.
        let relation = coarse.relation
        let u0 = max(0, relation.referenceTime(atOther: 0))
        let u1 = min(reference.duration, relation.referenceTime(atOther: other.duration))
        if u1 - u0 < need {
            throw refuse("AUDIO overlaps VIDEO's audio by only \(fixed(max(u1 - u0, 0), 2)) s (at an offset of about \(fixed(offset(relation) * 1000, 0)) ms); at least \(fixed(need, 1)) s are needed")
        }
        let refineRate = min(max(reference.rate, other.rate), settings.refineRateAtMost)
        let length = settings.windowSeconds
        let windows = WindowPlan.windows(overlap: u0...u1, length: length, relation: relation, anchor: coarse.anchor,
                                         base: coarse.baseRadius, slopeUncertainty: coarse.slopeUncertainty, settings: settings)
        let measurements = try refine(windows, rate: refineRate) { f in progress?(0.5 + 0.5 * f) }
        guard let fit = SyncFit(measurements, windows: windows.count, settings: settings), fit.accepted(by: settings) else {
            let agreeing = SyncFit(measurements, windows: windows.count, settings: settings)?.agreeing ?? 0
            throw refuse("no clear match at full rate: only \(agreeing) of \(windows.count) windows agree on one offset and drift; the recordings may not be of the same scene")
        }
        let final = fit.relation
        let v0 = max(0, final.otherTime(atReference: u0)), v1 = min(other.duration, final.otherTime(atReference: u1))
        let copyOffset = reference.start - videoStart + final.constantLag(over: v0...max(v0, v1))
        let span = u1 - u0
        return AudioSyncReport(
            video: reference.path, audio: other.path,
            offsetMilliseconds: offset(final) * 1000, driftPPM: final.drift * 1e6, driftErrorPPM: fit.driftError * 1e6,
            confidence: fit.confidence, copyOffsetMilliseconds: copyOffset * 1000,
            copyErrorMilliseconds: DriftPolicy.copyError(drift: final.drift, span: span) * 1000,
            overlapSeconds: span, referenceStartMilliseconds: (reference.start - videoStart) * 1000,
            windows: windows.count, windowsMeasured: fit.measured, windowsAgreeing: fit.agreeing,
            residualMilliseconds: fit.rms * 1000, medianPeakRatio: fit.medianRatio,
            templatesMatched: coarse.agreeing, templates: templateCount,
            coarseRate: settings.coarseRate, refineRate: refineRate)
    }

    /// merge's offset: AUDIO's first sample on VIDEO's timeline.
    private func offset(_ r: ClockRelation) -> Double {
        reference.start - videoStart + r.referenceTime(atOther: 0)
    }

    /// Templates from the shorter recording slid along the whole longer one:
    /// the coarse consensus, and how many templates were cut.
    private mutating func coarseSearch(progress: SyncProgress?) throws(MediaError) -> (consensus: CoarseConsensus, templates: Int) {
        let rate = settings.coarseRate
        let fc = Double(rate)
        let referenceIsShorter = reference.duration <= other.duration
        let short = referenceIsShorter ? reference : other
        let long = referenceIsShorter ? other : reference
        let plan = TemplatePlan(duration: short.duration, settings: settings)
        let lt = max(Int(plan.length * fc), 1)

        // The templates, read front to back.
        let shortReader = try short.reader(rate: rate, cancellation: cancellation)
        var templates: [(start: Double, samples: [Float])] = []
        for start in plan.starts {
            try cancellation.check()
            let from = Int64(start * fc)
            if from > shortReader.position { try shortReader.skip(from - shortReader.position) }
            let s = try shortReader.read(lt)
            if s.count == lt, rms(s) > 1e-5 { templates.append((Double(from) / fc, s)) }
        }
        if templates.isEmpty {
            throw refuse("\(short.label) is silent: there is nothing to align").about(path: short.path)
        }
        var n = 1 << 14
        while n < 4 * lt { n <<= 1 }
        let correlator = CrossCorrelator(fft: try fft(n), sampleRate: fc, band: settings.coarseBand)
        let spectra = templates.map { correlator.spectrum($0.samples) }
        let exclusion = Double(Int(0.005 * fc))
        var trackers = [PeakTracker](repeating: PeakTracker(exclusion: exclusion), count: templates.count)

        // The longer recording, padded with one template of zeros at each
        // end so partial overlaps at its edges are found too.
        let longReader = try long.reader(rate: rate, cancellation: cancellation)
        let pad = lt
        var block = [Float](repeating: 0, count: pad)
        block += try longReader.read(n - pad)
        var blockStart = -Int64(pad)
        var energy = 0.0
        for v in block { energy += Double(v * v) }
        var tail = 0
        let step = n - lt
        let total = long.duration * fc
        var c = [Float](repeating: 0, count: n)
        while true {
            try cancellation.check()
            if block.count < n { block += [Float](repeating: 0, count: n - block.count) }
            let x = correlator.spectrum(block)
            for j in templates.indices {
                correlator.correlate(x, spectra[j], into: &c)
                for p in CorrelationPeak.topTwo(in: c, range: 0..<(n - lt + 1), exclusion: Int(exclusion)) {
                    trackers[j].offer(position: Double(blockStart) + p.position, magnitude: p.magnitude)
                }
            }
            progress?(0.5 * min(1, Double(blockStart + Int64(n)) / max(total, 1)))
            // Stop once the zeros after the end have been searched.
            if tail >= pad { break }
            block.removeFirst(step)
            blockStart += Int64(step)
            let more = try longReader.read(step)
            for v in more { energy += Double(v * v) }
            block += more
            if more.count < step { tail += step - more.count }
        }
        if energy / max(total, 1) < 1e-10 {
            throw refuse("\(long.label) is silent: there is nothing to align").about(path: long.path)
        }

        // Each template's best match, as (reference time, lag).
        var matches: [LagMeasurement] = []
        for (j, t) in templates.enumerated() {
            guard let best = trackers[j].best else { continue }
            let ratio = trackers[j].ratio
            let shortCenter = t.start + plan.length / 2
            let longCenter = best.position / fc + plan.length / 2
            let (u, v) = referenceIsShorter ? (shortCenter, longCenter) : (longCenter, shortCenter)
            matches.append(LagMeasurement(time: u, lag: u - v, ratio: ratio))
        }
        switch CoarseConsensus.decide(matches, templateLength: plan.length, settings: settings) {
        case .failure(.noClearPeak(let best)):
            throw refuse("no clear match between the recordings (the best peak is only \(fixed(best, 2))× the next and no templates agree on one offset); they may be unrelated, or one may be too quiet")
        case .success(let c):
            return (c, templates.count)
        }
    }

    /// Full-rate windows around the predicted lag, each a measurement.
    private mutating func refine(_ windows: [SyncWindow], rate: Int32, progress: SyncProgress) throws(MediaError) -> [LagMeasurement] {
        let fr = Double(rate)
        let lr = Int(settings.windowSeconds * fr)
        let cam = ForwardWindow(try reference.reader(rate: rate, cancellation: cancellation))
        let rec = ForwardWindow(try other.reader(rate: rate, cancellation: cancellation))
        let band = settings.refineBand.lowerBound...min(settings.refineBand.upperBound, 0.95 * fr / 2)
        var out: [LagMeasurement] = []
        var c: [Float] = []
        var correlators: [Int: CrossCorrelator] = [:]
        for (i, w) in windows.enumerated() {
            try cancellation.check()
            progress(Double(i) / Double(max(windows.count, 1)))
            let r = Int((w.radius * fr).rounded(.up))
            var n = 1 << 12
            while n < lr + 2 * r { n <<= 1 }
            let correlator: CrossCorrelator
            if let k = correlators[n] { correlator = k } else {
                correlator = CrossCorrelator(fft: try fft(n), sampleRate: fr, band: band)
                correlators[n] = correlator
            }
            let camStart = Int64(((w.center - settings.windowSeconds / 2) * fr).rounded())
            let recStart = Int64(((w.center - w.predictedLag - settings.windowSeconds / 2) * fr).rounded()) - Int64(r)
            let a = try cam.samples(from: camStart, count: lr)
            let b = try rec.samples(from: recStart, count: lr + 2 * r)
            guard rms(a) > 1e-5, rms(b) > 1e-5 else { continue }
            correlator.correlate(correlator.spectrum(b), correlator.spectrum(a), into: &c)
            guard let peak = CorrelationPeak.find(in: c, search: 0..<(2 * r + 1), sidelobes: 0..<(n - lr + 1),
                                                  exclusion: Int(0.002 * fr)) else { continue }
            // The lag belongs to where the window's sound is (its energy
            // centroid), not its middle: with drift, sparse events would
            // otherwise flatten the fitted slope.
            let centroid = energyCentroid(a)
            let u = (Double(camStart) + centroid) / fr
            let v = (Double(recStart) + peak.position + centroid) / fr
            out.append(LagMeasurement(time: u, lag: u - v, ratio: peak.ratio))
        }
        progress(1)
        return out
    }
}

/// The energy-weighted mean index of `x`.
private func energyCentroid(_ x: [Float]) -> Double {
    var e = 0.0, m = 0.0
    for (i, v) in x.enumerated() {
        let p = Double(v) * Double(v)
        e += p
        m += p * Double(i)
    }
    return e > 0 ? m / e : Double(x.count) / 2
}

private func rms(_ x: [Float]) -> Double {
    guard !x.isEmpty else { return 0 }
    var s = 0.0
    for v in x { s += Double(v) * Double(v) }
    return (s / Double(x.count)).squareRoot()
}

