import FileNames
import ArgumentParser
import Media
import Pipeline
import Probe
import Remux
import Sync
import Transcode

struct TranscodeCommand: WritingVerb {
    static let configuration = CommandConfiguration(
        commandName: "transcode",
        abstract: "Re-encode the video to H.265 (libx265) and copy the other streams.",
        discussion: """
            The main video stream is decoded (threaded), converted only when the encoder needs it \
            (pixel format, --size), and encoded with libx265; audio and other streams are copied \
            where the container (from OUTPUT's extension: mov, mp4, mkv, …) holds them. Timestamps \
            pass through unchanged, so variable frame rate stays variable and no frame is dropped \
            or duplicated, unless --fps asks for a constant rate. HEVC in MP4/MOV is tagged 'hvc1'; color properties and rotation are \
            carried over. Rate control: --crf (default \(Int(TranscodeOptions.defaultCRF))), --bitrate or \
            --bpp (bits per pixel per frame × width × height × fps). Keyframes every 3 seconds \
            unless --keyint. Audio is copied when the container holds it, else encoded to AAC \
            (64 kb/s per channel unless --audio-bitrate); --audio pcm writes 16-bit PCM (mov). \
            HDR10 input stays HDR: Main10, with its mastering-display and light-level metadata. \
            HDR10+ and Dolby Vision (profiles 5 and 8.x) are carried frame by frame: each picture \
            gets its source picture's dynamic metadata and RPU, and the output the source's Dolby \
            Vision configuration record (made from the RPUs where the container has none). Where \
            the RPUs would no longer fit the picture (--size, a dual-layer profile 7, an H.264 \
            base layer) Dolby Vision is dropped with a warning and the base layer encoded; a \
            profile 5 stream, which has no compatible base layer, is then refused unless \
            --no-dolby-vision drops it. \
            --sdr makes an SDR copy people can share: the HDR picture (HLG, PQ, HDR10+, a Dolby \
            Vision stream's base layer) tone-mapped to BT.709 through libavfilter (zimg to linear \
            light, BT.2020 to BT.709 primaries, a filmic curve with highlights desaturated gently, \
            --tone-map to choose another), the peak from the content light level or mastering \
            display (else PQ's 10,000 or HLG's 1,000 nits); 8-bit Main, BT.709 tags, no HDR or \
            Dolby Vision metadata left. On SDR input --sdr changes nothing (a note says so). \
            Audio-only input is refused (use 'avtool remux').

            Chunks: --chunks N cuts the video at keyframes into N chunks of about equal duration, \
            encodes them with several x265 encoders at once (--jobs, default one per core) and \
            joins them; each chunk starts with an IDR at a source keyframe, frames keep the \
            source's timestamps, the audio is copied or encoded once over the whole file. On a \
            cluster, 'transcode IN --chunk K/N --chunk-dir DIR' encodes chunk K (an array task; \
            a chunk already in DIR's ledger is not encoded again) and 'transcode --join DIR OUT' \
            joins them, refusing a missing chunk or one encoded with other settings. With --crf \
            every chunk is encoded to the same quality; with --bitrate or --bpp each chunk meets \
            the average on its own (the whole file's average holds, the distribution between \
            chunks is not optimised across them). --fps cannot be combined with chunks.

            Quality: --quality 0.985 (or archive = SSIM 0.99, high = 0.985, share = 0.97; with \
            --quality-metric psnr: 45, 42, 38 dB) finds the CRF instead of taking one: three \
            2-second samples spread through the file, one moved onto the stretch the source spent \
            the most bytes on (all of a file under 12 s, held to its weakest 2 seconds), are encoded with the \
            same preset, tune, size, bit depth and HDR handling as the real encode, decoded, and \
            measured against the pictures the encoder was given by libavfilter's ssim (or psnr) \
            filter; the CRF is interpolated between sample encodes until the WEAKEST sample meets \
            the target, within --min-crf/--max-crf (default \(Int(QualityTarget.defaultMinCRF))–\(Int(QualityTarget.defaultMaxCRF))). \
            The report gives the CRF, the weakest and mean sample scores, the predicted size and \
            time; --dry-run stops there. With --chunks each chunk gets its own CRF from its own \
            samples. The sample encodes are cached per input and settings in \
            $XDG_CACHE_HOME/avtool (or ~/.cache/avtool): a rerun with another target encodes only \
            the CRFs not tried before. A target no CRF within the bounds reaches is refused before \
            anything is written, naming the closest score reached. --verify-quality measures the \
            whole output as it is encoded (with --chunks, each chunk as it is encoded) and its \
            weakest 2 seconds.
            """
    )

