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
    /// Decode-only runs through the limiter that found the limited streams' gains.
    public var rehearsals = 0
    /// Encodes begun beside a rehearsal that then moved a gain: stopped, not
    /// kept, not counted in `passes`.
    public var encodesStopped = 0
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
/// of its audio streams, a stream is silent, or the target cannot be
/// reached. A stream whose codec this FFmpeg build has no encoder for
/// (AMR) is planned as AAC, and a warning says so.
public func planLoudness(input: String, options: LoudnessOptions,
                         cancellation: Cancellation = .shared) throws(MediaError) -> LoudnessReport {
    let file = try InputFile(path: input, cancellation: cancellation, packetsOnly: true)
    let chosen = try chosenAudio(file, options.audioStream)
    let measured = try measureLoudness(path: input, only: chosen, cancellation: cancellation)
    guard !measured.isEmpty else {
        throw MediaError.invalid("could not normalize the loudness of", path: input,
                                 message: "the file has no audio stream", category: .missingStream)
    }
    var streams: [LoudnessStreamReport] = [], warnings: [String] = []
    for m in measured {
        let plan: LoudnessStreamPlan
        switch LoudnessStreamPlan.make(stream: m.stream, before: m.figures, target: options.target,
                                       maxLimitingDB: options.maxLimitingDB) {
        case .success(let p): plan = p
        case .failure(let f):
            throw MediaError.invalid("could not normalize the loudness of", path: input, stream: m.stream,
                                     message: failureMessage(f), hint: failureHint(f, before: m.figures))
        }
        let s = file.streams[m.stream], family = encoderFamily(s)
        if family == nil { warnings.append("stream #\(s.index): encoded as AAC (this FFmpeg build has no \(s.codecName) encoder)") }
        streams.append(LoudnessStreamReport(plan: plan, reason: reason(plan), encoder: family ?? "aac"))
    }
    var report = LoudnessReport(input: input, output: nil, target: options.target, streams: streams)
    report.warnings = warnings
    return report
}

/// Brings every audio stream of `input` to `options.target` into `output`:
/// the plan made first (`planLoudness`), then one encode that copies every
/// other stream's packets and re-encodes the audio in its own codec family
/// at its rate and layout, each sample times the plan's gain (and through
/// the true-peak limiter, set a codec's margin under the ceiling, where the
/// plan needs it), laid by the sample counter so the audio keeps its start
/// and length. A limited stream's gain is found by rehearsals, each after
/// the first beside the encode at the gain it tries (`Rehearsals`); an
/// encode whose gain a rehearsal moves is stopped and not kept. The
/// encoded output is measured (decoded) before it is given
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
    var rehearsals = try Rehearsals(&report, input: input, cancellation: cancellation)
    report.rehearsals = rehearsals.count
    while true {
        // A gain moved and not yet rehearsed: its rehearsal runs beside the
        // encode at it, and stops the encode if it moves a gain again.
        let stop = Cancellation(parent: cancellation)
        var beside: RehearsalBeside?
        if rehearsals.due {
            beside = RehearsalBeside(report, input: input, cancellation: cancellation, stop: stop)
            if beside == nil {
                rehearsals.take(try Rehearsals.measure(report, input: input, cancellation: cancellation), into: &report)
                report.rehearsals = rehearsals.count
                continue
            }
        }
        let staged = try StagedOutput(target: output, overwrite: options.overwrite, inputs: [input])
        defer { staged.discard() }
        var kept: WrittenNormalized?
        do throws(MediaError) {
            kept = try writeNormalized(input: input, output: staged, report: report, options: options,
                                       cancellation: stop, progress: progress)
        } catch {
            guard beside != nil, stop.isCancelled, !cancellation.isCancelled else { throw error }
        }
        if let beside {
            rehearsals.take(try beside.finish(), into: &report)
            report.rehearsals = rehearsals.count
            // Encoded at a gain the rehearsal moved: not kept, not counted.
            if !rehearsals.settled {
                report.encodesStopped += 1
                continue
            }
        }
        guard let written = kept else { throw MediaError.interrupted }
        report.passes += 1
        report.copiedStreams = written.copied
        report.elapsedSeconds += written.elapsed
        let after = try measuredAfter(written, report: report, path: staged.temporary, cancellation: cancellation)
        var again = false
        for (i, s) in report.streams.enumerated() {
            guard let a = after[s.plan.stream] else { continue }
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

/// Each normalized stream's figures as the written file plays them: from
/// the meters that decoded its packets as they were written, and for the
/// others from the file, decoded again.
private func measuredAfter(_ written: WrittenNormalized, report: LoudnessReport, path: String,
                           cancellation: Cancellation) throws(MediaError) -> [Int: LoudnessFigures] {
    var after = written.measured
    let rest = report.streams.map(\.plan.stream).filter { after[$0] == nil }
    guard !rest.isEmpty else { return after }
    let inFile = Dictionary(uniqueKeysWithValues: written.outputIndex.map { ($1, $0) })
    for m in try measureLoudness(path: path, only: Set(rest.compactMap { written.outputIndex[$0] }), cancellation: cancellation) {
        if let i = inFile[m.stream] { after[i] = m.figures }
    }
    return after
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

/// The encoder of a stream's own family: AAC as AAC, PCM as the same PCM,
/// any other codec by its own encoder when FFmpeg has one that is not
/// experimental (Opus by libopus: FFmpeg 5.1's own opus encoder is).
private func encoderFamily(_ s: InputStream) -> String? {
    let name = s.codecName
    for candidate in [name, "lib" + name, name == "mp3" ? "libmp3lame" : nil].compactMap({ $0 })
    where AudioEncoderCapabilities(codec: candidate).map({ !$0.isExperimental }) == true {
        return candidate
    }
    return nil
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

/// The way forward from a plan's failure: the loudest target within reach
/// (the measured loudness plus the largest gain, rounded down to 0.1 LU), or
/// the limiting a target needs; nil for silence.
private func failureHint(_ f: LoudnessPlanFailure, before: LoudnessFigures) -> String? {
    switch f {
    case .gatedOut:
        nil
    case .peaksTooHigh(let r, _):
        "allow it with --max-limiting \(fixed((r * 10).rounded(.up) / 10, 1)), or ask for a quieter target"
    case .gainTooLarge:
        "ask for --target \(fixed(((before.integratedLUFS + LoudnessStreamPlan.largestGainDB) * 10).rounded(.down) / 10, 1)) or quieter, which is within reach"
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
