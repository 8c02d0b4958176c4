import Media
import Pipeline
import Remux
import Sync

public struct RepairOptions: Sendable {
    /// The output container; `nil` means from the output's extension.
    public var container: Container?
    /// A whole recording made by the same device with the same settings:
    /// its codec settings and timing stand in for a lost index.
    public var reference: String?
    /// Tag, creation-time and rotation changes made as the output is written.
    public var edits = MetadataEdits()
    public var faststart = true
    public var overwrite = false

    public init() {}
}

/// Progress of a running repair: the share of the input scanned or copied.
public struct RepairProgress: Sendable {
    public let fraction: Double
}

public struct RepairStreamReport: Sendable, Codable {
    public let type: MediaType
    public let codec: String
    public var packets: Int
    public var bytes: Int64
}

public struct RepairReport: Sendable, Codable {
    public enum Method: String, Sendable, Codable {
        /// The input's own index (or fragments) read, every complete packet kept.
        case salvaged
        /// No index: samples found in the media data, codec settings and
        /// timing from the reference.
        case rebuilt
    }

    public let input: String
    public let output: String
    public let container: String
    public let method: Method
    public var reference: String?
    public var streams: [RepairStreamReport]
    /// What the salvaging read kept (salvaged).
    public var salvage: SalvageReport?
    /// Bytes of media data no sample could be found in (rebuilt): what a
    /// crash left half-written, or data of a track that cannot be read.
    public var unplacedBytes: Int64 = 0
    /// Seconds of each stream recovered (rebuilt).
    public var seconds: [Double] = []
    /// Where the audio starts after the video, in milliseconds (rebuilt):
    /// the reference's alignment, which the rebuilt tracks take.
    public var audioOffsetMilliseconds: Double?
    public var warnings: [String] = []
    public var outputBytes: Int64 = 0
    public var elapsedSeconds: Double = 0
}

/// Recovers what a crash or a stopped copy left of a recording. An input
/// libavformat can open (its index at the front, or fragments) is remuxed
/// keeping every complete packet, as `remux --salvage` does. An MP4/MOV
/// whose index was never written is rebuilt: its media data is walked
/// sample by sample (`MediaDataScan`) with a reference recording's codec
/// settings, and the samples are timed on the reference's grid
/// (`RebuiltTimeline`, presentation order from a decoder's output order),
/// then written through the mux session. Nothing is re-encoded.
public func repair(input inputPath: String, output outputPath: String, options: RepairOptions,
                   cancellation: Cancellation = .shared,
                   progress: ((RepairProgress) -> Void)? = nil) throws(MediaError) -> RepairReport {
    let container = try resolveContainer(options.container, output: outputPath)
    do {
        _ = try InputFile(path: inputPath, cancellation: cancellation)
    } catch {
        guard error.remedy == .repair else { throw error }
        return try rebuild(inputPath, to: outputPath, container: container, options: options,
                           cancellation: cancellation, progress: progress)
    }
    var o = RemuxOptions()
    o.container = container
    o.salvage = true
    o.edits = options.edits
    o.faststart = options.faststart
    o.overwrite = options.overwrite
    let r = try remux(input: inputPath, output: outputPath, options: o, cancellation: cancellation) { p in
        progress?(RepairProgress(fraction: p.fraction ?? 0))
    }
    var report = RepairReport(input: inputPath, output: outputPath, container: container.name, method: .salvaged,
                              streams: r.streams.map { RepairStreamReport(type: $0.type, codec: $0.codec, packets: $0.packets, bytes: $0.bytes) })
    report.salvage = r.salvage
    report.warnings = r.warnings
    if r.salvage?.lostAny == false { report.warnings.append("no damage found: every packet was readable") }
    if options.reference != nil { report.warnings.append("the reference was not needed: the input has its own index") }
    report.outputBytes = r.outputBytes
    report.elapsedSeconds = r.elapsedSeconds
    return report
}

/// The reference's streams a rebuild can find in media data, and how.
private struct ReferencePlan {
    var kept: [InputStream] = []
    var video: MediaDataScan.VideoTrack?
    var audio: MediaDataScan.AudioTrack?
    /// The one sample size of each other track whose samples all have one.
    var skippable: [Int] = []
    var warnings: [String] = []

