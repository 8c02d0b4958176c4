import Media
import Remux
import Sync
import Transcode

/// Options shared by merge, concat and fill-silence.
public struct AssemblyOptions: Sendable {
    public var container: Container?
    /// Where the output ends; `nil` leaves both tracks' ends as they are.
    public var end: EndPolicy? = .video
    /// Fill gaps inside the audio with silence (and trim overlaps).
    public var fill = true
    /// Timestamp differences up to this are rounding, not gaps; `nil` is
    /// the larger of one time-base tick and 1 ms.
    public var tolerance: Duration?
    /// AAC bit rate when the audio has to be re-encoded; `nil` keeps the
    /// input's (or 64 kb/s per channel).
    public var audioBitRate: Int64?
    public var faststart = true
    public var overwrite = false
    /// The longest silence made in one place; a longer gap or pad is refused
    /// as a broken timestamp. (The fuzz harness lowers it to keep each run short.)
    public var longestFillSeconds = AudioAssembler.longestFillSeconds

    public init() {}

    public func validate() throws(MediaError) {
        if let t = tolerance, t < .zero || t > .seconds(10) {
            throw MediaError.invalid("invalid option", message: "'--tolerance' must be between 0 and 10 seconds")
        }
        if let b = audioBitRate, b < AACBitRate.minimumPerChannel {
            throw MediaError.invalid("invalid option", message: "'--audio-bitrate' must be at least \(AACBitRate.minimumPerChannel / 1000)k per channel")
        }
    }
}

/// Opens an input by the name a `SegmentSpec` gives it: a path, or (for
/// the in-memory entry points) a name for bytes in memory.
typealias InputOpener = (String, Cancellation) throws(MediaError) -> InputFile

func openPath(_ path: String, _ cancellation: Cancellation) throws(MediaError) -> InputFile {
    try InputFile(path: path, cancellation: cancellation)
}

/// Where an assembly writes: a file (staged beside it, renamed when
/// complete), or memory (the fuzz harness; `limit` bytes at most).
enum AssemblyDestination {
    case file(String)
    case memory(limit: Int)

