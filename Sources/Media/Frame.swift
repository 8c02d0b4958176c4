import CFFmpeg
import Sync

/// An owned `AVFrame` (`av_frame_alloc` / `av_frame_free`); not copyable.
public struct Frame: ~Copyable {
    package let pointer: UnsafeMutablePointer<AVFrame>

    public init() throws(MediaError) {
        guard let p = av_frame_alloc() else {
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not allocate a frame")
        }
        pointer = p
    }

    deinit {
        var p: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&p)
    }

    /// The decoder's best guess of the presentation time, in the decoder's
    /// packet time base; `nil` when unknown.
    public var bestEffortTimestamp: Int64? { Packet.known(pointer.pointee.best_effort_timestamp) }

    public var pts: Int64? {
        get { Packet.known(pointer.pointee.pts) }
        nonmutating set { pointer.pointee.pts = newValue ?? AVTOOL_NOPTS_VALUE }
    }

    /// Duration in the decoder's packet time base (0 if unknown).
    public var duration: Int64 { pointer.pointee.pkt_duration }

    /// libavutil's name of the frame's pixel format, e.g. `yuv420p`.
    public var pixelFormat: String? {
        pointer.pointee.format < 0 ? nil : av_get_pix_fmt_name(AVPixelFormat(pointer.pointee.format)).string
    }

    /// Audio samples per channel.
    public var sampleCount: Int { Int(pointer.pointee.nb_samples) }

    /// Makes this frame refer to `other`'s data and properties, and empties
    /// `other` (`av_frame_move_ref`).
    public func take(from other: borrowing Frame) {
        av_frame_unref(pointer)
        av_frame_move_ref(pointer, other.pointer)
    }

    public var width: Int { Int(pointer.pointee.width) }
    public var height: Int { Int(pointer.pointee.height) }

    /// Forgets the coded picture type the decoder reported. Encoders such as
    /// libx265 treat a set type as forced, which would copy the source's
    /// I/P/B pattern instead of letting the encoder choose.
    public func clearPictureType() { pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE }

    /// The decoder concealed errors in this frame or marked it corrupt (a
    /// picture decoded without its references or parameter sets).
    public var isDamaged: Bool {
        pointer.pointee.decode_error_flags != 0 || pointer.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0
    }

    public func unref() { av_frame_unref(pointer) }
}

/// What receiving from a codec gave.
public enum CodecOutput: Sendable {
    /// A frame or packet is ready.
    case ready
    /// The codec needs more input first.
    case needsInput
    /// Fully drained after a flush.
    case end
}
