import Media
import Pipeline
import Remux
import Sync

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
struct ReferencePlan {
    var kept: [InputStream] = []
    var tracks = MediaDataScan.Tracks()
    var warnings: [String] = []
    /// The reference's streams left out, with why (by stream index).
    var leftOut: [(stream: InputStream, why: String)] = []

    init(_ reference: InputFile, container: Container) throws(MediaError) {
        tracks.follows = Self.follows(reference)
        let apart = Self.sizeOnlyApart(reference, follows: tracks.follows)
        for s in reference.streams {
            switch s.mediaType {
            case .video where !s.isAttachedPicture && tracks.video == nil:
                let largest = s.indexedPackets?.map { Int($0.size) }.max() ?? 0
                guard let scanner = AccessUnitScanner(codecName: s.codecName, extradata: s.extradata,
                                                      longestUnit: max(8 * largest, 2 << 20)) else {
                    throw MediaError.invalid("could not repair with reference", path: reference.path, stream: s.index,
                                             message: "its video is \(s.codecName) without avcC/hvcC settings; repair finds H.264 and HEVC samples only")
                }
                tracks.video = MediaDataScan.VideoTrack(track: kept.count, stream: s.index, scanner: scanner)
            case .audio where tracks.audio == nil && tracks.pcm == nil:
                if let measure = AudioFrameMeasure(stream: s) {
                    tracks.audio = MediaDataScan.AudioTrack(track: kept.count, stream: s.index, measure: measure)
                } else if let chunks = Self.pcmChunkBytes(s) {
                    tracks.pcm = MediaDataScan.PCMTrack(track: kept.count, stream: s.index, chunkBytes: chunks)
                } else {
                    throw MediaError.invalid("could not repair with reference", path: reference.path, stream: s.index,
                                             message: "its audio is \(s.codecName); repair finds AAC frames and PCM chunks (of the reference's lengths) only")
                }
            case .data, .unknown:
                let sizes = Self.sampleSizes(s)
                guard let shape = DataSampleShape(track: reference.sourceIndex?.track(id: s.id), sizes: sizes) else {
                    leftOut.append((s, "its samples cannot be told apart in media data"))
                    continue
                }
                // Kept where the output can carry it, else only passed over.
                let carried = container.isISOBMFF && CarriedTrack.carries(s) && s.indexedPackets?.isEmpty == false
                let unsure = !shape.isStructured && !apart.isEmpty
                if !carried {
                    leftOut.append((s, container.isISOBMFF ? "its index lists no whole sample" : "\(container.name) cannot hold it"))
                } else if unsure {
                    let kinds = apart.map { reference.streams[$0].dataKind }.joined(separator: ", ")
                    leftOut.append((s, "its samples are known only by their size, and the reference keeps those of \(kinds) apart from its AAC frames (a file written again, not as the camera wrote it), so which such sample is which cannot be told"))
                }
                tracks.data.append(MediaDataScan.DataTrack(track: carried && !unsure ? kept.count : nil, stream: s.index, shape: shape,
                                                           sizes: Set(sizes), order: Self.sampleOrder(s)))
                if !carried || unsure { continue }
            default:
                leftOut.append((s, "its samples cannot be found in media data"))
                continue
            }
            guard s.mediaType == .data || s.mediaType == .unknown || container.canHold(s) != false else {
                throw MediaError.invalid("could not repair into", path: nil, stream: s.index,
                                         message: "\(container.name) cannot hold \(s.mediaType.rawValue) \(s.codecName)",
                                         remedy: .nameContainer)
            }
            kept.append(s)
        }
        // AAC frames are told by a decoder taking the bytes, which short runs
        // of other bytes often pass: beside samples known only by their size
        // (a GoPro's `fdsc` and timecode), a frame must also start with an
        // element the reference's frames start with.
        if let aac = tracks.audio, tracks.data.contains(where: { !$0.shape.isStructured }) {
            tracks.audio?.firstElements = try Self.firstElements(reference.streams[aac.stream], in: reference.path)
        }
        guard tracks.video != nil || tracks.audio != nil || tracks.pcm != nil else {
            throw MediaError.invalid("could not repair with reference", path: reference.path,
                                     message: "it has no H.264/HEVC video, AAC or PCM audio stream")
        }
    }

    /// Which stream's sample follows which in the reference's media data
    /// (see `MediaDataScan.Tracks.follows`).
    static func follows(_ reference: InputFile) -> [Int: Set<Int>] {
        var placed: [(position: Int64, end: Int64, stream: Int)] = []
        for s in reference.streams {
            for p in s.packetsInSampleTables ?? [] { placed.append((p.position, p.position + Int64(p.size), s.index)) }
        }
        placed.sort { $0.position < $1.position }
        var follows: [Int: Set<Int>] = [:]
        for (a, b) in zip(placed, placed.dropFirst()) where a.end == b.position {
            follows[a.stream, default: []].insert(b.stream)
        }
        return follows
    }

