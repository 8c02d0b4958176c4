import Media
import Testing

/// Opus silence made by hand (RFC 6716): CELT fullband frames whose range
/// coder's first symbol is the silence flag, one frame per packet (code 0)
/// or several of one size (code 3). Decoding is checked on real recordings
/// by AudioOnlyJoinTests (libopus and libavcodec's decoder).
@Suite struct OpusSilenceTests {
    private let head: [UInt8] = Array("OpusHead".utf8) + [1, 1, 0x38, 0x01, 0x80, 0xbb, 0, 0, 0, 0, 0]

    @Test func packetsAreCELTSilenceFramesOfTheLongestFittingDuration() throws {
        let mono = try #require(OpusSilence(channels: 1, sampleRate: 48_000, extradata: head))
        // 20 ms: configuration 31, mono, code 0, then the silence flag.
        #expect(mono.packet(samples: 960) == [0xF8, 0xFF, 0xFE])
        // 60 ms (a voice note's frames): three 20 ms frames in a code-3 packet, constant size.
        #expect(mono.packet(samples: 2880) == [0xFB, 3, 0xFF, 0xFE, 0xFF, 0xFE, 0xFF, 0xFE])
        // 2.5 ms (configuration 28) and 7.5 ms (three of them), 10 ms (configuration 30).
        #expect(mono.packet(samples: 120) == [0xE0, 0xFF, 0xFE])
        #expect(mono.packet(samples: 360) == [0xE3, 3, 0xFF, 0xFE, 0xFF, 0xFE, 0xFF, 0xFE])
        #expect(mono.packet(samples: 480) == [0xF0, 0xFF, 0xFE])
        // 120 ms at most; not a whole 2.5 ms frame, or nothing: none.
        #expect(mono.packet(samples: 5760)?.count == 2 + 6 * 2)
        #expect(mono.packet(samples: 5880) == nil)
        #expect(mono.packet(samples: 100) == nil)
        #expect(mono.packet(samples: 0) == nil)
        // Stereo sets the TOC's s bit.
        var stereoHead = head
        stereoHead[9] = 2
        let stereo = try #require(OpusSilence(channels: 2, sampleRate: 48_000, extradata: stereoHead))
        #expect(stereo.packet(samples: 960) == [0xFC, 0xFF, 0xFE])
    }

    @Test func onlySingleStreamOpusAt48kHz() {
        // WebM from a browser may carry no OpusHead: mono or stereo by default.
        #expect(OpusSilence(channels: 2, sampleRate: 48_000, extradata: []) != nil)
        #expect(OpusSilence(channels: 1, sampleRate: 44_100, extradata: head) == nil)
        #expect(OpusSilence(channels: 6, sampleRate: 48_000, extradata: []) == nil)
        var family1 = head
        family1[18] = 1
        #expect(OpusSilence(channels: 1, sampleRate: 48_000, extradata: family1) == nil)
        // A record that says another channel count, or is not an OpusHead.
        #expect(OpusSilence(channels: 2, sampleRate: 48_000, extradata: head) == nil)
        #expect(OpusSilence(channels: 1, sampleRate: 48_000, extradata: [1, 2, 3]) == nil)
    }
}
