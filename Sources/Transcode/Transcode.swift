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
/// streams copied. Timestamps pass through (VFR stays VFR): the encoder runs
/// in the input stream's time base and the core's `TrackTimeline` maps every
/// packet to the output.
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
    for s in input.streams where s.mediaType == .audio && selection.keeps(s) && container.canHold(s) == false {
        throw MediaError.invalid("could not transcode", path: inputPath, stream: s.index,
                                 message: "\(container.name) cannot hold audio codec '\(s.codecName)' and audio encoding is not available yet",
                                 hint: "drop it with --no-audio or choose a container that holds it (mov, mkv)")
    }
    // Other video streams (a second angle) are copied; only the main one is encoded.
    let plan = try planStreams(input, container: container, selection: selection) { $0.index == video.index }

    let decoder = try Decoder(stream: video)
    let target = outputSize(input: (video.width, video.height), requested: options.size)
    let pixelFormat = options.tenBit ? "yuv420p10le" : "yuv420p"
    let fps = video.averageFrameRate ?? video.realFrameRate
    let fpsValue = fps.map { Double($0.numerator) / Double($0.denominator) } ?? 30
    var settings = VideoEncoderSettings(width: target.width, height: target.height, pixelFormat: pixelFormat,
                                        timeBase: video.timeBase!)
    settings.frameRate = fps
    settings.sampleAspectRatio = video.sampleAspectRatio
    settings.globalHeader = container.isISOBMFF || container.muxer == "matroska"
    settings.options = encoderOptions(options, width: target.width, height: target.height, fps: fpsValue)
    let encoder = try Encoder(video: settings, source: video)

    let staged = try StagedOutput(target: outputPath, overwrite: options.overwrite, inputs: [inputPath])
    let output = try OutputFile(
        path: staged.temporary, container: container,
        streams: plan.kept.map { $0.index == video.index ? .encoded(encoder) : .copy($0) },
        metadataSource: input, options: muxerOptions(container, faststart: options.faststart),
        cancellation: cancellation)
    var timelines = try copyTimelines(plan.kept, output: output, start: options.start, repair: .fix)
    var outputIndex = [Int?](repeating: nil, count: input.streams.count)
    for (j, s) in plan.kept.enumerated() { outputIndex[s.index] = j }
    let videoOut = outputIndex[video.index]!

    var report = TranscodeReport(
        input: inputPath, output: outputPath, container: container.name, videoStream: video.index,
        encoder: encoder.codecName, width: target.width, height: target.height, pixelFormat: pixelFormat,
        copiedStreams: plan.kept.filter { $0.index != video.index }.map(\.index), dropped: plan.dropped,
        warnings: plan.warnings)

    let packet = try Packet(), encoded = try Packet()
    let frame = try Frame(), converted = try Frame()
    var scaler: Scaler?
    var scalerFormat: String?
    // Frame timing through the encoder (libx265 gives packets no duration).
    var frameTimes = FrameTimestamps(frameRate: fps, timeBase: video.timeBase!)
    let duration = input.duration.map(\.seconds)
    let videoTimeBase = video.timeBase!

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
            t.duration = frameTimes.packetDuration(pts: t.pts, duration: t.duration)
            encoded.timing = t
            report.framesEncoded += 1
            try write(encoded, stream: videoOut, inputIndex: video.index)
        }
    }

    func encode(_ f: borrowing Frame) throws(MediaError) {
        while try !encoder.send(f) { try drainEncoder() }
        try drainEncoder()
    }

    func handleFrames() throws(MediaError) {
        while case .ready = try decoder.receive(into: frame) {
            try cancellation.check()
            report.framesDecoded += 1
            let (pts, _) = frameTimes.frame(timestamp: frame.bestEffortTimestamp, duration: frame.duration)
            frame.pts = pts
            frame.clearPictureType()
            if frame.pixelFormat != pixelFormat || frame.width != target.width || frame.height != target.height {
                if scaler == nil || scalerFormat != frame.pixelFormat {
                    scaler = try Scaler(fromWidth: frame.width, height: frame.height,
                                        pixelFormat: frame.pixelFormat ?? "none",
                                        toWidth: target.width, height: target.height, pixelFormat: pixelFormat)
                    scalerFormat = frame.pixelFormat
                }
                try scaler!.scale(frame, into: converted)
                try encode(converted)
            } else {
                try encode(frame)
            }
            frame.unref()
            if let progress, report.framesDecoded % 8 == 0 {
                progress(TranscodeProgress(frames: report.framesDecoded,
                                           position: Timestamp(pts, videoTimeBase).seconds - (input.startTime?.seconds ?? 0),
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
        } else {
            try write(packet, stream: j, inputIndex: i)
        }
    }
    try decoder.sendEnd()
    try handleFrames()
    try encoder.sendEnd()
    try drainEncoder()
    try cancellation.check()
    try output.finish()
    try staged.commit()

    report.corrections = timelines.reduce(TimelineCorrections()) { $0 + $1.corrections }
    report.inputBytes = input.size ?? 0
    report.outputBytes = fileSize(outputPath) ?? 0
    report.durationSeconds = duration
    let elapsed = clock.now - began
    report.elapsedSeconds = elapsed.seconds
    return report
}

/// libx265 options from the user's choices: rate control, preset, tune,
/// keyframe interval (3 s of frames by default), x265 parameters (quiet
/// unless the user sets a log level).
func encoderOptions(_ o: TranscodeOptions, width: Int, height: Int, fps: Double) -> [(String, String)] {
    var opts: [(String, String)] = [("preset", o.preset)]
    switch o.rate {
    case .crf(let c): opts.append(("crf", String(c)))
    case .bitrate(let b): opts.append(("b", String(b)))
    case .bitsPerPixel(let bpp): opts.append(("b", String(Int64((bpp * Double(width * height) * fps).rounded()))))
    }
    if let t = o.tune { opts.append(("tune", t)) }
    opts.append(("g", String(o.keyframeInterval ?? max(1, Int((3 * fps).rounded())))))
    var params = o.x265Params ?? ""
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
