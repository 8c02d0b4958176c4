import CFFmpeg
import Sync

/// What an audio encoder is asked to produce.
public struct AudioEncoderSettings: Sendable {
    /// libavcodec encoder name: `aac`, `pcm_s16le`, …
    public var codec: String
    public var sampleRate: Int32
    public var channels: Int
    /// Bits per second; 0 lets the encoder choose (PCM has a fixed rate).
    public var bitRate: Int64 = 0
    /// MP4/MOV want the AudioSpecificConfig in extradata.
    public var globalHeader = true
    /// Encoder options (`aac_pns` = `0`, …); one the encoder does not know is refused.
    public var options: [(String, String)] = []
    /// A channel layout by name (`5.1(side)`); `nil`: the default for the count.
    public var channelLayout: String?
    /// A sample format by name (`s16p`), used when the encoder takes it
    /// (ALAC's bit depth follows it); `nil`: the encoder's preferred one.
    public var sampleFormat: String?

    public init(codec: String, sampleRate: Int32, channels: Int) {
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
    }
}

/// What an audio encoder accepts, asked before opening it so a request it
/// cannot serve is refused up front.
public struct AudioEncoderCapabilities: Sendable {
    public let codec: String
    /// Sample rates it takes; empty means any.
    public let sampleRates: [Int32]
    /// Channel counts of the layouts it takes; empty means any.
    public let channelCounts: [Int]
    /// Its preferred sample format (the first it lists).
    public let sampleFormat: String

    /// The codec's short name (`mp3` for the `libmp3lame` encoder).
    public let codecName: String
    /// FFmpeg marks it experimental (5.1's own `opus` and `vorbis`): it opens
    /// only with `strict -2`, and its output is not what players are promised.
    public let isExperimental: Bool

    public init?(codec name: String) {
        guard let found = avcodec_find_encoder_by_name(name), found.pointee.type == AVMEDIA_TYPE_AUDIO else { return nil }
        self.codec = name
        let codec = found
        codecName = avcodec_get_name(codec.pointee.id).string ?? name
        isExperimental = codec.pointee.capabilities & AV_CODEC_CAP_EXPERIMENTAL != 0
        var rates: [Int32] = []
        if var p = codec.pointee.supported_samplerates {
            while p.pointee != 0 { rates.append(p.pointee); p += 1 }
        }
        sampleRates = rates
        var counts: [Int] = []
        if var p = codec.pointee.ch_layouts {
            while p.pointee.nb_channels != 0 { counts.append(Int(p.pointee.nb_channels)); p += 1 }
        }
        channelCounts = counts
        let f = codec.pointee.sample_fmts?.pointee ?? AV_SAMPLE_FMT_S16
        sampleFormat = av_get_sample_fmt_name(f).string ?? "s16"
    }

    /// The rate to encode `rate` at: itself when supported, else the nearest
    /// supported rate not below it (else the highest).
    public func sampleRate(for rate: Int32) -> Int32 {
        guard !sampleRates.isEmpty, !sampleRates.contains(rate) else { return rate }
        return sampleRates.filter { $0 >= rate }.min() ?? sampleRates.max()!
    }
}

extension Encoder {
    /// Opens an audio encoder in its preferred sample format, at the
    /// settings' rate, with the default layout for the channel count. The
    /// time base is one sample (1/rate), so timestamps are sample counts.
    public convenience init(audio settings: AudioEncoderSettings, source: InputStream?) throws(MediaError) {
        let op = "could not open encoder \(settings.codec)"
        guard let codec = avcodec_find_encoder_by_name(settings.codec) else {
            throw .missingEncoder(settings.codec, operation: op)
        }
        guard let ctx = avcodec_alloc_context3(codec) else {
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: op)
        }
        ctx.pointee.sample_rate = settings.sampleRate
        ctx.pointee.sample_fmt = Self.sampleFormat(settings.sampleFormat, of: codec)
        let named = settings.channelLayout.map { av_channel_layout_from_string(&ctx.pointee.ch_layout, $0) >= 0 } ?? false
        if !named || ctx.pointee.ch_layout.nb_channels != Int32(settings.channels) {
            av_channel_layout_uninit(&ctx.pointee.ch_layout)
            av_channel_layout_default(&ctx.pointee.ch_layout, Int32(settings.channels))
        }
        ctx.pointee.time_base = AVRational(num: 1, den: settings.sampleRate)
        ctx.pointee.bit_rate = settings.bitRate
        if settings.globalHeader { ctx.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        self.init(context: ctx, source: source, timeBase: Rational(1, settings.sampleRate) ?? .microseconds)
        try Self.open(ctx, codec, options: settings.options, operation: op)
    }

