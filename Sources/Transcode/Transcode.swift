import Media
import Loudness
import Pipeline
import Sync

/// Progress of a running transcode.
public struct TranscodeProgress: Sendable {
    public let frames: Int
    /// Seconds of media encoded so far.
    public let position: Double
    public let duration: Double?
    /// The phase, when it is not the encode itself ("quality search: CRF 27").
    public var phase: String?

    /// A progress value (what a test or a client's own reporting makes).
    public init(frames: Int, position: Double, duration: Double?, phase: String? = nil) {
        self.frames = frames
        self.position = position
        self.duration = duration
        self.phase = phase
    }

    public var fraction: Double? {
        guard let d = duration, d > 0 else { return nil }
        return min(max(position / d, 0), 1)
    }
}

public struct TranscodeReport: Sendable, Codable {
    public let input: String
    public let output: String
    public let container: String
    public var videoStream: Int
    public var encoder: String
    public var width: Int
    public var height: Int
    public var pixelFormat: String
    public var framesDecoded = 0
    public var framesEncoded = 0
    public var copiedStreams: [Int] = []
    public var audio: [AudioOutcome] = []
    /// The constant output rate asked for (`frameRate`), as `num/den`.
    public var frameRate: String?
    public var framesDropped = 0
    public var framesDuplicated = 0
    /// Whether HDR10 metadata was passed to the encoder.
    public var hdr = false
    /// What became of the source's Dolby Vision and HDR10+ metadata; nil
    /// when it had none (HDR10+ is known once frames are decoded).
    public var dolbyVision: HDRMetadataOutcome?
    public var hdr10Plus: HDRMetadataOutcome?
    /// With `--sdr`: what was rendered as SDR, and how ("HLG → BT.709 SDR (hable)").
    public var toneMap: String?
    public var dropped: [DroppedStream] = []
    public var warnings: [String] = []
    /// With `salvage`: what was kept of a damaged or cut-off input.
    public var salvage: SalvageReport?
    public var inputBytes: Int64 = 0
    public var outputBytes: Int64 = 0
    public var durationSeconds: Double?
    public var elapsedSeconds = 0.0
    public var corrections = TimelineCorrections()
    /// A chunked transcode: its chunks and seams.
    public var chunks: ChunkJoin?
    /// With a loudness target: each audio stream's plan (its output not measured again).
    public var loudness: [LoudnessStreamReport]?
    /// With `--quality`: the CRF found, and the search's predictions (and measure).
    public var quality: QualityReport?

    /// Output size over input size.
    public var sizeRatio: Double { inputBytes > 0 ? Double(outputBytes) / Double(inputBytes) : 0 }
}

