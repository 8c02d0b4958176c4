import CFFmpeg
import Sync

/// What a video encoder is asked to produce.
public struct VideoEncoderSettings: Sendable {
    /// libavcodec encoder name, e.g. `libx265`.
    public var codec = "libx265"
    public var width: Int
    public var height: Int
    /// libavutil pixel format name, e.g. `yuv420p`, `yuv420p10le`.
    public var pixelFormat: String
    /// Time base of the frames sent in (the input's, so timestamps pass through).
    public var timeBase: Rational
    /// Nominal frame rate for rate control, if known.
    public var frameRate: Rational?
    public var sampleAspectRatio: Rational?
    /// Encoder options (`preset`, `crf`, `b`, `g`, `x265-params`, …), applied by
    /// `avcodec_open2` to the codec context and the encoder's private options.
    public var options: [(String, String)] = []
    /// MP4/MOV want parameter sets in extradata (`AV_CODEC_FLAG_GLOBAL_HEADER`).
    public var globalHeader = true
    /// The Dolby Vision record the output stream declares, its pictures'
    /// RPUs carried (`PictureMetadataCarrier`); nil: the source's record is
    /// not passed on, since the encoder makes no RPUs.
    public var dolbyVision: DolbyVisionConfiguration?
    /// Whether the source's mastering display and light levels are passed
    /// on to the output stream (not for an SDR rendering of HDR).
    public var keepsHDRMetadata = true
    /// Colour tags of BT.709 SDR instead of the source's (a tone-mapped output).
    public var bt709 = false

    public init(width: Int, height: Int, pixelFormat: String, timeBase: Rational) {
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.timeBase = timeBase
    }
}

/// An opened encoder (`avcodec_find_encoder_by_name`, `avcodec_open2`).
public final class Encoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    /// The input stream whose metadata, side data and disposition the output
    /// stream inherits.
    public let source: InputStream?
    public let timeBase: Rational
    /// See `VideoEncoderSettings`.
    public private(set) var dolbyVision: DolbyVisionConfiguration?
    public private(set) var keepsHDRMetadata = true

    /// Opens a video encoder. Color properties (range, primaries, transfer,
    /// matrix) come from `colorsFrom` so they reach both the bitstream (VUI)
    /// and the container. An option the encoder does not know is an error.
    public init(video settings: VideoEncoderSettings, source: InputStream?) throws(MediaError) {
        self.source = source
        self.timeBase = settings.timeBase
        dolbyVision = settings.dolbyVision
        keepsHDRMetadata = settings.keepsHDRMetadata
        let op = "could not open encoder \(settings.codec)"
        guard let codec = avcodec_find_encoder_by_name(settings.codec) else {
            throw .missingEncoder(settings.codec, operation: op)
        }
        guard let ctx = avcodec_alloc_context3(codec) else {
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: op)
        }
        context = ctx
        let format = av_get_pix_fmt(settings.pixelFormat)
        guard format != AV_PIX_FMT_NONE else {
            throw MediaError.invalid(op, message: "unknown pixel format '\(settings.pixelFormat)'")
        }
        ctx.pointee.width = Int32(settings.width)
        ctx.pointee.height = Int32(settings.height)
        ctx.pointee.pix_fmt = format
        ctx.pointee.time_base = AVRational(num: settings.timeBase.numerator, den: settings.timeBase.denominator)
        if let fr = settings.frameRate {
            ctx.pointee.framerate = AVRational(num: fr.numerator, den: fr.denominator)
        }
        if let sar = settings.sampleAspectRatio {
            ctx.pointee.sample_aspect_ratio = AVRational(num: sar.numerator, den: sar.denominator)
        }
        if let p = source?.parameters.pointee {
            ctx.pointee.color_range = p.color_range
            ctx.pointee.color_primaries = p.color_primaries
            ctx.pointee.color_trc = p.color_trc
            ctx.pointee.colorspace = p.color_space
            ctx.pointee.chroma_sample_location = p.chroma_location
        }
        if settings.bt709 {
            ctx.pointee.color_range = AVCOL_RANGE_MPEG
            ctx.pointee.color_primaries = AVCOL_PRI_BT709
            ctx.pointee.color_trc = AVCOL_TRC_BT709
            ctx.pointee.colorspace = AVCOL_SPC_BT709
        }
        if settings.globalHeader { ctx.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        try Self.open(ctx, codec, options: settings.options, operation: op)
    }

    /// `avcodec_open2` with `options`; one the codec does not know is refused, named.
    static func open(_ ctx: UnsafeMutablePointer<AVCodecContext>, _ codec: UnsafePointer<AVCodec>,
                     options: [(String, String)], operation op: String) throws(MediaError) {
        var dict = makeDictionary(options)
        defer { av_dict_free(&dict) }
        try MediaError.check(avcodec_open2(ctx, codec, &dict), op)
        let unknown = entries(of: dict).map(\.key)
        if !unknown.isEmpty {
            throw MediaError.invalid(op, message: "unknown option(s) \(unknown.map { "'\($0)'" }.joined(separator: ", "))")
        }
    }

    /// Takes ownership of an allocated, not yet opened context.
    init(context: UnsafeMutablePointer<AVCodecContext>, source: InputStream?, timeBase: Rational) {
        self.context = context
        self.source = source
        self.timeBase = timeBase
    }

    deinit {
        var c: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&c)
    }

    /// Sends a frame (`avcodec_send_frame`). Returns `false` when output must be
    /// received first (EAGAIN); send the same frame again afterwards.
    public func send(_ frame: borrowing Frame) throws(MediaError) -> Bool {
        try result(avcodec_send_frame(context, frame.pointer))
    }

    /// Signals the end of input so the remaining output can be drained.
    public func sendEnd() throws(MediaError) {
        _ = try result(avcodec_send_frame(context, nil))
    }

    private func result(_ r: Int32) throws(MediaError) -> Bool {
        if r == AVTOOL_AVERROR_EAGAIN { return false }
        if r == AVTOOL_AVERROR_EOF { return true }
        try MediaError.check(r, "could not encode")
        return true
    }

    /// Receives the next packet (`avcodec_receive_packet`); its timing is in `timeBase`.
    public func receive(into packet: borrowing Packet) throws(MediaError) -> CodecOutput {
        av_packet_unref(packet.pointer)
        let r = avcodec_receive_packet(context, packet.pointer)
        if r == AVTOOL_AVERROR_EAGAIN { return .needsInput }
        if r == AVTOOL_AVERROR_EOF { return .end }
        try MediaError.check(r, "could not encode")
        return .ready
    }

    public var codecName: String { String(cString: context.pointee.codec.pointee.name) }

}

