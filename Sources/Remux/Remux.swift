import Media
import Sync

public struct RemuxOptions: Sendable {
    /// The output container; `nil` means from the output's extension.
    public var container: Container?
    public var start: StartPolicy = .zero
    public var repair: TimestampRepair = .fix
    public var streams = StreamSelection()
    /// MP4/MOV/M4A: put the index (moov) before the media data.
    public var faststart = true
    public var overwrite = false

    public init() {}
}

/// Progress of a running remux, reported every few packets.
public struct RemuxProgress: Sendable {
    public let bytesRead: Int64
    public let inputSize: Int64?
    /// Output position in seconds (from the last written timestamp).
    public let position: Double
    public let duration: Double?

    /// 0…1, from the position when the duration is known, else from bytes.
    public var fraction: Double? {
        if let d = duration, d > 0 { return min(max(position / d, 0), 1) }
        if let s = inputSize, s > 0 { return min(Double(bytesRead) / Double(s), 1) }
        return nil
    }
}

/// What a remux did, per output stream.
public struct RemuxStreamReport: Sendable, Codable {
    public let inputIndex: Int
    public let outputIndex: Int
    public let type: MediaType
    public let codec: String
    public var packets: Int = 0
    public var bytes: Int64 = 0
    public var corrections = TimelineCorrections()
}

public struct RemuxReport: Sendable, Codable {
    public let input: String
    public let output: String
    public let container: String
    public var streams: [RemuxStreamReport]
    /// Input streams left out: index and why.
    public var dropped: [DroppedStream]
    /// What the target container could not keep (e.g. rotation in Matroska).
    public var warnings: [String] = []
    public var outputBytes: Int64 = 0
    public var durationSeconds: Double?
    public var elapsedSeconds: Double = 0

    public var corrections: TimelineCorrections { streams.reduce(TimelineCorrections()) { $0 + $1.corrections } }
}

public struct DroppedStream: Sendable, Codable {
    public let index: Int
    public let type: MediaType
    public let codec: String
    public let reason: String
}

/// Stream copy from one container into another: every packet's payload is
/// passed through untouched; only timestamps move, through the core's
/// `TrackTimeline`.
public func remux(input inputPath: String, output outputPath: String, options: RemuxOptions,
                  cancellation: Cancellation = .shared,
                  progress: ((RemuxProgress) -> Void)? = nil) throws(MediaError) -> RemuxReport {
    let clock = ContinuousClock()
    let began = clock.now
    let container = try resolveContainer(options.container, output: outputPath)
    let input = try InputFile(path: inputPath, cancellation: cancellation)
    let plan = try planStreams(input, container: container, selection: options.streams)
    let staged = try StagedOutput(target: outputPath, overwrite: options.overwrite, inputs: [inputPath])

    let output = try OutputFile(path: staged.temporary, reportingAs: outputPath, container: container,
                                streams: plan.kept.map { .copy($0) }, metadataSource: input,
                                options: muxerOptions(container, faststart: options.faststart,
                                                      audioSampleRate: plan.kept.first { $0.mediaType == .audio }?.sampleRate),
                                cancellation: cancellation)
    var report = try copyPackets(from: input, plan: plan, to: output, reportingAs: outputPath, options: options,
                                 cancellation: cancellation, progress: progress)
    try cancellation.check()
    try output.finish()
    try staged.commit()

    report.outputBytes = fileSize(outputPath) ?? output.bytesWritten
    let elapsed = clock.now - began
    report.elapsedSeconds = elapsed.seconds
    return report
}

/// The same stream copy from an opened input into memory (nothing touches
/// the filesystem): what the fuzz harness runs, and a check that the file
/// and memory paths write the same bytes. `options.faststart` does not
/// apply (it rewrites a file by reopening it).
public func remux(_ input: InputFile, into memory: MemoryOutput, container: Container, options: RemuxOptions,
                  cancellation: Cancellation = Cancellation()) throws(MediaError) -> RemuxReport {
    let plan = try planStreams(input, container: container, selection: options.streams)
    let name = "memory.\(container.name)"
    let output = try OutputFile(memory: memory, name: name, container: container,
                                streams: plan.kept.map { .copy($0) }, metadataSource: input,
                                options: muxerOptions(container, faststart: false,
                                                      audioSampleRate: plan.kept.first { $0.mediaType == .audio }?.sampleRate),
                                cancellation: cancellation)
    var report = try copyPackets(from: input, plan: plan, to: output, reportingAs: name, options: options,
                                 cancellation: cancellation, progress: nil)
    try cancellation.check()
    try output.finish()
    report.outputBytes = Int64(memory.bytes.count)
    return report
}

