import ISOBMFF
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
    // Only tracks with samples are written (a muxer writes no track of none): `place` numbers them.
    let written = plan.kept.indices.filter { found[$0] > 0 }
    var place = [Int](repeating: -1, count: plan.kept.count)
    for (o, j) in written.enumerated() { place[j] = o }
    let streams = written.map { plan.kept[$0] }
    let timelines = try mapped.withBytes { (b) throws(MediaError) in
        try written.map { (j) throws(MediaError) in
            try timeline(for: plan.kept[j], samples: scan.samples.filter { $0.track == j }, bytes: b,
                         reference: referencePath, cancellation: cancellation)
        }
    }
    let session = try MuxSession(.file(outputPath, overwrite: options.overwrite, inputs: [inputPath, referencePath]),
                                 container: container, streams: streams.map { .copy($0) }, metadataSource: nil,
                                 edits: rebuiltEdits(streams, options: options), faststart: options.faststart,
                                 audioSampleRate: streams.first { $0.mediaType == .audio }?.sampleRate,
                                 cancellation: cancellation)
    for (o, s) in streams.enumerated() {
        try session.beginTimeline(track: o, stream: s, retimedIn: s.timeBase)
    }
    if container.isISOBMFF {
        session.bytesCheck = pcmCheck(streams: streams, place: place, samples: scan.samples, input: inputPath, output: outputPath)
    }
    let packet = try Packet()
    var next = [Int](repeating: 0, count: streams.count)
    try mapped.withBytes { (b) throws(MediaError) in
        let total = Double(max(scan.samples.count, 1))
        for (k, s) in scan.samples.enumerated() {
            let o = place[s.track]
            try packet.fill(UnsafeRawBufferPointer(rebasing: b[payload(s, first: next[o] == 0, of: streams[o], in: b.count)]),
                            keyframe: s.keyframe)
            packet.timing = timelines[o].timing(next[o])
            next[o] += 1
            try session.write(packet, track: o)
            if k % 256 == 0 { progress?(RepairProgress(fraction: 0.5 + 0.5 * Double(k) / total)) }
        }
    }
    let result = try session.finish()

    var report = rebuiltReport(inputPath, to: outputPath, container: container, plan: plan, scan: scan,
                               written: written, timelines: timelines, result: result, reference: reference)
    report.outputBytes = result.outputBytes
    report.elapsedSeconds = (ContinuousClock.now - began).seconds
    return report
}

/// Where sample `s` (the track's first when `first`, of `stream`) is taken
/// from in the input's `count` bytes: where it was found; for the tests of
/// the post-condition (`OutputFault.shiftPCM`), a first PCM chunk one
/// sample frame later.
private func payload(_ s: FoundSample, first: Bool, of stream: InputStream, in count: Int) -> Range<Int> {
    let found = s.offset..<(s.offset + s.size)
    guard OutputFault.chosen == .shiftPCM, first, let frame = stream.pcmSilence?.count, found.upperBound + frame <= count
    else { return found }
    return (found.lowerBound + frame)..<(found.upperBound + frame)
}

/// The tags of a rebuilt output of `streams`: stream tags come from the
/// reference, but not its creation time (another recording's) nor its
/// video's timecode (a timecode track found in the media data is rebuilt as it is).
private func rebuiltEdits(_ streams: [InputStream], options: RepairOptions) -> MetadataEdits {
    var edits = MetadataEdits()
    // (Data tracks are carried apart from the muxer's streams, which the edits number.)
    let muxed = streams.filter { $0.mediaType != .data && $0.mediaType != .unknown }
    for j in muxed.indices { edits.tags.append(.init(streams: .index(j), key: "creation_time", value: nil)) }
    for (j, s) in muxed.enumerated() where s.mediaType == .video {
        edits.tags.append(.init(streams: .index(j), key: "timecode", value: nil))
    }
    edits.tags += options.edits.tags
    edits.rotation = options.edits.rotation
    edits.creationTime = options.edits.creationTime
    return edits
}

/// The check of a rebuilt MP4/MOV output's PCM tracks before it is named
/// (a Matroska output's PCM is counted by `OutputCheck` only):
/// each holds exactly the input's bytes its chunks were taken from, in
/// order (PCM has no structure of its own that `OutputCheck` could count).
/// Muxed tracks come first in the index, in the order of `streams`.
private func pcmCheck(streams: [InputStream], place: [Int], samples: [FoundSample], input: String,
                      output: String) -> ((String) throws(MediaError) -> Void)? {
    let muxed = streams.indices.filter { streams[$0].mediaType != .data && streams[$0].mediaType != .unknown }
    let pcm = muxed.enumerated().filter { streams[$1].mediaType == .audio && streams[$1].pcmSilence != nil }
    guard !pcm.isEmpty else { return nil }
    return { (path: String) throws(MediaError) in
        for (inIndex, o) in pcm {
            let pieces = samples.filter { place[$0.track] == o }.map { Int64($0.offset)..<Int64($0.offset + $0.size) }
            try OutputCheck.verify(path: path, name: output, track: inIndex, holds: pieces, of: input)
        }
    }
}

