import Concat
import Cut
import Loudness
import Media
import Probe
import Remux
import Repair
import Sync
import Transcode

// Each verb hands its work to `AVTool.run` (a thread of its own, a stop flag
// of its own linked to the task). The free functions of the modules behind
// are called by their module's name: inside `AVTool` the statics' names
// would hide them.

extension AVTool {
    /// Reads a whole file once and reports its container, streams,
    /// durations, the skew between audio and video and the gaps in the audio.
    ///
    /// - Parameters:
    ///   - path: The file to read.
    ///   - gapTolerance: The smallest hole in the audio reported as a gap,
    ///     in microseconds; `nil` for the default (one audio frame).
    /// - Returns: What is in the file.
    /// - Throws: ``MediaError`` (a missing file is `MediaError.Category.notFound`).
    public static func probe(_ path: String, gapTolerance: Int64? = nil) async throws(MediaError) -> ProbeReport {
        try await run { cancellation throws(MediaError) in
            try Probe.probe(path: path, gapTolerance: gapTolerance, cancellation: cancellation)
        }
    }

    /// Measures the loudness (EBU R128) of every audio stream of a file.
    ///
    /// - Parameter path: The file to read.
    /// - Returns: One measurement per audio stream; empty when the file has no audio.
    /// - Throws: ``MediaError``.
    public static func measureLoudness(_ path: String) async throws(MediaError) -> [StreamLoudness] {
        try await run { cancellation throws(MediaError) in
            try Loudness.measureLoudness(path: path, cancellation: cancellation)
        }
    }

    /// Copies the streams of a file into another container without
    /// re-encoding: every payload is passed through; only timestamps move.
    ///
    /// - Parameters:
    ///   - input: The file to read.
    ///   - output: The file to write; it appears only once complete.
    ///   - options: Container, stream selection, timestamp policy, metadata.
    ///   - progress: Called on the work's thread as the input is read.
    /// - Returns: What was written, stream by stream.
    /// - Throws: ``MediaError``; `MediaError.Category.interrupted` when the task is cancelled.
    public static func remux(input: String, output: String, options: RemuxOptions = RemuxOptions(),
                             progress: (@Sendable (RemuxProgress) -> Void)? = nil) async throws(MediaError) -> RemuxReport {
        try await run { cancellation throws(MediaError) in
            try Remux.remux(input: input, output: output, options: options, cancellation: cancellation, progress: progress)
        }
    }

    /// Re-encodes the main video stream to HEVC (libx265) and writes it
    /// with the other streams, audio copied when the container holds it.
    ///
    /// - Parameters:
    ///   - input: The file to read.
    ///   - output: The file to write; it appears only once complete.
    ///   - options: Rate control, preset, size, frame rate, audio handling.
    ///   - chunks: When given, the video is cut into this many parts at
    ///     keyframes, encoded by several encoders at once, then joined.
    ///   - progress: Called on the work's thread as frames are encoded.
    /// - Returns: What was encoded and copied.
    /// - Throws: ``MediaError``; `MediaError.Category.interrupted` when the task is cancelled.
    public static func transcode(input: String, output: String, options: TranscodeOptions = TranscodeOptions(),
                                 chunks: Int? = nil,
                                 progress: (@Sendable (TranscodeProgress) -> Void)? = nil) async throws(MediaError) -> TranscodeReport {
        try await run { cancellation throws(MediaError) in
            if let chunks {
                return try Transcode.transcode(input: input, output: output, chunks: chunks, options: options,
                                               cancellation: cancellation, progress: progress)
            }
            return try Transcode.transcode(input: input, output: output, options: options, cancellation: cancellation,
                                           progress: progress)
        }
    }

    /// Puts the video of one file and the audio of another into one output, in sync.
    ///
    /// - Parameters:
    ///   - video: The file whose video is kept.
    ///   - audio: The file whose audio is laid beside it.
    ///   - output: The file to write; it appears only once complete.
    ///   - alignment: How the two are placed before `offset` applies.
    ///   - offset: How much later the audio starts (negative: earlier).
    ///   - syncByAudio: Find the offset (and the drift) by comparing the
    ///     audio with the video file's own audio instead.
    ///   - keepOriginalAudio: Keep the video file's own audio as a second track.
    ///   - options: Container, end policy, gap filling, tolerance.
    ///   - progress: Called on the work's thread as the output is written.
    /// - Returns: The placement, the silence inserted and the samples trimmed.
    /// - Throws: ``MediaError``; `MediaError.Category.interrupted` when the task is cancelled.
    public static func merge(video: String, audio: String, output: String, alignment: MergeAlignment = .start,
                             offset: Duration = .zero, syncByAudio: Bool = false, keepOriginalAudio: Bool = false,
                             options: AssemblyOptions = AssemblyOptions(),
                             progress: (@Sendable (AssemblyProgress) -> Void)? = nil) async throws(MediaError) -> AssemblyReport {
        try await run { cancellation throws(MediaError) in
            try Concat.merge(video: video, audio: audio, output: output, alignment: alignment, offset: offset,
                             syncByAudio: syncByAudio, keepOriginalAudio: keepOriginalAudio, options: options,
                             cancellation: cancellation, progress: progress)
        }
    }

    /// Joins recordings end to end, each one's audio padded or cut to its
    /// video so sync restarts at every joint.
    ///
    /// - Parameters:
    ///   - inputs: Two or more files, in order.
    ///   - output: The file to write; it appears only once complete.
    ///   - options: Container, tolerance, metadata.
    ///   - progress: Called on the work's thread as the output is written.
    /// - Returns: The joints and what was padded or trimmed.
    /// - Throws: ``MediaError``; `MediaError.Category.interrupted` when the task is cancelled.
    public static func concat(_ inputs: [String], output: String, options: AssemblyOptions = AssemblyOptions(),
                              progress: (@Sendable (AssemblyProgress) -> Void)? = nil) async throws(MediaError) -> AssemblyReport {
        try await run { cancellation throws(MediaError) in
            try Concat.concat(inputs, output: output, options: options, cancellation: cancellation, progress: progress)
        }
    }

