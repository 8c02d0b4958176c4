import FileNames
import ArgumentParser
import Media
import Pipeline
import Probe
import Remux
import Transcode
import Sync

struct RemuxCommand: WritingVerb {
    static let configuration = CommandConfiguration(
        commandName: "remux",
        abstract: "Change container without re-encoding: every packet is copied byte for byte.",
        discussion: """
            The container comes from OUTPUT's extension (\(Container.knownNames)) or --format. \
            All streams are kept unless dropped with --no-video, --no-audio, --no-subtitles, \
            --no-data or --no-cover-art. Data tracks (an iPhone's mebx timed metadata, a GoPro's gpmd \
            telemetry) go into mp4 and mov whole, carried by avtool where the muxer cannot write \
            them, with the video's Dolby Vision and spatial-video boxes; where a container cannot \
            hold a data track (mkv, ts) a warning names it and the rest is written. A video, audio \
            or subtitle stream the container cannot hold is an error that names it (nothing is \
            dropped silently).

            Timestamps: by default the whole file is shifted so its earliest stream starts at 0 \
            (offsets between streams are kept; --start keep leaves them as they are). Edit lists \
            and AAC priming, rotation, language, creation time, chapters and other metadata are \
            carried over. HEVC in MP4/MOV is tagged 'hvc1' so Apple players accept it. MP4/MOV/M4A \
            are written with the index first (faststart) unless --no-faststart.

            An MP4, MOV or M4A into the same kind of file with no other change asked than \
            --metadata, --rotate or --creation-time (the usual faststart or tagging job) is done \
            at disk speed: the media data is copied as it is (copy_file_range, file to file in \
            the kernel) and only the index is rewritten, in front, its chunk offsets moved and \
            the edits made in its own boxes; the input's tracks, edit lists and other tags stay \
            exactly as they were. An edit the index cannot take there (a stream tag other than \
            language or handler_name, say) goes through the muxer. --no-bulk always does.

            Timestamp repair: MP4, MOV and M4A require strictly increasing DTS; Matroska and \
            MPEG-TS require non-decreasing DTS; all require PTS >= DTS. A packet that breaks the \
            target's rule is fixed by the smallest change (DTS raised to one tick after the \
            previous, PTS raised to the DTS) and every fix is counted in the summary. With \
            --strict-timestamps such a packet is an error instead. MPEG-TS 33-bit wraps are undone.

            The output is written to a temporary file beside it and renamed only when complete; \
            on an error or Ctrl-C nothing is left behind and an existing file is not touched.
            """
    )

    @Argument(help: "The input media file.", completion: .file())
    var input: String

    @Argument(help: "The output file; its extension picks the container.", completion: .file())
    var output: String

    @Option(help: "Where the output timeline starts: 'zero' shifts the earliest stream to 0, 'keep' keeps the input's timestamps.")
    var start: StartPolicy = .zero

    @Flag(help: "Refuse timestamps the container would reject instead of fixing them.")
    var strictTimestamps = false

    @Flag(help: "Leave out video streams.")
    var noVideo = false
    @Flag(help: "Leave out cover art (only MP4 and M4A can hold it).")
    var noCoverArt = false

    @Flag(help: "Keep every complete packet of a damaged or cut-off input instead of refusing it; the report says what was lost.")
    var salvage = false

    @Flag(help: "Write every packet through the muxer even where the media data could be copied as it is (an MP4, MOV or M4A into the same kind of file, nothing else changed).")
    var noBulk = false

    @Option(help: "Audio: copy (default), or aac: audio that is not AAC (PCM, say, which MP4 cannot hold) encoded to AAC, the video and the rest copied.")
    var audio: RemuxAudio = .copy

    @Option(name: .customLong("audio-bitrate"), help: "With --audio aac: the AAC bit rate for all channels, e.g. 128k (default 64k per channel).")
    var audioBitrate: String?

    @OptionGroup var containerOptions: ContainerOptions
    @OptionGroup var drops: StreamDropOptions
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var reporting: ReportingOptions

    func validate() throws {
        if let audioBitrate {
            guard audio == .aac else { throw ValidationError("'--audio-bitrate' is for '--audio aac'") }
            guard TranscodeOptions.parseBitRate(audioBitrate) != nil else {
                throw ValidationError("'--audio-bitrate' \(audioBitrate) is not a bit rate like 128k or 96000")
            }
        }
    }

    var options: RemuxOptions {
        var o = RemuxOptions()
        o.container = containerOptions.container
        o.start = start
        o.repair = strictTimestamps ? .refuse : .fix
        drops.apply(to: &o.streams)
        o.streams.video = !noVideo
        o.streams.coverArt = !noCoverArt
        o.faststart = !containerOptions.noFaststart
        o.encodeAudioToAAC = audio == .aac
        o.audioBitRate = audioBitrate.flatMap(TranscodeOptions.parseBitRate)
        o.edits = (try? containerOptions.tagging.edits()) ?? MetadataEdits()  // checked by validate()
        o.overwrite = outputOptions.overwrite
        o.salvage = salvage
        o.bulk = !noBulk
        return o
    }

    func work(_ line: any ProgressSink) throws(MediaError) -> any VerbReport {
        try remux(input: input, output: output, options: options) { p in
            line.update(fraction: p.fraction, position: p.position, detail: "")
        }
    }
}

extension RemuxReport: VerbReport {
    var summary: String {
        let packets = streams.reduce(0) { $0 + $1.packets }
        let kinds = streams.map { "\($0.type.rawValue) \($0.codec)" + ($0.encodedFrom.map { " (encoded from \($0))" } ?? "") }
            .joined(separator: ", ")
        var s = "remuxed \(quoted(input)) → \(quoted(output)) (\(container)): \(kinds); \(packets) packets, "
        s += "\(formatBytes(outputBytes)) in \(fixed(elapsedSeconds, 2)) s"
        if let d = durationSeconds, elapsedSeconds > 0 { s += " (×\(fixed(d / elapsedSeconds, 2)))" }
        let c = corrections
        s += c.total == 0 ? "; no timestamp fixes needed"
            : "; timestamp fixes: \(c.dtsBumped) DTS bumped, \(c.ptsRaised) PTS raised, \(c.filled) filled, \(c.wraps) wraps"
        if !dropped.isEmpty { s += "; dropped streams " + dropped.map { "#\($0.index)" }.joined(separator: ", ") }
        return s
    }
}
extension StartPolicy: ExpressibleByArgument {}

/// What `remux --audio` does with the audio.
enum RemuxAudio: String, ExpressibleByArgument, CaseIterable {
    case copy, aac
}

