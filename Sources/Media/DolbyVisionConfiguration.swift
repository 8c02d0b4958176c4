import CFFmpeg

/// A stream's Dolby Vision configuration record (`dvcC`/`dvvC`/`dvwC` in
/// MP4, the block addition mapping in Matroska), as libavformat passes it
/// on in stream side data (`AV_PKT_DATA_DOVI_CONF`,
/// `AVDOVIDecoderConfigurationRecord`).
public struct DolbyVisionConfiguration: Sendable, Equatable {
    public var versionMajor: Int
    public var versionMinor: Int
    /// The profile (5, 7, 8…) and level (1 to 13: resolution and frame rate).
    public var profile: Int
    public var level: Int
    /// Which layers the stream holds: the reference processing unit
    /// (dynamic metadata), an enhancement layer, a base layer.
    public var hasRPU: Bool
    public var hasEnhancementLayer: Bool
    public var hasBaseLayer: Bool
    /// What a player without Dolby Vision gets from the base layer: 0 none,
    /// 1 HDR10, 2 SDR, 4 HLG, 6 HDR10 as on Ultra HD Blu-ray.
    public var compatibilityID: Int

    public init(versionMajor: Int = 1, versionMinor: Int = 0, profile: Int, level: Int, hasRPU: Bool,
                hasEnhancementLayer: Bool, hasBaseLayer: Bool, compatibilityID: Int) {
        self.versionMajor = versionMajor
        self.versionMinor = versionMinor
        self.profile = profile
        self.level = level
        self.hasRPU = hasRPU
        self.hasEnhancementLayer = hasEnhancementLayer
        self.hasBaseLayer = hasBaseLayer
        self.compatibilityID = compatibilityID
    }
}

extension DolbyVisionConfiguration {
    /// The record as an MP4/MOV sample entry box (ETSI TS 103 572 / Dolby's
    /// ISOBMFF spec): `dvcC` for profiles up to 7, `dvvC` for 8 to 10,
    /// `dvwC` beyond; 24 bytes of payload.
    public var box: [UInt8] {
        let type = profile > 10 ? "dvwC" : profile > 7 ? "dvvC" : "dvcC"
        var out: [UInt8] = [0, 0, 0, 32] + Array(type.utf8)
        out += [UInt8(truncatingIfNeeded: versionMajor), UInt8(truncatingIfNeeded: versionMinor)]
        let bits = (profile & 0x7F) << 9 | (level & 0x3F) << 3 | (hasRPU ? 4 : 0) | (hasEnhancementLayer ? 2 : 0) | (hasBaseLayer ? 1 : 0)
        out += [UInt8(truncatingIfNeeded: bits >> 8), UInt8(truncatingIfNeeded: bits)]
        out.append(UInt8(truncatingIfNeeded: (compatibilityID & 0x0F) << 4))
        out += [UInt8](repeating: 0, count: 19)
        return out
    }
}

extension InputStream {
    /// The Dolby Vision configuration record the container stores for the
    /// stream; `nil` if none.
    public var dolbyVision: DolbyVisionConfiguration? {
        var size = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_DOVI_CONF, &size),
              size >= MemoryLayout<AVDOVIDecoderConfigurationRecord>.size else { return nil }
        let r = UnsafeRawPointer(data).assumingMemoryBound(to: AVDOVIDecoderConfigurationRecord.self).pointee
        return DolbyVisionConfiguration(
            versionMajor: Int(r.dv_version_major), versionMinor: Int(r.dv_version_minor),
            profile: Int(r.dv_profile), level: Int(r.dv_level), hasRPU: r.rpu_present_flag != 0,
            hasEnhancementLayer: r.el_present_flag != 0, hasBaseLayer: r.bl_present_flag != 0,
            compatibilityID: Int(r.dv_bl_signal_compatibility_id))
    }
}
