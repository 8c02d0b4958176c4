import Media
import Pipeline
import Sync

/// One assembly being written: the mux session, the core's plan, and a
/// writer per track: video copied (track 0), audio copied or re-encoded
/// (track 1), the video file's own audio copied beside it (merge
/// `--keep-original-audio`), the data tracks. The run loop writes them from
/// an `AssemblyFeed`: segments one after another, each read in output-time
/// order from its own readers.
final class AssemblyRun {
    private let segments: Segments
    private let options: AssemblyOptions
    private let verb: String
    private let session: MuxSession
    /// The core's plan and where the run stands on it.
    private let clock: AssemblyClock
    private var plan: AssemblyPlan { clock.plan }
    private let cancellation: Cancellation
    /// `nil` for audio alone.
    private let video: SplicedVideoWriter?
    private let audio: (any AudioTrackWriter)?
    private let original: CopyWriter?
    /// The data tracks (the first segment's), each with the stream of every
    /// segment's matching track (`DataTrackKey`), nil where a segment has none.
    private let data: [(writer: CopyWriter, streams: [Int?])]
    private var report: AssemblyReport
    private let progress: ((AssemblyProgress) -> Void)?
    private let totalDuration: Double

    init(_ segments: Segments, handling: AudioHandling?, container: Container, destination: MuxDestination,
         options: AssemblyOptions, verb: String, layout: PlannedLayout?,
         cancellation: Cancellation, progress: ((AssemblyProgress) -> Void)?) throws(MediaError) {
        let first = segments.first
        self.segments = segments
        self.options = options
        self.verb = verb
        self.cancellation = cancellation
        self.progress = progress
        totalDuration = segments.facts.compactMap(\.duration).reduce(0, +)

        var reencoder: AudioReencoder?
        if case .reencode(let settings, _)? = handling, let a = first.audio {
            reencoder = try AudioReencoder(settings: settings, source: a.stream,
                                           toleranceSamples: options.toleranceSamples(timeBase: a.stream.timeBase,
                                                                                      sampleRate: settings.sampleRate))
            reencoder!.longestFillSeconds = options.longestFillSeconds
        }
        let sampleRate = reencoder?.encoder.sampleRate ?? first.audio?.stream.sampleRate ?? 0
        // Re-encoded starts: their parameter sets beside the source's in the codec record.
        var sources: [OutputStreamSource] = first.video.map { v in
            [segments.coding.map { .spliced(v.stream, extradata: $0.record, tag: $0.tag) } ?? .copy(v.stream)]
        } ?? []
        let audioTrack = sources.count
        if let a = first.audio { sources.append(reencoder.map { .encoded($0.encoder) } ?? .copy(a.stream)) }
        // The original audio follows as a track that is not the default.
        let originalTrack = sources.count
        if let o = first.original { sources.append(.copy(o.stream, isDefault: false)) }
        // Then the data tracks, each matched in every segment by its kind.
        let firstDataTrack = sources.count
        var dataWarnings = segments.dataWarnings
        let firstData = segments.facts[0].data
        var matched: [[Int?]] = firstData.map { _ in [] }
        for (n, facts) in segments.facts.enumerated() {
            var unused = facts.data
            for (j, d) in firstData.enumerated() {
                // The cover art is the first segment's (the muxer takes one picture a track).
                let k = d.isAttachedPicture && n > 0 ? nil : unused.firstIndex { $0.key == d.key }
                matched[j].append(k.map { unused.remove(at: $0).index })
            }
            for d in unused where !d.isAttachedPicture {
                dataWarnings.append("\(segments.specs[n].name): stream #\(d.index): data track \(d.kind) is not kept (the first segment has no track like it)")
            }
        }
        sources += first.data.map { .copy($0.stream) }
        session = try MuxSession(destination, container: container, streams: sources, metadataSource: first.main.file,
                                 edits: options.edits,
                                 faststart: options.faststart, audioSampleRate: first.audio == nil ? nil : sampleRate,
                                 cancellation: cancellation)
        video = first.video == nil ? nil : SplicedVideoWriter(CopyWriter(track: 0, session: session))
        original = first.original == nil ? nil : CopyWriter(track: originalTrack, session: session)
        let session = session
        data = matched.enumerated().map { (CopyWriter(track: firstDataTrack + $0, session: session), $1) }
        // Where the segments land, when the copied-audio scan placed them
        // (several segments): the run writes by it, cutting each segment's audio
        // at its video end from the start, exactly as the scan laid it out.
        clock = AssemblyClock(plan: layout?.plan ?? AssemblyPlan(segments, sampleRate: sampleRate, end: options.end),
                              layout: layout)
        switch handling {
        case .copy(let silence, let reencoded)?:
            audio = try AudioCopyTrack(track: audioTrack, session: session, silence: silence, sampleRate: sampleRate,
                                       toleranceSamples: copyTolerance(first.audio!.stream, options: options),
                                       fill: options.fill, longestFillSeconds: options.longestFillSeconds,
                                       reencoded: reencoded)
        case .reencode?:
            audio = AudioReencodeTrack(reencoder!, track: audioTrack, session: session)
        case nil:
            audio = nil
        }
        if let a = first.audio {
            try session.beginTimeline(track: audioTrack, stream: a.stream, retimedIn: clock.plan.sampleTimeBase)
        }
        report = AssemblyReport(segments, handling: handling, container: container, output: destination.name,
                                sampleRate: first.audio == nil ? nil : sampleRate)
        report.warnings += dataWarnings
    }

