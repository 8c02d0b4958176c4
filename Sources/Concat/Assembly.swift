import Loudness
import Media
import Pipeline
import Sync

/// Options shared by merge, concat and fill-silence.
public struct AssemblyOptions: Sendable, Equatable {
    public var container: Container?
    /// Tag, creation-time and rotation changes made as the output is written.
    public var edits = MetadataEdits()
    /// Where the output ends; `nil` leaves both tracks' ends as they are.
    public var end: EndPolicy? = .video
    /// Fill gaps inside the audio with silence (and trim overlaps).
    public var fill = true
    /// How far a packet may land from its own timestamp: differences up to
    /// this are jitter, absorbed by laying packets back to back; `nil` is
    /// the verb's default (`toleranceDefault`).
    public var tolerance: Duration?
    /// The default for `tolerance`, set by the verb (not an option): 20 ms
    /// for fill-silence and merge, 1 ms for concat (`ToleranceDefault`).
    public var toleranceDefault = ToleranceDefault.rounding
    /// AAC bit rate when the audio has to be re-encoded; `nil` keeps the
    /// input's (or 64 kb/s per channel).
    public var audioBitRate: Int64?
    public var faststart = true
    public var overwrite = false
    /// Keep the video file's data tracks (telemetry, timed metadata) where
    /// the container holds them; `false` leaves them out without a word.
    public var data = true
    /// The longest silence made in one place; a longer gap or pad is refused
    /// as a broken timestamp. (The fuzz harness lowers it to keep each run short.)
    public var longestFillSeconds = AudioAssembler.longestFillSeconds
    /// Bring the output's audio to this loudness (`--loudness`): the
    /// assembly is measured once written, and its audio re-encoded with the
    /// plan's gain (`normalizeLoudness`).
    public var loudness: LoudnessTarget?

    public init() {}

    /// The tolerance in samples at `sampleRate` for audio stamped in
    /// `timeBase`: the option, else the verb's default (at least one tick).
    public func toleranceSamples(timeBase: Rational?, sampleRate: Int32) -> Int64 {
        let rate = max(sampleRate, 1)
        if let t = tolerance { return t.samples(rate: rate) }
        return toleranceDefault.samples(timeBase: timeBase ?? Rational.perSecond(rate)!, sampleRate: rate)
    }

    public func validate() throws(MediaError) {
        if let t = tolerance, t < .zero || t > .seconds(10) {
            throw MediaError.invalidOption("'tolerance' must be between 0 and 10 seconds", options: ["tolerance"])
        }
        if let b = audioBitRate, b < AACBitRate.minimumPerChannel {
            throw MediaError.invalidOption("'audio-bitrate' must be at least \(AACBitRate.minimumPerChannel / 1000)k per channel",
                                           options: ["audio-bitrate"])
        }
    }
}

/// Options as data (a request body, a recipe): keys are the properties'
/// names, `tolerance` in seconds; a key left out keeps its default (`end`
/// given as null leaves the tracks' ends as they are). Metadata edits are
/// not carried.
extension AssemblyOptions: Codable {
    private enum CodingKeys: String, CodingKey {
        case container, end, fill, tolerance, audioBitRate, faststart, overwrite, data, loudness
    }

    public init(from decoder: any Swift.Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        container = try c.decodeIfPresent(Container.self, forKey: .container)
        if c.contains(.end) { end = try c.decodeIfPresent(EndPolicy.self, forKey: .end) }
        fill = try c.decodeIfPresent(Bool.self, forKey: .fill) ?? fill
        tolerance = try c.decodeIfPresent(Double.self, forKey: .tolerance).map { Duration.seconds($0) }
        audioBitRate = try c.decodeIfPresent(Int64.self, forKey: .audioBitRate)
        faststart = try c.decodeIfPresent(Bool.self, forKey: .faststart) ?? faststart
        overwrite = try c.decodeIfPresent(Bool.self, forKey: .overwrite) ?? overwrite
        data = try c.decodeIfPresent(Bool.self, forKey: .data) ?? data
        loudness = try c.decodeIfPresent(LoudnessTarget.self, forKey: .loudness)
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(container, forKey: .container)
        try c.encode(end, forKey: .end)
        try c.encode(fill, forKey: .fill)
        try c.encodeIfPresent(tolerance?.seconds, forKey: .tolerance)
        try c.encodeIfPresent(audioBitRate, forKey: .audioBitRate)
        try c.encode(faststart, forKey: .faststart)
        try c.encode(overwrite, forKey: .overwrite)
        try c.encode(data, forKey: .data)
        try c.encodeIfPresent(loudness, forKey: .loudness)
    }
}

