import Glibc
import Media
import Pipeline
import Sync

public struct LoudnessOptions: Sendable, Equatable {
    public var target: LoudnessTarget = .podcast
    public var overwrite = false
    /// The AAC bit rate for all channels (nil: 64 kb/s per channel).
    public var audioBitRate: Int64?
    /// Which of the other streams are copied (audio is always measured and written).
    public var streams = StreamSelection()
    /// The one audio stream brought to the target (its index in the file,
    /// as `avtool probe` numbers it), the file's other audio streams copied;
    /// nil: every audio stream, each to the target.
    public var audioStream: Int?
    /// The most the limiter may take off the peaks (dB); nil: no cap.
    public var maxLimitingDB: Double?
    /// A ceiling the encoder still misses after the corrective encode is a
    /// warning and the output is written (else an error, nothing written).
    public var warnOverCeiling = false

    public init() {}
}

/// Options as data (a request body, a recipe): a key left out keeps its default.
extension LoudnessOptions: Codable {
    private enum CodingKeys: String, CodingKey { case target, overwrite, audioBitRate, streams, audioStream, maxLimitingDB, warnOverCeiling }

    public init(from decoder: any Swift.Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        target = try c.decodeIfPresent(LoudnessTarget.self, forKey: .target) ?? target
        overwrite = try c.decodeIfPresent(Bool.self, forKey: .overwrite) ?? overwrite
        audioBitRate = try c.decodeIfPresent(Int64.self, forKey: .audioBitRate)
        streams = try c.decodeIfPresent(StreamSelection.self, forKey: .streams) ?? streams
        streams.audio = true
        audioStream = try c.decodeIfPresent(Int.self, forKey: .audioStream)
        maxLimitingDB = try c.decodeIfPresent(Double.self, forKey: .maxLimitingDB)
        warnOverCeiling = try c.decodeIfPresent(Bool.self, forKey: .warnOverCeiling) ?? warnOverCeiling
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(target, forKey: .target)
        try c.encode(overwrite, forKey: .overwrite)
        try c.encodeIfPresent(audioBitRate, forKey: .audioBitRate)
        try c.encode(streams, forKey: .streams)
        try c.encodeIfPresent(audioStream, forKey: .audioStream)
        try c.encodeIfPresent(maxLimitingDB, forKey: .maxLimitingDB)
        try c.encode(warnOverCeiling, forKey: .warnOverCeiling)
    }
}

/// Progress of the writing pass: the output's position (s) and the input's length.
public struct LoudnessProgress: Sendable {
    public let position: Double
    public let duration: Double?

    /// A progress value (what a test or a client's own reporting makes).
    public init(position: Double, duration: Double?) {
        self.position = position
        self.duration = duration
    }

    public var fraction: Double? { duration.flatMap { $0 > 0 ? min(max(position / $0, 0), 1) : nil } }
}

/// What `avtool loudness` planned, and with an output what it wrote and measured there.
public struct LoudnessReport: Sendable, Codable {
    public var input: String
    /// nil for a plan only (nothing written).
    public var output: String?
    public var target: LoudnessTarget
    public var streams: [LoudnessStreamReport]
    /// Streams copied as they are (video, subtitles, data).
    public var copiedStreams: [Int] = []
    public var outputBytes: Int64 = 0
    public var elapsedSeconds: Double = 0
    /// Encodes: 1, or 2 when the first's output was measured over the
    /// ceiling or (limited) off the target loudness.
    public var passes = 0
    public var warnings: [String] = []
}

public struct LoudnessStreamReport: Sendable, Codable {
    public var plan: LoudnessStreamPlan
    /// Why the plan's mode, in a sentence.
    public var reason: String
    /// The encoder the stream is written with (its own codec family).
    public var encoder: String
    /// Measured on the output.
    public var after: LoudnessFigures?
    /// A limited stream's gain and limiter ceiling, and what the limiter took off.
    public var limiter: LimiterSetting?
}

