import Media
import Sync

/// Reads the whole file once (flat memory: counters only) and reports what is
/// in it; skew and gaps come from the core's `ExtentTracker`, `AVSkew` and
/// `AudioGapScanner`. An HDR video's first frames are decoded on the way
/// (HDR10+ is in the bitstream, not the container), and an MP4/MOV file's
/// boxes read for what libavformat does not pass on (views, data tracks).
public func probe(path: String, gapTolerance: Int64? = nil, cancellation: Cancellation = .shared) throws(MediaError) -> ProbeReport {
    try probe(InputFile(path: path, cancellation: cancellation), gapTolerance: gapTolerance, cancellation: cancellation)
}

/// The same for a file already opened (from a path or from memory).
public func probe(_ input: InputFile, gapTolerance: Int64? = nil, cancellation: Cancellation = .shared) throws(MediaError) -> ProbeReport {
    let path = input.path
    let streams = input.streams

    var packets = [Int](repeating: 0, count: streams.count)
    var corrupt = [Int](repeating: 0, count: streams.count)
    var firstPTS = [Int64?](repeating: nil, count: streams.count)
    var firstDTS = [Int64?](repeating: nil, count: streams.count)
    var seen = [Bool](repeating: false, count: streams.count)
    var priming = [Int64](repeating: 0, count: streams.count)
    var samples = [Int64](repeating: 0, count: streams.count)
    var extents: [ExtentTracker?] = streams.map { s in s.timeBase.map { ExtentTracker(timeBase: $0) } }
    var scanners: [AudioGapScanner?] = streams.map { s in
        guard s.mediaType == .audio, let tb = s.timeBase else { return nil }
        return AudioGapScanner(timeBase: tb, sampleRate: s.sampleRate, toleranceSamples: gapTolerance)
    }
    let firstFrames = streams.map(FirstFrames.init)

    let packet = try Packet()
    while try input.read(into: packet) {
        try cancellation.check()
        let i = packet.streamIndex
        guard i < streams.count else { continue }
        let t = packet.timing
        packets[i] += 1
        if packet.isCorrupt { corrupt[i] += 1 }
        if !seen[i] {
            seen[i] = true
            firstPTS[i] = t.pts
            firstDTS[i] = t.dts
            if streams[i].mediaType == .audio { priming[i] = packet.skipSamplesAtStart }
        }
        // Frames an edit list hides (a cut's video from the keyframe before its start) are not shown:
        // they are not where the video starts or ends. (Audio's hidden priming is counted in `priming`.)
        if streams[i].mediaType == .audio || !packet.isDiscard { extents[i]?.add(pts: t.pts, duration: t.duration) }
        firstFrames[i]?.add(packet)
        if streams[i].mediaType == .audio {
            var n = streams[i].samples(in: packet)
            if n <= 0, let tb = streams[i].timeBase, let st = Rational.perSecond(streams[i].sampleRate) {
                n = rescale(t.duration, from: tb, to: st) ?? 0
            }
            samples[i] += n
            scanners[i]?.add(pts: t.pts, samples: n)
        }
    }

    for f in firstFrames { f?.finish() }
    let index = input.sourceIndex

    var reports: [StreamReport] = []
    for s in streams {
        let i = s.index
        if s.mediaType == .audio {
            if priming[i] == 0 { priming[i] = Int64(s.initialPadding) }
            extents[i]?.primingSamples = priming[i]
            extents[i]?.sampleRate = s.sampleRate
        }
        let extent = extents[i]?.extent
        let track = index?.track(id: s.id)
        reports.append(StreamReport(
            index: i, type: s.mediaType, codec: s.codecName, codecLongName: s.codecLongName,
            profile: s.profileName, codecTag: s.codecTag, timeBase: s.timeBase?.description,
            startSeconds: extent?.start.seconds ?? s.startTime?.seconds,
            durationSeconds: extent?.duration?.seconds ?? s.duration?.seconds,
            packets: packets[i], corruptPackets: corrupt[i], declaredFrames: s.declaredFrameCount, bitRate: s.bitRate,
            language: s.language, isDefault: s.isDefault, isAttachedPicture: s.isAttachedPicture,
            firstPTS: firstPTS[i], firstDTS: firstDTS[i],
            tags: Dictionary(s.metadata.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a }),
            video: s.mediaType == .video ? VideoReport(
                width: s.width, height: s.height, frameRate: s.realFrameRate?.description,
                frameRateValue: s.realFrameRate.map { Double($0.numerator) / Double($0.denominator) },
                averageFrameRate: s.averageFrameRate?.description,
                sampleAspectRatio: s.sampleAspectRatio?.description, pixelFormat: s.pixelFormat,
                colorRange: s.colorRange, colorPrimaries: s.colorPrimaries, colorTransfer: s.colorTransfer,
                colorSpace: s.colorSpace, rotation: s.rotation,
                hdr: HDRReport(s, firstFrames: firstFrames[i]), views: track?.views.map(ViewsReport.init)) : nil,
            audio: s.mediaType == .audio ? AudioReport(
                sampleRate: s.sampleRate, channels: s.channelCount, channelLayout: s.channelLayout,
                sampleFormat: s.sampleFormat, frameSize: s.frameSize, primingSamples: priming[i],
                samples: samples[i]) : nil,
            data: s.mediaType == .data ? track.flatMap(DataTrackReport.init) : nil))
    }

    var report = ProbeReport(
        file: path, format: input.formatName, formatLongName: input.formatLongName, size: input.size,
        durationSeconds: input.duration?.seconds, startSeconds: input.startTime?.seconds, bitRate: input.bitRate,
        tags: Dictionary(input.metadata.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a }),
        chapters: input.chapterCount, streams: reports,
        sync: syncReport(streams: streams, extents: extents, scanners: scanners))
    // Every packet has been read, so a fragmented file's fragments are all parsed.
    report.cutOff = input.cutOffSoFar
    return report
}