/// Opens an input by the name a `SegmentSpec` gives it: a path, or (for
/// the in-memory entry points) a name for bytes in memory; in full, or for
/// packet reads only (the scan's reads of timings).
struct InputOpener {
    let open: (String, Cancellation, _ packetsOnly: Bool) throws(MediaError) -> InputFile

    func callAsFunction(_ name: String, _ cancellation: Cancellation,
                        packetsOnly: Bool = false) throws(MediaError) -> InputFile {
        try open(name, cancellation, packetsOnly)
    }

    /// Opens files by path; every later opening of a path must find the
    /// file the first one read (so a file cut or replaced during the run is
    /// told as changed, even by an opening made after the change, or after
    /// the first was closed). Only the first opening's identity is kept,
    /// not the opening: thousands of inputs are not held open.
    static var files: InputOpener {
        let first = Locked<[String: FileIdentity]>([:])
        return InputOpener { path, c, light throws(MediaError) in
            let earlier = first.withLock { $0[path] }
            let file = try InputFile(path: path, cancellation: c, packetsOnly: light, expecting: earlier)
            if earlier == nil, let identity = file.identity { first.withLock { $0[path] = identity } }
            return file
        }
    }
}

/// Where an assembly writes: a file (staged beside it, renamed when
/// complete), or memory (the fuzz harness; `limit` bytes at most).
enum AssemblyDestination {
    case file(String)
    /// A file the caller names (or lets go): the assembly before `--loudness`.
    case part(StagedOutput)
    case memory(limit: Int)

    var name: String {
        switch self {
        case .file(let path): path
        case .part(let staged): staged.target
        case .memory: "memory"
        }
    }
}

/// One piece of the output: video from one file, audio from another (or
/// the same) file, placed by an alignment.
struct SegmentSpec {
    var videoPath: String
    var audioPath: String?
    var alignment: MergeAlignment
    var offset: Duration = .zero
    /// A label for errors and reports ("segment 2", "AUDIO").
    var name: String
    /// Whether a missing audio stream is an error (merge, fill-silence).
    var requiresAudio = true
    /// The audio's clock rate relative to the video's, minus 1, to be undone
    /// by resampling (the audio is then re-encoded).
    var drift: Double?
    /// Also copy the video file's own audio, as a second audio track.
    var keepOriginalAudio = false
    /// A file with audio and no video is assembled as audio alone
    /// (fill-silence on an .m4a); otherwise a missing video is an error.
    var allowsAudioOnly = false
}

/// A silence insertion or removal, in output seconds and samples.
public struct AudioRepairReport: Sendable, Codable, Equatable {
    public var atSeconds: Double
    /// Silence inserted (> 0) or samples removed (< 0).
    public var samples: Int64
}