    /// Fills the gaps in a file's audio with silence.
    ///
    /// - Parameters:
    ///   - input: The file to read.
    ///   - output: The file to write; it appears only once complete.
    ///   - toVideoEnd: Also pad audio that ends before the video.
    ///   - options: Container, tolerance, metadata.
    ///   - progress: Called on the work's thread as the output is written.
    /// - Returns: The silence inserted.
    /// - Throws: ``MediaError``; `MediaError.Category.interrupted` when the task is cancelled.
    public static func fillSilence(input: String, output: String, toVideoEnd: Bool = false,
                                   options: AssemblyOptions = AssemblyOptions(),
                                   progress: (@Sendable (AssemblyProgress) -> Void)? = nil) async throws(MediaError) -> AssemblyReport {
        try await run { cancellation throws(MediaError) in
            try Concat.fillSilence(input: input, output: output, toVideoEnd: toVideoEnd, options: options,
                                   cancellation: cancellation, progress: progress)
        }
    }

    /// Finds the offset and the clock drift between a video's own audio and
    /// audio recorded beside it, by comparing their waveforms. Nothing is written.
    ///
    /// - Parameters:
    ///   - video: The file with the video and its own audio.
    ///   - audio: The separately recorded audio.
    ///   - settings: The analysis's rates and windows.
    ///   - progress: Called on the work's thread with the fraction done (0…1).
    /// - Returns: The offset, the drift and how sure the estimate is.
    /// - Throws: ``MediaError``, also when no clear match is found.
    public static func estimateSync(video: String, audio: String, settings: WaveformSyncSettings = WaveformSyncSettings(),
                                    progress: (@Sendable (Double) -> Void)? = nil) async throws(MediaError) -> AudioSyncReport {
        try await run { cancellation throws(MediaError) in
            try Concat.estimateSync(video: video, audio: audio, settings: settings, cancellation: cancellation,
                                    progress: progress)
        }
    }

    /// Writes a time range of a file, cut at keyframes (or re-encoding the
    /// frames around the cut points, with `options.mode`).
    ///
    /// - Parameters:
    ///   - input: The file to read.
    ///   - output: The file to write; it appears only once complete.
    ///   - options: The range, the cut mode, container and streams.
    ///   - progress: Called on the work's thread as the output is written.
    /// - Returns: Where the cut fell and what was written.
    /// - Throws: ``MediaError``; `MediaError.Category.interrupted` when the task is cancelled.
    public static func cut(input: String, output: String, options: CutOptions,
                           progress: (@Sendable (CutProgress) -> Void)? = nil) async throws(MediaError) -> CutReport {
        try await run { cancellation throws(MediaError) in
            try Cut.cut(input: input, output: output, options: options, cancellation: cancellation, progress: progress)
        }
    }

    /// Splits a file into parts, each starting on a keyframe, without re-encoding.
    ///
    /// - Parameters:
    ///   - input: The file to read.
    ///   - pattern: The parts' paths, with `{n}` for the part number (1, 2, …).
    ///   - options: Where to split, container and streams.
    ///   - progress: Called on the work's thread as the parts are written.
    /// - Returns: The parts.
    /// - Throws: ``MediaError``; `MediaError.Category.interrupted` when the task is cancelled.
    public static func split(input: String, pattern: String, options: SplitOptions = SplitOptions(),
                             progress: (@Sendable (CutProgress) -> Void)? = nil) async throws(MediaError) -> SplitReport {
        try await run { cancellation throws(MediaError) in
            try Cut.split(input: input, pattern: pattern, options: options, cancellation: cancellation, progress: progress)
        }
    }

    /// Keeps what is readable of a damaged or cut-off file; an MP4/MOV whose
    /// index was never written is rebuilt with a reference recording's settings.
    ///
    /// - Parameters:
    ///   - input: The damaged file.
    ///   - output: The file to write; it appears only once complete.
    ///   - options: The reference recording, container, metadata.
    ///   - progress: Called on the work's thread as the output is written.
    /// - Returns: What was kept and what was left out.
    /// - Throws: ``MediaError``; `MediaError.Category.interrupted` when the task is cancelled.
    public static func repair(input: String, output: String, options: RepairOptions = RepairOptions(),
                              progress: (@Sendable (RepairProgress) -> Void)? = nil) async throws(MediaError) -> RepairReport {
        try await run { cancellation throws(MediaError) in
            try Repair.repair(input: input, output: output, options: options, cancellation: cancellation, progress: progress)
        }
    }

    /// Brings every audio stream of a file to a loudness target, copying the other streams.
    ///
    /// - Parameters:
    ///   - input: The file to read.
    ///   - output: The file to write; it appears only once complete.
    ///   - options: The target and the audio bit rate.
    ///   - progress: Called on the work's thread as the output is written.
    /// - Returns: Each stream's loudness before and after, and the gain applied.
    /// - Throws: ``MediaError``; `MediaError.Category.interrupted` when the task is cancelled.
    public static func normalizeLoudness(input: String, output: String, options: LoudnessOptions = LoudnessOptions(),
                                         progress: (@Sendable (LoudnessProgress) -> Void)? = nil) async throws(MediaError) -> LoudnessReport {
        try await run { cancellation throws(MediaError) in
            try Loudness.normalizeLoudness(input: input, output: output, options: options, cancellation: cancellation,
                                           progress: progress)
        }
    }
}
