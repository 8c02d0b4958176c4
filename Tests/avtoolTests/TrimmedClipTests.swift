import Foundation
import Testing

/// A clip trimmed as Photos trims (all the media kept, the edit lists
/// starting inside the first GOP: 18 packets decoded but not shown, 51
/// frames shown over 2.163 s) keeps its trim through fill-silence, merge
/// and concat: the cut-away head is never shown. Oracles: the `ffmpeg`
/// program's decoded frames (`-f framemd5`), its psnr filter, ffprobe.
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
    /// output (before: 120 frames, 4.95 s for 2 × 51 frames, 2 × 2.16 s,
    /// joints at 0 and 2.82 s): its start is re-encoded as an exact cut's,
    /// from the first shown frame to the next keyframe; the rest is copied.
    @Test(arguments: ["mov", "mp4"])
    func concatShowsEachClipOnce(_ ext: String) throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild(Self.clip)
        let out = scratch.path("twice.\(ext)")
        let r = try Tool.avtool("concat", input, input, out, "--json")
        try #require(r.status == 0, "\(r)")
        let report = try #require(try JSONSerialization.jsonObject(with: r.data) as? [String: Any])
        #expect(report["video_frames_reencoded"] as? Int == 12, "\(r.stdout)")
        #expect(report["trimmed_starts_reencoded"] as? Int == 1, "\(r.stdout)")
        let shown = try frameHashes(input), twice = try frameHashes(out)
        try #require(twice.count == 2 * shown.count, "\(twice.count) frames")
        #expect(Array(twice.prefix(51)) == shown)
        // The second clip: the 12 frames before its first keyframe (1.238 s) re-encoded, the rest copied.
        let second = Array(twice.suffix(51))
        #expect(zip(second, shown).map { $0 != $1 } == Array(repeating: true, count: 12) + Array(repeating: false, count: 39))
        #expect(try PictureCheck.worstPSNR(out, firstFrame: 51, against: input, frames: 12) >= 40)
        let probe = try FFprobe(out)
        let d = try #require(FFprobe.double(probe.format, "duration"))
        // Each clip's 51 shown frames (its edit runs 38 ms past its last frame's end, where nothing is shown).
        #expect(abs(d - 2 * 51 * Self.frameSeconds) <= Self.frameSeconds, "\(d) s")
        // Each clip's audio ends with its video (2 × 51 frames).
        let audioSamples = try decodedAudio(out).count / 2
        #expect(abs(audioSamples - 2 * 51 * 44100 / 24) <= 1024, "\(audioSamples) samples")
    }

    /// An iPhone 14 Pro clip's edit list ends 6.7 ms into its 4th frame (at
    /// 64/600 s; a 5th frame, decoded second, is hidden and referenced), its
    /// audio's 4631 samples after the priming. Joined to itself (before:
    /// 0.268 s for 2 × 0.107 s, the second clip at 0.135 s, the 4th frame
    /// shown whole, 1722 samples of silence): each clip lasts its edit, the
    /// second from 64/600 s; the first's last group re-encoded without the
    /// hidden frame, the second's packets copied, the audio each clip's
    /// shown samples with silence up to its video's end.
    @Test func concatJoinsAtTheEditEnd() throws {
        let scratch = try Scratch()
        let input = try Fixtures.device("iphone14pro_dv84_hlg_720p_mebx.MOV")
        let out = scratch.path("twice.mov")
        let r = try Tool.avtool("concat", input, input, out, "--json")
        try #require(r.status == 0, "\(r)")
        let report = try #require(try JSONSerialization.jsonObject(with: r.data) as? [String: Any])
        let shown = 64.0 / 600, shownSamples = 4704  // 64/600 s at 44.1 kHz
        let joints = report["joints_seconds"] as? [Double] ?? []
        #expect(joints.count == 2 && abs(joints[1] - shown) < 1e-6, "\(joints)")
        let d = try #require(FFprobe.double(try FFprobe(out).format, "duration"))
        #expect(abs(d - 2 * shown) <= 0.001, "\(d) s")
        // Audio: each clip's shown samples (its edit list's: the decoder gives its last
        // packet whole), the 425 its edit hides after them left out, and silence where
        // its video goes on without sound.
        let clipSamples = try #require(FFprobe.int(try FFprobe(input).stream(1), "duration_ts"))
        #expect(clipSamples == 4631)
        let silence = report["silence_inserted_samples"] as? Int ?? -1
        #expect(silence == 2 * (shownSamples - clipSamples), "\(silence) samples of silence")
        #expect(report["samples_trimmed"] as? Int == 2 * 425, "\(r.stdout)")
        #expect(try FFprobe.int(try FFprobe(out).stream(1), "duration_ts") == 2 * clipSamples + silence)
        // Video: the first clip's 4 shown frames re-encoded, the second clip's 5 packets copied.
        #expect(report["video_frames_reencoded"] as? Int == 4 && report["trimmed_ends_reencoded"] as? Int == 1, "\(r.stdout)")
        let whole = try PacketList(input).payloads[0] ?? [], written = try PacketList(out).payloads[0] ?? []
        #expect(written.count == 9 && Array(written.suffix(5)) == whole, "\(written.count) video packets")
        let frames = try frameHashes(input), twice = try frameHashes(out)
        #expect(frames.count == 4 && twice.count == 8 && Array(twice.suffix(4)) == frames, "\(twice.count) frames shown")
    }

    /// Matroska has no edit lists: the head would be shown (before: 69
    /// frames from 0.74 s before the trim); the start is re-encoded instead.
    @Test func fillSilenceIntoMatroskaStartsAtTheTrim() throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild(Self.clip)
        let out = scratch.path("out.mkv")
        let r = try Tool.avtool("fill-silence", input, out)
        try #require(r.status == 0, "\(r)")
        let shown = try frameHashes(input), written = try frameHashes(out)
        try #require(written.count == shown.count, "\(written.count) frames")
        #expect(zip(written, shown).map { $0 != $1 } == Array(repeating: true, count: 12) + Array(repeating: false, count: 39))
        let probe = try FFprobe(out)
        let starts = probe.streams.compactMap { FFprobe.double($0, "start_time") }
        #expect(starts.count == 2 && abs(starts[0] - starts[1]) < Self.frameSeconds, "\(starts)")
        let d = try #require(FFprobe.double(probe.format, "duration"))
        #expect(abs(d - Self.shownSeconds) <= Self.frameSeconds, "\(d) s")
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