    init(_ reference: InputFile, container: Container) throws(MediaError) {
        for s in reference.streams {
            let what = "the reference's stream #\(s.index) (\(s.mediaType.rawValue) \(s.codecName))"
            switch s.mediaType {
            case .video where !s.isAttachedPicture && video == nil:
                let largest = s.indexedPackets?.map { Int($0.size) }.max() ?? 0
                guard let scanner = AccessUnitScanner(codecName: s.codecName, extradata: s.extradata,
                                                      longestUnit: max(8 * largest, 2 << 20)) else {
                    throw MediaError.invalid("could not repair with reference", path: reference.path, stream: s.index,
                                             message: "its video is \(s.codecName) without avcC/hvcC settings; repair finds H.264 and HEVC samples only")
                }
                video = MediaDataScan.VideoTrack(track: kept.count, scanner: scanner)
            case .audio where audio == nil:
                guard let measure = AudioFrameMeasure(stream: s) else {
                    throw MediaError.invalid("could not repair with reference", path: reference.path, stream: s.index,
                                             message: "its audio is \(s.codecName); repair finds AAC frames only")
                }
                audio = MediaDataScan.AudioTrack(track: kept.count, measure: measure)
            default:
                warnings.append("\(what) cannot be found in media data: left out")
                if let sizes = s.indexedPackets.map({ Set($0.map(\.size)) }), sizes.count == 1, let size = sizes.first {
                    skippable.append(Int(size))
                }
                continue
            }
            guard container.canHold(s) != false else {
                throw MediaError.invalid("could not repair into", path: nil, stream: s.index,
                                         message: "\(container.name) cannot hold \(s.mediaType.rawValue) \(s.codecName)",
                                         remedy: .nameContainer)
            }
            kept.append(s)
        }
        guard video != nil || audio != nil else {
            throw MediaError.invalid("could not repair with reference", path: reference.path,
                                     message: "it has no H.264/HEVC video or AAC audio stream")
        }
    }
}

private func rebuild(_ inputPath: String, to outputPath: String, container: Container, options: RepairOptions,
                     cancellation: Cancellation, progress: ((RepairProgress) -> Void)?) throws(MediaError) -> RepairReport {
    guard let referencePath = options.reference else {
        throw MediaError.invalid("could not repair", path: inputPath,
                                 message: "it is an MP4/MOV without its index (moov), so its samples' codec settings and timing are lost",
                                 remedy: .reference)
    }
    let began = ContinuousClock.now
    let reference = try InputFile(path: referencePath, cancellation: cancellation)
    let plan = try ReferencePlan(reference, container: container)
    let mapped = try MappedFile(path: inputPath)
    let scan = try mapped.withBytes { (b) throws(MediaError) in
        let total = Double(max(b.count, 1))
        return try MediaDataScan(b, boxes: TopLevelBoxes(b), video: plan.video, audio: plan.audio,
                                 skippable: plan.skippable, cancellation: cancellation) { at in
            progress?(RepairProgress(fraction: 0.5 * Double(at) / total))
        }
    }
    var found = [Int](repeating: 0, count: plan.kept.count)
    for s in scan.samples { found[s.track] += 1 }
    guard found.contains(where: { $0 > 0 }) else {
        throw MediaError.invalid("could not repair", path: inputPath,
                                 message: "no sample of the reference's codecs and settings was found in its media data")
    }
    let timelines = try mapped.withBytes { (b) throws(MediaError) in
        try plan.kept.indices.map { (j) throws(MediaError) in
            try timeline(for: plan.kept[j], samples: scan.samples.filter { $0.track == j }, bytes: b,
                         reference: referencePath, cancellation: cancellation)
        }
    }

    // Stream tags come from the reference; its creation time is another recording's.
    var edits = MetadataEdits()
    for j in plan.kept.indices { edits.tags.append(.init(streams: .index(j), key: "creation_time", value: nil)) }
    edits.tags += options.edits.tags
    edits.rotation = options.edits.rotation
    edits.creationTime = options.edits.creationTime
    let session = try MuxSession(.file(outputPath, overwrite: options.overwrite, inputs: [inputPath, referencePath]),
                                 container: container, streams: plan.kept.map { .copy($0) }, metadataSource: nil,
                                 edits: edits, faststart: options.faststart,
                                 audioSampleRate: plan.kept.first { $0.mediaType == .audio }?.sampleRate,
                                 cancellation: cancellation)
    for (j, s) in plan.kept.enumerated() {
        try session.beginTimeline(track: j, stream: s, retimedIn: s.timeBase)
    }
    let packet = try Packet()
    var next = [Int](repeating: 0, count: plan.kept.count)
    try mapped.withBytes { (b) throws(MediaError) in
        let total = Double(max(scan.samples.count, 1))
        for (k, s) in scan.samples.enumerated() {
            try packet.fill(UnsafeRawBufferPointer(rebasing: b[s.offset..<(s.offset + s.size)]), keyframe: s.keyframe)
            packet.timing = timelines[s.track].timing(next[s.track])
            next[s.track] += 1
            try session.write(packet, track: s.track)
            if k % 256 == 0 { progress?(RepairProgress(fraction: 0.5 + 0.5 * Double(k) / total)) }
        }
    }
    let result = try session.finish()

    var report = RepairReport(input: inputPath, output: outputPath, container: container.name, method: .rebuilt,
                              streams: plan.kept.enumerated().map {
                                  RepairStreamReport(type: $1.mediaType, codec: $1.codecName, packets: result.packets[$0],
                                                     bytes: result.payloadBytes[$0])
                              })
    report.reference = referencePath
    report.unplacedBytes = Int64(scan.unplacedBytes)
    report.seconds = plan.kept.indices.map { j in
        guard let tb = plan.kept[j].timeBase, found[j] > 0 else { return 0 }
        let t = timelines[j], last = t.timing(found[j] - 1)
        return Timestamp((last.pts ?? 0) + last.duration - t.origin, tb).seconds
    }
    if let v = plan.kept.first(where: { $0.mediaType == .video })?.startTime,
       let a = plan.kept.first(where: { $0.mediaType == .audio })?.startTime {
        report.audioOffsetMilliseconds = (a.seconds - v.seconds) * 1000
    }
    report.warnings = plan.warnings
    let lengths = report.seconds.filter { $0 > 0 }
    if let longest = lengths.max(), let shortest = lengths.min(), lengths.count > 1, longest - shortest > 1 {
        report.warnings.append("the tracks recovered differ in length by \(fixed(longest - shortest, 2)) s: if one started late, its offset is not the reference's")
    }
    if scan.skippedSamples > 0 {
        report.warnings.append("\(scan.skippedSamples) sample(s) of the tracks left out passed over")
    }
    if scan.unplacedBytes > 0, let at = scan.stoppedAt {
        report.warnings.append("\(scan.unplacedBytes) bytes of media data from byte \(at) hold no whole sample of the reference's codecs: left out")
    }
    report.warnings.append("timestamps rebuilt on the reference's frame and sample grid (the index that held them was never written)")
    report.outputBytes = result.outputBytes
    report.elapsedSeconds = (ContinuousClock.now - began).seconds
    return report
}

