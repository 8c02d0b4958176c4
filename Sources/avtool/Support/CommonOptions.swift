import ArgumentParser
import Concat
import Loudness
import Media
import Pipeline
import Remux
import Sync

/// Flags every verb that writes a file shares.
struct OutputOptions: ParsableArguments {
    @Flag(name: [.customShort("y"), .long], help: "Replace the output file if it already exists.")
    var overwrite = false

    @Flag(help: "With --overwrite, replace an output that is another user's file even where avtool cannot keep its owner (only root can): the new file is yours. Without it that is refused.")
    var replaceOthersFiles = false

    /// What `--replace-others-files` says.
    var othersFiles: OthersFiles { replaceOthersFiles ? .replace : .refuse }

    @Option(help: "Give up after this long (e.g. 90s, 10m, 2h): stop as Ctrl-C does, write nothing, exit status 124.")
    var timeout: Parsed<DurationKind>?

    func validate() throws {
        if let timeout, (timeout.value ?? .zero) <= .zero {
            throw ValidationError("'--timeout' \(timeout.text) is not a positive duration like 90s, 10m or 2h")
        }
    }

    /// Starts the `--timeout` clock, if one was given.
    func armTimeout() {
        if let timeout, let limit = timeout.value { Deadline.arm(limit, text: timeout.text) }
    }
}

/// Flags for what a verb prints.
struct ReportingOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Print nothing on stderr except errors (no progress, no summary).")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Also print FFmpeg's own warnings on stderr.")
    var verbose = false

    @Flag(help: "Print the report as JSON on stdout (a failure too: {\"error\": {\"code\": …}}).")
    var json = false

    @Option(help: "Machine-readable progress: 'json' writes JSON Lines (percent, output time, speed, ETA, bytes written) at least once a second on stderr, or on --progress-fd.")
    var progress: ProgressFormat?

    @Option(name: .customLong("progress-fd"), help: "The file descriptor --progress lines go to (default: 2, stderr).")
    var progressFd: Int32?

    /// The `--progress json` emitter, nil without it.
    func progressJSON(fields: [(String, String)] = []) -> ProgressJSON? {
        progress == .json ? ProgressJSON(fd: progressFd ?? 2, fields: fields) : nil
    }

    func applyLogLevel() {
        (verbose ? LibraryLogLevel.warning : .quiet).apply()
    }
}

/// The container flags of verbs that write a media file.
struct ContainerOptions: ParsableArguments {
    @Option(help: "The output container (\(Container.knownNames)), overriding OUTPUT's extension.")
    var format: String?

    @Flag(help: "Write MP4/MOV/M4A with the index at the end (no second pass over the file).")
    var noFaststart = false

    @OptionGroup(title: "Tags") var tagging: TaggingOptions

    func validate() throws {
        if let format, Container(named: format) == nil {
            throw ValidationError("unknown '--format' \(format); known: \(Container.knownNames)")
        }
    }

    var container: Container? { format.flatMap(Container.init(named:)) }
}

/// Flags that leave kinds of streams out, shared by the verbs that copy streams.
struct StreamDropOptions: ParsableArguments {
    @Flag(help: "Leave out audio streams.")
    var noAudio = false
    @Flag(help: "Leave out subtitle streams.")
    var noSubtitles = false
    @Flag(help: "Leave out data streams and attachments.")
    var noData = false
    @Flag(help: "Leave out attachments (fonts and files in Matroska; kept MKV to MKV, dropped with a warning elsewhere).")
    var noAttachments = false

    func apply(to selection: inout StreamSelection) {
        selection.audio = !noAudio
        selection.subtitles = !noSubtitles
        selection.data = !noData
        selection.attachments = !noAttachments
    }
}

/// Tag edits made as the output is written (nothing is re-encoded for them).
struct TaggingOptions: ParsableArguments {
    @Option(name: .customLong("metadata"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp("Set a tag: KEY=VALUE on the file, s:v:KEY=VALUE on video streams (s:a audio, s:s subtitles, s:N output stream N); an empty VALUE removes the key. Repeatable.",
                               valueName: "KEY=VALUE"))
    var metadata: [String] = []

    @Option(help: ArgumentHelp("Turn the picture N degrees clockwise when shown (0, 90, 180, 270): the display matrix of every video stream; 0 removes a turn. MP4/MOV only.",
                               valueName: "N"))
    var rotate: Int?

    @Option(help: ArgumentHelp("The recording's creation time, UTC (2024-05-01T12:00:00Z, or 'now'), on the file and every stream.",
                               valueName: "TIME"))
    var creationTime: String?

    func validate() throws {
        do { _ = try edits() } catch { throw ValidationError(error.commandLineMessage) }
    }

    /// The edits, checked.
    func edits() throws(MediaError) -> MetadataEdits {
        var e = MetadataEdits()
        for m in metadata { e.tags.append(try MetadataEdits.Tag(parsing: m)) }
        if let r = rotate {
            try MetadataEdits.checkRotation(r)
            e.rotation = r
        }
        if let t = creationTime { e.creationTime = try MetadataEdits.creationTime(parsing: t) }
        return e
    }
}

/// `--loudness` on the verbs that write an output and then bring its audio
/// to a target (merge, concat, fill-silence, cut).
struct LoudnessTargetOptions: ParsableArguments {
    @Option(help: "Bring the output's audio to a loudness target as 'avtool loudness' does (podcast, streaming, ebu, or LUFS such as -18): the output is written, measured, then its audio re-encoded with the gain (and the true-peak limiter where the plan needs it), keeping its start and length; everything else copied.")
    var loudness: String?

    @Option(help: "With --loudness: the true-peak ceiling in dBTP (default -1).")
    var truePeak: Double?

    func validate() throws { _ = try Self.target(loudness, truePeak: truePeak) }

    var target: LoudnessTarget? { try? Self.target(loudness, truePeak: truePeak) }

    /// `--loudness` and `--true-peak` read together (transcode's too), or why they cannot be.
    static func target(_ loudness: String?, truePeak: Double?) throws -> LoudnessTarget? {
        if truePeak != nil && loudness == nil { throw ValidationError("'--true-peak' is for '--loudness'") }
        guard let loudness else { return nil }
        guard let target = LoudnessTarget(loudness, truePeak: truePeak) else {
            throw ValidationError("'--loudness' \(loudness) is not podcast, streaming, ebu or a loudness between -70 and 0 LUFS (with '--true-peak' at most 0 dBTP)")
        }
        return target
    }
}

/// "; loudness -25.1 LUFS → -23.0 LUFS, true peak -6.9 dBTP (linear gain +2.1 dB)" per stream brought to a target.
func loudnessSummary(_ streams: [LoudnessStreamReport]?) -> String {
    var s = ""
    for l in streams ?? [] {
        s += "; loudness of audio #\(l.plan.stream) \(fixed(l.plan.before.integratedLUFS, 1)) LUFS"
        if let after = l.after { s += " → \(fixed(after.integratedLUFS, 1)) LUFS, true peak \(fixed(after.truePeakDBTP, 1)) dBTP" }
        s += l.plan.mode == .linear ? " (linear gain " : " (limited, gain "
        s += (l.plan.gainDB >= 0 ? "+" : "") + fixed(l.plan.gainDB, 1) + " dB)"
    }
    return s
}