/// What merge, concat or fill-silence did to the sync.
public struct AssemblyReport: Sendable, Codable {
    public var inputs: [String]
    public var output: String
    public var container: String
    /// `nil` for audio alone.
    public var videoCodec: String?
    public var audioCodec: String?
    /// `copied` (packets unchanged, silence as whole codec frames) or `re-encoded`.
    public var audioMode: String?
    /// Why the audio had to be re-encoded.
    public var reencodeReason: String?
    /// Audio start − video start applied on the output timeline.
    public var offsetMilliseconds: Double?
    public var offsetSamples: Int64?
    /// The audio's own start against the video's (its timestamps: an edit
    /// list's delay) that `--align start` set aside, in milliseconds.
    public var startSetAsideMilliseconds: Double?
    public var sampleRate: Int32?
    public var silenceInsertedSamples: Int64 = 0
    /// Copied audio: silent frames of its codec written (gaps, padding).
    public var silentFramesAdded = 0
    /// Copied audio: frames re-encoded around joints (a gap or overlap that
    /// is not whole frames, onto the copied frames' grid; a concat joint,
    /// from the spliced sound), and the stretches they make.
    public var audioFramesReencoded = 0
    /// Video frames re-encoded where a trimmed segment starts (its edit
    /// list starts after a keyframe, and the output cannot hide the frames
    /// before the trim), and the segments.
    public var videoFramesReencoded = 0
    public var trimmedStartsReencoded = 0
    /// Segments whose last group was re-encoded up to their shown end, the
    /// frames their edit lists hid there being references (`spliceCodings`).
    public var trimmedEndsReencoded = 0
    public var audioStretchesReencoded = 0
    public var samplesTrimmed: Int64 = 0
    /// The farthest any audio packet was moved from where its timestamp put
    /// it (samples; timestamp jitter within `--tolerance`, or what whole
    /// silent frames leave), and in milliseconds.
    public var largestShiftSamples: Int64 = 0
    public var largestShiftMilliseconds: Double = 0
    public var repairs: [AudioRepairReport] = []
    /// Where each segment starts on the output timeline (concat).
    public var jointsSeconds: [Double] = []
    /// The same joints in output samples (with audio): where each
    /// segment's audio clock starts.
    public var jointsSamples: [Int64] = []
    /// Final A/V start skew and end difference of the output.
    public var skew: AVSkew?
    public var videoPackets = 0
    public var audioPackets = 0
    public var corrections = TimelineCorrections()
    public var outputBytes: Int64 = 0
    public var durationSeconds: Double?
    public var elapsedSeconds = 0.0
    public var warnings: [String] = []
    /// `merge --sync-by-audio`: the estimate the offset came from.
    public var autoSync: AudioSyncReport?
    /// The drift undone by resampling (ppm), if any.
    public var driftCorrectedPPM: Double?
    /// The video file's own audio, copied as a second track.
    public var originalAudioCodec: String?
    /// `--loudness`: the audio's plan, and its figures before and after.
    public var loudness: [LoudnessStreamReport]?
}

/// Progress of an assembly: output seconds written of the expected total.
public struct AssemblyProgress: Sendable {
    public let position: Double
    public let duration: Double?

    /// A progress value (what a test or a client's own reporting makes).
    public init(position: Double, duration: Double?) {
        self.position = position
        self.duration = duration
    }
    public var fraction: Double? {
        guard let d = duration, d > 0 else { return nil }
        return min(max(position / d, 0), 1)
    }
}

enum AudioHandling {
    /// Packets copied; silence from `silence` (whole frames of its quantum);
    /// `reencoded`: packets on another frame grid, re-encoded onto the copied one.
    case copy(silence: SilentAudio, reencoded: ReencodedPackets? = nil)
    case reencode(AudioEncoderSettings, reason: String)
}

/// The shared pipeline of merge, concat and fill-silence: segments end to
/// end, each with its video and audio placed by the core's `AssemblyPlan`,
/// audio laid sample by sample (gaps filled, overlaps trimmed, ends padded
/// or cut). Video is always stream-copied; audio is copied with silent
/// frames of the same codec where that lands every sample within the
/// tolerance, and re-encoded otherwise: decided before anything is written
/// (the report says why).
func assemble(_ specs: [SegmentSpec], output outputPath: String, options: AssemblyOptions,
              verb: String, cancellation: Cancellation,
              progress: ((AssemblyProgress) -> Void)?) throws(MediaError) -> AssemblyReport {
    if options.loudness != nil {
        return try assembleWithLoudness(specs, output: outputPath, options: options, verb: verb,
                                        cancellation: cancellation, progress: progress)
    }
    return try assemble(specs, to: .file(outputPath), options: options, verb: verb, open: .files,
                        cancellation: cancellation, progress: progress)
}