/// Measures `input`'s audio (every stream, or `options.audioStream`) and
/// plans each stream's way to `options.target`; nothing is written. Fails
/// (naming the stream) when the file has no audio, `audioStream` is not one
/// of its audio streams, a stream is silent, the target cannot be reached,
/// or no encoder of the stream's family exists.
public func planLoudness(input: String, options: LoudnessOptions,
                         cancellation: Cancellation = .shared) throws(MediaError) -> LoudnessReport {
    let file = try InputFile(path: input, cancellation: cancellation, packetsOnly: true)
    let chosen = try chosenAudio(file, options.audioStream)
    let measured = try measureLoudness(path: input, only: chosen, cancellation: cancellation)
    guard !measured.isEmpty else {
        throw MediaError.invalid("could not normalize the loudness of", path: input,
                                 message: "the file has no audio stream", category: .missingStream)
    }
    var streams: [LoudnessStreamReport] = []
    for m in measured {
        let plan: LoudnessStreamPlan
        switch LoudnessStreamPlan.make(stream: m.stream, before: m.figures, target: options.target,
                                       maxLimitingDB: options.maxLimitingDB) {
        case .success(let p): plan = p
        case .failure(let f):
            throw MediaError.invalid("could not normalize the loudness of", path: input, stream: m.stream,
                                     message: failureMessage(f))
        }
        streams.append(LoudnessStreamReport(plan: plan, reason: reason(plan),
                                            encoder: try encoderFamily(file.streams[m.stream])))
    }
    return LoudnessReport(input: input, output: nil, target: options.target, streams: streams)
}

/// Brings every audio stream of `input` to `options.target` into `output`:
/// the plan made first (`planLoudness`), then one encode that copies every
/// other stream's packets and re-encodes the audio in its own codec family
/// at its rate and layout, each sample times the plan's gain (and through
/// the true-peak limiter, set a codec's margin under the ceiling, where the
/// plan needs it), laid by the sample counter so the audio keeps its start
/// and length. The encoded output is measured (decoded) before it is given
/// its name: a stream over the ceiling, or a limited one off the target
/// loudness, is encoded once more with the limiter corrected by what was
/// measured. A ceiling still missed is an error and nothing is written,
/// unless `options.warnOverCeiling`.
public func normalizeLoudness(input: String, output: String, options: LoudnessOptions,
                              cancellation: Cancellation = .shared,
                              progress: ((LoudnessProgress) -> Void)? = nil) throws(MediaError) -> LoudnessReport {
    var report = try planLoudness(input: input, options: options, cancellation: cancellation)
    let target = options.target
    // A family the output cannot hold (Opus into M4A) is written as AAC where it can be.
    let container = try resolveContainer(nil, output: output)
    for (i, s) in report.streams.enumerated()
    where container.canHold(encoder: s.encoder) == false && container.canHold(encoder: "aac") == true {
        report.warnings.append("stream #\(s.plan.stream): encoded as AAC (\(container.name) cannot hold \(s.encoder) audio)")
        report.streams[i].encoder = "aac"
    }
    let file = try InputFile(path: input, cancellation: cancellation, packetsOnly: true)
    for (i, s) in report.streams.enumerated() where s.plan.mode == .limited {
        let margin = LimiterSetting.codecMargin(encoder: s.encoder, bitRatePerChannel: bitRatePerChannel(options, file.streams[s.plan.stream]),
                                                seconds: file.duration?.seconds)
        report.streams[i].limiter = LimiterSetting(gainDB: s.plan.gainDB, limitDBTP: s.plan.ceilingDBTP - margin)
    }
    try rehearse(&report, input: input, cancellation: cancellation)
    while true {
        report.passes += 1
        let staged = try StagedOutput(target: output, overwrite: options.overwrite, inputs: [input])
        defer { staged.discard() }
        let written = try writeNormalized(input: input, output: staged, report: report, options: options,
                                          cancellation: cancellation, progress: progress)
        report.copiedStreams = written.copied
        report.elapsedSeconds += written.elapsed
        let after = try measureLoudness(path: staged.temporary, only: Set(report.streams.compactMap { written.outputIndex[$0.plan.stream] }),
                                        cancellation: cancellation)
        var again = false
        for (i, s) in report.streams.enumerated() {
            guard let a = after.first(where: { $0.stream == written.outputIndex[s.plan.stream] })?.figures else { continue }
            report.streams[i].after = a
            if let r = written.reductions[s.plan.stream] {
                report.streams[i].limiter?.reductionDB = r.db
                report.streams[i].limiter?.limitedSeconds = r.seconds
            }
            if report.passes < LimiterSetting.mostEncodes, let l = corrected(report.streams[i], after: a, target: target) {
                report.streams[i].limiter = l
                again = true
            }
        }
        if again { continue }
        report.warnings += written.warnings
        report.warnings += try checkCeiling(report, warnOnly: options.warnOverCeiling)
        report.outputBytes = staged.bytesSoFar
        try staged.commit()
        report.output = staged.target
        return report
    }
}

