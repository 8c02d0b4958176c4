import Media
import Testing

/// The fields a decoder reads from AAC's AudioSpecificConfig and ALAC's
/// cookie, on records as encoders write them (ISO/IEC 14496-3 1.6.2.1).
@Suite struct AudioCodecRecordTests {
    private func hex(_ s: String) -> [UInt8] { s.split(separator: " ").map { UInt8($0, radix: 16)! } }

    @Test func appleAndLibavcodecRecordsOfOneStreamMatch() throws {
        // Apple's encoder writes two bytes; libavcodec's adds an explicit "no SBR" extension.
        let apple = try #require(AudioSpecificConfig(hex("11 90")))
        let lavc = try #require(AudioSpecificConfig(hex("11 90 56 e5 00")))
        #expect(apple == lavc)
        #expect(apple.objectType == 2 && apple.sampleRate == 48000 && apple.channelConfiguration == 2)
        #expect(apple.frameLength == 1024 && !apple.sbr && !apple.parametricStereo)
        #expect(AudioCodecRecord(codec: "aac", extradata: hex("11 90"))
            .accepts(AudioCodecRecord(codec: "aac", extradata: hex("11 90 56 e5 00"))))
    }

    @Test func rateChannelsAndFrameLengthTellRecordsApart() throws {
        let stereo44 = AudioCodecRecord(codec: "aac", extradata: hex("12 10"))
        #expect(!stereo44.accepts(AudioCodecRecord(codec: "aac", extradata: hex("11 90"))))
        #expect(!stereo44.accepts(AudioCodecRecord(codec: "aac", extradata: hex("12 08"))))  // mono
        let short = try #require(AudioSpecificConfig(hex("11 8c")))
        #expect(short.frameLength == 960 && short.channelConfiguration == 1)
    }

    @Test func sbrAndParametricStereoAreFound() throws {
        // Hierarchical: object type 5 around an AAC-LC core at 22.05 kHz.
        let he = try #require(AudioSpecificConfig(hex("2b 92 08 00")))
        #expect(he.sbr && !he.parametricStereo && he.objectType == 2 && he.sampleRate == 22050)
        // Backward compatible: an LC record with the SBR sync extension.
        let compatible = try #require(AudioSpecificConfig(hex("13 10 56 e5 98")))
        #expect(compatible.sbr && compatible.objectType == 2 && compatible.sampleRate == 24000)
        let v2 = try #require(AudioSpecificConfig(hex("eb 09 88 00")))
        #expect(v2.sbr && v2.parametricStereo && v2.channelConfiguration == 1)
    }

    /// An ADTS header gives the fields of a record without SBR (FDK's
    /// HE-AAC 5.1 says so by its frames alone): the first header of
    /// Tests/Fixtures/wild/fdk_heaac51_bbb.aac, LC at 24 kHz, channel configuration 6.
    @Test func adtsHeaderGivesTheRecordItsFieldsSay() throws {
        let header = hex("ff f1 59 80 6a a2 54")
        let asc = try #require(header.withUnsafeBytes { AudioSpecificConfig(adtsHeader: $0) })
        #expect(asc == AudioSpecificConfig(hex("13 30")))
        #expect(asc.objectType == 2 && asc.sampleRate == 24000 && asc.channelConfiguration == 6 && !asc.sbr)
        #expect(hex("ff f1 59").withUnsafeBytes { AudioSpecificConfig(adtsHeader: $0) } == nil)
        #expect(hex("13 30 00 00 00 00 00").withUnsafeBytes { AudioSpecificConfig(adtsHeader: $0) } == nil)
    }

    @Test func unreadableRecordsCompareByBytes() {
        #expect(AudioSpecificConfig(hex("12")) == nil)
        // A program config element (channel configuration 0) is compared whole.
        let pce = AudioCodecRecord(codec: "aac", extradata: hex("11 80 04 c8 44 00"))
        #expect(pce == .bytes(hex("11 80 04 c8 44 00")))
        #expect(AudioCodecRecord(codec: "ac3", extradata: []) == .none)
    }

    @Test func alacCookieFieldsWithAndWithoutTheAtomHeader() throws {
        let cookie = hex("00 00 10 00 00 10 28 0a 0e 02 00 ff 00 00 00 00 00 00 00 00 00 00 ac 44")
        let atom = hex("00 00 00 24 61 6c 61 63 00 00 00 00") + cookie
        let a = try #require(ALACCookie(cookie)), b = try #require(ALACCookie(atom))
        #expect(a == b)
        #expect(a.frameLength == 4096 && a.bitDepth == 16 && a.channels == 2 && a.sampleRate == 44100)
        // The maximum frame size and average bit rate are not the decoder's business.
        var other = cookie
        other[12] = 0x12
        #expect(AudioCodecRecord(codec: "alac", extradata: other).accepts(AudioCodecRecord(codec: "alac", extradata: cookie)))
    }
}