    var name: String {
        switch self {
        case .file(let path): path
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
    public var videoCodec = ""
    public var audioCodec: String?
    /// `copied` (packets unchanged, silence as whole codec frames) or `re-encoded`.
    public var audioMode: String?
    /// Why the audio had to be re-encoded.
    public var reencodeReason: String?
    /// Audio start − video start applied on the output timeline.
    public var offsetMilliseconds: Double?
    public var offsetSamples: Int64?
    public var sampleRate: Int32?
    public var silenceInsertedSamples: Int64 = 0
    public var samplesTrimmed: Int64 = 0
    public var repairs: [AudioRepairReport] = []
    /// Where each segment starts on the output timeline (concat).
    public var jointsSeconds: [Double] = []
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
}

/// Progress of an assembly: output seconds written of the expected total.
public struct AssemblyProgress: Sendable {
    public let position: Double
    public let duration: Double?
    public var fraction: Double? {
        guard let d = duration, d > 0 else { return nil }
        return min(max(position / d, 0), 1)
    }
}

/// One stream of one file, read on its own (the file's other streams are
/// discarded), one packet ahead so the caller can pick the earlier of two.
final class StreamReader {
    let file: InputFile
    let stream: InputStream
    let packet: Packet
    private(set) var loaded = false
    private(set) var ended = false

    /// Reads stream `index` of an opened file (which this reader then owns).
    init(file: InputFile, stream index: Int) throws(MediaError) {
        self.file = file
        stream = file.streams[index]
        file.discardAll(except: [index])
        packet = try Packet()
    }

    /// Loads the next packet of the stream if none is loaded; false at the end.
    func peek() throws(MediaError) -> Bool {
        if loaded { return true }
        if ended { return false }
        while try file.read(into: packet) {
            guard packet.streamIndex == stream.index else { continue }
            if packet.isCorrupt { throw file.corruptPacketError(stream: stream.index) }
            loaded = true
            return true
        }
        ended = true
        return false
    }

    /// Marks the loaded packet as used.
    func consume() { loaded = false }
}

/// Finds the stream a verb needs, or says clearly that the file has none.
func mainStream(_ file: InputFile, _ type: MediaType, role: String) throws(MediaError) -> InputStream {
    guard let s = file.streams.first(where: { $0.mediaType == type && !$0.isAttachedPicture }) else {
        throw MediaError.invalid("could not use \(role)", path: file.path,
                                 message: "it has no \(type.rawValue) stream")
    }
    guard s.timeBase != nil else {
        throw MediaError.invalid("could not use \(role)", path: file.path, stream: s.index,
                                 message: "the stream has no valid time base")
    }
    return s
}

enum AudioHandling {
    /// Packets copied; silence from `silence` (whole frames of `frameSize`).
    case copy(silence: SilentAudio)
    case reencode(AudioEncoderSettings, reason: String)
}

/// The outcome of one attempt: done, or stream copy could not keep the
/// audio in sync and it must be re-encoded.
enum AssemblyAttempt {
    case done(AssemblyReport)
    case needsReencode(String)
}

/// The shared pipeline of merge, concat and fill-silence: segments end to
/// end (the core's `SplicePlan`), each with its video and audio placed by
/// the core's `SyncPlan`, audio laid sample by sample by the core's
/// `AudioAssembler` (gaps filled, overlaps trimmed, ends padded or cut).
/// Video is always stream-copied; audio is copied with silent frames of the
/// same codec where that lands every sample within the tolerance, and
/// re-encoded once otherwise (the report says why).
func assemble(_ specs: [SegmentSpec], output outputPath: String, options: AssemblyOptions,
              verb: String, cancellation: Cancellation,
              progress: ((AssemblyProgress) -> Void)?) throws(MediaError) -> AssemblyReport {
    try assemble(specs, to: .file(outputPath), options: options, verb: verb, open: openPath,
                 cancellation: cancellation, progress: progress)
}

func assemble(_ specs: [SegmentSpec], to destination: AssemblyDestination, options: AssemblyOptions,
              verb: String, open: InputOpener, cancellation: Cancellation,
              progress: ((AssemblyProgress) -> Void)?) throws(MediaError) -> AssemblyReport {
    let clock = ContinuousClock()
    let began = clock.now
    try options.validate()
    let outputPath = destination.name
    let container = try resolveContainer(options.container, output: outputPath)

    // Open and check everything before the output exists.
    var segments: [Segment] = []
    for spec in specs {
        segments.append(try Segment(spec, open: open, cancellation: cancellation))
    }
    try checkCompatible(segments, container: container)
    // (No binding of segments[0] here: it would keep the first attempt's
    // readers, and their open files, alive during a second attempt.)
    if let o = segments[0].original, container.canHold(o.stream) == false {
        throw MediaError.invalid("could not keep the original audio", path: o.stream.file.path, stream: o.stream.index,
                                 message: "\(container.name) cannot hold audio codec '\(o.stream.codecName)'",
                                 hint: "choose a container that holds it (mov, mkv) or leave out --keep-original-audio")
    }
    var handling = try audioHandling(segments[0].audio, drift: segments[0].spec.drift, container: container, options: options)
    for attempt in 0..<2 {
        // Fresh readers for a second attempt.
        if attempt > 0 {
            segments = []
            for spec in specs { segments.append(try Segment(spec, open: open, cancellation: cancellation)) }
        }
        let result = try run(segments, handling: handling, container: container, destination: destination,
                             options: options, verb: verb, cancellation: cancellation, progress: progress)
        switch result {
        case .done(var report):
            report.elapsedSeconds = (clock.now - began).seconds
            return report
        case .needsReencode(let reason):
            let audio = segments[0].audio!
            handling = .reencode(try reencodeSettings(audio, container: container, options: options), reason: reason)
        }
    }
    throw MediaError.invalid("could not \(verb)", path: outputPath, message: "audio could not be placed")
}

/// How the audio is written: copied with silent frames of its own codec,
/// or re-encoded when its clock drifts (resampled once), the container
/// cannot hold it or no silent frame matches it. (A function of its own, so nothing here keeps the first
/// attempt's readers — and their open files — alive during a second one.)
private func audioHandling(_ audio: StreamReader?, drift: Double?, container: Container,
                           options: AssemblyOptions) throws(MediaError) -> AudioHandling? {
    guard let audio else { return nil }
    if let drift {
        return .reencode(try reencodeSettings(audio, container: container, options: options),
                         reason: "its clock runs \(String(format3: drift * 1e6)) ppm \(drift >= 0 ? "fast" : "slow"): resampled once to the video's clock")
    }
    if container.canHold(audio.stream) == false {
        return .reencode(try reencodeSettings(audio, container: container, options: options),
                         reason: "\(container.name) cannot hold \(audio.stream.codecName)")
    }
    if let silence = try SilentAudio(matching: audio, container: container) {
        return .copy(silence: silence)
    }
    return .reencode(try reencodeSettings(audio, container: container, options: options),
                     reason: "silence cannot be made as \(audio.stream.codecName) frames that match the input")
}

/// Opened readers for one segment.
struct Segment {
    let spec: SegmentSpec
    let video: StreamReader
    let audio: StreamReader?
    /// The video file's own audio, copied beside (`keepOriginalAudio`).
    let original: StreamReader?

    init(_ spec: SegmentSpec, open: InputOpener, cancellation: Cancellation) throws(MediaError) {
        self.spec = spec
        let vf = try open(spec.videoPath, cancellation)
        let vs = try mainStream(vf, .video, role: spec.name)
        if spec.keepOriginalAudio {
            let s = try mainStream(vf, .audio, role: spec.name)
            original = try StreamReader(file: try InputFile(path: vf.path, cancellation: cancellation), stream: s.index)
        } else {
            original = nil
        }
        var audioStream: InputStream?
        if let ap = spec.audioPath {
            let af = ap == spec.videoPath ? vf : try open(ap, cancellation)
            if spec.requiresAudio || af.streams.contains(where: { $0.mediaType == .audio }) {
                let role = spec.name == "VIDEO" ? "AUDIO" : spec.name
                let s = try mainStream(af, .audio, role: role)
                guard s.sampleRate > 0 else {
                    throw MediaError.invalid("could not use \(role)", path: ap, stream: s.index,
                                             message: "the audio stream has no sample rate")
                }
                audioStream = s
            }
        }
        // Each reader has its own opening of the file, so the two streams
        // are read independently, each in its own time order.
        video = try StreamReader(file: vf, stream: vs.index)
        if let s = audioStream {
            let file = s.file === vf ? try open(spec.videoPath, cancellation) : s.file
            audio = try StreamReader(file: file, stream: s.index)
        } else {
            audio = nil
        }
    }
}

/// Segments must match where stream copy puts them into one track.
func checkCompatible(_ segments: [Segment], container: Container) throws(MediaError) {
    let first = segments[0]
    // Audio the container cannot hold is re-encoded; video is always copied.
    let s = first.video.stream
    if container.canHold(s) == false {
        throw MediaError.invalid("could not write", path: s.file.path, stream: s.index,
                                 message: "\(container.name) cannot hold video codec '\(s.codecName)'",
                                 hint: "choose a container that holds it (mov, mkv) or convert it with 'avtool transcode'")
    }
    for seg in segments.dropFirst() {
        func mismatch(_ s: InputStream, _ what: String, _ a: String, _ b: String) -> MediaError {
            MediaError.invalid("could not concatenate", path: s.file.path, stream: s.index,
                               message: "\(what) differs from the first segment's (\(b), not \(a))",
                               hint: "segments must share codec parameters to be joined without re-encoding")
        }
        let a = first.video.stream, b = seg.video.stream
        if a.codecName != b.codecName { throw mismatch(b, "video codec", a.codecName, b.codecName) }
        if a.width != b.width || a.height != b.height {
            throw mismatch(b, "video size", "\(a.width)x\(a.height)", "\(b.width)x\(b.height)")
        }
        if a.pixelFormat != b.pixelFormat { throw mismatch(b, "pixel format", a.pixelFormat ?? "?", b.pixelFormat ?? "?") }
        if a.extradata != b.extradata {
            throw mismatch(b, "video codec configuration (SPS/PPS)", "\(a.extradata.count) bytes", "\(b.extradata.count) bytes")
        }
        switch (first.audio?.stream, seg.audio?.stream) {
        case (nil, nil): break
        case (let x?, nil):
            throw MediaError.invalid("could not concatenate", path: seg.video.stream.file.path,
                                     message: "it has no audio but the first segment has \(x.codecName) audio")
        case (nil, let y?):
            throw MediaError.invalid("could not concatenate", path: y.file.path, stream: y.index,
                                     message: "it has audio but the first segment has none")
        case (let x?, let y?):
            if x.codecName != y.codecName { throw mismatch(y, "audio codec", x.codecName, y.codecName) }
            if x.sampleRate != y.sampleRate { throw mismatch(y, "sample rate", "\(x.sampleRate)", "\(y.sampleRate)") }
            if x.channelCount != y.channelCount {
                throw mismatch(y, "channel count", "\(x.channelCount)", "\(y.channelCount)")
            }
        }
    }
}

/// The encoder for re-encoded audio: 16-bit PCM when the input is PCM and the
/// container holds it, else AAC; at the input's rate and channels.
func reencodeSettings(_ audio: StreamReader, container: Container, options: AssemblyOptions) throws(MediaError) -> AudioEncoderSettings {
    let s = audio.stream
    let name = s.codecName.hasPrefix("pcm_") && container.canHold(encoder: "pcm_s16le") == true ? "pcm_s16le" : "aac"
    // The input's own bit rate, kept within what AAC can use, unless asked.
    let rate = AudioEncoderCapabilities(codec: name)?.sampleRate(for: s.sampleRate) ?? s.sampleRate
    let requested = options.audioBitRate ?? s.bitRate.map {
        min(max($0, AACBitRate.minimumPerChannel * Int64(s.channelCount)),
            AACBitRate.maximum(sampleRate: rate, channels: s.channelCount))
    }
    return try audioEncoderSettings(for: s, encoder: name, bitRate: requested,
                                    globalHeader: container.isISOBMFF || container.muxer == "matroska",
                                    operation: "could not re-encode audio")
}

private func run(_ segments: [Segment], handling: AudioHandling?, container: Container,
                 destination: AssemblyDestination, options: AssemblyOptions, verb: String,
                 cancellation: Cancellation, progress: ((AssemblyProgress) -> Void)?) throws(MediaError) -> AssemblyAttempt {
    let outputPath = destination.name
    let first = segments[0]
    let videoStream = first.video.stream
    let videoTB = videoStream.timeBase!
    let audioStream = first.audio?.stream

    var reencoder: AudioReencoder?
    var silence: SilentAudio?
    switch handling {
    case .copy(let s)?: silence = s
    case .reencode(let settings, _)?:
        let tolerance = options.tolerance.map { Int64(($0.seconds * Double(settings.sampleRate)).rounded()) }
        reencoder = try AudioReencoder(settings: settings, source: audioStream!, toleranceSamples: tolerance)
        reencoder?.longestFillSeconds = options.longestFillSeconds
    case nil: break
    }
    let sampleRate = reencoder?.encoder.sampleRate ?? audioStream?.sampleRate ?? 0
    let sampleTB = Rational.perSecond(max(sampleRate, 1))!

    var sources: [OutputStreamSource] = [.copy(videoStream)]
    if let audioStream { sources.append(reencoder.map { .encoded($0.encoder) } ?? .copy(audioStream)) }
    // The original audio follows as a track that is not the default.
    let originalIndex = sources.count
    if let o = first.original { sources.append(.copy(o.stream, isDefault: false)) }
    var staged: StagedOutput?
    var memory: MemoryOutput?
    let out: OutputFile
    switch destination {
    case .file:
        let s = try StagedOutput(target: outputPath, overwrite: options.overwrite,
                                 inputs: Array(Set(segments.flatMap { [$0.spec.videoPath] + ($0.spec.audioPath.map { [$0] } ?? []) })))
        staged = s
        out = try OutputFile(path: s.temporary, reportingAs: outputPath, container: container, streams: sources,
                             metadataSource: first.video.file,
                             options: muxerOptions(container, faststart: options.faststart,
                                                   audioSampleRate: audioStream == nil ? nil : sampleRate),
                             cancellation: cancellation)
    case .memory(let limit):
        let m = try MemoryOutput(limit: limit)
        memory = m
        out = try OutputFile(memory: m, name: outputPath, container: container, streams: sources,
                             metadataSource: first.video.file,
                             options: muxerOptions(container, faststart: false,
                                                   audioSampleRate: audioStream == nil ? nil : sampleRate),
                             cancellation: cancellation)
    }
    // One video timeline per segment (its own time base, shift, wraps and
    // leading-DTS inference), each resuming the order of the one before.
    var videoTimeline: TrackTimeline
    var audioTimeline: TrackTimeline?
    do {
        videoTimeline = try TrackTimeline(source: videoTB, target: out.timeBases[0], order: container.dtsOrder, repair: .fix)
        if audioStream != nil {
            audioTimeline = try TrackTimeline(source: sampleTB, target: out.timeBases[1], order: container.dtsOrder, repair: .fix)
        }
    } catch {
        throw timestampError(error, input: videoStream.file.path, stream: videoStream.index)
    }

    let toleranceSamples: Int64 = {
        if let t = options.tolerance {
            return Int64((t.seconds * Double(sampleRate)).rounded())
        }
        return AudioGapScanner.defaultTolerance(timeBase: audioStream?.timeBase ?? sampleTB, sampleRate: max(sampleRate, 1))
    }()
    var assembler = AudioAssembler(sampleRate: max(sampleRate, 1), frameSize: silence?.quantum,
                                   toleranceSamples: options.fill ? toleranceSamples : Int64.max / 4)
    var splice = SplicePlan(timeBase: videoTB)
    var report = AssemblyReport(inputs: segments.flatMap { [$0.spec.videoPath] + ($0.spec.audioPath.map { [$0] } ?? []) }
                                .reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } },
                            output: outputPath, container: container.name)
    report.videoCodec = videoStream.codecName
    report.audioCodec = reencoder?.encoder.codecName ?? audioStream?.codecName
    if case .reencode(_, let reason)? = handling {
        report.audioMode = "re-encoded"
        report.reencodeReason = reason
    } else if audioStream != nil {
        report.audioMode = "copied"
    }
    report.sampleRate = audioStream == nil ? nil : sampleRate
    report.originalAudioCodec = first.original?.stream.codecName
    if reencoder != nil, let d = first.spec.drift { report.driftCorrectedPPM = d * 1e6 }