/// Decodes the main video stream, converts it only when the encoder needs it
/// (pixel format, size), encodes it with libx265, and muxes it with the other
/// streams. Audio is copied when the container holds it and encoded (AAC, or
/// PCM on request) when not. Timestamps pass through (VFR stays VFR) unless
/// `options.frameRate` asks for a constant rate. A composition of track writers: the
/// video re-encoded, the audio copied or re-encoded, the rest copied.
public func transcode(input inputPath: String, output outputPath: String, options: TranscodeOptions,
                      cancellation: Cancellation = .shared,
                      progress: ((TranscodeProgress) -> Void)? = nil) throws(MediaError) -> TranscodeReport {
    try options.validate()
    let container = try resolveContainer(options.container, output: outputPath)
    if container.canHold(codecNamed: "hevc") == false {
        // Refused before the input is even opened, with the reason (WebM:
        // VP8/VP9/AV1 and Vorbis/Opus only), not as the muxer's bare EINVAL.
        throw MediaError.invalid("could not transcode", path: outputPath,
                                 message: "\(container.name) cannot hold HEVC, which transcode writes"
                                    + (container.name == "webm" ? " (WebM holds VP8, VP9 and AV1 video, Vorbis and Opus audio)" : ""),
                                 hint: "write .mov, .mp4 or .mkv")
    }
    let input = try InputFile(path: inputPath, cancellation: cancellation)
    // Every decision that can fail is made before the output exists.
    var plan = try TranscodePlan(input, container: container, options: options, cancellation: cancellation)
    var quality: QualityReport?
    if let target = options.quality {
        // The output is checked before the search (it exists, or is an input).
        _ = try StagedOutput(target: outputPath, overwrite: options.overwrite, inputs: [inputPath])
        quality = try searchQuality(input, plan: plan, target: target, cancellation: cancellation, progress: progress)
        plan.videoSettings = plan.videoSettings.encoding(crf: quality!.crf)
    }
    var source = try PacketSource(input, kept: plan.streams.kept, salvage: options.salvage, operation: "could not transcode")
    let video = try VideoReencoder(stream: plan.video, settings: plan.videoSettings, frameRate: options.frameRate,
                                   carrying: plan.carrying)
    video.filter = plan.filter
    let meter = try options.verifyQuality ? options.quality.map { (t) throws(MediaError) in
        try QualityMeter(t.metric, measuring: video, of: plan.video)
    } : nil
    let out = try TranscodeOutput(plan, input: input, video: .encoded(video),
                                  destination: .file(outputPath, overwrite: options.overwrite, inputs: [inputPath]),
                                  options: options, cancellation: cancellation)
    let (session, writers, audio) = (out.session, out.writers, out.audio)
    if let progress {
        let duration = input.duration.map(\.seconds), start = input.startTime?.seconds ?? 0
        video.progress = { frames, t in
            progress(TranscodeProgress(frames: frames, position: t.seconds - start, duration: duration))
        }
    }
    // (Progress comes from the video's encoder, frame by frame.)
    try runTracks(&source, into: writers, cancellation: cancellation)
    // The measure ends (the encoder is flushed) before the output is committed.
    let measured = try meter?.finish()
    let window = meter?.weakestRun(of: QualityMeter.windowPictures(of: plan.video))
    let result = try session.finish()
    var report = plan.report(input: input, output: outputPath, video: video, audio: audio, result: result)
    report.salvage = source.salvage
    report.quality = quality
    if let note = quality?.spreadNote { report.warnings.append(note) }
    report.quality?.measured = measured.flatMap { $0.isNaN ? nil : $0 }
    report.quality?.measuredWeakestWindow = window.flatMap { $0.isNaN ? nil : $0 }
    if let w = source.salvage?.warning { report.warnings.insert(w, at: 0) }
    return report
}


/// A transcode's output, opened: the session with the video track (encoded
/// here, or the chunks' packets for a join), the audio the plan encodes,
/// the rest copied; every track's timeline begun; one writer per track, in
/// track order. What a transcode and a chunk join share.
struct TranscodeOutput {
    enum Video {
        case encoded(VideoReencoder)
        /// The chunks' packets, on `timeBase`; `encoder` gives the track's parameters.
        case chunks(Encoder, extradata: [UInt8], timeBase: Rational)
    }

    let session: MuxSession
    let writers: [any TrackWriter]
    let audio: [Int: AudioReencoder]
    let videoTrack: Int

    init(_ plan: TranscodePlan, input: InputFile, video: Video, destination: MuxDestination, options: TranscodeOptions,
         cancellation: Cancellation) throws(MediaError) {
        var audio: [Int: AudioReencoder] = [:]
        for (index, settings) in plan.audio {
            audio[index] = try AudioReencoder(settings: settings, source: input.streams[index])
            if let l = plan.loudness[index] { try audio[index]!.bringLoudness(l, stream: input.streams[index]) }
            try audio[index]!.begin(input.streams[index])
        }
        let kept = plan.streams.kept
        let videoSource: OutputStreamSource, videoTimeBase: Rational
        switch video {
        case .encoded(let v):
            (videoSource, videoTimeBase) = (.encoded(v.encoder), v.encoder.timeBase)
        case let .chunks(encoder, extradata, timeBase):
            (videoSource, videoTimeBase) = (.chunks(encoder, extradata: extradata), timeBase)
        }
        let session = try MuxSession(
            destination, container: plan.container,
            streams: kept.map { $0.index == plan.video.index ? videoSource : audio[$0.index].map { .encoded($0.encoder) } ?? .copy($0) },
            metadataSource: input, edits: options.edits, faststart: options.faststart,
            audioSampleRate: kept.first { $0.mediaType == .audio }.map { audio[$0.index]?.encoder.sampleRate ?? $0.sampleRate },
            cancellation: cancellation)
        var retimed = [plan.video.index: videoTimeBase]
        for (i, a) in audio { retimed[i] = a.encoder.timeBase }
        try session.beginTimelines(kept, start: options.start, repair: .fix, retimed: retimed)
        writers = kept.enumerated().map { j, s in
            if s.index == plan.video.index, case .encoded(let v) = video { return ReencodeWriter(v, track: j, session: session) }
            if let a = audio[s.index] { return ReencodeWriter(a, track: j, session: session) }
            return CopyWriter(track: j, session: session)
        }
        self.session = session
        self.audio = audio
        videoTrack = kept.firstIndex { $0.index == plan.video.index }!
    }
}

