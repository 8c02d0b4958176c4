import CFFmpeg

/// A decoded audio frame's samples as one 32-bit float plane per channel:
/// the frame's own planes when they are planar floats (AAC, MP3, Opus…),
/// else converted into a buffer this owns and keeps from frame to frame.
final class PlanarSamples {
    private var planes: [UnsafePointer<Float>] = []
    private var count = 0
    private var scratch: UnsafeMutablePointer<Float>?
    private var capacity = 0

    deinit { scratch?.deallocate() }

    /// Points at (or converts) `frame`'s samples; false for a sample
    /// format it does not read. Valid until the frame is unreferenced.
    func load(_ frame: UnsafeMutablePointer<AVFrame>) -> Bool {
        let f = frame.pointee
        let channels = Int(f.ch_layout.nb_channels), n = Int(f.nb_samples)
        count = n
        guard let data = f.extended_data else { return false }
        let format = AVSampleFormat(f.format)
        if format == AV_SAMPLE_FMT_FLTP {
            planes = (0..<channels).map { UnsafeRawPointer(data[$0]!).assumingMemoryBound(to: Float.self) }
            return true
        }
        if capacity < channels * n {
            scratch?.deallocate()
            capacity = channels * n
            scratch = .allocate(capacity: capacity)
        }
        let out = scratch!
        let planar = av_sample_fmt_is_planar(format) != 0, packed = av_get_packed_sample_fmt(format)
        for c in 0..<channels {
            let source = UnsafeRawPointer(planar ? data[c]! : data[0]!)
            guard convert(source, format: packed, first: planar ? 0 : c, step: planar ? 1 : channels,
                          count: n, into: out + c * n) else { return false }
        }
        planes = (0..<channels).map { UnsafePointer(out + $0 * n) }
        return true
    }

    /// The planes and their length, for `body`.
    func withChannels<R>(_ body: (UnsafeBufferPointer<UnsafePointer<Float>>, Int) -> R) -> R {
        planes.withUnsafeBufferPointer { body($0, count) }
    }

    /// The frame's length.
    var sampleCount: Int { count }

    /// `n` samples from `first` of each plane, for `body`.
    func withChannels<R>(from first: Int, count n: Int, _ body: (UnsafeBufferPointer<UnsafePointer<Float>>, Int) -> R) -> R {
        planes.map { $0 + first }.withUnsafeBufferPointer { body($0, n) }
    }
}

/// Every `step`th sample from `first` of one plane, as floats (libavutil's scaling: full scale is ±1).
private func convert(_ p: UnsafeRawPointer, format: AVSampleFormat, first: Int, step: Int, count: Int,
                     into out: UnsafeMutablePointer<Float>) -> Bool {
    func each<T: BitwiseCopyable>(_: T.Type, _ value: (T) -> Float) {
        let s = p.assumingMemoryBound(to: T.self)
        for i in 0..<count { out[i] = value(s[first + i * step]) }
    }
    switch format {
    case AV_SAMPLE_FMT_FLT: each(Float.self) { $0 }
    case AV_SAMPLE_FMT_DBL: each(Double.self) { Float($0) }
    case AV_SAMPLE_FMT_S16: each(Int16.self) { Float($0) / 32768 }
    case AV_SAMPLE_FMT_S32: each(Int32.self) { Float(Double($0) / 2147483648) }
    case AV_SAMPLE_FMT_U8: each(UInt8.self) { (Float($0) - 128) / 128 }
    case AV_SAMPLE_FMT_S64: each(Int64.self) { Float(Double($0) / 9223372036854775808) }
    default: return false
    }
    return true
}