    /// The data streams of a reference with AAC whose samples are known only
    /// by their size and lie in runs of their own, apart from the other
    /// tracks' (a file written again, not as a camera writes): the reference
    /// does not say where such samples lie among the AAC frames, so the
    /// walk can only pass over every sample known by its size.
    static func sizeOnlyApart(_ reference: InputFile, follows: [Int: Set<Int>]) -> [Int] {
        guard reference.streams.contains(where: { $0.mediaType == .audio && $0.codecName == "aac" }) else { return [] }
        return reference.streams.filter { s in
            guard s.mediaType == .data || s.mediaType == .unknown, case let sizes = sampleSizes(s),
                  let shape = DataSampleShape(track: reference.sourceIndex?.track(id: s.id), sizes: sizes),
                  !shape.isStructured, (s.packetsInSampleTables?.count ?? 0) > 1 else { return false }
            return follows[s.index].map { $0.subtracting([s.index]).isEmpty } ?? true
        }.map(\.index)
    }

    /// The first element (syntax element id and instance tag: the first 7
    /// bits) of each of an AAC stream's frames in the reference.
    static func firstElements(_ s: InputStream, in path: String) throws(MediaError) -> Set<UInt8> {
        let mapped = try MappedFile(path: path)
        return mapped.withBytes { b in
            Set((s.packetsInSampleTables ?? []).compactMap { p -> UInt8? in
                p.size > 0 && p.position >= 0 && p.position < Int64(b.count) ? b[Int(p.position)] >> 1 : nil
            })
        }
    }

    /// The sizes of a stream's samples in the reference's index, in its order.
    static func sampleOrder(_ s: InputStream) -> [Int] {
        (s.packetsInSampleTables ?? []).map { Int($0.size) }
    }

    /// The sizes a stream's samples take in the reference's index, most used first.
    static func sampleSizes(_ s: InputStream) -> [Int] {
        var count: [Int: Int] = [:]
        for p in s.packetsInSampleTables ?? [] { count[Int(p.size), default: 0] += 1 }
        return count.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map(\.key)
    }

