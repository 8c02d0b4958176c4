import Media
import Remux
import Sync

/// Progress of a running transcode.
public struct TranscodeProgress: Sendable {
    public let frames: Int
    /// Seconds of media encoded so far.
    public let position: Double
    public let duration: Double?

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
    /// The constant output rate asked for with `--fps`, as `num/den`.
    public var frameRate: String?
    public var framesDropped = 0
    public var framesDuplicated = 0
    /// Whether HDR10 metadata was passed to the encoder.
    public var hdr = false
    public var dropped: [DroppedStream] = []
    public var warnings: [String] = []
    public var inputBytes: Int64 = 0
    public var outputBytes: Int64 = 0
    public var durationSeconds: Double?
    public var elapsedSeconds = 0.0
    public var corrections = TimelineCorrections()

    /// Output size over input size.
    public var sizeRatio: Double { inputBytes > 0 ? Double(outputBytes) / Double(inputBytes) : 0 }
}

/// Decodes the main video stream, converts it only when the encoder needs it
/// (pixel format, size), encodes it with libx265, and muxes it with the other
/// streams. Audio is copied when the container holds it and encoded (AAC, or
/// PCM on request) when not. Timestamps pass through (VFR stays VFR) unless
/// `--fps` asks for a constant rate: the encoder runs in the input stream's
/// time base and the core's `TrackTimeline` maps every packet to the output.
public func transcode(input inputPath: String, output outputPath: String, options: TranscodeOptions,
                      cancellation: Cancellation = .shared,
                      progress: ((TranscodeProgress) -> Void)? = nil) throws(MediaError) -> TranscodeReport {
    let clock = ContinuousClock()
    let began = clock.now
    try options.validate()
    let container = try resolveContainer(options.container, output: outputPath)
    let input = try InputFile(path: inputPath, cancellation: cancellation)
    guard let video = input.streams.first(where: { $0.mediaType == .video && !$0.isAttachedPicture }) else {
        throw MediaError.invalid("could not transcode", path: inputPath,
                                 message: "no video stream to encode",
                                 hint: input.streams.contains { $0.mediaType == .audio }
                                    ? "audio-only files are not transcoded; use 'avtool remux' to change their container"
                                    : nil)
    }
    var selection = options.streams
    selection.video = true
    // Every decision that can fail is made before the output exists.
    let audioPlans = try planAudio(input, container: container, selection: selection, options: options)
    // Other video streams (a second angle) are copied; only the main one is encoded.
    let plan = try planStreams(input, container: container, selection: selection) {
        $0.index == video.index || audioPlans[$0.index] != nil
    }

    let decoder = try Decoder(stream: video)
    let target = outputSize(input: (video.width, video.height), requested: options.size)
    var warnings = plan.warnings
    // HDR stays HDR: 10-bit, and the mastering display / light levels go to x265.
    let hdr = video.hasHDRTransfer ? (video.containerHDRMetadata ?? firstFrameHDRMetadata(video)) : nil
    let tenBit = options.tenBit || video.hasHDRTransfer
    if tenBit && !options.tenBit { warnings.append("stream #\(video.index): HDR input, encoded as Main10") }
    let pixelFormat = tenBit ? "yuv420p10le" : "yuv420p"
    let inputRate = video.averageFrameRate ?? video.realFrameRate
    let fps = options.frameRate ?? inputRate
    let fpsValue = fps.map { Double($0.numerator) / Double($0.denominator) } ?? 30
    var rateConverter = options.frameRate.flatMap { FrameRateConverter(frameRate: $0, inputTimeBase: video.timeBase!) }
    let encoderTimeBase = rateConverter?.outputTimeBase ?? video.timeBase!
    var settings = VideoEncoderSettings(width: target.width, height: target.height, pixelFormat: pixelFormat,
                                        timeBase: encoderTimeBase)
    settings.frameRate = fps
    settings.sampleAspectRatio = video.sampleAspectRatio
    settings.globalHeader = container.isISOBMFF || container.muxer == "matroska"
    settings.options = encoderOptions(options, width: target.width, height: target.height, fps: fpsValue, hdr: hdr)
    let encoder = try Encoder(video: settings, source: video)
    var audioEncoders: [Int: AudioReencoder] = [:]
    for s in plan.kept {
        guard let a = audioPlans[s.index] else { continue }
        audioEncoders[s.index] = try AudioReencoder(stream: s, encoder: a.encoder, sampleRate: a.sampleRate,
                                                    bitRate: a.bitRate, globalHeader: settings.globalHeader)
    }

    let staged = try StagedOutput(target: outputPath, overwrite: options.overwrite, inputs: [inputPath])
    let output = try OutputFile(
        path: staged.temporary, reportingAs: outputPath, container: container,
        streams: plan.kept.map {
            $0.index == video.index ? .encoded(encoder) : audioEncoders[$0.index].map { .encoded($0.encoder) } ?? .copy($0)
        },
        metadataSource: input,
        options: muxerOptions(container, faststart: options.faststart,
                              audioSampleRate: plan.kept.first { $0.mediaType == .audio }
                                  .map { audioPlans[$0.index]?.sampleRate ?? $0.sampleRate }),
        cancellation: cancellation)
    var encodedTimeBases = [video.index: encoderTimeBase]
    for (i, a) in audioEncoders { encodedTimeBases[i] = a.encoder.timeBase }
    var timelines = try copyTimelines(plan.kept, output: output, start: options.start, repair: .fix,
                                      encoded: encodedTimeBases)
    var outputIndex = [Int?](repeating: nil, count: input.streams.count)
    for (j, s) in plan.kept.enumerated() { outputIndex[s.index] = j }
    let videoOut = outputIndex[video.index]!

    var report = TranscodeReport(
        input: inputPath, output: outputPath, container: container.name, videoStream: video.index,
        encoder: encoder.codecName, width: target.width, height: target.height, pixelFormat: pixelFormat,
        copiedStreams: plan.kept.filter { $0.index != video.index && audioEncoders[$0.index] == nil }.map(\.index),
        dropped: plan.dropped, warnings: warnings)
    report.frameRate = options.frameRate.map { "\($0.numerator)/\($0.denominator)" }
    report.hdr = hdr != nil

    let packet = try Packet(), encoded = try Packet()
    let frame = try Frame(), converted = try Frame(), held = try Frame()
    var scaler: Scaler?
    var scalerFormat: String?
    // Frame timing through the encoder (libx265 gives packets no duration).
    var frameTimes = FrameTimestamps(frameRate: inputRate, timeBase: video.timeBase!, wrapBits: video.wrapBits)
    let duration = input.duration.map(\.seconds)
    let startSeconds = input.startTime?.seconds ?? 0

    func write(_ p: borrowing Packet, stream j: Int, inputIndex: Int) throws(MediaError) {
        do {
            p.timing = try timelines[j].map(p.timing)
        } catch {
            throw timestampError(error, input: inputPath, stream: inputIndex)
        }
        p.streamIndex = j
        try output.write(p)
    }

    func drainEncoder() throws(MediaError) {
        while case .ready = try encoder.receive(into: encoded) {
            var t = encoded.timing
            // At a constant --fps every packet lasts one tick of 1/fps.
            t.duration = rateConverter != nil ? 1 : frameTimes.packetDuration(pts: t.pts, duration: t.duration)
            encoded.timing = t
            report.framesEncoded += 1
            try write(encoded, stream: videoOut, inputIndex: video.index)
        }
    }

    /// Converts when the encoder needs it, then encodes.
    func submit(_ f: borrowing Frame) throws(MediaError) {
        if f.pixelFormat != pixelFormat || f.width != target.width || f.height != target.height {
            if scaler == nil || scalerFormat != f.pixelFormat {
                scaler = try Scaler(fromWidth: f.width, height: f.height, pixelFormat: f.pixelFormat ?? "none",
                                    toWidth: target.width, height: target.height, pixelFormat: pixelFormat)
                scalerFormat = f.pixelFormat
            }
            try scaler!.scale(f, into: converted)
            while try !encoder.send(converted) { try drainEncoder() }
        } else {
            while try !encoder.send(f) { try drainEncoder() }
        }
        try drainEncoder()
    }

    /// The held frame (constant frame rate) once for each output slot in `slots`.
    func submitHeld(_ slots: Range<Int64>) throws(MediaError) {
        // A frame repeated for half a day is a broken timestamp, not a still.
        let (count, overflow) = slots.upperBound.subtractingReportingOverflow(slots.lowerBound)
        if let rate = options.frameRate, overflow
            || count / Int64(max(rate.numerator / max(rate.denominator, 1), 1)) > AudioAssembler.longestFillSeconds {
            throw MediaError.invalid("could not transcode", path: input.path, stream: video.index,
                                     message: "--fps would repeat one frame for more than \(AudioAssembler.longestFillSeconds / 3600) hours at output frame \(slots.lowerBound); the video's timestamps jump (a broken file)")
        }
        for n in slots {
            held.pts = n
            try submit(held)
        }
    }

    func handleFrames() throws(MediaError) {
        while case .ready = try decoder.receive(into: frame) {
            try cancellation.check()
            report.framesDecoded += 1
            let (pts, frameDuration) = frameTimes.frame(timestamp: frame.bestEffortTimestamp, duration: frame.duration)
            frame.clearPictureType()
            if rateConverter != nil {
                try submitHeld(rateConverter!.add(pts: pts, duration: frameDuration))
                held.take(from: frame)
            } else {
                frame.pts = pts
                try submit(frame)
                frame.unref()
            }
            if let progress, report.framesDecoded % 8 == 0 {
                progress(TranscodeProgress(frames: report.framesDecoded,
                                           position: Timestamp(pts, video.timeBase!).seconds - startSeconds,
                                           duration: duration))
            }
        }
    }

    while try input.read(into: packet) {
        try cancellation.check()
        let i = packet.streamIndex
        guard i < outputIndex.count, let j = outputIndex[i] else { continue }
        if packet.isCorrupt { throw input.corruptPacketError(stream: i) }
        if i == video.index {
            while try !decoder.send(packet) { try handleFrames() }
            try handleFrames()
        } else if let a = audioEncoders[i] {
            try a.send(packet) { p throws(MediaError) in try write(p, stream: j, inputIndex: i) }
        } else {
            try write(packet, stream: j, inputIndex: i)
        }
    }
    try decoder.sendEnd()
    try handleFrames()
    if rateConverter != nil { try submitHeld(rateConverter!.finish()) }
    try encoder.sendEnd()
    try drainEncoder()
    for (i, a) in audioEncoders.sorted(by: { $0.key < $1.key }) {
        let j = outputIndex[i]!
        try a.finish { p throws(MediaError) in try write(p, stream: j, inputIndex: i) }
    }
    try cancellation.check()
    try output.finish()
    try staged.commit()

    report.audio = plan.kept.filter { $0.mediaType == .audio }.map { s in
        if let a = audioEncoders[s.index] {
            return AudioOutcome(stream: s.index, action: "encoded", codec: a.encoder.codecName,
                                sampleRate: a.encoder.sampleRate, bitRate: a.encoder.bitRate > 0 ? a.encoder.bitRate : nil,
                                silenceInserted: a.silenceInserted, samplesTrimmed: a.samplesTrimmed)
        }
        return AudioOutcome(stream: s.index, action: "copied", codec: s.codecName, sampleRate: s.sampleRate,
                            bitRate: s.bitRate)
    }
    if let c = rateConverter {
        report.framesDropped = c.dropped
        report.framesDuplicated = Int(c.duplicated)
    }
    report.corrections = timelines.reduce(TimelineCorrections()) { $0 + $1.corrections }
    report.inputBytes = input.size ?? 0
    report.outputBytes = fileSize(outputPath) ?? 0
    report.durationSeconds = duration
    let elapsed = clock.now - began
    report.elapsedSeconds = elapsed.seconds
    return report
}

