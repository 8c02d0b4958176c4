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
            Audio-only input is refused (use 'avtool remux').
            """
    )

    @Argument(help: "The input media file.", completion: .file())
    var input: String

    @Argument(help: "The output file; its extension picks the container (mov is the usual choice).", completion: .file())
    var output: String

    @Option(help: "Constant quality, 0–51 (lower is better; default \(Int(TranscodeOptions.defaultCRF))).")
    var crf: Double?

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
        if let fps, TranscodeOptions.parseFrameRate(fps) == nil {
            throw ValidationError("'--fps' \(fps) is not a frame rate like 30, 29.97 or 30000/1001")
        }
        if let audioBitrate, TranscodeOptions.parseBitRate(audioBitrate) == nil {
            throw ValidationError("'--audio-bitrate' \(audioBitrate) is not a bit rate like 128k or 96000")
        }
        if let bitrate, TranscodeOptions.parseBitRate(bitrate) == nil {
            throw ValidationError("'--bitrate' \(bitrate) is not a bit rate like 4M, 800k or 2500000")
        }
        if let size, Self.parseSize(size) == nil {
            throw ValidationError("'--size' \(size) is not WxH (e.g. 1280x720 or 1280x-1)")
        }
        do { try options.validate() } catch { throw ValidationError(error.commandLineMessage) }
    }

    var options: TranscodeOptions {
        var o = TranscodeOptions()
        o.container = containerOptions.container
        if let crf { o.rate = .crf(crf) }
        if let b = bitrate.flatMap(TranscodeOptions.parseBitRate) { o.rate = .bitrate(b) }
        o.frameRate = fps.flatMap(TranscodeOptions.parseFrameRate)
        o.audio = audio
        o.audioBitRate = audioBitrate.flatMap(TranscodeOptions.parseBitRate)
        if let bpp { o.rate = .bitsPerPixel(bpp) }
        o.preset = preset
        o.tune = tune
        o.x265Params = x265Params
        o.keyframeInterval = keyint
        o.tenBit = tenBit
        o.size = size.flatMap(Self.parseSize)
        drops.apply(to: &o.streams)
        o.faststart = !containerOptions.noFaststart
        o.edits = (try? containerOptions.tagging.edits()) ?? MetadataEdits()  // checked by validate()
        o.overwrite = outputOptions.overwrite
        o.salvage = salvage
        return o
    }

    static func parseSize(_ s: String) -> (width: Int, height: Int)? {
        let parts = s.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w != 0, h != 0,
              w >= -1, h >= -1, !(w == -1 && h == -1) else { return nil }
        return (w, h)
    }

    func work(_ line: any ProgressSink) throws(MediaError) -> any VerbReport {
        try transcode(input: input, output: output, options: options) { p in
            line.update(fraction: p.fraction, position: p.position, detail: "\(p.frames) frames")
        }
    }
}

extension TranscodeReport: VerbReport {
    var summary: String {
        var s = "transcoded '\(input)' → '\(output)' (\(container)): "
        s += "\(encoder) \(width)x\(height) \(pixelFormat), \(framesEncoded) frames"
        if let frameRate { s += " at \(frameRate) fps (\(framesDropped) dropped, \(framesDuplicated) repeated)" }
        for a in audio where a.action == "encoded" {
            s += ", audio #\(a.stream) → \(a.codec)"
            if let b = a.bitRate { s += " \(b / 1000)k" }
            if a.silenceInserted > 0 { s += " (\(a.silenceInserted) samples of silence filled)" }
        }
        if !copiedStreams.isEmpty { s += ", copied streams " + copiedStreams.map { "#\($0)" }.joined(separator: ", ") }
        s += "; \(formatBytes(outputBytes)) (\(fixed(sizeRatio * 100, 2))% of input)"
        s += " in \(fixed(elapsedSeconds, 2)) s"
        if elapsedSeconds > 0 { s += ", \(fixed(Double(framesEncoded) / elapsedSeconds, 2)) fps" }
        return s
    }
}

extension AudioMode: ExpressibleByArgument {}