/// The audio streams to bring to the target: `n` when it is one of the
/// file's audio streams (an error naming the file's audio streams when it
/// is not), nil (every one) without it.
private func chosenAudio(_ file: InputFile, _ n: Int?) throws(MediaError) -> Set<Int>? {
    guard let n else { return nil }
    let audio = file.streams.filter { $0.mediaType == .audio }
    guard !audio.contains(where: { $0.index == n }) else { return [n] }
    let what = file.streams.indices.contains(n) ? "stream #\(n) is \(file.streams[n].mediaType.rawValue), not audio"
        : "the file has no stream #\(n)"
    let has = audio.isEmpty ? "it has no audio stream"
        : "its audio: " + audio.map { "#\($0.index) (\($0.codecName), \($0.channelCount) ch)" }.joined(separator: ", ")
    throw MediaError.invalid("could not normalize the loudness of", path: file.path,
                             message: "'--audio' \(n): \(what); \(has)", category: .missingStream)
}

/// The limiter takes loudness off with the peaks (much of it, where the
/// peaks are dense): each limited stream's gain is found by rehearsals —
/// the input decoded through the limiter and measured, nothing encoded —
/// the gain moved by what was missing, then along the line through the
/// last two (at most `rehearsals`), until within 0.1 LU of the target.
private func rehearse(_ report: inout LoudnessReport, input: String, cancellation: Cancellation) throws(MediaError) {
    let target = report.target.integratedLUFS
    var last: [Int: (gain: Double, loudness: Double)] = [:]
    for _ in 0..<LimiterSetting.rehearsals {
        let limiting = Dictionary(uniqueKeysWithValues: report.streams.compactMap { s in s.limiter.map { (s.plan.stream, $0) } })
        guard !limiting.isEmpty else { return }
        var settled = true
        for m in try measureLoudness(path: input, only: Set(limiting.keys), limiting: limiting, cancellation: cancellation) {
            guard let i = report.streams.firstIndex(where: { $0.plan.stream == m.stream }), var l = report.streams[i].limiter
            else { continue }
            let short = target - m.figures.integratedLUFS, previous = last[m.stream]
            last[m.stream] = (l.gainDB, m.figures.integratedLUFS)
            guard abs(short) > 0.1 else { continue }
            var slope = 1.0
            if let p = previous, abs(l.gainDB - p.gain) > 0.01 {
                slope = min(max((m.figures.integratedLUFS - p.loudness) / (l.gainDB - p.gain), 0.1), 1)
            }
            l.gainDB = min(l.gainDB + short / slope, LoudnessStreamPlan.largestGainDB)
            report.streams[i].limiter = l
            settled = false
        }
        if settled { return }
    }
}

