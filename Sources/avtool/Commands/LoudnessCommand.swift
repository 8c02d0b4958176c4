import FileNames
import ArgumentParser
import Loudness
import Media
import Probe
import Sync
import Transcode

struct LoudnessCommand: WritingVerb {
    static let configuration = CommandConfiguration(
        commandName: "loudness",
        abstract: "Bring a recording's loudness to a target (EBU R128): the audio re-encoded with one gain, the rest copied.",
        discussion: """
            Planned before anything is written: each audio stream (or, with --audio N, stream #N \
            alone: the others are copied) is measured first (ITU-R \
            BS.1770-4 with EBU R128's gating, as 'avtool probe --loudness' does). The plan is a \
            linear gain whenever the gain that reaches the target loudness keeps the true peak at \
            or under the ceiling (the waveform unchanged but for its level); otherwise the same \
            gain followed by avtool's own look-ahead true-peak limiter: its gain is worked out \
            from the 4x-oversampled signal (the meter's own filter), comes down over 5 ms ahead \
            of each peak and back over 80 ms, and every sample keeps its place; its gain is found \
            by rehearsals (the input decoded through the limiter and measured, nothing encoded) \
            since limiting takes loudness with the peaks. The report says which, why, the figures \
            before and after, and how many dB the limiter took off the loudest peak and for how \
            long (no cap unless --max-limiting). Then one encode copies \
            every other stream packet for packet and re-encodes the audio in its own codec family \
            (AAC as AAC at 64 kb/s per channel unless --audio-bitrate, PCM as the same PCM, Opus \
            by libopus: FFmpeg's own Opus encoder is experimental) at its rate and channel \
            layout, or as AAC where the output's container cannot hold its family (Opus into \
            .m4a; the report says so), laid by a sample counter: the output's audio has the \
            input's samples, start and length, so sync is kept. A lossy encoder adds to the peaks \
            it is given, so the limiter is set a margin under the ceiling (0.3 to 1.2 dB by codec \
            and bit rate). The encoded output is measured before it gets its name: a stream over \
            the ceiling, or a limited one more than 0.3 LU off the target, is encoded once more \
            with the limiter corrected by what was measured (at most 2 encodes; the report says \
            how many). A ceiling still missed then is an error: exit status 1, nothing written \
            (--warn-over-ceiling writes it with a warning instead).

            Targets: podcast (-16 LUFS, -1 dBTP; Apple Podcasts), streaming (-14 LUFS, -1 dBTP; \
            Spotify, YouTube), ebu (-23 LUFS, -1 dBTP; EBU R128 broadcast), or a loudness in LUFS \
            such as -18; --true-peak sets another ceiling. --dry-run prints the plan and writes \
            nothing.

            Refused with one line, exit status 1 and nothing written: a file without audio, a \
            silent stream (below the -70 LUFS gate), a target that needs a gain above 40 dB, or \
            more off the peaks than --max-limiting allows, a ceiling the encoder cannot keep \
            (above). Audio whose codec this FFmpeg build has no encoder for (AMR) is written as \
            AAC, and the report says so. A stream \
            the output's container cannot hold is named with the flag that leaves it out \
            (--no-video, --no-cover-art, --no-subtitles, --no-data, --no-attachments).

            Examples: avtool loudness talk.mp4 talk-podcast.mp4 --target podcast; \
            avtool loudness film.mkv film-dialogue.mkv --audio 2 --target ebu (the second track alone); \
            avtool loudness show.mov --target -18 --true-peak -1.5 --max-limiting 6 --dry-run
            """
    )

    @Argument(help: "The input media file.", completion: .file())
    var input: String

    @Argument(help: "The output file (not needed with --dry-run); its extension picks the container.", completion: .file())
    var output: String?

    @Option(help: "The target: podcast, streaming, ebu, or an integrated loudness in LUFS such as -18.")
    var target: String = "podcast"

    @Option(help: "The true-peak ceiling in dBTP, instead of the target's (-1 for every preset).")
    var truePeak: Double?

    @Option(name: .customLong("max-limiting"), help: "The most the limiter may take off the peaks, in dB: a target that needs more is refused (default: no cap).")
    var maxLimiting: Double?

    @Flag(name: .customLong("warn-over-ceiling"), help: "Write the output with a warning when the encoder still puts the true peak over the ceiling after the corrective encode (default: an error, nothing written).")
    var warnOverCeiling = false

    @Flag(help: "Measure and print the plan; write nothing.")
    var dryRun = false

    @Option(name: .customLong("audio"), help: ArgumentHelp("Bring only audio stream #N (its number in 'avtool probe') to the target; the file's other audio streams are copied as they are (default: every audio stream, each to the target).", valueName: "N"))
    var audioStream: Int?

    @Option(name: .customLong("audio-bitrate"), help: "The AAC bit rate for all channels, e.g. 128k (default 64k per channel).")
    var audioBitrate: String?

