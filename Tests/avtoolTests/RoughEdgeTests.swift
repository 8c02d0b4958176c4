import Foundation
import Testing

/// Where a new user stumbled: each answered before any work, with the reason.
@Suite("rough edges")
struct RoughEdgeTests {
    /// `--offset 250` could be milliseconds or seconds: refused, with both spellings offered.
    @Test func bareOffsetIsRefused() throws {
        let scratch = try Scratch()
        let out = scratch.path("merged.mp4")
        let run = try Tool.avtool("merge", try Fixtures.path("scene_a_video.mp4"), try Fixtures.path("scene_a_audio.m4a"), out,
                                  "--offset", "250")
        #expect(run.status == 64)
        #expect(run.stderr.contains("'--offset' 250 has no unit: write 250ms or 250s"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        // With its unit, and 0 without one, it is read.
        for offset in ["250ms", "0"] {
            let ok = try Tool.avtool("merge", try Fixtures.path("scene_a_video.mp4"), try Fixtures.path("scene_a_audio.m4a"), out,
                                     "--offset", offset, "--overwrite", "--json")
            #expect(ok.status == 0, "\(offset): \(ok)")
        }
    }

    /// WebM cannot hold HEVC: refused before the input is read, no output.
    @Test func transcodeToWebMIsRefused() throws {
        let scratch = try Scratch()
        let out = scratch.path("clip.webm")
        let run = try Tool.avtool("transcode", try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4"), out)
        #expect(run.status == 1)
        #expect(run.stderr.contains("webm cannot hold HEVC") && run.stderr.contains("write .mov, .mp4 or .mkv"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)
    }

    /// A second batch run says why each job was left alone, without --dry-run.
    @Test func batchSaysWhyJobsAreSkipped() throws {
        let scratch = try Scratch()
        try Fixtures.batchSamples(in: scratch)
        let recipe = Tool.repo.appendingPathComponent("recipes/remux-to-mp4.yaml").path
        let first = try Tool.avtool("batch", recipe, "--base", scratch.url.path)
        try #require(first.status == 0, "\(first)")
        #expect(!first.stderr.contains("skip  "))
        let again = try Tool.avtool("batch", recipe, "--base", scratch.url.path)
        #expect(again.status == 0)
        let skips = again.stderr.split(separator: "\n").filter { $0.hasPrefix("skip  ") }
        #expect(skips.count == 3 && skips.allSatisfy { $0.hasSuffix("(up to date)") }, "\(again.stderr)")
    }
}