/// Converts frames to another pixel format and/or size (`sws_scale_frame`).
public final class Scaler {
    private let context: OpaquePointer
    private let width: Int32, height: Int32
    private let format: AVPixelFormat

    /// `nil` pixel format names are refused with an error.
    public init(fromWidth sw: Int, height sh: Int, pixelFormat sf: String,
                toWidth dw: Int, height dh: Int, pixelFormat df: String) throws(MediaError) {
        let src = av_get_pix_fmt(sf), dst = av_get_pix_fmt(df)
        guard src != AV_PIX_FMT_NONE, dst != AV_PIX_FMT_NONE,
              let ctx = sws_getContext(Int32(sw), Int32(sh), src, Int32(dw), Int32(dh), dst,
                                       Int32(SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT), nil, nil, nil) else {
            throw MediaError.invalid("could not convert video", message: "\(sf) \(sw)x\(sh) → \(df) \(dw)x\(dh) is not supported")
        }
        context = ctx
        width = Int32(dw)
        height = Int32(dh)
        format = dst
        Self.keepFullRange(ctx, from: src, to: dst)
    }

    deinit { sws_freeContext(context) }

    /// Full-range YUV (`yuvj420p`, `yuvj422p`: an action camera's H.264, a
    /// camera's MJPEG) converted to a YUV format an encoder takes keeps its
    /// full range: the frames keep their `pc` tag (`scale` copies it), and
    /// libswscale's default, squeezing the values to 16–235 for the plain
    /// format, would have them shown washed out (a GoPro's 0–255 luma came
    /// out 13–238, tagged full range).
    private static func keepFullRange(_ ctx: OpaquePointer, from src: AVPixelFormat, to dst: AVPixelFormat) {
        guard let d = av_pix_fmt_desc_get(dst), d.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB) == 0 else { return }
        var inverse: UnsafeMutablePointer<Int32>?, table: UnsafeMutablePointer<Int32>?
        var srcRange: Int32 = 0, dstRange: Int32 = 0, brightness: Int32 = 0, contrast: Int32 = 0, saturation: Int32 = 0
        guard sws_getColorspaceDetails(ctx, &inverse, &srcRange, &table, &dstRange, &brightness, &contrast, &saturation) >= 0,
              srcRange == 1, dstRange == 0, let inverse, let table else { return }
        _ = sws_setColorspaceDetails(ctx, inverse, srcRange, table, 1, brightness, contrast, saturation)
    }

    /// Scales `source` into `destination` (emptied first), keeping timing and color tags.
    public func scale(_ source: borrowing Frame, into destination: borrowing Frame) throws(MediaError) {
        av_frame_unref(destination.pointer)
        destination.pointer.pointee.width = width
        destination.pointer.pointee.height = height
        destination.pointer.pointee.format = format.rawValue
        try MediaError.check(av_frame_get_buffer(destination.pointer, 0), "could not convert video")
        try MediaError.check(sws_scale_frame(context, destination.pointer, source.pointer), "could not convert video")
        try MediaError.check(av_frame_copy_props(destination.pointer, source.pointer), "could not convert video")
    }
}