func assemble(_ specs: [SegmentSpec], to destination: AssemblyDestination, options: AssemblyOptions,
              verb: String, open: InputOpener, cancellation: Cancellation,
              progress: ((AssemblyProgress) -> Void)?) throws(MediaError) -> AssemblyReport {
    let began = ContinuousClock.now
    var options = options
    try options.validate()
    let container = try resolveContainer(options.container, output: destination.name)
    // Open, check and decide everything before the output exists (each
    // segment opened in turn; only the first stays open).
    let segments = try Segments(specs, open: open, container: container, keepData: options.data, verb: verb,
                                cancellation: cancellation)
    let first = segments.first
    // Joined audio alone: each segment ends where its audio does.
    if first.video == nil, segments.count > 1 { options.end = nil }
    if first.video == nil, options.end != nil {
        let s = first.main.stream
        throw MediaError.invalidOption("'\(s.file.path)' has audio only: there is no video end to pad to",
                                       options: ["to-video-end"])
    }
    if let o = first.original, container.canHold(o.stream) == false {
        throw MediaError.invalid("could not keep the original audio", path: o.stream.file.path, stream: o.stream.index,
                                 message: "\(container.name) cannot hold audio codec '\(o.stream.codecName)'",
                                 remedy: .originalAudioContainer)
    }
    // The target is checked (and its temporary reserved) before the reads
    // that decide how the audio is written.
    let output = try destination.mux(options: options, specs: specs)
    var handling = try audioHandling(first.audio, drift: first.spec.drift, container: container, options: options,
                                     segments: segments)
    var layout: PlannedLayout?
    if case .copy? = handling, options.fill, let once = segments.readOnce {
        handling = .reencode(try reencodeSettings(first.audio!, container: container, options: options),
                             reason: "'\(once)' can be read only once (a pipe), so whether stream copy keeps the audio in sync cannot be checked first")
    }
    if case .copy(let silence, _)? = handling, options.fill {
        let scan = try scanCopiedAudio(segments, silence: silence, options: options, verb: verb, open: open,
                                       cancellation: cancellation)
        layout = scan.reencodeReason == nil ? scan.layout : nil
        if let reason = scan.reencodeReason {
            handling = .reencode(try reencodeSettings(first.audio!, container: container, options: options),
                                 reason: reason)
        } else {
            handling = .copy(silence: silence, reencoded: scan.reencoded)
        }
    }
    let run = try AssemblyRun(segments, handling: handling, container: container,
                              destination: output,
                              options: options, verb: verb, layout: layout, cancellation: cancellation,
                              progress: progress)
    var report = try run.run()
    report.elapsedSeconds = (ContinuousClock.now - began).seconds
    return report
}

extension SegmentSpec {
    /// The inputs of `specs`, each once, in order.
    static func inputs(of specs: [SegmentSpec]) -> [String] {
        var inputs: [String] = []
        var seen = Set<String>()
        for s in specs {
            for p in [s.videoPath] + (s.audioPath.map { [$0] } ?? []) where seen.insert(p).inserted {
                inputs.append(p)
            }
        }
        return inputs
    }
}

extension AssemblyDestination {
    /// The mux session's destination: the file checked against every input
    /// and its temporary reserved.
    func mux(options: AssemblyOptions, specs: [SegmentSpec]) throws(MediaError) -> MuxDestination {
        switch self {
        case .file(let path):
            return .staged(try StagedOutput(target: path, overwrite: options.overwrite, inputs: SegmentSpec.inputs(of: specs)))
        case .part(let staged):
            return .part(staged)
        case .memory(let limit):
            return .memory(try MemoryOutput(limit: limit), name: name)
        }
    }
}