/// How one audio stream is re-encoded.
struct AudioPlan {
    var encoder: String
    var sampleRate: Int32
    var bitRate: Int64
}

/// Which kept audio streams are encoded, and how; refuses, before anything
/// is written, what cannot work: a copy the container cannot hold, an
/// encoder the container cannot hold, a bit rate or channel count the
/// encoder cannot use.
func planAudio(_ input: InputFile, container: Container, selection: StreamSelection,
               options: TranscodeOptions) throws(MediaError) -> [Int: AudioPlan] {
    var plans: [Int: AudioPlan] = [:]
    for s in input.streams where s.mediaType == .audio && selection.keeps(s) {
        let fits = container.canHold(s) != false
        let name: String
        switch options.audio {
        case .copy:
            guard fits else {
                throw MediaError.invalid("could not transcode", path: input.path, stream: s.index,
                                         message: "\(container.name) cannot hold audio codec '\(s.codecName)'",
                                         hint: "encode it with --audio aac, or drop it with --no-audio")
            }
            continue
        case .auto:
            if fits { continue }
            name = "aac"
        case .aac, .pcm:
            name = options.audio.encoderName!
        }
        guard container.canHold(encoder: name) != false else {
            throw MediaError.invalid("could not transcode", path: input.path, stream: s.index,
                                     message: "\(container.name) cannot hold \(name) audio",
                                     hint: name.hasPrefix("pcm") ? "use a .mov output for PCM, or --audio aac" : nil)
        }
        let settings = try audioEncoderSettings(for: s, encoder: name, bitRate: options.audioBitRate,
                                                globalHeader: true, operation: "could not transcode")
        plans[s.index] = AudioPlan(encoder: name, sampleRate: settings.sampleRate, bitRate: settings.bitRate)
    }
    return plans
}