/// What the rebuild wrote: per stream its packets and seconds, what the
/// walk left out, and the warnings that go with them.
private func rebuiltReport(_ inputPath: String, to outputPath: String, container: Container, plan: ReferencePlan,
                           scan: MediaDataScan, written: [Int], timelines: [RebuiltTimeline], result: MuxResult,
                           reference: InputFile) -> RepairReport {
    let referencePath = reference.path
    let streams = written.map { plan.kept[$0] }
    var report = RepairReport(input: inputPath, output: outputPath, container: container.name, method: .rebuilt,
                              streams: streams.enumerated().map {
                                  RepairStreamReport(type: $1.mediaType, codec: $1.reportedCodec, packets: result.packets[$0],
                                                     bytes: result.payloadBytes[$0], referenceStream: $1.index)
                              })
    report.reference = referencePath
    report.unplacedBytes = Int64(scan.unplacedBytes)
    report.seconds = streams.indices.map { o in
        guard let tb = streams[o].timeBase, result.packets[o] > 0 else { return 0 }
        let t = timelines[o], last = t.timing(result.packets[o] - 1)
        return Timestamp((last.pts ?? 0) + last.duration - t.origin, tb).seconds
    }
    if let v = streams.first(where: { $0.mediaType == .video })?.startTime,
       let a = streams.first(where: { $0.mediaType == .audio })?.startTime {
        report.audioOffsetMilliseconds = (a.seconds - v.seconds) * 1000
    }
    report.leftOut = leftOut(plan: plan, scan: scan, reference: reference)
    report.warnings = plan.warnings + [result.emptyTrackWarning(container: container)].compactMap { $0 }
    // (A data track's samples last as the reference's did: a timecode sample the whole recording.)
    var lengths: [Double] = []
    for (s, seconds) in zip(streams, report.seconds) where seconds > 0 && (s.mediaType == .video || s.mediaType == .audio) {
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
/// sample was proven, PCM chunks whose time is not known after them, and
/// the bytes after the last sample found.
private func leftOut(plan: ReferencePlan, scan: MediaDataScan, reference: InputFile) -> [RepairLeftOut] {
    func kind(_ s: Int) -> String {
        let st = reference.streams[s]
        return st.mediaType == .data || st.mediaType == .unknown ? st.dataKind : "\(st.mediaType.rawValue) \(st.codecName)"
    }
    var out = plan.leftOut.map { l in
        RepairLeftOut(streams: [l.stream.index], kind: kind(l.stream.index), reason: l.why,
                      samples: scan.skipped[l.stream.index])
    }
    let found = Set(scan.samples.map(\.track))
    for (j, s) in plan.kept.enumerated() where !found.contains(j) && scan.pcmUnplaced[s.index] == nil {
        out.append(RepairLeftOut(streams: [s.index], kind: kind(s.index), reason: "no sample of it was found in the media data"))
    }
    var places = scan.ambiguous.map { a in
        RepairLeftOut(streams: a.tracks, kind: a.tracks.map(kind).joined(separator: " or "),
                      reason: "the sample could be of either track", offset: Int64(a.range.lowerBound), bytes: Int64(a.range.count))
    }
    places += scan.gaps.map { g in
        RepairLeftOut(streams: [], kind: "media data", reason: "no sample of the reference's tracks was proven in it",
                      offset: Int64(g.lowerBound), bytes: Int64(g.count))
    }
    places += scan.pcmUnplaced.sorted { $0.key < $1.key }.map { stream, u in
        RepairLeftOut(streams: [stream], kind: kind(stream),
                      reason: "its \(u.chunks) chunk(s) here (\(u.bytes) bytes) lie after bytes left out (from byte \(u.after)) that may have held its audio, so their time is not known",
                      offset: Int64(u.span.lowerBound), bytes: Int64(u.span.count))
    }
    if scan.unplacedBytes > 0, let at = scan.stoppedAt {
        places.append(RepairLeftOut(streams: [], kind: "media data",
                                    reason: "it holds no whole sample of the reference's tracks (where a recording stopped)",
                                    offset: Int64(at), bytes: Int64(scan.unplacedBytes)))
    }
    out += places.sorted { ($0.offset ?? 0) < ($1.offset ?? 0) }
    return out
}