    @Argument(help: "The input media file (omitted with --join).", completion: .file())
    var input: String?

    @Argument(help: "The output file; its extension picks the container (mov is the usual choice). Omitted with --chunk.",
              completion: .file())
    var output: String?

    @Option(help: "Encode in N chunks at keyframes, several at once, then join them (mp4, mov, mkv).")
    var chunks: Int?

    @Option(help: "Encode only chunk K of N into --chunk-dir (one task of a cluster job): K/N, e.g. 3/16.")
    var chunk: String?

    @Option(name: .customLong("chunk-dir"), help: "Where the chunks and their ledger go (--chunk, --join; with --chunks, kept and reused).",
            completion: .directory)
    var chunkDir: String?

    @Option(help: "Join the chunks in DIR into OUTPUT (after every --chunk task).", completion: .directory)
    var join: String?

    @Option(help: "With --chunks: encoders run at once (default: one per core).")
    var jobs: Int?

    @Option(help: "Constant quality, 0–51 (lower is better; default \(Int(TranscodeOptions.defaultCRF))).")
    var crf: Double?

    @Option(help: "Encode to a quality instead of a CRF: an SSIM such as 0.985 (a PSNR in dB with --quality-metric psnr), or archive, high or share; the CRF is searched from sample encodes so that the weakest sample meets it.")
    var quality: String?

    @Option(name: .customLong("quality-metric"), help: "With --quality: ssim (default) or psnr.")
    var qualityMetric: QualityMetric?

    @Option(name: .customLong("min-crf"), help: "With --quality: the lowest CRF the search may choose (default \(Int(QualityTarget.defaultMinCRF))).")
    var minCRF: Double?

    @Option(name: .customLong("max-crf"), help: "With --quality: the highest CRF the search may choose (default \(Int(QualityTarget.defaultMaxCRF))).")
    var maxCRF: Double?

    @Flag(name: .customLong("verify-quality"), help: "With --quality: measure the whole output against the source as it is encoded, and report it beside the prediction.")
    var verifyQuality = false

    @Flag(name: .customLong("dry-run"), help: "With --quality: search the CRF and report it with the predicted size and time, without encoding.")
    var dryRun = false

    @Option(help: "Average video bit rate, e.g. 4M or 800k.")
    var bitrate: String?

    @Option(help: "Bit rate as bits per pixel per frame (e.g. 0.1): bpp × width × height × fps.")
    var bpp: Double?

    @Option(help: "x265 preset: \(TranscodeOptions.presets.joined(separator: ", ")).", completion: .list(TranscodeOptions.presets))
    var preset = "medium"

    @Option(help: "x265 tune: \(TranscodeOptions.tunes.joined(separator: ", ")).", completion: .list(TranscodeOptions.tunes))
    var tune: String?

    @Option(name: .customLong("x265-params"), help: "Extra x265 parameters, key=value:key=value.")
    var x265Params: String?

    @Option(help: "Frames between keyframes (default: 3 seconds of frames).")
    var keyint: Int?

    @Flag(name: .customLong("10bit"), help: "Encode Main10 (yuv420p10le) instead of Main (8-bit).")
    var tenBit = false

