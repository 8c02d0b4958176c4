import CFFmpeg
import Sync

/// HDR10 static metadata: the mastering display (SMPTE ST 2086) and the
/// content light levels (CTA-861.3), as FFmpeg reports them in stream or
/// frame side data.
public struct HDRMetadata: Sendable, Equatable {
    public struct Chromaticity: Sendable, Equatable {
        public var x: Rational
        public var y: Rational
        public init(x: Rational, y: Rational) { self.x = x; self.y = y }
    }

    /// Red, green, blue primaries and white point; `nil` when not given.
    public var primaries: (red: Chromaticity, green: Chromaticity, blue: Chromaticity, white: Chromaticity)?
    /// Minimum and maximum luminance in cd/m²; `nil` when not given.
    public var luminance: (min: Rational, max: Rational)?
    /// MaxCLL and MaxFALL in cd/m²; `nil` when not given.
    public var contentLight: (maxCLL: Int, maxFALL: Int)?

    public init() {}

    public var isEmpty: Bool { primaries == nil && luminance == nil && contentLight == nil }

    public static func == (a: Self, b: Self) -> Bool {
        a.primaries?.red == b.primaries?.red && a.primaries?.green == b.primaries?.green
            && a.primaries?.blue == b.primaries?.blue && a.primaries?.white == b.primaries?.white
            && a.luminance?.min == b.luminance?.min && a.luminance?.max == b.luminance?.max
            && a.contentLight?.maxCLL == b.contentLight?.maxCLL && a.contentLight?.maxFALL == b.contentLight?.maxFALL
    }

    /// x265's parameters for this metadata: `master-display` in x265's units
    /// (chromaticity in 0.00002, luminance in 0.0001 cd/m², G B R WP L order)
    /// and `max-cll`. x265 then writes the SEI messages into the bitstream.
    public var x265Parameters: [(String, String)] {
        var out: [(String, String)] = []
        if let p = primaries, let l = luminance {
            func u(_ q: Rational, _ scale: Int64) -> Int64 {
                rescale(Int64(q.numerator), multiplier: scale, divisor: Int64(q.denominator), rounding: .nearest) ?? 0
            }
            func xy(_ c: Chromaticity) -> String { "(\(u(c.x, 50_000)),\(u(c.y, 50_000)))" }
            let display = "G\(xy(p.green))B\(xy(p.blue))R\(xy(p.red))WP\(xy(p.white))"
                + "L(\(u(l.max, 10_000)),\(u(l.min, 10_000)))"
            out.append(("master-display", display))
        }
        if let c = contentLight { out.append(("max-cll", "\(c.maxCLL),\(c.maxFALL)")) }
        return out
    }

    init(mastering: UnsafePointer<AVMasteringDisplayMetadata>?, light: UnsafePointer<AVContentLightMetadata>?) {
        if let m = mastering?.pointee {
            func q(_ r: AVRational) -> Rational? { r.den > 0 ? Rational(r.num, r.den) : nil }
            func c(_ pair: (AVRational, AVRational)) -> Chromaticity? {
                guard let x = q(pair.0), let y = q(pair.1) else { return nil }
                return Chromaticity(x: x, y: y)
            }
            if m.has_primaries != 0, let r = c(m.display_primaries.0), let g = c(m.display_primaries.1),
               let b = c(m.display_primaries.2), let w = c(m.white_point) {
                primaries = (r, g, b, w)
            }
            if m.has_luminance != 0, let lo = q(m.min_luminance), let hi = q(m.max_luminance) {
                luminance = (lo, hi)
            }
        }
        if let l = light?.pointee, l.MaxCLL > 0 || l.MaxFALL > 0 {
            contentLight = (Int(l.MaxCLL), Int(l.MaxFALL))
        }
    }
}

extension InputStream {
    /// HDR10 metadata the container stores for the stream (mdcv/clli boxes,
    /// Matroska colour elements); `nil` if none.
    public var containerHDRMetadata: HDRMetadata? {
        var size = 0
        let m = av_stream_get_side_data(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, &size)
        let l = av_stream_get_side_data(stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, &size)
        let h = HDRMetadata(mastering: m.map { UnsafeRawPointer($0).assumingMemoryBound(to: AVMasteringDisplayMetadata.self) },
                            light: l.map { UnsafeRawPointer($0).assumingMemoryBound(to: AVContentLightMetadata.self) })
        return h.isEmpty ? nil : h
    }

    /// Whether the transfer is an HDR one (PQ or HLG).
    public var hasHDRTransfer: Bool {
        parameters.pointee.color_trc == AVCOL_TRC_SMPTE2084 || parameters.pointee.color_trc == AVCOL_TRC_ARIB_STD_B67
    }
}

extension Frame {
    /// HDR10 metadata the decoder found in the bitstream (SEI); `nil` if none.
    public var hdrMetadata: HDRMetadata? {
        let m = av_frame_get_side_data(pointer, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA)
        let l = av_frame_get_side_data(pointer, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL)
        let h = HDRMetadata(
            mastering: m.flatMap { $0.pointee.data }.map { UnsafeRawPointer($0).assumingMemoryBound(to: AVMasteringDisplayMetadata.self) },
            light: l.flatMap { $0.pointee.data }.map { UnsafeRawPointer($0).assumingMemoryBound(to: AVContentLightMetadata.self) })
        return h.isEmpty ? nil : h
    }

    /// Whether the decoder found HDR10+ dynamic metadata (SMPTE ST 2094-40,
    /// an SEI message of the bitstream) for this frame.
    public var hasHDR10Plus: Bool { av_frame_get_side_data(pointer, AV_FRAME_DATA_DYNAMIC_HDR_PLUS) != nil }
}
