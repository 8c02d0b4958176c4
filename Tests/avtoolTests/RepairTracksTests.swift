import Foundation
import Testing

/// `avtool repair` on recordings with several audio or video tracks, as
/// cameras and recorders write them: every track rebuilt, each chunk told
/// apart from the others' by its own bytes where they differ and by the
/// reference's interleave where they look alike. Each recording is cut
/// before its index at three points and rebuilt with another take of the
/// same kind; every sample wholly inside the cut file comes back
/// byte-identical, in its own track and order (`RepairCameraTests.checkRebuild`).
@Suite("repair several tracks")
struct RepairTracksTests {
    struct Kind: Sendable, CustomStringConvertible {
        var name: String
        var videos: [(codec: String, size: String)]
        var audios: [(codec: String, channels: Int)]
        var timecode = false
        var description: String { name }
    }

    static let kinds: [Kind] = [
        // Two mono PCM tracks of one format (alike: only the interleave tells them apart) and a stereo one.
        Kind(name: "h264 + 2 x s16le mono + s24be stereo", videos: [("libx264", "320x240")],
             audios: [("pcm_s16le", 1), ("pcm_s16le", 1), ("pcm_s24be", 2)]),
        // Four mono PCM tracks of one format, as a recorder's inputs.
        Kind(name: "h264 + 4 x s24le mono", videos: [("libx264", "320x240")],
             audios: [("pcm_s24le", 1), ("pcm_s24le", 1), ("pcm_s24le", 1), ("pcm_s24le", 1)]),
        Kind(name: "h264 + 2 x aac stereo", videos: [("libx264", "320x240")], audios: [("aac", 2), ("aac", 2)]),
        Kind(name: "hevc + aac stereo + s16be stereo", videos: [("libx265", "320x240")],
             audios: [("aac", 2), ("pcm_s16be", 2)]),
        Kind(name: "h264 + aac stereo + aac mono", videos: [("libx264", "320x240")], audios: [("aac", 2), ("aac", 1)]),
        // A main and a proxy video track.
        Kind(name: "2 x h264 (320x240, 160x120) + aac + tmcd", videos: [("libx264", "320x240"), ("libx264", "160x120")],
             audios: [("aac", 2)], timecode: true),
        // Two HEVC tracks of one size (a 360 camera's two lenses) with PCM.
        Kind(name: "2 x hevc 320x240 + s16le stereo", videos: [("libx265", "320x240"), ("libx265", "320x240")],
             audios: [("pcm_s16le", 2)]),
    ]

    @Test(arguments: kinds.indices)
    func rebuildsEveryTrack(_ k: Int) throws {
        let kind = Self.kinds[k]
        let scratch = try Scratch()
        let whole = scratch.path("take1.mov"), reference = scratch.path("take2.mov")
        try RepairCameraTests.recording(whole, videos: kind.videos, audios: kind.audios, timecode: kind.timecode, take: 1)
        try RepairCameraTests.recording(reference, videos: kind.videos, audios: kind.audios, timecode: kind.timecode, take: 2)
        func streams(_ path: String) throws -> Int {
            let probe = try Tool.run("ffprobe", ["-v", "error", "-of", "csv=p=0", "-show_entries", "stream=index", path])
            return probe.stdout.split(separator: "\n").count
        }
        // (ffmpeg writes a timecode track per video track.)
        let tracks = try streams(whole)
        #expect(tracks >= kind.videos.count + kind.audios.count)
        for percent in [23, 58, 91] {
            let cut = scratch.path("cut\(percent).mov"), out = scratch.path("out\(percent).mov")
            let bytes = try RepairCameraTests.cutBeforeIndex(whole, percent: percent, to: cut)
            try RepairCameraTests.checkRebuild(whole: whole, cut: cut, bytes: bytes, reference: reference, out: out,
                                               pcm: true, dataTracks: kind.timecode ? ["tmcd"] : [])
            // Every track of the reference rebuilt, as its own stream, none named as left out.
            #expect(try streams(out) == tracks, "\(kind)")
        }
    }

    /// Two HEVC tracks of one size look alike. At one rate the reference's
    /// order of chunks tells them apart: after a stretch where no sample is
    /// proven (a video sample's bytes lost), where the chunk before is not
    /// known, the sample after decides, and every sample after the lost
    /// bytes comes back. At 30 and 15 fps a sample of the first track is
    /// followed by one of either: the two chunks before decide, but where
    /// the reference has either after them too (its first samples, the
    /// B-frames' delay), the samples up to the first audio are left out
    /// and named with both tracks and their bytes, never given to one of
    /// them. Every sample rebuilt is the recording's, in its own track and
    /// order, none swapped.
    @Test(arguments: [false, true])
    func leavesOutSamplesTheOrderCannotTell(_ twoRates: Bool) throws {
        let scratch = try Scratch()
        let whole = scratch.path("take1.mov"), reference = scratch.path("take2.mov")
        let videos = [(codec: "libx265", size: "320x240"), (codec: "libx265", size: "320x240")]
        let rates = twoRates ? ["30000/1001", "15000/1001"] : []
        try RepairCameraTests.recording(whole, videos: videos, audios: [("pcm_s16le", 2)], timecode: false, take: 1, rates: rates)
        try RepairCameraTests.recording(reference, videos: videos, audios: [("pcm_s16le", 2)], timecode: false, take: 2, rates: rates)
        let cut = scratch.path("cut.mov"), out = scratch.path("out.mov")
        let bytes = try RepairCameraTests.cutBeforeIndex(whole, percent: 80, to: cut)
        // The first track's 40th sample zeroed.
        let original = try RepairCameraTests.samples(whole, within: bytes)
        let lost = try #require(original["video:hvc1:1"]?[39])
        var data = try Data(contentsOf: URL(fileURLWithPath: cut))
        data.replaceSubrange((lost.end - lost.bytes.count)..<lost.end, with: Data(count: lost.bytes.count))
        try data.write(to: URL(fileURLWithPath: cut))

        let run = try Tool.avtool("repair", cut, out, "--reference", reference, "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let leftOut = report["left_out"] as? [[String: Any]] ?? []
        let alike = leftOut.filter { ($0["streams"] as? [Int]) == [0, 1] }
        #expect(alike.allSatisfy { $0["offset"] is Int && $0["bytes"] is Int }, "\(leftOut)")
        #expect(alike.isEmpty != twoRates, "\(leftOut)")
        let rebuilt = try RepairCameraTests.samples(out)
        var missing: [String: Int] = [:]
        for key in ["video:hvc1:1", "video:hvc1:2"] {
            let want = (original[key] ?? []).map(\.bytes), got = (rebuilt[key] ?? []).map(\.bytes)
            // In order, each the recording's: a subsequence of its samples.
            var rest = want[...]
            for g in got {
                guard let at = rest.firstIndex(of: g) else { Issue.record("\(key): a sample not the recording's, or out of order"); break }
                rest = rest[(at + 1)...]
            }
            #expect(got.count < want.count, "\(key): \(got.count) of \(want.count)")
            missing[key] = want.count - got.count
        }
        // Lost: the zeroed sample and those before it whose next sample it was; at two rates, the first few.
        let lostAtMost = ["video:hvc1:1": twoRates ? 6 : 4, "video:hvc1:2": twoRates ? 6 : 4]
        for (key, most) in lostAtMost { #expect(missing[key] ?? 0 <= most, "\(key): \(missing[key] ?? 0) samples missing") }
    }
}