    @Option(help: "Output size WxH; -1 for one side keeps the aspect ratio (e.g. 1280x-1). Rounded down to even.")
    var size: String?

    @Option(help: "Constant output frame rate (30, 30000/1001, 29.97): frames are dropped or repeated to fit. Default: timestamps pass through.")
    var fps: String?

    @Option(help: "Audio: auto (copy if the container holds it, else AAC), copy, aac, pcm (16-bit, for mov).")
    var audio: AudioMode = .auto

    @Option(name: .customLong("audio-bitrate"), help: "AAC bit rate for all channels, e.g. 128k (default 64k per channel).")
    var audioBitrate: String?

    @Option(help: "Bring the audio to a loudness target as 'avtool loudness' does (podcast, streaming, ebu, or LUFS such as -18): it is measured first, then re-encoded in its own codec family with the gain (and the true-peak limiter where the plan needs it) in the same pass.")
    var loudness: String?

    @Option(help: "With --loudness: the true-peak ceiling in dBTP (default -1).")
    var truePeak: Double?

    @Flag(help: "An SDR copy of HDR video (HLG, PQ, HDR10+, Dolby Vision's base layer): tone-mapped to BT.709, 8-bit unless --10bit, no HDR metadata left.")
    var sdr = false

    @Option(name: .customLong("tone-map"), help: "With --sdr: the curve for the highlights: \(ToneMapOperator.allCases.map(\.rawValue).joined(separator: ", ")) (default: hable, filmic).")
    var toneMap: ToneMapOperator?

    @Flag(name: .customLong("no-dolby-vision"),
          help: "Drop Dolby Vision (encode the picture as it is, without RPUs or configuration record).")
    var noDolbyVision = false

    @Flag(help: "Keep every complete packet of a damaged or cut-off input instead of refusing it; the report says what was lost.")
    var salvage = false

    @OptionGroup var containerOptions: ContainerOptions
    @OptionGroup var drops: StreamDropOptions
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var reporting: ReportingOptions

    func validate() throws {
        let rates = [crf != nil ? "'--crf'" : nil, bitrate != nil ? "'--bitrate'" : nil, bpp != nil ? "'--bpp'" : nil]
            .compactMap { $0 }
        if rates.count > 1 { throw ValidationError("\(rates.joined(separator: " and ")) cannot be used together") }
        try validateQuality(rates: rates)
        if let fps, TranscodeOptions.parseFrameRate(fps) == nil {
            throw ValidationError("'--fps' \(fps) is not a frame rate like 30, 29.97 or 30000/1001")
        }
        if let audioBitrate, TranscodeOptions.parseBitRate(audioBitrate) == nil {
            throw ValidationError("'--audio-bitrate' \(audioBitrate) is not a bit rate like 128k or 96000")
        }
        _ = try LoudnessTargetOptions.target(loudness, truePeak: truePeak)
        if let bitrate, TranscodeOptions.parseBitRate(bitrate) == nil {
            throw ValidationError("'--bitrate' \(bitrate) is not a bit rate like 4M, 800k or 2500000")
        }
        if let size, Self.parseSize(size) == nil {
            throw ValidationError("'--size' \(size) is not WxH (e.g. 1280x720 or 1280x-1)")
        }
        do {
            _ = try TranscodeOptions.preset(named: preset)
            if let tune { _ = try TranscodeOptions.tune(named: tune) }
            try options.validate()
        } catch {
            throw ValidationError(error.commandLineMessage)
        }
        try validateChunking()
    }