/// Encoder settings to re-encode `stream` with the encoder `name` (aac,
/// pcm_s16le, …): the input's channels, its rate or the nearest the encoder
/// takes, and for AAC the bit rate `bitRate` (nil: 64 kb/s per channel),
/// refused with a clear message when the encoder cannot use it. Transcode
/// and the assembly verbs both decide here.
public func audioEncoderSettings(for s: InputStream, encoder name: String, bitRate: Int64?, globalHeader: Bool,
                                 operation: String) throws(MediaError) -> AudioEncoderSettings {
    guard let caps = AudioEncoderCapabilities(codec: name) else {
        throw .missingEncoder(name, operation: operation)
    }
    guard s.sampleRate > 0, s.channelCount > 0 else {
        throw MediaError.invalid(operation, path: s.file.path, stream: s.index,
                                 message: "the audio stream has no sample rate or channel count")
    }
    if !caps.channelCounts.isEmpty, !caps.channelCounts.contains(s.channelCount) {
        throw MediaError.invalid(operation, path: s.file.path, stream: s.index,
                                 message: "\(name) cannot encode \(s.channelCount) channels",
                                 hint: "drop the stream with --no-audio")
    }
    var settings = AudioEncoderSettings(codec: name, sampleRate: caps.sampleRate(for: s.sampleRate), channels: s.channelCount)
    settings.globalHeader = globalHeader
    if name == "aac" {
        switch AACBitRate.choose(bitRate, sampleRate: settings.sampleRate, channels: s.channelCount) {
        case .success(let b): settings.bitRate = b
        case .failure(let e): throw e.about(path: s.file.path, stream: s.index)
        }
    }
    return settings
}

