import CFFmpeg

/// The dynamic HDR metadata of one picture that an encoder does not carry
/// from the frame it is given to the picture it makes: Dolby Vision's
/// reference processing unit (RPU) and HDR10+ (SMPTE ST 2094-40). A
/// re-encode takes them from each decoded frame and puts them into the
/// access unit of the picture shown at the same time (`PictureMetadataCarrier`).
public struct PictureMetadata: Sendable, Equatable {
    /// The RPU NAL unit's payload as the bitstream held it (emulation
    /// prevention bytes in place), without its two-byte NAL header: what the
    /// decoder passes on as `AV_FRAME_DATA_DOVI_RPU_BUFFER`.
    public var dolbyVisionRPU: [UInt8]?
    /// The HDR10+ SEI message's payload: ITU-T T.35 country and provider
    /// codes, application identifier 4, then the ST 2094-40 fields.
    public var hdr10Plus: [UInt8]?

    public init(dolbyVisionRPU: [UInt8]? = nil, hdr10Plus: [UInt8]? = nil) {
        self.dolbyVisionRPU = dolbyVisionRPU
        self.hdr10Plus = hdr10Plus
    }

    public var isEmpty: Bool { dolbyVisionRPU == nil && hdr10Plus == nil }

    /// Which of them a re-encode carries.
    public struct Kinds: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let dolbyVision = Kinds(rawValue: 1)
        public static let hdr10Plus = Kinds(rawValue: 2)
    }
}

extension Frame {
    /// The frame's RPU and HDR10+ metadata, of the kinds asked for.
    public func pictureMetadata(_ kinds: PictureMetadata.Kinds) -> PictureMetadata {
        var m = PictureMetadata()
        if kinds.contains(.dolbyVision), let sd = av_frame_get_side_data(pointer, AV_FRAME_DATA_DOVI_RPU_BUFFER),
           let data = sd.pointee.data, sd.pointee.size > 0 {
            m.dolbyVisionRPU = Array(UnsafeBufferPointer(start: data, count: Int(sd.pointee.size)))
        }
        if kinds.contains(.hdr10Plus), let sd = av_frame_get_side_data(pointer, AV_FRAME_DATA_DYNAMIC_HDR_PLUS),
           let data = sd.pointee.data, sd.pointee.size >= MemoryLayout<AVDynamicHDRPlus>.size {
            m.hdr10Plus = HDR10Plus.t35Payload(UnsafeRawPointer(data).assumingMemoryBound(to: AVDynamicHDRPlus.self).pointee)
        }
        return m
    }
}

/// HDR10+ metadata as the bitstream carries it.
enum HDR10Plus {
    /// `s` written as the T.35 payload of a `user_data_registered_itu_t_t35`
    /// SEI message (CTA-861-H's syntax, which libavcodec's reader follows):
    /// each rational field back on its fixed scale.
    static func t35Payload(_ s: AVDynamicHDRPlus) -> [UInt8] {
        var w = BitWriter()
        w.bits(0xB5, 8)            // country: United States
        w.bits(0x003C, 16)         // provider: Samsung
        w.bits(0x0001, 16)         // provider's oriented code
        w.bits(4, 8)               // application identifier: ST 2094-40
        w.bits(Int(s.application_version), 8)
        let windows = min(max(Int(s.num_windows), 1), 3)
        w.bits(windows, 2)
        func scaled(_ r: AVRational, _ scale: Int64, _ n: Int) {
            let v = r.den == 0 ? 0 : Int64(r.num) * scale / Int64(r.den)
            w.bits(Int(min(max(v, 0), (1 << Int64(n)) - 1)), n)
        }
        func params(_ i: Int) -> AVHDRPlusColorTransformParams {
            withUnsafeBytes(of: s.params) { $0.load(fromByteOffset: i * MemoryLayout<AVHDRPlusColorTransformParams>.stride,
                                                     as: AVHDRPlusColorTransformParams.self) }
        }
        for i in 1..<windows {
            let p = params(i)
            scaled(p.window_upper_left_corner_x, 1, 16)
            scaled(p.window_upper_left_corner_y, 1, 16)
            scaled(p.window_lower_right_corner_x, 1, 16)
            scaled(p.window_lower_right_corner_y, 1, 16)
            w.bits(Int(p.center_of_ellipse_x), 16)
            w.bits(Int(p.center_of_ellipse_y), 16)
            w.bits(Int(p.rotation_angle), 8)
            w.bits(Int(p.semimajor_axis_internal_ellipse), 16)
            w.bits(Int(p.semimajor_axis_external_ellipse), 16)
            w.bits(Int(p.semiminor_axis_external_ellipse), 16)
            w.bits(Int(p.overlap_process_option.rawValue), 1)
        }
        scaled(s.targeted_system_display_maximum_luminance, 1, 27)
        /// A luminance grid: its flag, then rows, columns and 4-bit cells.
        func grid<T>(_ flag: UInt8, _ rows: UInt8, _ cols: UInt8, _ cells: T) {
            w.bits(Int(flag), 1)
            guard flag != 0 else { return }
            let (r, c) = (min(Int(rows), 25), min(Int(cols), 25))
            w.bits(r, 5)
            w.bits(c, 5)
            withUnsafeBytes(of: cells) { raw in
                for i in 0..<r {
                    for j in 0..<c {
                        scaled(raw.load(fromByteOffset: (i * 25 + j) * MemoryLayout<AVRational>.stride, as: AVRational.self), 15, 4)
                    }
                }
            }
        }
        grid(s.targeted_system_display_actual_peak_luminance_flag, s.num_rows_targeted_system_display_actual_peak_luminance,
             s.num_cols_targeted_system_display_actual_peak_luminance, s.targeted_system_display_actual_peak_luminance)
        for i in 0..<windows {
            let p = params(i)
            withUnsafeBytes(of: p.maxscl) { raw in
                for k in 0..<3 { scaled(raw.load(fromByteOffset: k * MemoryLayout<AVRational>.stride, as: AVRational.self), 100_000, 17) }
            }
            scaled(p.average_maxrgb, 100_000, 17)
            let n = min(Int(p.num_distribution_maxrgb_percentiles), 15)
            w.bits(n, 4)
            withUnsafeBytes(of: p.distribution_maxrgb) { raw in
                for k in 0..<n {
                    let d = raw.load(fromByteOffset: k * MemoryLayout<AVHDRPlusPercentile>.stride, as: AVHDRPlusPercentile.self)
                    w.bits(Int(d.percentage), 7)
                    scaled(d.percentile, 100_000, 17)
                }
            }
            scaled(p.fraction_bright_pixels, 1000, 10)
        }
        grid(s.mastering_display_actual_peak_luminance_flag, s.num_rows_mastering_display_actual_peak_luminance,
             s.num_cols_mastering_display_actual_peak_luminance, s.mastering_display_actual_peak_luminance)
        for i in 0..<windows {
            let p = params(i)
            w.bits(Int(p.tone_mapping_flag), 1)
            if p.tone_mapping_flag != 0 {
                scaled(p.knee_point_x, 4095, 12)
                scaled(p.knee_point_y, 4095, 12)
                let n = min(Int(p.num_bezier_curve_anchors), 15)
                w.bits(n, 4)
                withUnsafeBytes(of: p.bezier_curve_anchors) { raw in
                    for k in 0..<n { scaled(raw.load(fromByteOffset: k * MemoryLayout<AVRational>.stride, as: AVRational.self), 1023, 10) }
                }
            }
            w.bits(Int(p.color_saturation_mapping_flag), 1)
            if p.color_saturation_mapping_flag != 0 { scaled(p.color_saturation_weight, 8, 6) }
        }
        w.padToByte()
        return w.bytes
    }
}