    /// Writes every segment through the run loop, then finishes the output.
    func run() throws(MediaError) -> AssemblyReport {
        var feed = AssemblyFeed(segments: segments, clock: clock, session: session, verb: verb,
                                videoTrack: video?.track, audio: audio, originalTrack: original?.track,
                                data: data.map { ($0.writer.track, $0.streams) }, video: video)
        var writers: [any TrackWriter] = []
        if let video { writers.append(video) }
        if let audio { writers.append(PlacedAudioWriter(audio, clock: clock)) }
        if let original { writers.append(original) }
        writers += data.map(\.writer)
        try runTracks(&feed, into: writers, cancellation: cancellation) { [self] in reportProgress() }
        report.jointsSeconds = feed.joints
        if audio != nil { report.jointsSamples = feed.jointsSamples }
        let result = try session.finish()
        return finalReport(result)
    }

    /// Progress at the output time written last.
    private func reportProgress() {
        guard let progress, let t = clock.position else { return }
        let position = t.seconds - Timestamp(clock.plan.videoStart ?? 0, clock.plan.videoTimeBase).seconds
        progress(AssemblyProgress(position: position, duration: totalDuration > 0 ? totalDuration : nil))
    }

    /// Sync as written.
    private func finalReport(_ result: MuxResult) -> AssemblyReport {
        var report = report
        if let audio {
            let a = audio.summary
            report.silenceInsertedSamples = a.silenceInserted
            report.samplesTrimmed = a.samplesTrimmed
            report.largestShiftSamples = a.largestShift
            report.largestShiftMilliseconds = Timestamp(a.largestShift, plan.sampleTimeBase).seconds * 1000
            report.repairs = a.repairs.map {
                AudioRepairReport(atSeconds: Timestamp($0.position, plan.sampleTimeBase).seconds, samples: $0.samples)
            }
            if let s = a.start, let e = a.shownEnd ?? a.end, let vs = plan.videoStart, video != nil {
                report.skew = AVSkew(video: TrackExtent(start: Timestamp(vs, plan.videoTimeBase),
                                                        end: Timestamp(plan.videoEnd, plan.videoTimeBase)),
                                     audio: TrackExtent(start: Timestamp(s, plan.sampleTimeBase),
                                                        end: Timestamp(e, plan.sampleTimeBase)),
                                     sampleRate: plan.sampleRate)
            }
            report.audioPackets = result.packets[audio.track]
            if let copy = audio as? AudioCopyTrack {
                report.silentFramesAdded = copy.silentFrames
                report.audioFramesReencoded = copy.framesReencoded
                report.audioStretchesReencoded = copy.regionsReencoded
            }
        }
        if let o = plan.offsetSamples {
            report.offsetSamples = o
            report.offsetMilliseconds = Double(o) * 1000 / Double(plan.sampleRate)
        }
        report.startSetAsideMilliseconds = plan.startSetAsideSamples.map { Double($0) * 1000 / Double(plan.sampleRate) }
        report.videoPackets = video == nil ? 0 : result.packets[0]
        report.videoFramesReencoded = video?.framesReencoded ?? 0
        report.trimmedStartsReencoded = segments.spliced.count
        report.trimmedEndsReencoded = segments.trimmedEnds.count
        report.corrections = [video?.track, audio?.track].compactMap { $0 }
            .reduce(TimelineCorrections()) { $0 + result.corrections[$1] }
        report.outputBytes = result.outputBytes
        report.warnings += result.warnings(container: session.container)
        report.durationSeconds = plan.duration?.seconds
        return report
    }
}

