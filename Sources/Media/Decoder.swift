import CFFmpeg
import Sync

/// A decoder for one input stream (`avcodec_alloc_context3`,
/// `avcodec_parameters_to_context`, `avcodec_open2`), frame-threaded.
public final class Decoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    public let stream: InputStream

    public init(stream: InputStream, threads: Int = 0) throws(MediaError) {
        self.stream = stream
        let op = "could not open decoder for"
        guard let codec = avcodec_find_decoder(stream.codecID) else {
            throw MediaError(code: AVTOOL_AVERROR_DECODER_NOT_FOUND, operation: op, path: stream.file.path,
                             stream: stream.index, message: "no decoder for codec '\(stream.codecName)'")
        }
        guard let ctx = avcodec_alloc_context3(codec) else {
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: op, path: stream.file.path, stream: stream.index)
        }
        context = ctx
        try MediaError.check(avcodec_parameters_to_context(ctx, stream.parameters), op,
                             path: stream.file.path, stream: stream.index)
        ctx.pointee.pkt_timebase = stream.stream.pointee.time_base
        ctx.pointee.thread_count = Int32(threads)
        ctx.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
        try MediaError.check(avcodec_open2(ctx, codec, nil), op, path: stream.file.path, stream: stream.index)
    }

    deinit {
        var c: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&c)
    }

    /// Sends a packet (`avcodec_send_packet`). Returns `false` when output must be
    /// received first (EAGAIN); send the same packet again afterwards.
    public func send(_ packet: borrowing Packet) throws(MediaError) -> Bool {
        try result(avcodec_send_packet(context, packet.pointer))
    }

    /// Signals the end of input so the remaining output can be drained.
    public func sendEnd() throws(MediaError) {
        _ = try result(avcodec_send_packet(context, nil))
    }

    private func result(_ r: Int32) throws(MediaError) -> Bool {
        if r == AVTOOL_AVERROR_EAGAIN { return false }
        if r == AVTOOL_AVERROR_EOF { return true }
        try MediaError.check(r, "could not decode", path: stream.file.path, stream: stream.index)
        return true
    }

    /// Receives the next decoded frame into `frame` (`avcodec_receive_frame`).
    public func receive(into frame: borrowing Frame) throws(MediaError) -> CodecOutput {
        let r = avcodec_receive_frame(context, frame.pointer)
        if r == AVTOOL_AVERROR_EAGAIN { return .needsInput }
        if r == AVTOOL_AVERROR_EOF { return .end }
        try MediaError.check(r, "could not decode", path: stream.file.path, stream: stream.index)
        return .ready
    }
}
