import Media
import Pipeline
import Sync

public struct RemuxOptions: Sendable {
    /// The output container; `nil` means from the output's extension.
    public var container: Container?
    public var start: StartPolicy = .zero
    /// Tag, creation-time and rotation changes made as the output is written.
    public var edits = MetadataEdits()
    public var repair: TimestampRepair = .fix
    public var streams = StreamSelection()
    /// MP4/MOV/M4A: put the index (moov) before the media data.
    public var faststart = true
    public var overwrite = false
    /// Keep every complete packet of a damaged or cut-off input (instead of
    /// refusing it) and report what was lost.
    public var salvage = false

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

    public init(inputIndex: Int, outputIndex: Int, type: MediaType, codec: String, packets: Int = 0, bytes: Int64 = 0,
                corrections: TimelineCorrections = TimelineCorrections()) {
        self.inputIndex = inputIndex
        self.outputIndex = outputIndex
        self.type = type
        self.codec = codec
        self.packets = packets
        self.bytes = bytes
        self.corrections = corrections
    }
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
    /// With `salvage`: what was kept of a damaged or cut-off input.
    public var salvage: SalvageReport?

    public var corrections: TimelineCorrections { streams.reduce(TimelineCorrections()) { $0 + $1.corrections } }
}

/// Stream copy from one container into another: every packet's payload is
/// passed through untouched; only timestamps move, through the core's
/// `TrackTimeline` (one per track, in the mux session).
public func remux(input inputPath: String, output outputPath: String, options: RemuxOptions,
                  cancellation: Cancellation = .shared,
                  progress: ((RemuxProgress) -> Void)? = nil) throws(MediaError) -> RemuxReport {
    let container = try resolveContainer(options.container, output: outputPath)
    let input = try InputFile(path: inputPath, cancellation: cancellation)
    return try remux(input, to: .file(outputPath, overwrite: options.overwrite, inputs: [inputPath]),
                     container: container, options: options, cancellation: cancellation, progress: progress)
}

/// The same stream copy from an opened input into memory (nothing touches
/// the filesystem): what the fuzz harness runs, and a check that the file
/// and memory paths write the same bytes. `options.faststart` does not
/// apply (it rewrites a file by reopening it).
public func remux(_ input: InputFile, into memory: MemoryOutput, container: Container, options: RemuxOptions,
                  cancellation: Cancellation = Cancellation()) throws(MediaError) -> RemuxReport {
    try remux(input, to: .memory(memory, name: "memory.\(container.name)"), container: container, options: options,
              cancellation: cancellation, progress: nil)
}

/// remux.c's shape: plan the streams, open the output with exactly those,
/// copy every packet, finish.
private func remux(_ input: InputFile, to destination: MuxDestination, container: Container, options: RemuxOptions,
                   cancellation: Cancellation, progress: ((RemuxProgress) -> Void)?) throws(MediaError) -> RemuxReport {
    let plan = try planStreams(input, container: container, selection: options.streams)
    var source = try PacketSource(input, kept: plan.kept, salvage: options.salvage, operation: "could not remux")
    let session = try MuxSession(destination, container: container, streams: plan.kept.map { .copy($0) },
                                 metadataSource: input, edits: options.edits, faststart: options.faststart,
                                 audioSampleRate: plan.kept.first { $0.mediaType == .audio }?.sampleRate,
                                 cancellation: cancellation)
    try session.beginTimelines(plan.kept, start: options.start, repair: options.repair)
    try copyPackets(from: &source, to: session, progress: progress)
    let result = try session.finish()

    var report = RemuxReport(
        input: input.path, output: session.name, container: container.name,
        streams: plan.kept.enumerated().map {
            RemuxStreamReport(inputIndex: $1.index, outputIndex: $0, type: $1.mediaType, codec: $1.codecName,
                              packets: result.packets[$0], bytes: result.payloadBytes[$0],
                              corrections: result.corrections[$0])
        },
        dropped: plan.dropped,
        warnings: [source.salvage?.warning, result.tagWarning(container: container)].compactMap { $0 } + plan.warnings)
    report.salvage = source.salvage
    report.outputBytes = result.outputBytes
    report.durationSeconds = input.duration.map(\.seconds)
    report.elapsedSeconds = result.elapsed.seconds
    return report
}

/// The read loop of a remux: every packet of a kept stream, checked, into
/// its track.
private func copyPackets(from source: inout PacketSource, to session: MuxSession,
                         progress: ((RemuxProgress) -> Void)?) throws(MediaError) {
    let input = source.input
    let duration = input.duration.map(\.seconds)
    let inputSize = input.size
    var sinceProgress = 0
    try source.run { (packet, j) throws(MediaError) in
        try session.write(packet, track: j)
        if let progress {
            sinceProgress += 1
            if sinceProgress >= 256 {
                sinceProgress = 0
                progress(RemuxProgress(bytesRead: input.bytesRead, inputSize: inputSize,
                                       position: session.position, duration: duration))
            }
        }
    }
}