    /// `name` when the encoder lists it, else its preferred format.
    private static func sampleFormat(_ name: String?, of codec: UnsafePointer<AVCodec>) -> AVSampleFormat {
        let preferred = codec.pointee.sample_fmts?.pointee ?? AV_SAMPLE_FMT_S16
        guard let name, var p = codec.pointee.sample_fmts else { return preferred }
        let wanted = av_get_sample_fmt(name)
        while p.pointee != AV_SAMPLE_FMT_NONE {
            if p.pointee == wanted { return wanted }
            p += 1
        }
        return preferred
    }

    public var sampleRate: Int32 { context.pointee.sample_rate }
    public var channels: Int { Int(context.pointee.ch_layout.nb_channels) }
    /// The channel layout's name (`stereo`, `5.1(side)`).
    public var channelLayout: String? {
        var buffer = [CChar](repeating: 0, count: 128)
        guard av_channel_layout_describe(&context.pointee.ch_layout, &buffer, buffer.count) >= 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    public var sampleFormat: String? { av_get_sample_fmt_name(context.pointee.sample_fmt).string }
    /// Samples per frame the encoder wants (1024 for AAC); 0 means any.
    public var frameSize: Int { Int(context.pointee.frame_size) }
    /// Priming samples the encoder puts before the first real one.
    public var initialPadding: Int { Int(context.pointee.initial_padding) }
    public var bitRate: Int64 { context.pointee.bit_rate }
    /// The global header the encoder made (e.g. AAC's AudioSpecificConfig).
    public var extradata: [UInt8] {
        guard let d = context.pointee.extradata, context.pointee.extradata_size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: d, count: Int(context.pointee.extradata_size)))
    }
}

/// Converts decoded audio to an encoder's sample format, rate and layout
/// (libswresample) and queues it (`AVAudioFifo`) so the encoder gets frames
/// of exactly its frame size. Silence can be queued between real samples.
public final class AudioQueue {
    private var resampler: OpaquePointer?
    private var resamplerInput: (format: Int32, rate: Int32, channels: Int32)?
    private let fifo: OpaquePointer
    private let format: AVSampleFormat
    private var layout = AVChannelLayout()
    public let sampleRate: Int32
    private let converted: Frame
    private let isPlanar: Bool
    private let bytesPerSample: Int

    public convenience init(for encoder: Encoder) throws(MediaError) {
        try self.init(format: encoder.context.pointee.sample_fmt, sampleRate: encoder.context.pointee.sample_rate,
                      layout: &encoder.context.pointee.ch_layout)
    }

    /// A queue of mono 32-bit float samples (packed) at `sampleRate`, for analysis.
    public static func monoFloat(sampleRate: Int32) throws(MediaError) -> AudioQueue {
        var mono = AVChannelLayout()
        av_channel_layout_default(&mono, 1)
        defer { av_channel_layout_uninit(&mono) }
        return try AudioQueue(format: AV_SAMPLE_FMT_FLT, sampleRate: sampleRate, layout: &mono)
    }