/// Everything a transcode decides before the output exists: the streams
/// kept, the video encoder's settings (size, bit depth, HDR metadata,
/// x265 options), and which audio streams are encoded and how.
struct TranscodePlan {
    let video: InputStream
    let container: Container
    let streams: StreamPlan
    /// Input stream index → encoder settings, for the audio encoded.
    let audio: [Int: AudioEncoderSettings]
    /// With `--loudness`: each audio stream's plan (measured here, before anything is written).
    let loudness: [Int: LoudnessStreamReport]
    var videoSettings: VideoEncoderSettings
    let hdr: Bool
    /// The per-picture metadata the video's encode carries, and what became of Dolby Vision.
    let carrying: PictureMetadata.Kinds
    let dolbyVision: HDRMetadataOutcome?
    let toneMap: ToneMapSettings?
    /// The video's tone mapper, when it has one (`--sdr`).
    let filter: (any FrameFilter)?
    let frameRate: Rational?
    var warnings: [String]

    init(_ input: InputFile, container: Container, options: TranscodeOptions,
         cancellation: Cancellation) throws(MediaError) {
        guard let v = input.streams.first(where: { $0.mediaType == .video && !$0.isAttachedPicture }) else {
            throw MediaError.invalid("could not transcode", path: input.path,
                                     message: "no video stream to encode",
                                     hint: input.streams.contains { $0.mediaType == .audio }
                                        ? "audio-only files are not transcoded; use 'avtool remux' to change their container"
                                        : nil)
        }
        video = v
        self.container = container
        var selection = options.streams
        selection.video = true
        var loudness: [Int: LoudnessStreamReport] = [:]
        if let target = options.loudness {
            var o = LoudnessOptions()
            o.target = target
            for s in try planLoudness(input: input.path, options: o, cancellation: cancellation).streams
            where selection.keeps(input.streams[s.plan.stream]) {
                loudness[s.plan.stream] = s
            }
        }
        self.loudness = loudness
        let audio = try planAudio(input, container: container, selection: selection, options: options,
                                  loudness: loudness)
        self.audio = audio
        // Other video streams (a second angle) are copied; only the main one is encoded.
        streams = try planStreams(input, container: container, selection: selection, operation: "could not transcode") {
            $0.index == v.index || audio[$0.index] != nil
        }
        let videoPlan = try VideoPlan(v, options: options,
                                      globalHeader: container.isISOBMFF || container.muxer == "matroska",
                                      cancellation: cancellation)
        warnings = streams.warnings + videoPlan.warnings
        for l in loudness.values.sorted(by: { $0.plan.stream < $1.plan.stream }) where l.plan.mode == .limited {
            warnings.append("stream #\(l.plan.stream): its peaks are limited in this one pass, a margin under the ceiling for the encoder, and the output is not measured again: an encoder's overshoot past that margin is not corrected as 'avtool loudness' corrects it")
        }
        hdr = videoPlan.hdr
        carrying = videoPlan.carrying
        dolbyVision = videoPlan.dolbyVision
        toneMap = videoPlan.toneMap
        filter = videoPlan.filter(for: v)
        videoSettings = videoPlan.settings
        frameRate = options.frameRate
    }