/// Places segment `k` on the output timeline from its first packets (the
/// readers are peeked, not consumed). The copied-audio scan and the run
/// place segments through this one function, so they agree.
func place(_ seg: Segment, index k: Int, in plan: inout AssemblyPlan, verb: String) throws(MediaError) -> SegmentPlacement {
    var audio: SegmentAudioTiming?
    if let a = seg.audio {
        let first = try a.peek() ? a.packet.timing.pts : nil
        audio = SegmentAudioTiming(timeBase: a.stream.timeBase!, startTime: a.stream.startTime, firstPTS: first,
                                   duration: a.stream.duration, editEnd: seg.audioEditEnd)
    }
    var video: SegmentVideoTiming?
    if let v = seg.video {
        let vs = v.stream
        guard try v.peek() else {
            throw MediaError.invalid("could not \(verb)", path: vs.file.path, stream: vs.index,
                                     message: "the video stream has no packets")
        }
        var first = v.packet.timing
        // A trimmed start re-encoded (`spliceCoding`): the first packet
        // written is the first shown frame, decoded as far ahead of its
        // presentation as the keyframe's before it.
        if seg.spliced, let p = first.pts, let d = first.dts {
            first = PacketTiming(pts: seg.shownStart, dts: seg.shownStart &- (p &- d), duration: first.duration)
        }
        video = SegmentVideoTiming(timeBase: vs.timeBase!, startTime: vs.startTime, first: first,
                                   reorderDelay: vs.reorderDelay, duration: vs.duration, editEnd: seg.editEnd,
                                   reencodedTail: seg.splicedUntil != nil)
    } else if audio?.firstPTS == nil {
        let s = seg.main.stream
        throw MediaError.invalid("could not \(verb)", path: s.file.path, stream: s.index,
                                 message: "the audio stream has no packets")
    }
    do {
        if let video {
            return try plan.begin(video: video, audio: audio, alignment: seg.spec.alignment, offset: Timestamp(seg.spec.offset))
        }
        return try plan.begin(audioOnly: audio!)
    } catch {
        let s = seg.audio?.stream ?? seg.main.stream
        switch error {
        case .overflow:
            throw MediaError.invalid("could not \(verb)", path: s.file.path, stream: s.index, message: "timestamps overflow")
        case .audioOutsideVideo:
            throw MediaError.invalid("could not \(verb)", path: s.file.path, stream: s.index,
                                     message: "the offset puts the audio entirely outside the video",
                                     remedy: .checkOffset)
        }
    }
}

extension AssemblyPlan {
    /// The plan for these segments: on the first one's video time base, or
    /// in samples for audio alone.
    init(_ segments: Segments, sampleRate: Int32, end: EndPolicy?) {
        if let v = segments.first.video {
            self.init(videoTimeBase: v.stream.timeBase!, sampleRate: sampleRate, end: end, segments: segments.count)
        } else {
            self.init(audioOnlySampleRate: sampleRate)
        }
    }
}

/// How far a copied packet of `stream` may land from its timestamp: the
/// option, else the verb's default.
func copyTolerance(_ stream: InputStream, options: AssemblyOptions) -> Int64 {
    options.toleranceSamples(timeBase: stream.timeBase, sampleRate: stream.sampleRate)
}

extension AssemblyReport {
    /// The report before anything is written: inputs, codecs, how the audio goes.
    init(_ segments: Segments, handling: AudioHandling?, container: Container, output: String, sampleRate: Int32?) {
        let first = segments.first
        self.init(inputs: SegmentSpec.inputs(of: segments.specs), output: output, container: container.name)
        videoCodec = first.video?.stream.codecName
        switch handling {
        case .reencode(let settings, let reason)?:
            audioCodec = AudioEncoderCapabilities(codec: settings.codec)?.codecName ?? settings.codec
            audioMode = "re-encoded"
            reencodeReason = reason
            if let d = first.spec.drift { driftCorrectedPPM = d * 1e6 }
        case .copy?:
            audioCodec = first.audio?.stream.codecName
            audioMode = "copied"
        case nil:
            break
        }
        self.sampleRate = sampleRate
        originalAudioCodec = first.original?.stream.codecName
    }
}

/// What makes data tracks of two segments one output track: the same kind
/// (sample entry type, else codec tag) holding the same keys (a `mebx`
/// track's) under the same handler name.
struct DataTrackKey: Equatable {
    let type: String
    let keys: [String]
    let handler: String?

    init(_ s: InputStream) {
        let track = s.file.sourceIndex?.track(id: s.id)
        type = track?.sampleEntryType?.description ?? s.codecTag ?? s.codecName
        keys = track?.metadataKeys ?? []
        handler = track?.handlerName ?? s.tag("handler_name")
    }
}
