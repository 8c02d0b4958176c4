import Media
import Sync

/// `avtool merge VIDEO AUDIO OUT`: video from one file, audio from another,
/// placed by `alignment` and `offset`, ended by `options.end`.
///
/// With `syncByAudio`, the offset comes from `estimateSync` (AUDIO against
/// VIDEO's own audio) instead: when the drift between the clocks would put
/// the ends of the overlap more than half the tolerance out of sync with
/// the best constant offset (`DriftPolicy`), AUDIO is resampled once to
/// VIDEO's clock and re-encoded; otherwise it is stream-copied at that
/// best constant offset. `keepOriginalAudio` copies VIDEO's own audio as a
/// second, non-default track.
public func merge(video: String, audio: String, output: String, alignment: MergeAlignment = .start,
                  offset: Duration = .zero, syncByAudio: Bool = false, keepOriginalAudio: Bool = false,
                  options: AssemblyOptions,
                  cancellation: Cancellation = .shared,
                  progress: ((AssemblyProgress) -> Void)? = nil) throws(MediaError) -> AssemblyReport {
    var spec = SegmentSpec(videoPath: video, audioPath: audio, alignment: alignment, offset: offset, name: "VIDEO")
    spec.keepOriginalAudio = keepOriginalAudio
    var options = options
    options.toleranceDefault = .jitter
    var estimate: AudioSyncReport?
    if syncByAudio {
        try options.validate()
        let e = try estimateSync(video: video, audio: audio, cancellation: cancellation)
        // A drift is no jitter: left uncorrected it holds the ends of the overlap off for
        // minutes, so its budget is the exact placement's unless '--tolerance' says otherwise.
        let tolerance = (options.tolerance ?? .milliseconds(ToleranceDefault.rounding.milliseconds)).seconds
        spec.alignment = .start
        if DriftPolicy.needsResampling(drift: e.driftPPM * 1e-6, span: e.overlapSeconds, tolerance: tolerance) {
            spec.offset = .microseconds(Int64((e.offsetMilliseconds * 1000).rounded()))
            spec.drift = e.driftPPM * 1e-6
        } else {
            spec.offset = .microseconds(Int64((e.copyOffsetMilliseconds * 1000).rounded()))
        }
        estimate = e
    }
    var report = try assemble([spec], output: output, options: options, verb: "merge", cancellation: cancellation, progress: progress)
    report.autoSync = estimate
    if let e = estimate { report.elapsedSeconds += e.elapsedSeconds }
    return report
}

/// `avtool concat A B … OUT`: segments end to end, each segment's audio
/// padded or cut to its video so A/V sync restarts at every joint. Files
/// of audio alone (voice memos, podcast segments, audiobook chapters) are
/// joined each where the one before ends, every packet copied.
public func concat(_ inputs: [String], output: String, options: AssemblyOptions,
                   cancellation: Cancellation = .shared,
                   progress: ((AssemblyProgress) -> Void)? = nil) throws(MediaError) -> AssemblyReport {
    guard inputs.count >= 2 else {
        throw MediaError.invalid("could not concatenate", message: "at least two segments are needed")
    }
    var options = options
    options.end = .video
    let specs = inputs.enumerated().map { i, path in
        SegmentSpec(videoPath: path, audioPath: path, alignment: .timestamps, name: "segment \(i + 1)",
                    requiresAudio: false, allowsAudioOnly: true)
    }
    return try assemble(specs, output: output, options: options, verb: "concatenate",
                        cancellation: cancellation, progress: progress)
}

/// `avtool fill-silence IN OUT`: the file's own audio with its gaps filled
/// (and, with `toVideoEnd`, a short tail padded to the video's end). A file
/// with audio and no video (an .m4a) is filled as audio alone.
public func fillSilence(input: String, output: String, toVideoEnd: Bool, options: AssemblyOptions,
                        cancellation: Cancellation = .shared,
                        progress: ((AssemblyProgress) -> Void)? = nil) throws(MediaError) -> AssemblyReport {
    var options = options
    options.end = toVideoEnd ? .longest : nil
    options.fill = true
    options.toleranceDefault = .jitter
    var spec = SegmentSpec(videoPath: input, audioPath: input, alignment: .timestamps, name: "input")
    spec.allowsAudioOnly = true
    return try assemble([spec], output: output, options: options, verb: "fill silence in",
                        cancellation: cancellation, progress: progress)
}

/// fill-silence on bytes in memory, into memory (at most `limit` bytes):
/// what the fuzz harness runs. Nothing touches the filesystem.
public func fillSilence(memory bytes: [UInt8], container: Container, toVideoEnd: Bool = false,
                        options: AssemblyOptions = AssemblyOptions(), limit: Int = 1 << 28) throws(MediaError) -> AssemblyReport {
    var options = options
    options.container = container
    options.end = toVideoEnd ? .longest : nil
    options.fill = true
    options.toleranceDefault = .jitter
    var spec = SegmentSpec(videoPath: "input", audioPath: "input", alignment: .timestamps, name: "input")
    spec.allowsAudioOnly = true
    return try assemble([spec], to: .memory(limit: limit), options: options, verb: "fill silence in",
                        open: InputOpener { name, c, light throws(MediaError) in
                            try InputFile(memory: MemoryInput(bytes), name: name, cancellation: c, packetsOnly: light)
                        },
                        cancellation: Cancellation(), progress: nil)
}

/// concat of segments in memory, into memory: the fuzz harness's way to
/// splice (segments may repeat the same bytes).
public func concat(memory segments: [[UInt8]], container: Container, options: AssemblyOptions = AssemblyOptions(),
                   limit: Int = 1 << 28) throws(MediaError) -> AssemblyReport {
    guard segments.count >= 2 else {
        throw MediaError.invalid("could not concatenate", message: "at least two segments are needed")
    }
    var options = options
    options.container = container
    options.end = .video
    let specs = segments.indices.map {
        SegmentSpec(videoPath: "segment\($0 + 1)", audioPath: "segment\($0 + 1)", alignment: .timestamps,
                    name: "segment \($0 + 1)", requiresAudio: false, allowsAudioOnly: true)
    }
    return try assemble(specs, to: .memory(limit: limit), options: options, verb: "concatenate",
                        open: InputOpener { name, c, light throws(MediaError) in
                            let k = Int(name.dropFirst("segment".count)).map { $0 - 1 } ?? 0
                            return try InputFile(memory: MemoryInput(segments[k]), name: name, cancellation: c,
                                                 packetsOnly: light)
                        },
                        cancellation: Cancellation(), progress: nil)
}