/// The main pair is the first default (else first) video that is not cover
/// art, and the first default (else first) audio.
private func syncReport(streams: [InputStream], extents: [ExtentTracker?],
                        scanners: [AudioGapScanner?]) -> SyncReport? {
    func main(_ type: MediaType) -> InputStream? {
        let candidates = streams.filter { $0.mediaType == type && !$0.isAttachedPicture && extents[$0.index]?.extent != nil }
        return candidates.first(where: \.isDefault) ?? candidates.first
    }
    let video = main(.video), audio = main(.audio)
    guard video != nil || audio != nil else { return nil }
    var skew: AVSkew?
    if let v = video, let a = audio, let ve = extents[v.index]?.extent, let ae = extents[a.index]?.extent {
        skew = AVSkew(video: ve, audio: ae, sampleRate: a.sampleRate)
    }
    var gaps: [GapReport] = []
    var count = 0, gapSamples: Int64 = 0, overlap: Int64 = 0
    var tolerance: Int64?
    for (index, scanner) in scanners.enumerated() {
        guard let scanner else { continue }
        count += scanner.discontinuityCount
        gapSamples += scanner.gapSamples
        overlap += scanner.overlapSamples
        tolerance = tolerance ?? scanner.toleranceSamples
        for d in scanner.discontinuities {
            gaps.append(GapReport(
                stream: index, atSeconds: Timestamp(d.expected, scanner.timeBase).seconds,
                atSample: d.samplePosition, samples: d.samples,
                milliseconds: Double(d.samples) * 1000 / Double(scanner.sampleRate)))
        }
    }
    return SyncReport(videoStream: video?.index, audioStream: audio?.index, skew: skew, gaps: gaps,
                      gapCount: count, gapSamples: gapSamples, overlapSamples: overlap, toleranceSamples: tolerance)
}