/// The read loop of a remux: every packet of a kept stream, checked and
/// mapped through its timeline, into `output`.
private func copyPackets(from input: InputFile, plan: StreamPlan, to output: OutputFile, reportingAs outputName: String,
                         options: RemuxOptions, cancellation: Cancellation,
                         progress: ((RemuxProgress) -> Void)?) throws(MediaError) -> RemuxReport {
    var timelines = try copyTimelines(plan.kept, output: output, start: options.start, repair: options.repair)
    var report = RemuxReport(
        input: input.path, output: outputName, container: output.container.name,
        streams: plan.kept.enumerated().map {
            RemuxStreamReport(inputIndex: $1.index, outputIndex: $0, type: $1.mediaType, codec: $1.codecName)
        },
        dropped: plan.dropped, warnings: plan.warnings)
    var outputIndex = [Int?](repeating: nil, count: input.streams.count)
    for (j, s) in plan.kept.enumerated() { outputIndex[s.index] = j }

    let duration = input.duration.map(\.seconds)
    let inputSize = input.size
    let packet = try Packet()
    var sinceProgress = 0
    var position = 0.0
    while try input.read(into: packet) {
        try cancellation.check()
        guard packet.streamIndex < outputIndex.count, let j = outputIndex[packet.streamIndex] else { continue }
        // A copy must not pass damage on silently.
        if packet.isCorrupt { throw input.corruptPacketError(stream: packet.streamIndex) }
        let mapped: PacketTiming
        do {
            mapped = try timelines[j].map(packet.timing)
        } catch {
            throw timestampError(error, input: input.path, stream: packet.streamIndex)
        }
        report.streams[j].packets += 1
        report.streams[j].bytes += Int64(packet.size)
        packet.timing = mapped
        packet.streamIndex = j
        if let progress {
            sinceProgress += 1
            if sinceProgress >= 256 {
                sinceProgress = 0
                if let d = mapped.dts { position = Timestamp(d, output.timeBases[j]).seconds }
                progress(RemuxProgress(bytesRead: input.bytesRead, inputSize: inputSize,
                                       position: position, duration: duration))
            }
        }
        try output.write(packet)
    }
    for j in report.streams.indices { report.streams[j].corrections = timelines[j].corrections }
    report.durationSeconds = duration
    return report
}

/// Muxer options every verb uses: faststart for MP4/MOV/M4A when asked, and
/// for MP4/MOV with audio a movie timescale of the audio's sample rate. Edit
/// lists (a track starting late, AAC priming) are written in the movie
/// timescale; movenc's default of 1/1000 s would move audio by up to a
/// millisecond (48 samples), the sample rate keeps it on the sample.
package func muxerOptions(_ container: Container, faststart: Bool, audioSampleRate: Int32? = nil) -> [(String, String)] {
    var options: [(String, String)] = []
    guard container.isISOBMFF else { return options }
    if faststart { options.append(("movflags", "+faststart")) }
    if let rate = audioSampleRate, rate >= 1000 { options.append(("movie_timescale", String(rate))) }
    return options
}

/// One timeline per kept stream, all with the same start shift. A stream in
/// `encoded` (input index → the encoder's time base) gets its packets from an
/// encoder: in that time base, already unwrapped, with DTS set.
package func copyTimelines(_ kept: [InputStream], output: OutputFile, start: StartPolicy,
                           repair: TimestampRepair, encoded: [Int: Rational] = [:]) throws(MediaError) -> [TrackTimeline] {
    let shift = start.shift(earliestStart: kept.compactMap(\.startTime).min())
    var timelines: [TrackTimeline] = []
    for (j, stream) in kept.enumerated() {
        let encoderTimeBase = encoded[stream.index]
        do {
            timelines.append(try TrackTimeline(
                source: encoderTimeBase ?? stream.timeBase!, target: output.timeBases[j], shift: shift,
                order: output.container.dtsOrder, repair: repair,
                wrapBits: encoderTimeBase == nil ? stream.wrapBits : nil,
                reorderDelay: encoderTimeBase == nil ? stream.reorderDelay : 0,
                untimedAtOrigin: stream.isAttachedPicture))
        } catch {
            throw timestampError(error, input: stream.file.path, stream: stream.index)
        }
    }
    return timelines
}

package func resolveContainer(_ explicit: Container?, output: String) throws(MediaError) -> Container {
    if let explicit { return explicit }
    guard let c = Container(path: output) else {
        throw MediaError.invalid("could not choose a container for", path: output,
                         message: "unknown or missing extension (known: \(Container.knownNames))",
                         hint: "name the container with --format")
    }
    return c
}

package struct StreamPlan {
    package var kept: [InputStream] = []
    package var dropped: [DroppedStream] = []
    package var warnings: [String] = []
}

/// Keeps the selected streams; a selected stream the container cannot hold,
/// or one without a valid time base, is an error naming it. Streams for
/// which `reencoded` is true are checked by their encoder instead.
package func planStreams(_ input: InputFile, container: Container, selection: StreamSelection,
                         reencoded: (InputStream) -> Bool = { _ in false }) throws(MediaError) -> StreamPlan {
    var plan = StreamPlan()
    for s in input.streams {
        guard selection.keeps(s) else {
            plan.dropped.append(DroppedStream(index: s.index, type: s.mediaType, codec: s.codecName,
                                              reason: "not selected"))
            continue
        }
        guard s.timeBase != nil else {
            throw MediaError.invalid("could not remux", path: input.path, stream: s.index,
                             message: "the stream has no valid time base")
        }
        if !reencoded(s), container.canHold(s) == false {
            let drop = StreamSelection.dropFlag(s)
            let what = s.isAttachedPicture ? "cover art" : "\(s.mediaType.rawValue) codec '\(s.codecName)'"
            let hint = (s.mediaType == .audio || s.mediaType == .video) && !s.isAttachedPicture
                ? "convert it with 'avtool transcode' or drop it with \(drop)"
                : "drop it with \(drop)"
            throw MediaError.invalid("could not remux", path: input.path, stream: s.index,
                                     message: "\(container.name) cannot hold \(what)", hint: hint)
        }
        // libavformat 5.1 writes the display matrix only in MP4/MOV.
        if let r = s.rotation, r != 0, !container.isISOBMFF {
            plan.warnings.append("stream #\(s.index): rotation \(Int(r))° is not kept (\(container.name) cannot store it); use mp4 or mov to keep it")
        }
        plan.kept.append(s)
    }
    guard !plan.kept.isEmpty else {
        throw MediaError.invalid("could not remux", path: input.path,
                         message: "no streams left to write")
    }
    return plan
}

package func timestampError(_ error: TimelineError, input: String, stream: Int) -> MediaError {
    MediaError.invalid("bad timestamps in", path: input, stream: stream,
               message: error.description, hint: "remux without --strict-timestamps to fix them")
}
