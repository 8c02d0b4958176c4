import CFFmpeg
import Sync

/// An owned `AVPacket` (`av_packet_alloc` / `av_packet_free`). Not copyable,
/// so it cannot be freed twice; reuse one for a whole read loop.
public struct Packet: ~Copyable {
    let pointer: UnsafeMutablePointer<AVPacket>

    public init() throws(MediaError) {
        guard let p = av_packet_alloc() else {
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not allocate a packet")
        }
        pointer = p
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&p)
    }

    public var streamIndex: Int {
        get { Int(pointer.pointee.stream_index) }
        nonmutating set { pointer.pointee.stream_index = Int32(newValue) }
    }

    /// PTS, DTS and duration in the stream's time base; `AV_NOPTS_VALUE` is `nil`.
    public var timing: PacketTiming {
        get {
            PacketTiming(pts: Self.known(pointer.pointee.pts), dts: Self.known(pointer.pointee.dts),
                         duration: pointer.pointee.duration)
        }
        nonmutating set {
            pointer.pointee.pts = newValue.pts ?? AVTOOL_NOPTS_VALUE
            pointer.pointee.dts = newValue.dts ?? AVTOOL_NOPTS_VALUE
            pointer.pointee.duration = newValue.duration
        }
    }

    public var size: Int { Int(pointer.pointee.size) }
    /// Where the packet's bytes are in its input file (-1: unknown).
    public var position: Int64 { pointer.pointee.pos }
    public var isKeyframe: Bool { pointer.pointee.flags & AV_PKT_FLAG_KEY != 0 }
    /// The demuxer found the packet damaged or cut short (`AV_PKT_FLAG_CORRUPT`).
    public var isCorrupt: Bool { pointer.pointee.flags & AV_PKT_FLAG_CORRUPT != 0 }

    /// Samples to drop at the start of this packet's decoded audio
    /// (`AV_PKT_DATA_SKIP_SAMPLES`, how demuxers mark AAC priming).
    public var skipSamplesAtStart: Int64 {
        var size: Int = 0
        guard let data = av_packet_get_side_data(pointer, AV_PKT_DATA_SKIP_SAMPLES, &size), size >= 4 else {
            return 0
        }
        let raw = UnsafeRawPointer(data)
        return Int64(UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self)))
    }

    /// Drops the payload; the packet is blank afterwards.
    public func unref() { av_packet_unref(pointer) }

    /// Flagged to be decoded but not shown (AAC priming before an edit list's start).
    public var isDiscard: Bool { pointer.pointee.flags & AV_PKT_FLAG_DISCARD != 0 }

    /// Makes this packet refer to `other`'s payload and properties (`av_packet_ref`).
    public func reference(_ other: borrowing Packet) throws(MediaError) {
        av_packet_unref(pointer)
        try MediaError.check(av_packet_ref(pointer, other.pointer), "could not copy a packet")
    }

    /// Takes `other`'s payload and properties without copying
    /// (`av_packet_move_ref`); `other` is blank afterwards.
    public func take(from other: borrowing Packet) {
        av_packet_unref(pointer)
        av_packet_move_ref(pointer, other.pointer)
    }

    /// A packet whose payload is `count` zero bytes (silence for signed PCM).
    public func zeroed(count: Int) throws(MediaError) {
        av_packet_unref(pointer)
        try MediaError.check(av_new_packet(pointer, Int32(count)), "could not make a packet")
        if count > 0 { pointer.pointee.data.update(repeating: 0, count: count) }
        pointer.pointee.flags |= AV_PKT_FLAG_KEY
    }

    static func known(_ v: Int64) -> Int64? { v == AVTOOL_NOPTS_VALUE ? nil : v }
}

extension Packet {
    /// The payload, for reading while the packet is unchanged.
    public func withData<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        guard let d = pointer.pointee.data, pointer.pointee.size > 0 else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return body(UnsafeRawBufferPointer(start: d, count: Int(pointer.pointee.size)))
    }

    /// The same from an array.
    public func fill(_ bytes: [UInt8], keyframe: Bool) throws(MediaError) {
        av_packet_unref(pointer)
        try MediaError.check(av_new_packet(pointer, Int32(bytes.count)), "could not make a packet")
        if !bytes.isEmpty { pointer.pointee.data.update(from: bytes, count: bytes.count) }
        if keyframe { pointer.pointee.flags |= AV_PKT_FLAG_KEY }
    }

    /// A packet whose payload is a copy of `bytes` (`av_new_packet`), flagged
    /// as a keyframe when `keyframe`; no timing.
    public func fill(_ bytes: UnsafeRawBufferPointer, keyframe: Bool) throws(MediaError) {
        av_packet_unref(pointer)
        try MediaError.check(av_new_packet(pointer, Int32(bytes.count)), "could not make a packet")
        if let source = bytes.baseAddress, !bytes.isEmpty {
            pointer.pointee.data.update(from: source.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        }
        if keyframe { pointer.pointee.flags |= AV_PKT_FLAG_KEY }
    }
}
