import CFFmpeg
import Media
import Pipeline
import Sync

/// What one encode wrote: the streams copied, each input stream's track in
/// the output, the normalized streams measured as written, the writing's
/// time, what each stream's limiter took off.
struct WrittenNormalized {
    var copied: [Int]
    var outputIndex: [Int: Int]
    var measured: [Int: LoudnessFigures]
    var elapsed: Double
    var reductions: [Int: (db: Double, seconds: Double)]
    /// The muxer's warnings (a track no packet reached).
    var warnings: [String]
}

/// remux.c's shape with the audio re-encoded: plan the streams, open the
/// output with exactly those, every packet to its track's writer, finish.
/// Written into `output`'s temporary, left unnamed for the caller to
/// measure; what each stream's limiter took off, by input stream.
func writeNormalized(input inputPath: String, output: StagedOutput, report: LoudnessReport,
                             options: LoudnessOptions, cancellation: Cancellation,
                             progress: ((LoudnessProgress) -> Void)?) throws(MediaError)
    -> WrittenNormalized {
    let op = "could not normalize the loudness of"
    let container = try resolveContainer(nil, output: output.target)
    let input = try InputFile(path: inputPath, cancellation: cancellation)
    let families = Dictionary(uniqueKeysWithValues: report.streams.map { ($0.plan.stream, $0.encoder) })
    let encodings = try audioEncodings(input, container: container, selection: options.streams, bitRate: options.audioBitRate,
                                       operation: op) { s throws(MediaError) in families[s.index] }
    let plan = try planStreams(input, container: container, selection: options.streams, operation: op) {
        encodings[$0.index] != nil
    }
    var source = try PacketSource(input, kept: plan.kept, salvage: false, operation: op)
    var audio: [Int: AudioReencoder] = [:]
    for s in report.streams {
        guard var settings = encodings[s.plan.stream] else { continue }
        let stream = input.streams[s.plan.stream]
        settings.channelLayout = stream.channelLayout
        let reencoder = try AudioReencoder(settings: settings, source: stream)
        try reencoder.bringLoudness(s, stream: stream)
        try reencoder.begin(stream)
        // The encoder (most of the time here) beside the decoder and the limiter.
        reencoder.encodeOnThread()
        // An MP4/MOV track's edit can end inside its last packet (a cut, an
        // encoder's padding trimmed): the samples after it are not heard, and
        // are not written.
        if input.formatName.hasPrefix("mov") { reencoder.limit = presentedEnd(stream) }
        audio[s.plan.stream] = reencoder
    }
    let session = try MuxSession(.part(output), container: container,
                                 streams: plan.kept.map { s in audio[s.index].map { .encoded($0.encoder) } ?? .copy(s) },
                                 metadataSource: input, edits: MetadataEdits(), faststart: true,
                                 audioSampleRate: plan.kept.first { $0.mediaType == .audio }
                                    .map { audio[$0.index]?.encoder.sampleRate ?? $0.sampleRate },
                                 expectedBytes: input.size, cancellation: cancellation)
    try session.beginTimelines(plan.kept, start: .zero, repair: .fix, retimed: audio.mapValues { $0.encoder.timeBase })
    // Each encoded stream measured as its packets are written (decoded as a
    // player decodes the file: the encoder's priming skipped, its last
    // frame's padding cut), beside the encoder.
    var meters: [Int: StreamMeter] = [:]
    var writers: [any TrackWriter] = []
    for (j, s) in plan.kept.enumerated() {
        guard let a = audio[s.index] else {
            writers.append(CopyWriter(track: j, session: session))
            continue
        }
        guard measuresAsWritten(container, a.encoder) else {
            writers.append(ReencodeWriter(a, track: j, session: session))
            continue
        }
        let priming = Int64(a.encoder.initialPadding)
        let meter = try StreamMeter(stream: s, decoder: Decoder(decoding: a.encoder, of: s),
                                    window: (priming, { [unowned a] in priming + a.sent }))
        let writer = ReencodeWriter(a, track: j, session: session)
        writer.tap = { p throws(MediaError) in try meter.send(p) }
        meters[s.index] = meter
        writers.append(writer)
    }
    let duration = input.duration.map(\.seconds)
    try runTracks(&source, into: writers, cancellation: cancellation, progress: progress.map { progress in
        { progress(LoudnessProgress(position: session.position, duration: duration)) }
    })
    let result = try session.finish()
    try hidePriming(output, container: container, session: session, kept: plan.kept, audio: audio)
    var measured: [Int: LoudnessFigures] = [:]
    for (i, meter) in meters { measured[i] = try meter.finish() }
    return WrittenNormalized(copied: plan.kept.filter { audio[$0.index] == nil }.map(\.index),
                             outputIndex: Dictionary(uniqueKeysWithValues: plan.kept.enumerated().map { ($1.index, $0) }),
                             measured: measured, elapsed: result.elapsed.seconds,
                             reductions: audio.compactMapValues { ($0.stage as? PeakLimiter)?.reduction },
                             warnings: [result.emptyTrackWarning(container: container)].compactMap { $0 })
}