/// How the audio is written: copied with silent frames of its own codec,
/// or re-encoded when its clock drifts (resampled once) or the container
/// cannot hold it. A stream no silent frame matches (HE-AAC, AMR-NB) is
/// copied where nothing has to be inserted (the copied-audio scan checks,
/// and re-encodes it, saying why, where something has), across joints
/// between files too when their configurations match (`copiedJointRefusal`).
private func audioHandling(_ audio: StreamReader?, drift: Double?, container: Container,
                           options: AssemblyOptions, segments: Segments) throws(MediaError) -> AudioHandling? {
    guard let audio else { return nil }
    if let drift {
        return .reencode(try reencodeSettings(audio, container: container, options: options),
                         reason: "its clock runs \(fixed(drift * 1e6, 3)) ppm \(drift >= 0 ? "fast" : "slow"): resampled once to the video's clock")
    }
    if container.canHold(audio.stream) == false {
        return .reencode(try reencodeSettings(audio, container: container, options: options),
                         reason: "\(container.name) cannot hold \(audio.stream.codecName)")
    }
    if let mixed = mixedFramingRefusal(segments) {
        return .reencode(try reencodeSettings(audio, container: container, options: options), reason: mixed)
    }
    switch try SilentAudio.matching(audio.stream) {
    case .silence(let silence):
        return .copy(silence: silence)
    case .unavailable(let why):
        var reason = why
        if options.fill, try !severalAMRFrames(audio, container: container) {
            guard segments.count > 1, let refusal = try copiedJointRefusal(segments) else {
                return .copy(silence: try .none(for: audio.stream, reason: why))
            }
            reason += "; \(refusal)"
        }
        return .reencode(try reencodeSettings(audio, container: container, options: options), reason: reason)
    }
}

/// Whether the stream's packets hold several AMR frames (QuickTime's 3GPP
/// export writes 5 a packet) bound for an MP4/MOV output, whose muxer in
/// FFmpeg 5.1 takes one frame a packet ("input is not a single packet"):
/// such audio is re-encoded, as before, rather than copied.
private func severalAMRFrames(_ audio: StreamReader, container: Container) throws(MediaError) -> Bool {
    guard let amr = audio.stream.amrFrames, container.isISOBMFF, try audio.peek() else { return false }
    return audio.stream.samples(in: audio.packet) > amr.samplesPerFrame
}

/// The encoder for re-encoded audio: the input's own codec when libavcodec
/// encodes it and the container holds it (PCM stays PCM of its format, AC-3
/// stays AC-3, HE-AAC becomes AAC-LC), else AAC; at the input's rate,
/// channels and sample format.
func reencodeSettings(_ audio: StreamReader, container: Container, options: AssemblyOptions) throws(MediaError) -> AudioEncoderSettings {
    let s = audio.stream
    let own = s.encoderName.flatMap { name in
        AudioEncoderCapabilities(codec: name).flatMap { caps in
            container.canHold(encoder: name) == true && caps.sampleRate(for: s.sampleRate) == s.sampleRate
                && (caps.channelCounts.isEmpty || caps.channelCounts.contains(s.channelCount)) ? name : nil
        }
    }
    let name = own ?? "aac"
    // The input's own bit rate, kept within what AAC can use, unless asked;
    // from another codec at least 32 kb/s a channel: AAC at a speech
    // codec's rate (AMR's 8 kb/s) loses much of the sound.
    let rate = AudioEncoderCapabilities(codec: name)?.sampleRate(for: s.sampleRate) ?? s.sampleRate
    let floor = (own == nil && s.codecName != "aac" ? 32_000 : AACBitRate.minimumPerChannel) * Int64(s.channelCount)
    let requested = options.audioBitRate ?? s.bitRate.map {
        min(max($0, floor), AACBitRate.maximum(sampleRate: rate, channels: s.channelCount))
    }
    var settings = try audioEncoderSettings(for: s, encoder: name, bitRate: requested,
                                            globalHeader: container.isISOBMFF || container.muxer == "matroska",
                                            operation: "could not re-encode audio")
    if name != "aac" {
        settings.channelLayout = s.channelLayout
        settings.sampleFormat = s.sampleFormat
    }
    return settings
}

