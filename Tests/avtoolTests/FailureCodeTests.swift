import Foundation
import Testing

/// A failure's JSON code tells scripts what happened, and a report names
/// what it set aside. Before, every `sync` failure was coded `unsupported`.
@Suite("failure codes and what reports set aside")
struct FailureCodeTests {
    struct SyncCase: CustomTestStringConvertible, Sendable {
        let video: String
        let audio: String
        let code: String
        let says: String
        var testDescription: String { code }
    }

    static let syncCases = [
        // A camera clip with no sound: nothing to align AUDIO against.
        SyncCase(video: "carphone_pristine.mp4", audio: "ios_voicememos_2021.m4a", code: "missing-stream",
                 says: "it has no audio stream"),
        // An iPhone 4S clip of 1.02 s against a voice memo.
        SyncCase(video: "iphone4s_ios5_baseline_rot90_vfr.mov", audio: "ios_voicememos_2021.m4a", code: "too-short",
                 says: "VIDEO's audio is 1.02 s long; at least 3.0 s"),
        // Two Telegram messages of different scenes: no offset stands out.
        SyncCase(video: "telegram_videonote_2017_irregular_aac.mp4", audio: "telegram_voice_note_opus16k.ogg",
                 code: "no-match", says: "no clear match between the recordings"),
    ]

    @Test(arguments: syncCases)
    func syncFailureIsCodedByItsCause(_ c: SyncCase) throws {
        let video = c.video.hasPrefix("carphone") ? try Fixtures.real(c.video) : try Fixtures.wild(c.video)
        let r = try Tool.avtool("sync", video, try Fixtures.wild(c.audio), "--json")
        #expect(r.status == 1, "\(r)")
        let j = try #require(try JSONSerialization.jsonObject(with: r.data) as? [String: Any])
        let e = try #require(j["error"] as? [String: Any])
        #expect(e["code"] as? String == c.code, "\(e)")
        #expect((e["message"] as? String ?? "").contains(c.says), "\(e)")
    }

    /// A voice memo whose audio starts 0.188 s in by its own edit list (its
    /// copy with an empty edit), merged onto a camera clip with the default
    /// alignment: the report names the 188 ms it set aside. Before it said
    /// only "offset 0.00 ms".
    @Test func mergeNamesTheAudioStartItSetAside() throws {
        let scratch = try Scratch()
        let late = scratch.path("late.m4a")
        let m = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try Fixtures.wild("ios_voicememos_2021.m4a"),
                                        "-c", "copy", "-output_ts_offset", "0.188", late])
        try #require(m.status == 0, "\(m)")
        let r = try Tool.avtool("merge", try Fixtures.real("carphone_pristine.mp4"), late, scratch.path("out.mp4"))
        try #require(r.status == 0, "\(r)")
        #expect(r.stderr.contains("offset 0.00 ms (0 samples) (the audio's own start, 188.00 ms after the video's by its timestamps, set aside by --align start; --align timestamps keeps it)"),
                "\(r.stderr)")
    }
}