    /// The report of a finished transcode.
    func report(input: InputFile, output: String, video encoded: VideoReencoder, audio encoders: [Int: AudioReencoder],
                result: MuxResult) -> TranscodeReport {
        var report = report(input: input, output: output, audio: encoders, result: result)
        report.framesDecoded = encoded.framesDecoded
        report.framesEncoded = encoded.framesEncoded
        report.framesDropped = encoded.framesDropped
        report.framesDuplicated = Int(encoded.framesDuplicated)
        if let m = encoded.metadata {
            if report.dolbyVision?.action == .carried { report.dolbyVision?.frames = m.carriedRPUs }
            if m.carriedHDR10Plus > 0 { report.hdr10Plus = HDRMetadataOutcome(action: .carried, frames: m.carriedHDR10Plus) }
        }
        if let t = filter as? ToneMapper, t.hdr10PlusFrames > 0 {
            report.hdr10Plus = HDRMetadataOutcome(action: .toneMapped, reason: "its peak used by the tone mapping", frames: t.hdr10PlusFrames)
        }
        return report
    }

    /// The report of a finished transcode, the video's frame counts aside
    /// (a join's come from its chunks).
    func report(input: InputFile, output: String, audio encoders: [Int: AudioReencoder],
                result: MuxResult) -> TranscodeReport {
        var report = TranscodeReport(
            input: input.path, output: output, container: container.name, videoStream: video.index,
            encoder: videoSettings.codec, width: videoSettings.width, height: videoSettings.height,
            pixelFormat: videoSettings.pixelFormat,
            copiedStreams: streams.kept.filter { $0.index != video.index && encoders[$0.index] == nil }.map(\.index),
            dropped: streams.dropped, warnings: warnings + result.warnings(container: container))
        report.frameRate = frameRate.map { "\($0.numerator)/\($0.denominator)" }
        report.hdr = hdr
        report.dolbyVision = dolbyVision
        report.toneMap = toneMap.map { "\(video.colorTransfer.map { DolbyVisionPlan.baseLayerName($0) } ?? "HDR") → BT.709 SDR (\($0.toneMap.rawValue))" }
        report.audio = streams.kept.filter { $0.mediaType == .audio }.map { s in
            if let a = encoders[s.index] {
                return AudioOutcome(stream: s.index, action: "encoded", codec: a.encoder.codecName,
                                    sampleRate: a.encoder.sampleRate, bitRate: a.encoder.bitRate > 0 ? a.encoder.bitRate : nil,
                                    silenceInserted: a.silenceInserted, samplesTrimmed: a.samplesTrimmed, from: s.codecName,
                                    reason: container.canHold(s) == false ? "\(container.name) cannot hold \(s.codecName)" : nil)
            }
            return AudioOutcome(stream: s.index, action: "copied", codec: s.codecName, sampleRate: s.sampleRate,
                                bitRate: s.bitRate)
        }
        report.loudness = loudness.isEmpty ? nil : loudness.keys.sorted().map { loudness[$0]! }
        report.corrections = result.totalCorrections
        report.inputBytes = input.size ?? 0
        report.outputBytes = result.outputBytes
        report.durationSeconds = input.duration.map(\.seconds)
        report.elapsedSeconds = result.elapsed.seconds
        return report
    }
}

/// Which kept audio streams are encoded, and how; refuses, before anything
/// is written, what cannot work: a copy the container cannot hold, an
/// encoder the container cannot hold, a bit rate or channel count the
/// encoder cannot use.
func planAudio(_ input: InputFile, container: Container, selection: StreamSelection,
               options: TranscodeOptions, loudness: [Int: LoudnessStreamReport] = [:]) throws(MediaError) -> [Int: AudioEncoderSettings] {
    try audioEncodings(input, container: container, selection: selection, bitRate: options.audioBitRate,
                       operation: "could not transcode") { (s) throws(MediaError) -> String? in
        let fits = container.canHold(s) != false
        switch options.audio {
        case .copy:
            guard fits else {
                throw MediaError.invalid("could not transcode", path: input.path, stream: s.index,
                                         message: "\(container.name) cannot hold audio codec '\(s.codecName)'",
                                         remedy: .encodeAudioOrDrop)
            }
            return nil
        case .auto:
            // Brought to a loudness: encoded in its own family, where the container holds it.
            if let l = loudness[s.index] { return fits ? l.encoder : "aac" }
            return fits ? nil : "aac"
        case .aac, .pcm: return options.audio.encoderName!
        }
    }
}
