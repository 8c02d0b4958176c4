import Foundation
import Testing
@testable import Media
@testable import Pipeline

/// Sample descriptions added after a track's first (`IndexCompletion.Descriptions`,
/// as an exact cut's re-encoded HEVC gets its own `hvc1`), on a real iPhone
/// recording: FFmpeg decodes every frame as before, and the post-condition
/// accepts two `hvc1` descriptions but not an `hev1` among them; an edit
/// list's end made in the same pass shortens what is shown.
@Suite struct SampleDescriptionsTests {
    /// Each decoded video frame's hash (ffmpeg's framemd5), those an edit list hides too.
    static func frames(_ path: String) throws -> [Substring] {
        try ReferencedRemuxTests.run("ffmpeg", ["-v", "error", "-ignore_editlist", "1", "-i", path, "-map", "0:v", "-f", "framemd5", "-"])
            .split(separator: "\n").filter { !$0.hasPrefix("#") }
    }

    @Test func aSecondHvc1DescriptionKeepsEveryFrame() throws {
        let source = ReferencedRemuxTests.repo.appendingPathComponent("Tests/Fixtures/wild/iphonexr_ios15_hevc_livephoto_rot90.mov").path
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("avtool-descriptions-\(UUID().uuidString).mov").path
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.copyItem(atPath: source, toPath: copy)
        let original = try #require(SourceIndex(path: source))
        let v = try #require(original.tracks.firstIndex { $0.handlerType == "vide" })
        let hvcC = try #require(original.tracks[v].sampleEntryBoxes.first { $0.type == "hvcC" }).bytes.dropFirst(8)
        // Samples 10-19 described by a second entry holding the same record: nothing to decode differently.
        var added = IndexCompletion.Descriptions(track: v)
        added.add(10..<20, record: Array(hvcC))
        // In the same pass (the file opened once), the video's edit list ended at its middle, 0.30 s of 0.60 s.
        let scale = try #require(original.tracks[v].timescale)
        let end = EditListEnd(track: v, shownEnd: Int64(scale) * 3 / 10, firstDTS: 0)
        try IndexCompletion.complete(path: copy, ends: [end], entries: [], carried: [], descriptions: [added], faststart: false)
        let written = try #require(SourceIndex(path: copy))
        let track = written.tracks[v]
        #expect(track.sampleDescriptions.count == 2)
        #expect(track.samples == original.tracks[v].samples, "the same samples, sizes and bytes")
        let probed = try ReferencedRemuxTests.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=duration",
                                                              "-of", "csv=p=0", copy])
        let shown = try #require(probed.split(separator: ",").first.flatMap { Double($0) }, "ffprobe: \(probed)")
        #expect(abs(shown - 0.3) < 0.02, "ffprobe: \(probed)")
        // Every frame still decodes (the edit list only hides those after the end).
        let frames = try Self.frames(copy), sourceFrames = try Self.frames(source)
        #expect(frames.count == 36 && frames == sourceFrames)
        #expect(OutputCheck.entryMismatch(track, tag: "hvc1", codec: "hevc") == nil)
        // The second description made hev1 (in band parameter sets allowed): caught.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: copy))
        let stsd = try #require(bytes.range(of: Data("stsd".utf8)))
        let first = try #require(bytes.range(of: Data("hvc1".utf8), in: stsd.upperBound..<bytes.count))
        let second = try #require(bytes.range(of: Data("hvc1".utf8), in: first.upperBound..<bytes.count))
        bytes.replaceSubrange(second, with: Data("hev1".utf8))
        try bytes.write(to: URL(fileURLWithPath: copy))
        let spoiled = try #require(SourceIndex(path: copy))
        #expect(OutputCheck.entryMismatch(spoiled.tracks[v], tag: "hvc1", codec: "hevc")?.contains("'hev1' where 'hvc1'") == true)
    }
}