    @Flag(help: "Leave out video streams.")
    var noVideo = false
    @Flag(help: "Leave out cover art (only MP4 and M4A can hold it).")
    var noCoverArt = false

    @OptionGroup var drops: StreamDropOptions
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var reporting: ReportingOptions

    func validate() throws {
        guard LoudnessTarget(target, truePeak: truePeak) != nil else {
            throw ValidationError("'--target' \(target) is not podcast, streaming, ebu or a loudness between -70 and 0 LUFS (with '--true-peak' at most 0 dBTP)")
        }
        if output == nil && !dryRun { throw ValidationError("an output file is needed unless '--dry-run' is given") }
        if let maxLimiting, !(maxLimiting.isFinite && maxLimiting >= 0) {
            throw ValidationError("'--max-limiting' \(maxLimiting) is not a number of dB at or above 0")
        }
        if drops.noAudio { throw ValidationError("'--no-audio' leaves loudness no audio to bring to the target") }
        if let audioStream, audioStream < 0 { throw ValidationError("'--audio' \(audioStream) is not a stream number (#0, #1, … as 'avtool probe' lists them)") }
        if let audioBitrate, TranscodeOptions.parseBitRate(audioBitrate) == nil {
            throw ValidationError("'--audio-bitrate' \(audioBitrate) is not a bit rate like 128k or 96000")
        }
    }

    var options: LoudnessOptions {
        var o = LoudnessOptions()
        o.target = LoudnessTarget(target, truePeak: truePeak) ?? .podcast  // checked by validate()
        o.overwrite = outputOptions.overwrite
        o.audioBitRate = audioBitrate.flatMap(TranscodeOptions.parseBitRate)
        o.maxLimitingDB = maxLimiting
        o.warnOverCeiling = warnOverCeiling
        o.audioStream = audioStream
        drops.apply(to: &o.streams)
        o.streams.video = !noVideo
        o.streams.coverArt = !noCoverArt
        return o
    }

    func work(_ line: any ProgressSink) throws(MediaError) -> any VerbReport {
        guard let output, !dryRun else { return try planLoudness(input: input, options: options) }
        return try normalizeLoudness(input: input, output: output, options: options) { p in
            line.update(fraction: p.fraction, position: p.position, detail: "")
        }
    }
}

extension LoudnessReport: VerbReport {
    var summary: String {
        let name = target.name.map { "\($0), " } ?? ""
        var lines = [output.map { "normalized \(quoted(input)) → \(quoted($0))" } ?? "plan for \(quoted(input)) (nothing written)"]
        lines[0] += " to \(name)\(fixed(target.integratedLUFS, 1)) LUFS, true peak ≤ \(fixed(target.truePeakDBTP, 1)) dBTP"
        for s in streams {
            let p = s.plan
            var l = "  stream #\(p.stream) (\(s.encoder)): \(figures(p.before)); "
            l += p.mode == .linear ? "linear gain \(signed(p.gainDB)) dB" : "gain \(signed(p.gainDB)) dB and a true-peak limiter"
            l += " (\(s.reason))"
            if let m = s.limiter, output != nil {
                l += "; limiter at \(fixed(m.limitDBTP, 1)) dBTP after gain \(signed(m.gainDB)) dB"
                if let r = m.reductionDB, let t = m.limitedSeconds {
                    l += r > 0 ? ", \(fixed(r, 1)) dB off the loudest peak, limiting for \(fixed(t, 1)) s" : ", nothing over it"
                }
            }
            if let a = s.after { l += "; after: \(figures(a))" }
            lines.append(l)
        }
        if output != nil {
            lines.append("  other streams copied: " + (copiedStreams.isEmpty ? "none" : copiedStreams.map { "#\($0)" }.joined(separator: ", "))
                         + "; \(formatBytes(outputBytes)) in \(fixed(elapsedSeconds, 2)) s"
                         + (passes > 1 ? "; \(passes) encodes (the limiter corrected by the first's measurement)" : "; 1 encode")
                         + (rehearsals > 0 ? ", \(rehearsals) rehearsal\(rehearsals == 1 ? "" : "s") of the limiter" : "")
                         + (encodesStopped > 0 ? " (\(encodesStopped) encode\(encodesStopped == 1 ? "" : "s") begun beside a rehearsal that moved the gain, stopped)" : ""))
        }
        return lines.joined(separator: "\n")
    }

    private func figures(_ f: LoudnessFigures) -> String {
        "\(fixed(f.integratedLUFS, 1)) LUFS, range \(fixed(f.rangeLU, 1)) LU, true peak \(fixed(f.truePeakDBTP, 1)) dBTP"
    }

    private func signed(_ v: Double) -> String { (v >= 0 ? "+" : "") + fixed(v, 1) }
}