    /// `--quality` and what goes with it.
    private func validateQuality(rates: [String]) throws {
        guard let quality else {
            let needing = [qualityMetric != nil ? "'--quality-metric'" : nil, minCRF != nil ? "'--min-crf'" : nil,
                           maxCRF != nil ? "'--max-crf'" : nil, verifyQuality ? "'--verify-quality'" : nil,
                           dryRun ? "'--dry-run'" : nil].compactMap { $0 }
            if !needing.isEmpty { throw ValidationError("\(needing.joined(separator: ", ")) go with '--quality'") }
            return
        }
        if let r = rates.first { throw ValidationError("'--quality' and \(r) cannot be used together") }
        if QualityTarget(quality, metric: qualityMetric ?? .ssim) == nil {
            throw ValidationError("'--quality' \(quality) is not a number or one of \(QualityTarget.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if verifyQuality && chunk != nil {
            throw ValidationError("'--verify-quality' cannot be used with '--chunk': the chunks are measured where they are encoded together (--chunks)")
        }
        if dryRun && chunk != nil { throw ValidationError("'--dry-run' cannot be used with '--chunk'") }
    }

    /// What each way of running asks for: IN OUT; IN OUT --chunks N;
    /// IN --chunk K/N --chunk-dir DIR; --join DIR OUT.
    private func validateChunking() throws {
        let modes = [chunks != nil ? "'--chunks'" : nil, chunk != nil ? "'--chunk'" : nil, join != nil ? "'--join'" : nil]
            .compactMap { $0 }
        if modes.count > 1 { throw ValidationError("\(modes.joined(separator: " and ")) cannot be used together") }
        if let chunks, chunks < 1 || chunks > 4096 { throw ValidationError("'--chunks' must be between 1 and 4096") }
        if let jobs, jobs < 1 { throw ValidationError("'--jobs' must be at least 1") }
        if jobs != nil && chunks == nil { throw ValidationError("'--jobs' goes with '--chunks'") }
        if let chunk {
            guard let (k, n) = Self.parseChunk(chunk) else {
                throw ValidationError("'--chunk' \(chunk) is not K/N with 1 ≤ K ≤ N (e.g. 3/16)")
            }
            _ = (k, n)
            guard chunkDir != nil else { throw ValidationError("'--chunk' needs '--chunk-dir DIR' for the chunks") }
            guard input != nil, output == nil else {
                throw ValidationError("'--chunk' takes the input only: avtool transcode IN --chunk K/N --chunk-dir DIR")
            }
        } else if join != nil {
            guard input != nil, output == nil else {
                throw ValidationError("'--join' takes the output only: avtool transcode --join DIR OUT")
            }
            if chunkDir != nil { throw ValidationError("'--join' names the chunk directory itself; drop '--chunk-dir'") }
            // The video's settings are the chunks' (their manifest), not the join's.
            let videoOptions = [crf != nil ? "--crf" : nil, quality != nil ? "--quality" : nil, bitrate != nil ? "--bitrate" : nil, bpp != nil ? "--bpp" : nil,
                                preset != "medium" ? "--preset" : nil, tune != nil ? "--tune" : nil,
                                x265Params != nil ? "--x265-params" : nil, keyint != nil ? "--keyint" : nil,
                                tenBit ? "--10bit" : nil, size != nil ? "--size" : nil, fps != nil ? "--fps" : nil]
                .compactMap { $0 }
            if !videoOptions.isEmpty {
                throw ValidationError("\(videoOptions.joined(separator: ", ")) belong to the '--chunk' tasks: the join uses the chunks' settings")
            }
        } else {
            guard input != nil, output != nil else { throw ValidationError("Missing expected argument '<output>'") }
            if chunkDir != nil && chunks == nil { throw ValidationError("'--chunk-dir' goes with '--chunks', '--chunk' or '--join'") }
        }
    }

    /// `K/N` with 1 ≤ K ≤ N ≤ 4096.
    static func parseChunk(_ text: String) -> (Int, Int)? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]), k >= 1, k <= n, n <= 4096 else { return nil }
        return (k, n)
    }

    var options: TranscodeOptions {
        var o = TranscodeOptions()
        o.container = containerOptions.container
        if let crf { o.rate = .crf(crf) }
        if let b = bitrate.flatMap(TranscodeOptions.parseBitRate) { o.rate = .bitrate(b) }
        o.frameRate = fps.flatMap(TranscodeOptions.parseFrameRate)
        o.audio = audio
        o.audioBitRate = audioBitrate.flatMap(TranscodeOptions.parseBitRate)
        o.loudness = try? LoudnessTargetOptions.target(loudness, truePeak: truePeak)  // checked by validate()
        if let bpp { o.rate = .bitsPerPixel(bpp) }
        o.quality = quality.flatMap { QualityTarget($0, metric: qualityMetric ?? .ssim) }  // checked by validate()
        if let minCRF { o.quality?.minCRF = minCRF }
        if let maxCRF { o.quality?.maxCRF = maxCRF }
        o.verifyQuality = verifyQuality
        o.preset = (try? TranscodeOptions.preset(named: preset)) ?? o.preset  // checked by validate()
        o.tune = tune.flatMap { try? TranscodeOptions.tune(named: $0) }
        o.x265Params = x265Params
        o.keyframeInterval = keyint
        o.tenBit = tenBit
        o.dolbyVision = !noDolbyVision
        o.sdr = sdr
        if let toneMap { o.toneMap = toneMap }
        o.size = size.flatMap(Self.parseSize)
        drops.apply(to: &o.streams)
        o.faststart = !containerOptions.noFaststart
        o.edits = (try? containerOptions.tagging.edits()) ?? MetadataEdits()  // checked by validate()
        o.overwrite = outputOptions.overwrite
        o.salvage = salvage
        return o
    }

    static func parseSize(_ s: String) -> FrameSize? {
        let parts = s.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w != 0, h != 0,
              w >= -1, h >= -1, !(w == -1 && h == -1) else { return nil }
        return FrameSize(width: w, height: h)
    }

    func work(_ line: any ProgressSink) throws(MediaError) -> any VerbReport {
        // With --quality, the search is a phase of its own, then the encode.
        let searching = Locked<Bool?>(nil)
        let show = { (p: TranscodeProgress) in
            if quality != nil, searching.withLock({ s in defer { s = p.phase != nil }; return s != (p.phase != nil) }) {
                line.begin(phase: p.phase != nil ? "quality-search" : "encode")
            }
            line.update(fraction: p.fraction, position: p.position, detail: p.phase ?? "\(p.frames) frames")
        }
        if let chunk, let (k, n) = Self.parseChunk(chunk), let input, let chunkDir {
            return try transcodeChunk(input: input, number: k, of: n, directory: chunkDir, options: options, progress: show)
        }
        if let join, let dirOutput = input {
            return try joinChunks(directory: join, output: dirOutput, options: options, progress: show)
        }
        guard let input, let output else { throw MediaError.invalidOption("an input and an output are needed", options: []) }
        if dryRun { return try searchQuality(input: input, output: output, chunks: chunks, options: options, progress: show) }
        if let chunks {
            return try transcode(input: input, output: output, chunks: chunks, directory: chunkDir, jobs: jobs,
                                 options: options, progress: show)
        }
        return try transcode(input: input, output: output, options: options, progress: show)
    }
}