/// The HDR10 metadata in the first decoded frame of `stream` (x265 and other
/// encoders put it in SEI, not in the container), read through a second,
/// short-lived opening of the file; `nil` if there is none or it cannot be read.
func firstFrameHDRMetadata(_ stream: InputStream) -> HDRMetadata? {
    do throws(MediaError) {
        let file = try InputFile(path: stream.file.path)
        let s = file.streams[stream.index]
        let decoder = try Decoder(stream: s)
        let packet = try Packet(), frame = try Frame()
        var packets = 0
        while packets < 500, try file.read(into: packet) {
            guard packet.streamIndex == s.index else { continue }
            packets += 1
            _ = try decoder.send(packet)
            if case .ready = try decoder.receive(into: frame) { return frame.hdrMetadata }
        }
        try decoder.sendEnd()
        if case .ready = try decoder.receive(into: frame) { return frame.hdrMetadata }
    } catch {}
    return nil
}

/// libx265 options from the user's choices: rate control, preset, tune,
/// keyframe interval (3 s of frames by default), x265 parameters (quiet
/// unless the user sets a log level).
func encoderOptions(_ o: TranscodeOptions, width: Int, height: Int, fps: Double,
                    hdr: HDRMetadata? = nil) -> [(String, String)] {
    var opts: [(String, String)] = [("preset", o.preset)]
    switch o.rate {
    case .crf(let c): opts.append(("crf", String(c)))
    case .bitrate(let b): opts.append(("b", String(b)))
    case .bitsPerPixel(let bpp): opts.append(("b", String(wholeClamped(bpp * Double(width) * Double(height) * fps))))
    }
    if let t = o.tune { opts.append(("tune", t)) }
    // A file's frame rate may be anything (1/1000 … 2^31): keep the interval a sane integer.
    opts.append(("g", String(o.keyframeInterval ?? Int(wholeClamped(3 * fps, to: 1...100_000)))))
    var params = o.x265Params ?? ""
    // HDR10 metadata from the input, unless the user gave their own.
    for (k, v) in hdr?.x265Parameters ?? [] where !params.contains(k + "=") {
        params += (params.isEmpty ? "" : ":") + k + "=" + v
    }
    if !params.contains("log-level") { params += (params.isEmpty ? "" : ":") + "log-level=error" }
    opts.append(("x265-params", params))
    return opts
}

/// The output size: the requested one, where a side of -1 (or 0) keeps the
/// aspect ratio; rounded down to even numbers, which 4:2:0 needs.
package func outputSize(input: (Int, Int), requested: (width: Int, height: Int)?) -> (width: Int, height: Int) {
    func even(_ v: Double) -> Int { max(2, Int(v / 2) * 2) }
    guard let r = requested else { return (even(Double(input.0)), even(Double(input.1))) }
    let (iw, ih) = (Double(input.0), Double(input.1))
    switch (r.width > 0, r.height > 0) {
    case (true, true): return (even(Double(r.width)), even(Double(r.height)))
    case (true, false): return (even(Double(r.width)), even(Double(r.width) * ih / iw))
    case (false, true): return (even(Double(r.height) * iw / ih), even(Double(r.height)))
    case (false, false): return (even(iw), even(ih))
    }
}

/// `v` rounded, within `range` (NaN and infinities included): Int64(v)
/// would trap on a value from a broken file.
func wholeClamped(_ v: Double, to range: ClosedRange<Int64> = 1...Int64(Int32.max)) -> Int64 {
    guard v.isFinite else { return v > 0 ? range.upperBound : range.lowerBound }
    let r = v.rounded()
    if r <= Double(range.lowerBound) { return range.lowerBound }
    if r >= Double(range.upperBound) { return range.upperBound }
    return Int64(r)
}