/// The limiter of a stream's corrective encode, nil when it needs none: a
/// stream over the ceiling by more than the meter's tolerance (0.1 dB,
/// what the ceiling is held to and what ebur128 reads to; a whole encode
/// is not spent on 0.01 dB) gets its limiter set under the ceiling by what
/// the encoder added over it, and by what that grows when the limiter holds
/// harder (taken as half of what it added) — a Photos export's 64 kb/s
/// mono AAC added 1.0 dB, then 1.8 dB with the limiter 1.1 dB lower; a
/// linear stream gets a limiter, at that. A limited
/// one off the target loudness has its gain moved by what was missing.
private func corrected(_ s: LoudnessStreamReport, after a: LoudnessFigures, target: LoudnessTarget) -> LimiterSetting? {
    let over = a.truePeakDBTP - target.truePeakDBTP, short = target.integratedLUFS - a.integratedLUFS
    var l = s.limiter ?? LimiterSetting(gainDB: s.plan.gainDB, limitDBTP: target.truePeakDBTP)
    guard over > LimiterSetting.peakTolerance || (s.limiter != nil && abs(short) > LimiterSetting.loudnessTolerance)
    else { return nil }
    if s.limiter != nil { l.gainDB += short }
    if over > 0 {
        let overshoot = a.truePeakDBTP - l.limitDBTP
        l.limitDBTP = min(l.limitDBTP, target.truePeakDBTP - 1.5 * overshoot - 0.1)
    }
    l.reductionDB = nil
    l.limitedSeconds = nil
    return l
}

/// A stream still over the ceiling after the corrective encode: an error
/// (nothing is written), or with `warnOnly` a warning; one missing the
/// target loudness by more than 0.5 LU: a warning.
private func checkCeiling(_ report: LoudnessReport, warnOnly: Bool) throws(MediaError) -> [String] {
    var warnings: [String] = []
    let target = report.target, encodes = report.passes == 1 ? "1 encode" : "\(report.passes) encodes"
    for s in report.streams {
        guard let a = s.after else { continue }
        if a.truePeakDBTP > target.truePeakDBTP + LimiterSetting.peakTolerance {
            let what = "the true peak is \(fixed(a.truePeakDBTP, 1)) dBTP after \(encodes), over the \(fixed(target.truePeakDBTP, 1)) dBTP ceiling (the \(s.encoder) encoder adds to the peaks)"
            guard warnOnly else {
                throw MediaError.invalid("could not normalize the loudness of", path: report.input, stream: s.plan.stream,
                                         message: what + ": nothing written; a lower --true-peak or a higher --audio-bitrate may hold it, --warn-over-ceiling writes it anyway")
            }
            warnings.append("stream #\(s.plan.stream): " + what)
        }
        if abs(a.integratedLUFS - target.integratedLUFS) > 0.5 {
            warnings.append("stream #\(s.plan.stream): the loudness is \(fixed(a.integratedLUFS, 1)) LUFS after \(encodes), not \(fixed(target.integratedLUFS, 1))")
        }
    }
    return warnings
}

/// The bit rate each channel of `stream` is encoded at (nil: the encoder's default).
private func bitRatePerChannel(_ options: LoudnessOptions, _ stream: InputStream) -> Int64? {
    guard let total = options.audioBitRate else { return nil }
    return total / Int64(max(stream.channelCount, 1))
}