extension ChunkReport: VerbReport {
    var summary: String {
        let range = "\(startSeconds.map { fixed($0, 3) } ?? "start")–\(endSeconds.map { fixed($0, 3) } ?? "end") s"
        if status == "done-before" {
            return "chunk \(number)/\(count) of \(quoted(input)) (\(range)) was already in \(quoted(directory)): \(frames) frames, not encoded again"
        }
        return "encoded chunk \(number)/\(count) of \(quoted(input)) (\(range)) into \(quoted(directory)): \(frames) frames, \(formatBytes(outputBytes)) in \(fixed(elapsedSeconds, 2)) s"
    }
}

extension TranscodeReport: VerbReport {
    var summary: String {
        var s = "transcoded \(quoted(input)) → \(quoted(output)) (\(container)): "
        s += "\(encoder) \(width)x\(height) \(pixelFormat), \(framesEncoded) frames"
        if let frameRate { s += " at \(frameRate) fps (\(framesDropped) dropped, \(framesDuplicated) repeated)" }
        for a in audio where a.action == "encoded" {
            s += ", audio #\(a.stream) \(a.from.map { $0 + " " } ?? "")→ \(a.codec)"
            if let b = a.bitRate { s += " \(b / 1000)k" }
            if let r = a.reason { s += " (\(r))" }
            if a.silenceInserted > 0 { s += " (\(a.silenceInserted) samples of silence filled)" }
        }
        for l in loudness ?? [] {
            s += ", audio #\(l.plan.stream) re-encoded for loudness: \(fixed(l.plan.before.integratedLUFS, 1)) LUFS, "
            s += l.plan.mode == .linear ? "linear gain " : "limited, gain "
            s += (l.plan.gainDB >= 0 ? "+" : "") + fixed(l.plan.gainDB, 1) + " dB"
        }
        if let toneMap { s += ", " + toneMap }
        if let dv = dolbyVision { s += ", Dolby Vision \(dv.profile.map { $0 + " " } ?? "")" + dv.summary }
        if let plus = hdr10Plus { s += ", HDR10+ " + plus.summary }
        if !copiedStreams.isEmpty { s += ", copied streams " + copiedStreams.map { "#\($0)" }.joined(separator: ", ") }
        if let c = chunks {
            s += "; \(c.count) chunks joined (seams at " + c.seamsSeconds.map { fixed($0, 3) + " s" }.joined(separator: ", ")
                + "; join \(fixed(c.joinSeconds, 2)) s)"
        }
        if let q = quality { s += "; " + q.summary }
        s += "; \(formatBytes(outputBytes)) (\(fixed(sizeRatio * 100, 2))% of input)"
        s += " in \(fixed(elapsedSeconds, 2)) s"
        if elapsedSeconds > 0 { s += ", \(fixed(Double(framesEncoded) / elapsedSeconds, 2)) fps" }
        return s
    }
}