    let totalDuration = segments.compactMap { $0.video.stream.duration?.seconds }.reduce(0, +)
    let silentPacket = try Packet()
    var videoStartOut: Int64?, videoEndOut: Int64 = 0
    var audibleStart: Int64?
    var packetsWritten = 0

    func writeVideo(_ p: borrowing Packet) throws(MediaError) {
        do { p.timing = try videoTimeline.map(p.timing) } catch {
            throw timestampError(error, input: videoStream.file.path, stream: videoStream.index)
        }
        if let d = p.timing.dts, let c = rescale(d, from: out.timeBases[0], to: videoTB) { splice.wrote(dts: c) }
        p.streamIndex = 0
        try out.write(p)
        report.videoPackets += 1
    }
    var originalTimeline: TrackTimeline?
    func writeOriginal(_ p: borrowing Packet) throws(MediaError) {
        let s = first.original!.stream
        do { p.timing = try originalTimeline!.map(p.timing) } catch {
            throw timestampError(error, input: s.file.path, stream: s.index)
        }
        p.streamIndex = originalIndex
        try out.write(p)
    }
    func writeAudio(_ p: borrowing Packet) throws(MediaError) {
        do { p.timing = try audioTimeline!.map(p.timing) } catch {
            throw timestampError(error, input: audioStream!.file.path, stream: audioStream!.index)
        }
        p.streamIndex = 1
        try out.write(p)
        report.audioPackets += 1
    }
    /// Silent packets (copy mode) covering `count` samples from `position`.
    func writeSilence(_ count: Int64, at position: Int64) throws(MediaError) {
        guard let silence, count > 0 else { return }
        if AudioAssembler.exceedsFillLimit(count, sampleRate: sampleRate, seconds: options.longestFillSeconds) {
            throw fillLimitError(samples: count, at: position, sampleRate: sampleRate, limitSeconds: options.longestFillSeconds,
                                 path: audioStream?.file.path, stream: audioStream?.index)
        }
        var left = count, pos = position
        while left > 0 {
            let n = min(left, silence.packetSamples)
            try silence.packet(samples: n, into: silentPacket)
            silentPacket.timing = PacketTiming(pts: pos, dts: pos, duration: n)
            try writeAudio(silentPacket)
            left -= n
            pos &+= n
        }
    }