/// remux.c's shape with the audio re-encoded: plan the streams, open the
/// output with exactly those, every packet to its track's writer, finish.
/// Written into `output`'s temporary, left unnamed for the caller to
/// measure; what each stream's limiter took off, by input stream.
private func writeNormalized(input inputPath: String, output: StagedOutput, report: LoudnessReport,
                             options: LoudnessOptions, cancellation: Cancellation,
                             progress: ((LoudnessProgress) -> Void)?) throws(MediaError)
    -> (copied: [Int], outputIndex: [Int: Int], elapsed: Double, reductions: [Int: (db: Double, seconds: Double)],
        warnings: [String]) {
    let op = "could not normalize the loudness of"
    let container = try resolveContainer(nil, output: output.target)
    let input = try InputFile(path: inputPath, cancellation: cancellation)
    let families = Dictionary(uniqueKeysWithValues: report.streams.map { ($0.plan.stream, $0.encoder) })
    let encodings = try audioEncodings(input, container: container, selection: options.streams, bitRate: options.audioBitRate,
                                       operation: op) { s throws(MediaError) in families[s.index] }
    let plan = try planStreams(input, container: container, selection: options.streams, operation: op) {
        encodings[$0.index] != nil
    }
    var source = try PacketSource(input, kept: plan.kept, salvage: false, operation: op)
    var audio: [Int: AudioReencoder] = [:]
    for s in report.streams {
        guard var settings = encodings[s.plan.stream] else { continue }
        let stream = input.streams[s.plan.stream]
        settings.channelLayout = stream.channelLayout
        let reencoder = try AudioReencoder(settings: settings, source: stream)
        try reencoder.bringLoudness(s, stream: stream)
        try reencoder.begin(stream)
        // An MP4/MOV track's edit can end inside its last packet (a cut, an
        // encoder's padding trimmed): the samples after it are not heard, and
        // are not written.
        if input.formatName.hasPrefix("mov") { reencoder.limit = presentedEnd(stream) }
        audio[s.plan.stream] = reencoder
    }
    let session = try MuxSession(.part(output), container: container,
                                 streams: plan.kept.map { s in audio[s.index].map { .encoded($0.encoder) } ?? .copy(s) },
                                 metadataSource: input, edits: MetadataEdits(), faststart: true,
                                 audioSampleRate: plan.kept.first { $0.mediaType == .audio }
                                    .map { audio[$0.index]?.encoder.sampleRate ?? $0.sampleRate },
                                 expectedBytes: input.size, cancellation: cancellation)
    try session.beginTimelines(plan.kept, start: .zero, repair: .fix, retimed: audio.mapValues { $0.encoder.timeBase })
    let writers: [any TrackWriter] = plan.kept.enumerated().map { j, s -> any TrackWriter in
        if let a = audio[s.index] { return ReencodeWriter(a, track: j, session: session) }
        return CopyWriter(track: j, session: session)
    }
    let duration = input.duration.map(\.seconds)
    try runTracks(&source, into: writers, cancellation: cancellation, progress: progress.map { progress in
        { progress(LoudnessProgress(position: session.position, duration: duration)) }
    })
    let result = try session.finish()
    try hidePriming(output, container: container, session: session, kept: plan.kept, audio: audio)
    let outputIndex = Dictionary(uniqueKeysWithValues: plan.kept.enumerated().map { ($1.index, $0) })
    let reductions = audio.compactMapValues { ($0.stage as? PeakLimiter)?.reduction }
    return (plan.kept.filter { audio[$0.index] == nil }.map(\.index), outputIndex, result.elapsed.seconds, reductions,
            [result.emptyTrackWarning(container: container)].compactMap { $0 })
}

/// The encoders' priming hidden by the MP4/MOV output's edit lists where
/// the muxer left some of it shown: when the decoder dropped samples at the
/// input's start by itself (libavcodec drops libfaac's 1024-sample delay,
/// which the container does not mark: a 2005 KDDI phone's 3G2), the
/// re-encoded audio starts that much in and the encoder's priming lies
/// after the track's zero, where it would be played and decoded: the
/// output would decode to 1024 samples more than the input. The empty edit
/// before the audio grows by what is hidden, so every sample keeps its time.
private func hidePriming(_ output: StagedOutput, container: Container, session: MuxSession, kept: [InputStream],
                         audio: [Int: AudioReencoder]) throws(MediaError) {
    guard container.isISOBMFF else { return }
    let priming = kept.enumerated().compactMap { j, s -> IndexCompletion.Priming? in
        guard let e = audio[s.index]?.encoder, e.initialPadding > 0, let t = session.muxerTrack(j) else { return nil }
        return IndexCompletion.Priming(track: t, samples: Int64(e.initialPadding), sampleRate: e.sampleRate)
    }
    guard !priming.isEmpty else { return }
    do throws(IndexCompletion.Failure) {
        try IndexCompletion.complete(path: output.temporary, entries: [], carried: [], priming: priming, faststart: true)
    } catch {
        throw MediaError(error, completing: output.target)
    }
}