/// Whether `encoder`'s packets, decoded as they are written, give what the
/// written file plays: where the MP4/MOV edit list hides exactly the
/// encoder's priming and the last frame's padding, and the decoder skips
/// nothing of its own. So for AAC, AC-3 and E-AC-3 (measured equal to the
/// file's decode to 0.0001 LU and dB) and PCM (no priming). Not for Opus,
/// whose decoder and muxer treat its pre-skip otherwise, nor MP3, nor
/// Matroska, which keeps an AAC priming audible: their files are measured
/// after writing.
private func measuresAsWritten(_ container: Container, _ encoder: Encoder) -> Bool {
    guard container.isISOBMFF else { return false }
    let name = encoder.codecName
    return ["aac", "ac3", "eac3"].contains(name) || name.hasPrefix("pcm_")
}

/// The encoders' priming hidden by the MP4/MOV output's edit lists where
/// the muxer left some of it shown: when the decoder dropped samples at the
/// input's start by itself (libavcodec drops libfaac's 1024-sample delay,
/// which the container does not mark: a 2005 KDDI phone's 3G2), the
/// re-encoded audio starts that much in and the encoder's priming lies
/// after the track's zero, where it would be played and decoded: the
/// output would decode to 1024 samples more than the input. The empty edit
/// before the audio grows by what is hidden, so every sample keeps its time.
private func hidePriming(_ output: StagedOutput, container: Container, session: MuxSession, kept: [InputStream],
                         audio: [Int: AudioReencoder]) throws(MediaError) {
    guard container.isISOBMFF else { return }
    let priming = kept.enumerated().compactMap { j, s -> IndexCompletion.Priming? in
        guard let e = audio[s.index]?.encoder, e.initialPadding > 0, let t = session.muxerTrack(j) else { return nil }
        return IndexCompletion.Priming(track: t, samples: Int64(e.initialPadding), sampleRate: e.sampleRate)
    }
    guard !priming.isEmpty else { return }
    do throws(IndexCompletion.Failure) {
        try IndexCompletion.complete(path: output.temporary, entries: [], carried: [], priming: priming, faststart: true)
    } catch {
        throw MediaError(error, completing: output.target)
    }
}

/// Where an audio stream's presentation ends, in samples from its time
/// base's zero (its start plus its duration, which libavformat takes from
/// the track's edit); nil when either is unknown.
private func presentedEnd(_ s: InputStream) -> Int64? {
    guard let start = s.startTime, let duration = s.duration, let rate = Rational.perSecond(s.sampleRate),
          let a = start.rescaled(to: rate), let b = duration.rescaled(to: rate) else { return nil }
    return a.value &+ b.value
}
