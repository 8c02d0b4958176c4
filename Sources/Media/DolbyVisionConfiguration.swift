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
    /// The profile as people name it: with its base layer's compatibility (`8.4`), `5` without.
    public var name: String { compatibilityID != 0 ? "\(profile).\(compatibilityID)" : "\(profile)" }

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

/// The fields of a Dolby Vision RPU's header that tell its profile, as the
/// decoder parses them (`AVDOVIRpuDataHeader`).
public struct DolbyVisionRPUHeader: Sendable, Equatable {
    public var vdrRPUProfile: Int
    public var baseLayerFullRange: Bool
    public var disableResidual: Bool
    public var enhancementLayerResampling: Bool
    public var vdrBitDepth: Int

    public init(vdrRPUProfile: Int, baseLayerFullRange: Bool, disableResidual: Bool,
                enhancementLayerResampling: Bool, vdrBitDepth: Int) {
        self.vdrRPUProfile = vdrRPUProfile
        self.baseLayerFullRange = baseLayerFullRange
        self.disableResidual = disableResidual
        self.enhancementLayerResampling = enhancementLayerResampling
        self.vdrBitDepth = vdrBitDepth
    }

    /// The profile the RPUs are made for: 5 (no compatible base layer,
    /// full range), 8 (a compatible base layer, no residual), 7 (a 12-bit
    /// enhancement layer); nil when they do not tell.
    public var profile: Int? {
        switch vdrRPUProfile {
        case 0: return baseLayerFullRange ? 5 : nil
        case 1:
            if disableResidual { return 8 }
            return enhancementLayerResampling || vdrBitDepth == 12 ? 7 : nil
        default: return nil
        }
    }
}

extension DolbyVisionConfiguration {
    /// The record of a stream whose container gives none (a raw HEVC
    /// stream, a file written by a muxer that drops it) but whose frames
    /// carry RPUs: the profile from the RPUs, the compatibility from the
    /// base layer's transfer (PQ 1, HLG 4, else SDR 2; none for profile 5),
    /// the level from the picture size and rate. Nil for what only a record
    /// can describe (enhancement layers).
    public init?(rpu: DolbyVisionRPUHeader, transfer: String?, width: Int, height: Int, framesPerSecond: Double) {
        guard let profile = rpu.profile, profile == 5 || profile == 8,
              let level = Self.level(width: width, height: height, framesPerSecond: framesPerSecond) else { return nil }
        let compatibility = profile == 5 ? 0 : transfer == "smpte2084" ? 1 : transfer == "arib-std-b67" ? 4 : 2
        self.init(profile: profile, level: level, hasRPU: true, hasEnhancementLayer: false, hasBaseLayer: true,
                  compatibilityID: compatibility)
    }

    /// The lowest Dolby Vision level (1 to 13) whose picture width and
    /// pixel rate hold `width` × `height` at `framesPerSecond`.
    public static func level(width: Int, height: Int, framesPerSecond: Double) -> Int? {
        // (level, widest picture, pixels per second), from Dolby's profiles and levels table.
        let levels: [(Int, Int, Double)] = [
            (1, 1280, 22_118_400), (2, 1280, 27_648_000), (3, 1920, 49_766_400), (4, 2560, 62_208_000),
            (5, 3840, 124_416_000), (6, 3840, 199_065_600), (7, 3840, 248_832_000), (8, 3840, 398_131_200),
            (9, 3840, 497_664_000), (10, 3840, 995_328_000), (11, 7680, 995_328_000), (12, 7680, 1_990_656_000),
            (13, 7680, 3_981_312_000),
        ]
        guard width > 0, height > 0, framesPerSecond.isFinite, framesPerSecond > 0 else { return nil }
        let rate = Double(width) * Double(height) * framesPerSecond
        return levels.first { width <= $0.1 && rate <= $0.2 * 1.0001 }?.0
    }
}

extension Frame {
    /// The header of the frame's Dolby Vision RPU, as the decoder parsed it; nil without one.
    public var dolbyVisionRPUHeader: DolbyVisionRPUHeader? {
        guard let sd = av_frame_get_side_data(pointer, AV_FRAME_DATA_DOVI_METADATA), let data = sd.pointee.data,
              sd.pointee.size >= MemoryLayout<AVDOVIMetadata>.size else { return nil }
        let h = av_dovi_get_header(UnsafeRawPointer(data).assumingMemoryBound(to: AVDOVIMetadata.self)).pointee
        return DolbyVisionRPUHeader(vdrRPUProfile: Int(h.vdr_rpu_profile), baseLayerFullRange: h.bl_video_full_range_flag != 0,
                                    disableResidual: h.disable_residual_flag != 0,
                                    enhancementLayerResampling: h.el_spatial_resampling_filter_flag != 0,
                                    vdrBitDepth: Int(h.vdr_bit_depth))
    }
}