/// Where an audio stream's presentation ends, in samples from its time
/// base's zero (its start plus its duration, which libavformat takes from
/// the track's edit); nil when either is unknown.
private func presentedEnd(_ s: InputStream) -> Int64? {
    guard let start = s.startTime, let duration = s.duration, let rate = Rational.perSecond(s.sampleRate),
          let a = start.rescaled(to: rate), let b = duration.rescaled(to: rate) else { return nil }
    return a.value &+ b.value
}

/// The encoder of a stream's own family: AAC as AAC, PCM as the same PCM,
/// any other codec by its own encoder when FFmpeg has one that is not
/// experimental (Opus by libopus: FFmpeg 5.1's own opus encoder is).
private func encoderFamily(_ s: InputStream) throws(MediaError) -> String {
    let name = s.codecName
    for candidate in [name, "lib" + name, name == "mp3" ? "libmp3lame" : nil].compactMap({ $0 })
    where AudioEncoderCapabilities(codec: candidate).map({ !$0.isExperimental }) == true {
        return candidate
    }
    throw MediaError.invalid("could not normalize the loudness of", path: s.file.path, stream: s.index,
                             message: "this FFmpeg build has no encoder for \(name) audio")
}

private func reason(_ p: LoudnessStreamPlan) -> String {
    let gain = (p.gainDB >= 0 ? "+" : "") + fixed(p.gainDB, 1)
    switch p.mode {
    case .linear:
        return "a gain of \(gain) dB keeps the true peak at \(fixed(p.peakAfterGainDBTP, 1)) dBTP, within the \(fixed(p.ceilingDBTP, 1)) dBTP ceiling"
    case .limited:
        return "a gain of \(gain) dB would put the true peak at \(fixed(p.peakAfterGainDBTP, 1)) dBTP, \(fixed(p.overCeilingDB, 1)) dB over the \(fixed(p.ceilingDBTP, 1)) dBTP ceiling"
    }
}

private func failureMessage(_ f: LoudnessPlanFailure) -> String {
    switch f {
    case .gatedOut:
        "the audio is silent (below the -70 LUFS gate): there is no loudness to bring to a target"
    case .peaksTooHigh(let r, let cap):
        "the target cannot be reached: its true-peak ceiling would need \(fixed(r, 1)) dB off the peaks (--max-limiting \(fixed(cap, 1)))"
    case .gainTooLarge(let g):
        "the target cannot be reached: it needs a gain of \(fixed(g, 1)) dB (at most \(fixed(LoudnessStreamPlan.largestGainDB, 1)) dB)"
    }
}

extension AudioReencoder {
    /// Applies a stream's plan before the first packet: its gain alone
    /// (linear), or its gain and the true-peak limiter at its setting (the
    /// plan's ceiling less the codec's margin, unless an encode measured
    /// the output and set it otherwise).
    public func bringLoudness(_ s: LoudnessStreamReport, stream: InputStream) throws(MediaError) {
        switch (s.plan.mode, s.limiter) {
        case (.linear, nil): gain = pow(10, s.plan.gainDB / 20)
        case (_, let l?): self.stage = try PeakLimiter(gainDB: l.gainDB, limitDBTP: l.limitDBTP, stream: stream)
        case (.limited, nil):
            let margin = LimiterSetting.codecMargin(encoder: s.encoder, bitRatePerChannel: nil, seconds: stream.file.duration?.seconds)
            self.stage = try PeakLimiter(gainDB: s.plan.gainDB, limitDBTP: s.plan.ceilingDBTP - margin, stream: stream)
        }
    }
}
