import Media
import Testing

/// The pieces a re-encode carries per-picture HDR metadata with: where an
/// RPU and an HDR10+ SEI go in an access unit, how an SEI is escaped, and
/// the Dolby Vision record made from RPUs where a container has none.
@Suite("per-picture HDR metadata")
struct PictureMetadataTests {
    /// NAL units (header first) of Annex B bytes.
    static func units(_ bytes: [UInt8]) -> [[UInt8]] {
        bytes.withUnsafeBytes { NALStream.annexBUnits($0) }
    }

    static func type(_ u: [UInt8]) -> Int { Int(u[0] >> 1) & 0x3F }

    /// An access unit as x265 gives one: a prefix SEI, then two slices.
    static let au: [UInt8] = [0, 0, 0, 1, 39 << 1, 1, 5, 2, 0xAA, 0xBB, 0x80,
                              0, 0, 1, 1 << 1, 1, 0xC0, 0x11,
                              0, 0, 1, 1 << 1, 1, 0x40, 0x22]

    @Test func rpuLastAndHDR10PlusBeforeTheFirstSlice() {
        let rpu: [UInt8] = [0x08, 0x09, 0x00, 0x00, 0x03, 0x01, 0x80]
        let plus: [UInt8] = [0xB5, 0x00, 0x3C, 0x00, 0x01, 0x04, 0x01]
        let out = Self.au.withUnsafeBytes { AccessUnit.hevc($0, adding: PictureMetadata(dolbyVisionRPU: rpu, hdr10Plus: plus)) }
        let u = Self.units(out)
        #expect(u.map(Self.type) == [39, 39, 1, 1, 62])
        // The RPU as the decoder passed it on (escaped already), behind header 0x7C01.
        #expect(u.last == [0x7C, 0x01] + rpu)
        // The SEI: payload type 4 (ITU-T T.35), its size, the payload, the stop bit.
        #expect(u[1] == [0x4E, 0x01, 4, UInt8(plus.count)] + plus + [0x80])
        // The source's units unchanged, in order.
        #expect(u[0] == Self.units(Self.au)[0] && u[2] == Self.units(Self.au)[1] && u[3] == Self.units(Self.au)[2])
    }

    @Test func nothingToAddLeavesTheUnits() {
        let out = Self.au.withUnsafeBytes { AccessUnit.hevc($0, adding: PictureMetadata()) }
        #expect(Self.units(out) == Self.units(Self.au))
    }

    @Test func anRPUAlreadyThereIsReplaced() {
        let with = Self.au + [0, 0, 1, 0x7C, 0x01, 0x11, 0x80]
        let out = with.withUnsafeBytes { AccessUnit.hevc($0, adding: PictureMetadata(dolbyVisionRPU: [0x22, 0x80])) }
        #expect(Self.units(out).filter { Self.type($0) == 62 } == [[0x7C, 0x01, 0x22, 0x80]])
    }

    /// Zeros in the payload get emulation prevention bytes; a long payload
    /// its size in 255-steps.
    @Test func seiPayloadIsEscapedAndSized() {
        let plus: [UInt8] = [0xB5, 0, 0, 1] + [UInt8](repeating: 7, count: 300)
        let out = Self.au.withUnsafeBytes { AccessUnit.hevc($0, adding: PictureMetadata(hdr10Plus: plus)) }
        let sei = Self.units(out)[1]
        #expect(Array(sei.prefix(5)) == [0x4E, 0x01, 4, 255, UInt8(plus.count - 255)])
        #expect(Array(sei[5..<10]) == [0xB5, 0, 0, 3, 1])
        #expect(sei.count == 2 + 1 + 2 + plus.count + 1 + 1)
    }

    @Test func levelFromSizeAndRate() {
        #expect(DolbyVisionConfiguration.level(width: 1280, height: 720, framesPerSecond: 24) == 1)
        #expect(DolbyVisionConfiguration.level(width: 1280, height: 720, framesPerSecond: 30) == 2)
        #expect(DolbyVisionConfiguration.level(width: 1920, height: 1080, framesPerSecond: 30) == 4)
        #expect(DolbyVisionConfiguration.level(width: 1920, height: 1080, framesPerSecond: 60) == 5)
        #expect(DolbyVisionConfiguration.level(width: 3840, height: 2160, framesPerSecond: 60) == 9)
        #expect(DolbyVisionConfiguration.level(width: 256, height: 144, framesPerSecond: 24) == 1)
        #expect(DolbyVisionConfiguration.level(width: 8192, height: 4320, framesPerSecond: 30) == nil)
        #expect(DolbyVisionConfiguration.level(width: 1920, height: 1080, framesPerSecond: .nan) == nil)
    }

    @Test func recordFromRPUs() {
        let p8 = DolbyVisionRPUHeader(vdrRPUProfile: 1, baseLayerFullRange: false, disableResidual: true,
                                      enhancementLayerResampling: false, vdrBitDepth: 12)
        let r = DolbyVisionConfiguration(rpu: p8, transfer: "smpte2084", width: 1920, height: 1080, framesPerSecond: 24)
        #expect(r == DolbyVisionConfiguration(profile: 8, level: 3, hasRPU: true, hasEnhancementLayer: false,
                                              hasBaseLayer: true, compatibilityID: 1))
        #expect(r?.name == "8.1")
        #expect(DolbyVisionConfiguration(rpu: p8, transfer: "arib-std-b67", width: 1280, height: 720, framesPerSecond: 30)?.name == "8.4")
        let p5 = DolbyVisionRPUHeader(vdrRPUProfile: 0, baseLayerFullRange: true, disableResidual: true,
                                      enhancementLayerResampling: false, vdrBitDepth: 12)
        #expect(DolbyVisionConfiguration(rpu: p5, transfer: nil, width: 640, height: 360, framesPerSecond: 60)?.name == "5")
        // A dual-layer stream's record only its container can give.
        let p7 = DolbyVisionRPUHeader(vdrRPUProfile: 1, baseLayerFullRange: false, disableResidual: false,
                                      enhancementLayerResampling: true, vdrBitDepth: 12)
        #expect(p7.profile == 7)
        #expect(DolbyVisionConfiguration(rpu: p7, transfer: "smpte2084", width: 3840, height: 2160, framesPerSecond: 24) == nil)
    }
}