    /// The lengths in bytes of a PCM stream's runs in the reference's media
    /// data (its packets, which the demuxer cuts from chunks, joined where
    /// one follows another), shortest first; nil when the stream is not
    /// interleaved PCM or its index lists no packet.
    static func pcmChunkBytes(_ s: InputStream) -> [Int]? {
        guard let frame = s.pcmSilence?.count, frame > 0, let packets = s.packetsInSampleTables, !packets.isEmpty else { return nil }
        var runs: [Int] = []
        var runEnd: Int64 = -1
        for p in packets.sorted(by: { $0.position < $1.position }) {
            if p.position == runEnd, let last = runs.last {
                runs[runs.count - 1] = last + Int(p.size)
            } else {
                runs.append(Int(p.size))
            }
            runEnd = p.position + Int64(p.size)
        }
        var count: [Int: Int] = [:]
        for r in runs where r % frame == 0 { count[r, default: 0] += 1 }
        // Shortest first: a longer length can reach past the next sample to
        // a later one that also parses, a shorter one only by chance.
        let lengths = count.keys.sorted()
        return lengths.isEmpty ? nil : lengths
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
        return try MediaDataScan(b, boxes: TopLevelBoxes(b), tracks: plan.tracks, cancellation: cancellation) { at in
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
    // (Data tracks are carried apart from the muxer's streams, which the edits number.)
    let muxed = plan.kept.filter { $0.mediaType != .data && $0.mediaType != .unknown }
    for j in muxed.indices { edits.tags.append(.init(streams: .index(j), key: "creation_time", value: nil)) }
    // Nor is its timecode this recording's: a timecode track found in the media data is rebuilt as it is.
    for (j, s) in muxed.enumerated() where s.mediaType == .video {
        edits.tags.append(.init(streams: .index(j), key: "timecode", value: nil))
    }
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

    var report = rebuiltReport(inputPath, to: outputPath, container: container, plan: plan, scan: scan, found: found,
                               timelines: timelines, result: result, reference: reference)
    report.outputBytes = result.outputBytes
    report.elapsedSeconds = (ContinuousClock.now - began).seconds
    return report
}

/// What the rebuild wrote: per stream its packets and seconds, what the
/// walk left out, and the warnings that go with them.
private func rebuiltReport(_ inputPath: String, to outputPath: String, container: Container, plan: ReferencePlan,
                           scan: MediaDataScan, found: [Int], timelines: [RebuiltTimeline], result: MuxResult,
                           reference: InputFile) -> RepairReport {
    let referencePath = reference.path
    var report = RepairReport(input: inputPath, output: outputPath, container: container.name, method: .rebuilt,
                              streams: plan.kept.enumerated().map {
                                  RepairStreamReport(type: $1.mediaType, codec: $1.reportedCodec, packets: result.packets[$0],
                                                     bytes: result.payloadBytes[$0], referenceStream: $1.index)
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
    report.leftOut = leftOut(plan: plan, scan: scan, reference: reference)
    report.warnings = plan.warnings
    // (A data track's samples last as the reference's did: a timecode sample the whole recording.)
    var lengths: [Double] = []
    for (s, seconds) in zip(plan.kept, report.seconds) where seconds > 0 && (s.mediaType == .video || s.mediaType == .audio) {
        lengths.append(seconds)
    }
    if let longest = lengths.max(), let shortest = lengths.min(), lengths.count > 1, longest - shortest > 1 {
        report.warnings.append("the tracks recovered differ in length by \(fixed(longest - shortest, 2)) s: if one started late, its offset is not the reference's")
    }
    for l in report.leftOut {
        let what = l.streams.isEmpty ? "media data" : "the reference's stream\(l.streams.count > 1 ? "s" : "") #\(l.streams.map(String.init).joined(separator: "/")) (\(l.kind))"
        let place = l.offset.map { " at bytes \($0)–\($0 + (l.bytes ?? 0))" } ?? ""
        let count = l.samples.map { ", \($0) sample(s) passed over" } ?? ""
        report.warnings.append("\(what)\(place) left out: \(l.reason)\(count)")
    }
    report.warnings.append("timestamps rebuilt on the reference's frame and sample grid (the index that held them was never written)")
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
    if let frame = stream.pcmSilence?.count, stream.mediaType == .audio {
        return try pcmTimeline(for: stream, samples: samples, frameBytes: frame, fail: fail)
    }
    let isData = stream.mediaType == .data || stream.mediaType == .unknown
    // A data track of one sample (a timecode track's) lasts as long as its stream.
    if isData, let index = stream.indexedPackets, index.count == 1, let first = index.first {
        let ticks = max(stream.duration?.value ?? 1, 1)
        guard let t = RebuiltTimeline(count: samples.count, durationNumerator: ticks, durationDenominator: 1,
                                      origin: first.timestamp) else { throw fail("its timestamps do not give a sample duration") }
        return t
    }
    guard let index = stream.indexedPackets, index.count >= 2, let first = index.first, let last = index.last else {
        throw fail("its index must list at least two whole packets to give the sample duration")
    }
    // A data track whose samples all share one time keeps them so.
    if isData && last.timestamp == first.timestamp {
        guard let t = RebuiltTimeline(lengths: samples.map { _ in 1 }, durationNumerator: 0, durationDenominator: 1,
                                      origin: first.timestamp) else { throw fail("its timestamps do not give a sample duration") }
        return t
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

/// The timeline of PCM chunks: each starts after the sample frames before
/// it, at the reference's rate (its index's ticks per sample frame).
private func pcmTimeline(for stream: InputStream, samples: [FoundSample], frameBytes: Int,
                         fail: (String) -> MediaError) throws(MediaError) -> RebuiltTimeline {
    guard let index = stream.packetsInSampleTables, index.count >= 2, let first = index.first, let last = index.last else {
        throw fail("its index must list at least two whole packets to give the sample duration")
    }
    let frames = index.dropLast().reduce(Int64(0)) { $0 + Int64($1.size) } / Int64(frameBytes)
    guard let t = RebuiltTimeline(lengths: samples.map { Int64($0.size / frameBytes) },
                                  durationNumerator: last.timestamp - first.timestamp, durationDenominator: frames,
                                  origin: first.timestamp) else {
        throw fail("its timestamps do not give a sample duration")
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

/// What the rebuild left out, in the order of the reference's streams and
/// then of the input's bytes: tracks not rebuilt (with the samples passed
/// over), samples that could be of several tracks, stretches where no
/// sample was proven, and the bytes after the last sample found.
private func leftOut(plan: ReferencePlan, scan: MediaDataScan, reference: InputFile) -> [RepairLeftOut] {
    func kind(_ s: Int) -> String {
        let st = reference.streams[s]
        return st.mediaType == .data || st.mediaType == .unknown ? st.dataKind : "\(st.mediaType.rawValue) \(st.codecName)"
    }
    var out = plan.leftOut.map { l in
        RepairLeftOut(streams: [l.stream.index], kind: kind(l.stream.index), reason: l.why,
                      samples: scan.skipped[l.stream.index])
    }
    var places = scan.ambiguous.map { a in
        RepairLeftOut(streams: a.tracks, kind: a.tracks.map(kind).joined(separator: " or "),
                      reason: "the sample could be of either track", offset: Int64(a.range.lowerBound), bytes: Int64(a.range.count))
    }
    places += scan.gaps.map { g in
        RepairLeftOut(streams: [], kind: "media data", reason: "no sample of the reference's tracks was proven in it",
                      offset: Int64(g.lowerBound), bytes: Int64(g.count))
    }
    if scan.unplacedBytes > 0, let at = scan.stoppedAt {
        places.append(RepairLeftOut(streams: [], kind: "media data",
                                    reason: "it holds no whole sample of the reference's tracks (where a recording stopped)",
                                    offset: Int64(at), bytes: Int64(scan.unplacedBytes)))
    }
    out += places.sorted { ($0.offset ?? 0) < ($1.offset ?? 0) }
    return out
}