/// The rebuilt timeline of one track: the reference's average sample
/// duration and first timestamp; for video whose frames the reference
/// reorders, the display order from decoding the samples found.
private func timeline(for stream: InputStream, samples: [FoundSample], bytes: UnsafeRawBufferPointer, reference: String,
                      cancellation: Cancellation) throws(MediaError) -> RebuiltTimeline {
    let fail = { (why: String) in
        MediaError.invalid("could not repair with reference", path: reference, stream: stream.index, message: why)
    }
    guard let index = stream.indexedPackets, index.count >= 2, let first = index.first, let last = index.last else {
        throw fail("its index must list at least two whole packets to give the sample duration")
    }
    let origin = stream.mediaType == .video ? (stream.startTime?.value ?? first.timestamp) : first.timestamp
    var rank: [Int]? = nil
    if stream.mediaType == .video && stream.reorderDelay > 0 && samples.count > 1 {
        rank = try displayRank(of: samples, stream: stream, bytes: bytes, cancellation: cancellation)
    }
    guard let t = RebuiltTimeline(count: samples.count, durationNumerator: last.timestamp - first.timestamp,
                                  durationDenominator: Int64(index.count - 1), origin: origin, displayRank: rank) else {
        throw fail("its timestamps do not give a sample duration of a tick or more")
    }
    return t
}

/// The display order of video samples in decode order: each sent to the
/// reference's decoder tagged with its number, the numbers read back in
/// the order the decoder outputs the frames.
private func displayRank(of samples: [FoundSample], stream: InputStream, bytes: UnsafeRawBufferPointer,
                         cancellation: Cancellation) throws(MediaError) -> [Int] {
    let decoder = try Decoder(stream: stream)
    let packet = try Packet(), frame = try Frame()
    var order: [Int] = []
    order.reserveCapacity(samples.count)
    func drain() {
        while (try? decoder.receive(into: frame)) == .ready {
            if let n = frame.pts { order.append(Int(n)) }
            frame.unref()
        }
    }
    for (n, s) in samples.enumerated() {
        try cancellation.check()
        try packet.fill(UnsafeRawBufferPointer(rebasing: bytes[s.offset..<(s.offset + s.size)]), keyframe: s.keyframe)
        packet.timing = PacketTiming(pts: Int64(n), dts: Int64(n), duration: 1)
        // A frame the decoder cannot take is shown after the one before it.
        while (try? decoder.send(packet)) == false { drain() }
        drain()
    }
    try? decoder.sendEnd()
    drain()
    return RebuiltTimeline.displayRank(outputOrder: order, count: samples.count)
}
