import CFFmpeg
import Sync

/// A decoder for one input stream (`avcodec_alloc_context3`,
/// `avcodec_parameters_to_context`, `avcodec_open2`), frame-threaded.
public final class Decoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    public let stream: InputStream
    /// AMR packets go in frame by frame (`AMRFrames`): libavcodec's AMR
    /// decoders decode only a packet's first frame.
    private let amr: AMRFrames?
    /// One frame of the packet being split, and how far the split went.
    private let part: Packet
    private var split: AMRSplit?

    public init(stream: InputStream, threads: Int = 0) throws(MediaError) {
        self.stream = stream
        amr = stream.amrFrames
        part = try Packet()
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

    /// A decoder for what `encoder` writes (its codec and extradata, from
    /// `avcodec_parameters_from_context`), to see the pictures it made of
    /// `stream` (named in errors). Packets are in the encoder's time base.
    public init(decoding encoder: Encoder, of stream: InputStream) throws(MediaError) {
        self.stream = stream
        amr = nil
        part = try Packet()
        let op = "could not open a decoder for the encoder's output of"
        func fail(_ code: Int32) -> MediaError { MediaError(code: code, operation: op, path: stream.file.path, stream: stream.index) }
        guard let codec = avcodec_find_decoder(encoder.context.pointee.codec_id) else { throw fail(AVTOOL_AVERROR_DECODER_NOT_FOUND) }
        guard let ctx = avcodec_alloc_context3(codec) else { throw fail(AVTOOL_AVERROR_ENOMEM) }
        context = ctx
        var par = avcodec_parameters_alloc()
        defer { avcodec_parameters_free(&par) }
        guard let par else { throw fail(AVTOOL_AVERROR_ENOMEM) }
        var r = avcodec_parameters_from_context(par, encoder.context)
        if r >= 0 { r = avcodec_parameters_to_context(ctx, par) }
        if r < 0 { throw fail(r) }
        ctx.pointee.pkt_timebase = encoder.context.pointee.time_base
        ctx.pointee.thread_count = 0
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
        guard let amr else { return try result(avcodec_send_packet(context, packet.pointer)) }
        return try sendFrames(packet, amr)
    }

    /// Sends an AMR packet one frame at a time, each timed at its place in
    /// the packet. When the decoder wants its output received first, the
    /// frames not yet sent go in when the same packet is sent again.
    private func sendFrames(_ packet: borrowing Packet, _ amr: AMRFrames) throws(MediaError) -> Bool {
        let p = packet.pointer.pointee
        let key = AMRSplit.Key(data: p.data, size: p.size, pts: p.pts)
        if split?.key != key {
            guard let frames = packet.withData({ amr.frames(in: $0) }), frames.count > 1 else {
                split = nil
                return try result(avcodec_send_packet(context, packet.pointer))
            }
            split = AMRSplit(key: key, frames: frames)
        }
        while let s = split, s.sent < s.frames.count {
            try amr.cut(packet, frame: s.sent, at: s.frames[s.sent], into: part,
                        sampleRate: stream.sampleRate, timeBase: stream.timeBase)
            guard try result(avcodec_send_packet(context, part.pointer)) else {
                part.unref()
                return false
            }
            split!.sent += 1
        }
        split = nil
        part.unref()
        return true
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

/// How far an AMR packet's frames went into the decoder.
private struct AMRSplit {
    /// The packet (its payload's address, size and PTS).
    struct Key: Equatable {
        var data: UnsafeMutablePointer<UInt8>?
        var size: Int32
        var pts: Int64
    }
    let key: Key
    let frames: [Range<Int>]
    var sent = 0
}

extension Decoder {
    /// Drops all buffered input and output (`avcodec_flush_buffers`): the
    /// next packet decodes as after a seek.
    public func flush() {
        split = nil
        avcodec_flush_buffers(context)
    }

    /// Whether `packet` alone decodes without an error, from a flushed
    /// state (the decoder is flushed before and after). A frame that holds
    /// no samples (an AAC frame of fill data only) decodes without output.
    public func decodesAlone(_ packet: borrowing Packet) -> Bool {
        avcodec_flush_buffers(context)
        defer { avcodec_flush_buffers(context) }
        return avcodec_send_packet(context, packet.pointer) >= 0
    }
}

/// Finds where a frame ends in audio stored without headers or lengths —
/// raw AAC in an MP4's media data whose index was never written: the
/// least number of bytes the decoder takes as one whole frame. (A decoder
/// given fewer bytes than the frame runs out before its end element and
/// fails; given the frame or more, it decodes the frame.)
public final class AudioFrameMeasure {
    private let decoder: Decoder
    private let packet: Packet
    /// The longest frame the codec allows (AAC: 6144 bits per channel).
    public let longest: Int

    /// A measure for frames of `stream`'s codec and settings (AAC only).
    public init?(stream: InputStream) {
        guard stream.codecID == AV_CODEC_ID_AAC, stream.channelCount > 0,
              let d = try? Decoder(stream: stream, threads: 1), let p = try? Packet() else { return nil }
        decoder = d
        packet = p
        longest = 768 * stream.channelCount + 16
    }

    /// The frame's length in bytes when `bytes` start with a whole frame of
    /// the stream's codec, else nil.
    public func frameLength(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let upper = min(bytes.count, longest)
        guard upper >= 2 else { return nil }
        func decodes(_ n: Int) -> Bool {
            (try? packet.fill(UnsafeRawBufferPointer(rebasing: bytes[0..<n]), keyframe: true)) != nil
                && decoder.decodesAlone(packet)
        }
        guard decodes(upper) else {
            // A frame without samples leaves the decoder to take the bytes
            // after it as the next frame, which fails: only its exact length
            // decodes.
            return (2..<upper).first(where: decodes)
        }
        var low = 2, high = upper  // decodes(high) holds
        while low < high {
            let mid = (low + high) / 2
            if decodes(mid) { high = mid } else { low = mid + 1 }
        }
        return high
    }
}