    init(format: AVSampleFormat, sampleRate: Int32, layout source: UnsafeMutablePointer<AVChannelLayout>) throws(MediaError) {
        let op = "could not set up audio conversion"
        self.format = format
        self.sampleRate = sampleRate
        try MediaError.check(av_channel_layout_copy(&layout, source), op)
        guard let f = av_audio_fifo_alloc(format, layout.nb_channels, 4096) else {
            av_channel_layout_uninit(&layout)
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: op)
        }
        fifo = f
        converted = try Frame()
        isPlanar = av_sample_fmt_is_planar(format) != 0
        bytesPerSample = Int(av_get_bytes_per_sample(format))
    }

    deinit {
        swr_free(&resampler)
        av_audio_fifo_free(fifo)
        av_channel_layout_uninit(&layout)
    }

    /// Samples waiting for the encoder.
    public var count: Int { Int(av_audio_fifo_size(fifo)) }

    /// Clock drift to undo while converting: the input is resampled from
    /// its rate × (1 + drift) instead of its rate. Set before the first frame.
    public var driftCorrection: DriftCorrection? {
        didSet {
            guard driftCorrection != oldValue else { return }
            swr_free(&resampler)
            resamplerInput = nil
            inputSamplesConverted = 0
        }
    }

    /// A linear gain applied while converting (loudness normalization): the
    /// converter's channel matrix is the identity times the gain, computed
    /// in floating point. Only for input with the queue's channel count. Set
    /// before the first frame.
    public var gain: Double? {
        didSet {
            guard gain != oldValue else { return }
            swr_free(&resampler)
            resamplerInput = nil
            inputSamplesConverted = 0
        }
    }

    /// Input samples converted so far at the current input rate, so each
    /// frame's converted count is the difference of two rounded running
    /// totals: a rate change (44.1 → 48 kHz) gives fractional samples per
    /// frame, and rounding each frame alone would drift.
    private var inputSamplesConverted: Int64 = 0

    /// Samples `frame` gives once converted (the resampler's delay aside).
    public func convertedCount(of frame: borrowing Frame) -> Int64 {
        let n = Int64(frame.pointer.pointee.nb_samples)
        let rate = frame.pointer.pointee.sample_rate
        let total = inputSamplesConverted
        if let d = driftCorrection { return d.outputCount(ofInput: total + n) - d.outputCount(ofInput: total) }
        guard rate > 0, rate != sampleRate else { return n }
        func scaled(_ k: Int64) -> Int64 { rescale(k, multiplier: Int64(sampleRate), divisor: Int64(rate), rounding: .nearest) ?? k }
        return scaled(total + n) - scaled(total)
    }

    /// The rates libswresample converts between for input at `rate`.
    private func resamplerRates(input rate: Int32) -> (input: Int32, output: Int32) {
        if let d = driftCorrection, d.inputRate == rate, d.outputRate == sampleRate {
            return (d.scaledInputRate, d.scaledOutputRate)
        }
        return (rate, sampleRate)
    }

    /// The gain as the converter's matrix (`swr_set_matrix`, before
    /// `swr_init`), with floating-point samples inside the converter.
    private func applyGain(_ gain: Double, inputChannels: Int32, _ op: String) throws(MediaError) {
        let n = Int(layout.nb_channels)
        guard Int(inputChannels) == n else {
            throw MediaError.invalid(op, message: "a gain needs as many channels in as out (\(inputChannels) → \(n))")
        }
        var matrix = [Double](repeating: 0, count: n * n)
        for c in 0..<n { matrix[c * n + c] = gain }
        try MediaError.check(av_opt_set_int(UnsafeMutableRawPointer(resampler), "internal_sample_fmt",
                                            Int64(AV_SAMPLE_FMT_FLTP.rawValue), 0), op)
        try MediaError.check(swr_set_matrix(resampler, matrix, Int32(n)), op)
    }

    /// Converts `frame` and queues it, leaving out its first `trim` samples
    /// and keeping at most `keep` after them (counted after conversion).
    public func append(_ frame: borrowing Frame, trim: Int64 = 0, keep: Int64? = nil) throws(MediaError) {
        let op = "could not convert audio"
        let f = frame.pointer
        // Decoders of WAV/PCM give an unordered layout: call it the default
        // layout for its channel count (what the encoder was opened with).
        if f.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC, f.pointee.ch_layout.nb_channels > 0 {
            let n = f.pointee.ch_layout.nb_channels
            av_channel_layout_uninit(&f.pointee.ch_layout)
            av_channel_layout_default(&f.pointee.ch_layout, n)
        }
        let key = (f.pointee.format, f.pointee.sample_rate, f.pointee.ch_layout.nb_channels)
        let direct = f.pointee.format == format.rawValue && f.pointee.sample_rate == sampleRate
            && av_channel_layout_compare(&f.pointee.ch_layout, &layout) == 0 && driftCorrection == nil && gain == nil
        if direct {
            try write(f, skipping: Int(trim), keeping: keep.map { Int($0) })
            return
        }
        if resampler == nil || resamplerInput.map({ $0 != key }) ?? true {
            swr_free(&resampler)
            var inLayout = AVChannelLayout()
            if f.pointee.ch_layout.nb_channels == 0 {
                av_channel_layout_default(&inLayout, 1)
            } else {
                try MediaError.check(av_channel_layout_copy(&inLayout, &f.pointee.ch_layout), op)
            }
            defer { av_channel_layout_uninit(&inLayout) }
            let rates = resamplerRates(input: f.pointee.sample_rate)
            try MediaError.check(swr_alloc_set_opts2(&resampler, &layout, format, rates.output,
                                                     &inLayout, AVSampleFormat(f.pointee.format), rates.input,
                                                     0, nil), op)
            if driftCorrection != nil {
                // Fewer, interpolated filter phases so the scaled rates stay exact (see DriftCorrection).
                try MediaError.check(av_opt_set_int(UnsafeMutableRawPointer(resampler), "phase_shift",
                                                    DriftCorrection.phaseShift, 0), op)
                try MediaError.check(av_opt_set_int(UnsafeMutableRawPointer(resampler), "linear_interp", 1, 0), op)
            }
            if let gain {
                try applyGain(gain, inputChannels: inLayout.nb_channels, op)
            }
            try MediaError.check(swr_init(resampler), op)
            resamplerInput = key
            inputSamplesConverted = 0
        }
        try resample(f)
        inputSamplesConverted += Int64(f.pointee.nb_samples)
        try write(converted.pointer, skipping: Int(trim), keeping: keep.map { Int($0) })
    }

    /// Drains what the resampler still holds (after the last frame).
    public func flush() throws(MediaError) {
        guard resampler != nil else { return }
        try resample(nil)
        try write(converted.pointer, skipping: 0)
    }

    private func resample(_ source: UnsafeMutablePointer<AVFrame>?) throws(MediaError) {
        let out = converted.pointer
        av_frame_unref(out)
        out.pointee.format = format.rawValue
        out.pointee.sample_rate = sampleRate
        try MediaError.check(av_channel_layout_copy(&out.pointee.ch_layout, &layout), "could not convert audio")
        // Room for the input plus what the resampler holds back, from
        // swr_get_out_samples (swr_get_delay overflows with scaled rates).
        let bound = swr_get_out_samples(resampler, source?.pointee.nb_samples ?? 0)
        try MediaError.check(bound, "could not convert audio")
        out.pointee.nb_samples = bound + 64
        try MediaError.check(av_frame_get_buffer(out, 0), "could not convert audio")
        // swr_convert rather than swr_convert_frame: with a drift correction
        // the resampler's rates are scaled and differ from the frames' own.
        let inData = source.flatMap { $0.pointee.extended_data.map { UnsafeMutablePointer<UnsafePointer<UInt8>?>(OpaquePointer($0)) } }
        let n = swr_convert(resampler, out.pointee.extended_data, out.pointee.nb_samples,
                            inData, source?.pointee.nb_samples ?? 0)
        try MediaError.check(n, "could not convert audio")
        out.pointee.nb_samples = n
    }

    /// Queues `n` samples of silence.
    public func appendSilence(_ n: Int64) throws(MediaError) {
        var left = n
        let chunk = Int32(4096)
        var buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?
        var lineSize: Int32 = 0
        try MediaError.check(av_samples_alloc_array_and_samples(&buffer, &lineSize, layout.nb_channels, chunk, format, 0),
                             "could not make silence")
        defer {
            av_free(buffer?[0])  // the samples
            av_free(buffer)  // the pointer array
        }
        try MediaError.check(av_samples_set_silence(buffer, 0, chunk, layout.nb_channels, format), "could not make silence")
        while left > 0 {
            let k = Int32(min(left, Int64(chunk)))
            let written = buffer!.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: Int(layout.nb_channels)) {
                av_audio_fifo_write(fifo, $0, k)
            }
            try MediaError.check(written, "could not queue audio")
            left -= Int64(k)
        }
    }

    /// Takes `n` samples (fewer if fewer are queued) into `frame`.
    public func take(_ n: Int, into frame: borrowing Frame) throws(MediaError) {
        let f = frame.pointer
        av_frame_unref(f)
        let k = Int32(min(n, count))
        f.pointee.nb_samples = k
        f.pointee.format = format.rawValue
        f.pointee.sample_rate = sampleRate
        try MediaError.check(av_channel_layout_copy(&f.pointee.ch_layout, &layout), "could not queue audio")
        try MediaError.check(av_frame_get_buffer(f, 0), "could not queue audio")
        let planes = isPlanar ? Int(layout.nb_channels) : 1
        let read = f.pointee.extended_data.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: planes) {
            av_audio_fifo_read(fifo, $0, k)
        }
        try MediaError.check(read, "could not queue audio")
    }

    /// Takes up to `n` samples of a mono float queue (`monoFloat`) and
    /// appends them to `samples`; returns how many.
    @discardableResult
    public func take(_ n: Int, appendingTo samples: inout [Float]) throws(MediaError) -> Int {
        precondition(format == AV_SAMPLE_FMT_FLT && layout.nb_channels == 1)
        let k = min(n, count)
        guard k > 0 else { return 0 }
        let start = samples.count
        samples.append(contentsOf: repeatElement(0, count: k))
        let read = samples.withUnsafeMutableBufferPointer { b -> Int32 in
            var p: UnsafeMutableRawPointer? = UnsafeMutableRawPointer(b.baseAddress! + start)
            return av_audio_fifo_read(fifo, &p, Int32(k))
        }
        try MediaError.check(read, "could not queue audio")
        if Int(read) < k { samples.removeLast(k - Int(read)) }
        return Int(read)
    }

    /// Drops everything queued and what the resampler holds.
    public func reset() {
        av_audio_fifo_reset(fifo)
        swr_free(&resampler)
        resamplerInput = nil
        inputSamplesConverted = 0
    }

    private func write(_ f: UnsafeMutablePointer<AVFrame>, skipping skip: Int, keeping keep: Int? = nil) throws(MediaError) {
        let total = min(Int(f.pointee.nb_samples), skip + (keep ?? Int(f.pointee.nb_samples)))
        guard skip < total else { return }
        let planes = isPlanar ? Int(layout.nb_channels) : 1
        let offset = skip * bytesPerSample * (isPlanar ? 1 : Int(layout.nb_channels))
        var pointers = [UnsafeMutableRawPointer?](repeating: nil, count: planes)
        for p in 0..<planes { pointers[p] = f.pointee.extended_data[p].map { UnsafeMutableRawPointer($0 + offset) } }
        let r = pointers.withUnsafeMutableBufferPointer { av_audio_fifo_write(fifo, $0.baseAddress, Int32(total - skip)) }
        try MediaError.check(r, "could not queue audio")
    }
}
