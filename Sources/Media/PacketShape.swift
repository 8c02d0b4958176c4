import CFFmpeg

/// Everything of a packet but its payload: where it goes, its timing, size,
/// flags and side data. What a trial write needs, passed between threads
/// without the payload's memory.
public struct PacketShape: Sendable {
    public var track: Int
    var pts: Int64
    var dts: Int64
    var duration: Int64
    var size: Int32
    var flags: Int32
    /// Where the payload is in the input file (-1: unknown).
    public var position: Int64
    var sideData: [(type: UInt32, bytes: [UInt8])]
    /// The payload itself, where it was kept (`Packet.shape(track:keepingPayload:)`).
    public var payload: [UInt8]?

    /// Gives the empty `p` this shape's timing, size, flags, place and side
    /// data (its payload is the caller's).
    func apply(to p: UnsafeMutablePointer<AVPacket>) throws(MediaError) {
        p.pointee.size = size
        p.pointee.pts = pts
        p.pointee.dts = dts
        p.pointee.duration = duration
        p.pointee.flags = flags
        p.pointee.pos = position
        p.pointee.stream_index = Int32(track)
        for sd in sideData {
            guard let data = av_packet_new_side_data(p, AVPacketSideDataType(rawValue: sd.type), sd.bytes.count) else {
                throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not allocate a packet")
            }
            data.update(from: sd.bytes, count: sd.bytes.count)
        }
    }
}

extension Packet {
    /// This packet's shape, bound for `track`; its payload's bytes too with `keepingPayload`.
    public func shape(track: Int, keepingPayload: Bool = false) -> PacketShape {
        let p = pointer.pointee
        var side: [(type: UInt32, bytes: [UInt8])] = []
        for i in 0..<Int(p.side_data_elems) {
            let sd = p.side_data[i]
            side.append((sd.type.rawValue, Array(UnsafeBufferPointer(start: sd.data, count: sd.size))))
        }
        let payload = keepingPayload && p.size > 0 && p.data != nil ? Array(UnsafeBufferPointer(start: p.data, count: Int(p.size))) : nil
        return PacketShape(track: track, pts: p.pts, dts: p.dts, duration: p.duration, size: p.size, flags: p.flags,
                           position: p.pos, sideData: side, payload: payload)
    }
}

/// Zeros that packets of a given shape point to (`av_buffer_create` with a
/// free that does nothing): a trial write's payloads, none allocated or
/// copied per packet. It must outlive every packet made from it, in the
/// muxer's queues too: keep it until the output is finished. The bytes are zero, so a muxer that looks into a
/// payload (the MP4 muxer's check for ADTS headers in AAC) sees the same
/// every time.
public final class ZeroPayload {
    private var bytes: UnsafeMutableRawPointer?
    private var capacity = 0
    /// Smaller zeros, outgrown: packets a muxer still queues may point there.
    private var outgrown: [UnsafeMutableRawPointer] = []

    public init() {}

    deinit {
        av_free(bytes)
        for b in outgrown { av_free(b) }
    }

    /// Makes `packet` the packet `shape` describes, its payload zeros.
    public func fill(_ packet: borrowing Packet, as shape: PacketShape) throws(MediaError) {
        let need = Int(shape.size) + Int(AV_INPUT_BUFFER_PADDING_SIZE)
        if need > capacity {
            if let old = bytes { outgrown.append(old) }
            capacity = max(need, 2 * capacity)
            bytes = av_mallocz(capacity)
            guard bytes != nil else {
                capacity = 0
                throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not allocate a packet")
            }
        }
        let p = packet.pointer
        av_packet_unref(p)
        guard let buf = av_buffer_create(bytes!.assumingMemoryBound(to: UInt8.self), Int(shape.size), { _, _ in }, nil,
                                         AV_BUFFER_FLAG_READONLY) else {
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not allocate a packet")
        }
        p.pointee.buf = buf
        p.pointee.data = buf.pointee.data
        try shape.apply(to: p)
    }
}
