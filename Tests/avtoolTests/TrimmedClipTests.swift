import Foundation
import Testing

/// A clip trimmed as Photos trims (all the media kept, the edit lists
/// starting inside the first GOP: 18 packets decoded but not shown, 51
/// frames shown over 2.163 s) keeps its trim through fill-silence, merge
/// and concat: the cut-away head is never shown.
@Suite("trimmed clips")
struct TrimmedClipTests {
    static let clip = "photos_trimmed_export_trim_inside_gop.mov"
    /// What the clip shows: 1298/600 s.
    static let shownSeconds = 1298.0 / 600
    static let frameSeconds = 1.0 / 24

    @Test(arguments: ["fill-silence", "merge"])
    func aSingleClipKeepsItsTrim(_ verb: String) throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild(Self.clip)
        let out = scratch.path("out.mov")
        let r = try Tool.avtool(verb == "merge" ? [verb, input, input, out] : [verb, input, out])
        try #require(r.status == 0, "\(r)")
        let shown = try frameHashes(input)
        #expect(shown.count == 51)
        #expect(try frameHashes(out) == shown)
        let d = try #require(FFprobe.double(try FFprobe(out).format, "duration"))
        #expect(abs(d - Self.shownSeconds) <= Self.frameSeconds, "\(d) s")
        // The audio decodes to the input's samples (merge ends it at the video's end).
        let a = try decodedAudio(input), b = try decodedAudio(out)
        #expect(b.count > 0 && a.starts(with: b) && a.count - b.count <= 2 * 1024 * 2, "\(b.count) of \(a.count) bytes")
    }

    /// A later segment's hidden head would be shown in the middle of the
    /// output (before: 120 frames, 4.95 s for 2 × 51 frames, 2 × 2.16 s):
    /// refused, nothing written.
    @Test func concatAfterTheFirstSegmentIsRefused() throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild(Self.clip)
        let out = scratch.path("twice.mov")
        let r = try Tool.avtool("concat", input, input, out)
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("edit list starts 0.738 s after the keyframe"), "\(r.stderr)")
        #expect(!fileExists(out))
        #expect(scratch.contents.isEmpty, "\(scratch.contents)")
    }

    /// Matroska has no edit lists: the head would be shown (before: 69 frames).
    @Test func fillSilenceIntoMatroskaIsRefused() throws {
        let scratch = try Scratch()
        let out = scratch.path("out.mkv")
        let r = try Tool.avtool("fill-silence", try Fixtures.wild(Self.clip), out)
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("no edit lists"), "\(r.stderr)")
        #expect(!fileExists(out))
    }

    /// The MD5 of every decoded video frame, in presentation order (`-f framemd5`).
    private func frameHashes(_ path: String) throws -> [String] {
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-f", "framemd5", "-"])
        try #require(r.status == 0, "\(r)")
        return r.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    private func decodedAudio(_ path: String) throws -> Data {
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-f", "s16le", "-"])
        try #require(r.status == 0, "\(r)")
        return r.data
    }
}
