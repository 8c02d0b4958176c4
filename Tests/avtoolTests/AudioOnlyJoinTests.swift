import Foundation
import Testing

/// Files of audio alone (an iPhone's Voice Memos) joined and cut as video
/// files are: every packet copied, each joint where the segment before
/// ends, to the sample.
@Suite("audio-only joins and cuts")
struct AudioOnlyJoinTests {
    static func memo() throws -> String { try Fixtures.wild("ios_voicememos_2021.m4a") }

    @Test func concatOfTwoVoiceMemosKeepsEveryPacketAndJoinsOnTheSample() throws {
        let memo = try Self.memo()
        let scratch = try Scratch()
        let out = scratch.path("both.m4a")
        let run = try Tool.avtool("concat", memo, memo, out, "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(report["audio_mode"] as? String == "copied")
        #expect(report["audio_frames_reencoded"] as? Int == 0)
        #expect(report["silent_frames_added"] as? Int == 0)
        // Every packet of both, byte for byte, in order (48 + 48).
        let once = try AudioCopyTests.audioHashes(memo)
        #expect(once.count == 48)
        #expect(try AudioCopyTests.audioHashes(out) == once + once)
        // The second memo starts where the first one's audio ends (1.024 s:
        // 48 frames of 1024 samples at 48 kHz), within 1 ms, by ffprobe.
        let length = try #require(FFprobe.double(try FFprobe(memo).stream(0), "duration"))
        let packets = try PacketList(out)
        let pts = packets.packets.compactMap(\.pts)
        let joint = packets.seconds(pts[once.count], stream: 0) - packets.seconds(pts[0], stream: 0)
        #expect(abs(joint - length) <= 0.001, "joint at \(joint) s, the first memo lasts \(length) s")
        #expect(report["joints_samples"] as? [Int] == [0, 49_152])
        let total = try #require(FFprobe.double(try FFprobe(out).stream(0), "duration"))
        #expect(abs(total - 2 * length) <= 0.001, "\(total) s")
        // The report says so in words.
        let text = try Tool.avtool("concat", memo, memo, scratch.path("text.m4a"))
        #expect(text.stderr.contains("all 96 packets as they were"), "\(text.stderr)")
        #expect(text.stderr.contains("joints at sample 0 (0.000 s), sample 49152 (1.024 s)"), "\(text.stderr)")
    }

    /// `cut --keep` joins its ranges by concat: on audio alone too (it
    /// said "no video stream"). The joint is laid to the sample: the frames
    /// around it re-encoded onto the copied ones' grid, the rest copied.
    @Test func cutKeepOfAVoiceMemoJoinsItsRanges() throws {
        let memo = try Self.memo()
        let scratch = try Scratch()
        let out = scratch.path("kept.m4a")
        let run = try Tool.avtool("cut", "--keep", "0.1-0.3,0.5-0.7", memo, out, "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect((report["audio"] as? String)?.hasPrefix("copied") == true, "\(run.stdout)")
        let length = try #require(FFprobe.double(try FFprobe(out).stream(0), "duration"))
        #expect(abs(length - 0.42) <= 0.03, "\(length) s for 0.4 s asked")
        // The first range's frames are the memo's own, byte for byte.
        let source = Set(try AudioCopyTests.audioHashes(memo))
        let ours = try AudioCopyTests.audioHashes(out)
        #expect(ours.prefix(8).allSatisfy { source.contains($0) }, "\(ours)")
        let decode = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-xerror", "-i", out, "-f", "null", "-"])
        #expect(decode.status == 0, "\(decode)")
    }

    @Test func audioAloneAndVideoAreNotJoinedTogether() throws {
        let memo = try Self.memo()
        let scratch = try Scratch()
        let video = try Fixtures.wild("telegram_videonote_2017_irregular_aac.mp4")
        let mixed = try Tool.avtool("concat", memo, video, scratch.path("mixed.m4a"))
        #expect(mixed.status != 0)
        #expect(mixed.stderr.contains("has audio only but '\(video)' has video"), "\(mixed.stderr)")
        #expect(mixed.stderr.split(separator: "\n").count <= 2, "\(mixed.stderr)")
        let opus = try Fixtures.wild("chrome_mediarecorder_opus_audio_only.webm")
        let codecs = try Tool.avtool("concat", memo, opus, scratch.path("codecs.mka"))
        #expect(codecs.status != 0)
        #expect(codecs.stderr.contains("audio codec differs from the first segment's (opus, not aac)"), "\(codecs.stderr)")
    }
}