extension QualityReport: VerbReport {
    var warnings: [String] { [spreadNote].compactMap { $0 } }

    /// "SSIM 0.985 → CRF 27.3 (weakest sample 0.9851, mean 0.9893; predicted 12.1 MB in 41.2 s; search 9.80 s, 3 probes)".
    var summary: String {
        let digits = metric == .ssim ? 4 : 2
        var s = "\(metric.rawValue.uppercased()) \(fixed(target, digits)) → CRF \(fixed(crf, 1))"
        if let c = chunks, c.count > 1 { s += " (chunks: " + c.map { fixed($0.crf, 1) }.joined(separator: ", ") + ")" }
        s += " (weakest sample \(fixed(predictedWeakest, digits)), mean \(fixed(predictedMean, digits)); "
        s += "predicted \(formatBytes(predictedBytes)) in \(fixed(predictedSeconds, 1)) s; "
        s += "search \(fixed(searchSeconds, 2)) s, \(chunks.map { $0.map(\.probes.count).reduce(0, +) } ?? probes.count) probes"
        if cachedProbes > 0 { s += ", \(cachedProbes) from the cache" }
        s += ")"
        if let m = measured {
            s += "; measured \(fixed(m, digits))"
            if let w = measuredWeakestWindow { s += ", weakest 2 s \(fixed(w, digits))" }
        }
        return s
    }
}

extension HDRMetadataOutcome {
    /// "carried (361 frames)", "dropped (the picture is resized …)".
    var summary: String {
        var s = action.rawValue
        if let frames { s += " (\(frames) frames)" } else if let reason { s += " (\(reason))" }
        return s
    }
}

extension AudioMode: ExpressibleByArgument {}
extension QualityMetric: ExpressibleByArgument {}
extension ToneMapOperator: ExpressibleByArgument {}