    for (k, seg) in segments.enumerated() {
        try cancellation.check()
        let vs = seg.video.stream
        // The segment's first frame and first DTS, from its first packet.
        guard try seg.video.peek() else {
            throw MediaError.invalid("could not \(verb)", path: vs.file.path, stream: vs.index,
                                     message: "the video stream has no packets")
        }
        let segTB = vs.timeBase!
        func toCommon(_ v: Int64?) -> Int64? { v.flatMap { rescale($0, from: segTB, to: videoTB) } }
        let videoStart = toCommon(vs.startTime?.rescaled(to: segTB)?.value ?? seg.video.packet.timing.pts) ?? 0
        // A stream without stored DTS (Matroska) decodes its first frames
        // one frame apart before its first PTS.
        let firstTiming = seg.video.packet.timing
        let firstDTS = toCommon(firstTiming.dts) ?? toCommon(firstTiming.pts).map {
            $0 &- Int64(vs.reorderDelay) &* max(toCommon(firstTiming.duration) ?? 0, 1)
        }
        let videoShift = splice.begin(videoStart: videoStart, firstDTS: firstDTS)
        do {
            var next = try TrackTimeline(source: segTB, target: out.timeBases[0], shift: Timestamp(videoShift, videoTB),
                                         order: container.dtsOrder, repair: .fix, wrapBits: vs.wrapBits,
                                         reorderDelay: vs.reorderDelay)
            next.resume(after: videoTimeline)
            videoTimeline = next
        } catch {
            throw timestampError(error, input: vs.file.path, stream: vs.index)
        }
        let joint = videoStart &+ videoShift
        videoStartOut = videoStartOut ?? joint
        report.jointsSeconds.append(Timestamp(joint, videoTB).seconds)

        // Audio placement for this segment, in output samples.
        var audioBase: Int64 = 0
        if let ar = seg.audio {
            let st = ar.stream
            let hasFirst = try ar.peek()
            let firstPTS = hasFirst ? ar.packet.timing.pts.flatMap { rescale($0, from: st.timeBase!, to: sampleTB) } : nil
            let audioStartLocal = st.startTime?.rescaled(to: sampleTB)?.value ?? firstPTS ?? 0
            let videoStartLocal = vs.startTime?.rescaled(to: sampleTB)?.value ?? rescale(videoStart, from: videoTB, to: sampleTB) ?? 0
            guard let plan = SyncPlan(videoStart: Timestamp(videoStartLocal, sampleTB),
                                      audioStart: Timestamp(audioStartLocal, sampleTB),
                                      alignment: seg.spec.alignment,
                                      offset: Timestamp(Int64((seg.spec.offset.seconds * 1e6).rounded()), .microseconds)),
                  let jointSamples = rescale(joint, from: videoTB, to: sampleTB) else {
                throw MediaError.invalid("could not \(verb)", path: st.file.path, stream: st.index, message: "timestamps overflow")
            }
            audioBase = plan.audioShift.value &+ jointSamples
            if k == 0 {
                report.offsetSamples = plan.offset.value
                report.offsetMilliseconds = Double(plan.offset.value) * 1000 / Double(sampleRate)
            }
            // An offset that leaves the audio entirely outside the video is a mistake.
            if let d = st.duration?.rescaled(to: sampleTB)?.value, let vd = vs.duration?.rescaled(to: sampleTB)?.value {
                let start = audioStartLocal &+ audioBase
                if start &+ d <= jointSamples || start >= jointSamples &+ vd {
                    throw MediaError.invalid("could not \(verb)", path: st.file.path, stream: st.index,
                                             message: "the offset puts the audio entirely outside the video",
                                             hint: "check --offset and --align")
                }
            }
            reencoder?.limit = nil
            try reencoder?.begin(st, shift: audioBase, drift: seg.spec.drift, anchor: audioStartLocal)
        }

        if let o = seg.original {
            // The camera's audio keeps its place against the camera's video.
            let otb = o.stream.timeBase!
            do {
                originalTimeline = try TrackTimeline(source: otb, target: out.timeBases[originalIndex],
                                                     shift: Timestamp(rescale(videoShift, from: videoTB, to: otb) ?? 0, otb),
                                                     order: container.dtsOrder, repair: .fix, wrapBits: o.stream.wrapBits)
            } catch {
                throw timestampError(error, input: o.stream.file.path, stream: o.stream.index)
            }
        }
        func originalTime() -> Timestamp? {
            guard let o = seg.original else { return nil }
            let t = o.packet.timing
            return (t.dts ?? t.pts).map { Timestamp($0, o.stream.timeBase!) }
                .flatMap { $0.rescaled(to: videoTB) }.map { Timestamp($0.value &+ videoShift, videoTB) }
        }

        var videoEnded = false, audioEnded = seg.audio == nil
        var audioLimit: Int64?
        var videoCut: Int64?
        var segmentVideoEnd: Int64 = joint
        var lastProgress = -1.0

        func videoTime() -> Timestamp? {
            let t = seg.video.packet.timing
            return toCommon(t.dts ?? t.pts).map { Timestamp($0 &+ videoShift, videoTB) }
        }
        func audioTime() -> Timestamp? {
            guard let ar = seg.audio else { return nil }
            return ar.packet.timing.pts.flatMap { rescale($0, from: ar.stream.timeBase!, to: sampleTB) }
                .map { Timestamp($0 &+ audioBase, sampleTB) }
        }

        while true {
            try cancellation.check()
            let hasVideo = try seg.video.peek()
            let hasAudio = try seg.audio?.peek() ?? false
            if !hasVideo && !videoEnded {
                videoEnded = true
                // The video's end is known: from here the audio may be cut there.
                let cutsAudio = segments.count > 1 || options.end == .video || options.end == .shortest
                if cutsAudio, seg.audio != nil, let endSamples = rescale(segmentVideoEnd, from: videoTB, to: sampleTB) {
                    audioLimit = endSamples
                    reencoder?.limit = endSamples
                }
            }
            if !hasAudio && !audioEnded {
                audioEnded = true
                if options.end == .shortest, hasVideo, segments.count == 1 {
                    let audioEnd = reencoder?.cursor ?? assembler.cursor ?? 0
                    videoCut = rescale(audioEnd, from: sampleTB, to: videoTB)
                }
            }
            let hasOriginal = try seg.original?.peek() ?? false
            if hasOriginal, let ot = originalTime(),
               !hasVideo || videoTime().map({ ot <= $0 }) ?? true, !hasAudio || audioTime().map({ ot <= $0 }) ?? true {
                try writeOriginal(seg.original!.packet)
                seg.original!.consume()
                continue
            }
            if !hasVideo && !hasAudio { break }
            let takeVideo: Bool
            if hasVideo && hasAudio, let vt = videoTime(), let at = audioTime() {
                takeVideo = vt <= at
            } else {
                takeVideo = hasVideo
            }
            if takeVideo {
                // Output positions on the common video time base, for ends and cuts.
                var t = seg.video.packet.timing
                t.pts = toCommon(t.pts).map { $0 &+ videoShift }
                t.dts = toCommon(t.dts).map { $0 &+ videoShift }
                t.duration = rescale(t.duration, from: segTB, to: videoTB) ?? t.duration
                if let cut = videoCut, let d = t.dts ?? t.pts, d >= cut {
                    seg.video.consume()
                    continue
                }
                if let pts = t.pts { segmentVideoEnd = max(segmentVideoEnd, pts &+ max(t.duration, 0)) }
                try writeVideo(seg.video.packet)
                seg.video.consume()
                packetsWritten += 1
                if let progress, let pts = t.pts {
                    let pos = Timestamp(pts, videoTB).seconds - Timestamp(videoStartOut ?? 0, videoTB).seconds
                    if pos - lastProgress >= 0.25 {
                        lastProgress = pos
                        progress(AssemblyProgress(position: pos, duration: totalDuration > 0 ? totalDuration : nil))
                    }
                }
            } else if let ar = seg.audio {
                if let r = reencoder {
                    try r.send(ar.packet) { q throws(MediaError) in try writeAudio(q) }
                    ar.consume()
                    continue
                }
                // Later segments' priming is not replayed at the joint.
                if k > 0 && ar.packet.isDiscard {
                    ar.consume()
                    continue
                }
                let counted = ar.stream.samples(in: ar.packet)
                let samples = counted > 0 ? counted
                    : rescale(ar.packet.timing.duration, from: ar.stream.timeBase!, to: sampleTB) ?? 0
                let at = audioTime()?.value
                let step = assembler.place(at: at, samples: samples, limit: audioLimit)
                if step.residual != 0 {
                    let where_ = Double(step.position) / Double(sampleRate)
                    return .needsReencode("a gap or overlap at \(String(format3: where_)) s is not a whole number of \(ar.stream.codecName) frames (\(step.residual) samples off)")
                }
                if step.silence > 0 { try writeSilence(step.silence, at: step.position - step.silence) }
                if step.keep > 0 {
                    // --no-fill: the packet keeps its own time (gaps stay gaps).
                    let position = options.fill ? step.position : (at ?? step.position)
                    if audibleStart == nil && !ar.packet.isDiscard { audibleStart = position }
                    ar.packet.timing = PacketTiming(pts: position, dts: position, duration: samples)
                    try writeAudio(ar.packet)
                }
                ar.consume()
            }
        }
        // The segment's end: audio padded to the video's end where the policy says.
        if seg.audio != nil {
            if let r = reencoder {
                try r.endInput { q throws(MediaError) in try writeAudio(q) }
            }
            let endSamples = rescale(segmentVideoEnd, from: videoTB, to: sampleTB) ?? 0
            let pad = segments.count > 1 || options.end == .video || options.end == .longest
            if pad {
                if let r = reencoder {
                    if r.cursor == nil { r.start(at: rescale(joint, from: videoTB, to: sampleTB) ?? 0) }
                    try r.pad(to: endSamples) { q throws(MediaError) in try writeAudio(q) }
                } else {
                    if assembler.cursor == nil { assembler.start(at: rescale(joint, from: videoTB, to: sampleTB) ?? 0) }
                    let c = assembler.cursor!
                    let n = assembler.pad(to: endSamples)
                    try writeSilence(n, at: c)
                }
            }
        }
        splice.end(videoEnd: segmentVideoEnd &- videoShift)
        videoEndOut = max(videoEndOut, segmentVideoEnd)
    }
    if let r = reencoder {
        try r.finish { q throws(MediaError) in try writeAudio(q) }
    }
    try cancellation.check()
    try out.finish()
    try staged?.commit()