/// Carries each frame's `PictureMetadata` through an encoder: noted under
/// the timestamp the frame is sent with, put into the access unit the
/// encoder returns for that timestamp (its packets come in decode order),
/// as the HEVC bitstream holds them: an HDR10+ SEI before the picture's
/// first slice, the RPU as the access unit's last NAL unit (type 62).
public final class PictureMetadataCarrier {
    public let kinds: PictureMetadata.Kinds
    private var pending: [Int64: PictureMetadata] = [:]
    /// Pictures given metadata, of each kind.
    public private(set) var carriedRPUs = 0
    public private(set) var carriedHDR10Plus = 0

    public init(kinds: PictureMetadata.Kinds) { self.kinds = kinds }

    /// Notes `frame`'s metadata for the picture sent with timestamp `pts`.
    public func note(_ frame: borrowing Frame, pts: Int64) {
        let m = frame.pictureMetadata(kinds)
        if m.isEmpty { pending.removeValue(forKey: pts) } else { pending[pts] = m }
    }

    /// `packet` (an encoder's Annex B access unit) with the metadata noted
    /// for its timestamp; unchanged when none was.
    public func apply(to packet: borrowing Packet) throws(MediaError) {
        guard let pts = packet.timing.pts, let m = pending.removeValue(forKey: pts) else { return }
        let bytes = packet.withData { AccessUnit.hevc($0, adding: m) }
        let timing = packet.timing
        try packet.fill(bytes, keyframe: packet.isKeyframe)
        packet.timing = timing
        if m.dolbyVisionRPU != nil { carriedRPUs += 1 }
        if m.hdr10Plus != nil { carriedHDR10Plus += 1 }
    }
}

/// Access units written as NAL units with start codes.
public enum AccessUnit {
    /// The HEVC access unit `au` (Annex B) with `m`'s HDR10+ SEI before the
    /// first slice and its RPU at the end (an RPU already there replaced).
    public static func hevc(_ au: UnsafeRawBufferPointer, adding m: PictureMetadata) -> [UInt8] {
        var units = NALStream.annexBUnits(au)
        func type(_ u: [UInt8]) -> Int { Int((u.first ?? 0) >> 1) & 0x3F }
        if m.dolbyVisionRPU != nil { units.removeAll { type($0) == 62 } }
        var out: [UInt8] = []
        out.reserveCapacity(au.count + (m.dolbyVisionRPU?.count ?? 0) + (m.hdr10Plus?.count ?? 0) + 32)
        var seiWritten = m.hdr10Plus == nil
        for u in units {
            if !seiWritten, type(u) < 32 {
                out += [0, 0, 0, 1] + hevcSEI(payloadType: 4, m.hdr10Plus!)
                seiWritten = true
            }
            out += [0, 0, 0, 1] + u
        }
        if let rpu = m.dolbyVisionRPU { out += [0, 0, 0, 1, 62 << 1, 1] + rpu }
        return out
    }

    /// A prefix SEI NAL unit (type 39) holding one message.
    static func hevcSEI(payloadType: Int, _ payload: [UInt8]) -> [UInt8] {
        var rbsp: [UInt8] = []
        var t = payloadType
        while t >= 255 { rbsp.append(255); t -= 255 }
        rbsp.append(UInt8(t))
        var n = payload.count
        while n >= 255 { rbsp.append(255); n -= 255 }
        rbsp.append(UInt8(n))
        rbsp += payload
        rbsp.append(0x80)
        return [39 << 1, 1] + NALStream.escaped(rbsp)
    }
}