    // Sync as written.
    if audioStream != nil {
        let a = reencoder.map { ($0.origin, $0.cursor, $0.silenceInserted, $0.samplesTrimmed, $0.repairs) }
            ?? (audibleStart ?? assembler.origin, assembler.cursor, assembler.silenceInserted, assembler.samplesTrimmed, assembler.repairs)
        report.silenceInsertedSamples = a.2
        report.samplesTrimmed = a.3
        report.repairs = a.4.map { AudioRepairReport(atSeconds: Double($0.position) / Double(sampleRate), samples: $0.samples) }
        if let s = a.0, let e = a.1, let vs = videoStartOut {
            report.skew = AVSkew(video: TrackExtent(start: Timestamp(vs, videoTB), end: Timestamp(videoEndOut, videoTB)),
                                 audio: TrackExtent(start: Timestamp(s, sampleTB), end: Timestamp(e, sampleTB)),
                                 sampleRate: sampleRate)
        }
    }
    report.corrections = videoTimeline.corrections + (audioTimeline?.corrections ?? TimelineCorrections())
    report.outputBytes = memory.map { Int64($0.bytes.count) } ?? fileSize(outputPath) ?? 0
    if let vs = videoStartOut { report.durationSeconds = Timestamp(videoEndOut &- vs, videoTB).seconds }
    return .done(report)
}

extension String {
    init(format3 v: Double) {
        let scaled = (v * 1000).rounded() / 1000
        self = "\(scaled)"
    }
}
