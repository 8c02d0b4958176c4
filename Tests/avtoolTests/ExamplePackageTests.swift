import Foundation
import Testing

/// Examples/MergePair, a program on the AVToolKit library product: it
/// builds on its own (a package depending on this one by path), and the file
/// it merges passes the oracle `avtool merge`'s does — every beep within
/// 1 ms of its flash — with the same packets.
@Suite("AVToolKit example")
struct ExamplePackageTests {
    @Test func mergePairMergesInSync() throws {
        let package = Tool.repo.appendingPathComponent("Examples/MergePair").path
        let build = try Tool.run("swift", ["build", "--package-path", package])
        try #require(build.status == 0, "\(build)")
        let bin = package + "/.build/debug/merge-pair"
        let scratch = try Scratch()
        let video = try Fixtures.path("clicks_video.mp4"), audio = try Fixtures.path("clicks_audio.m4a")
        let out = scratch.path("example.mp4")
        let run = try Tool.run(bin, [video, audio, out])
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("silence inserted: "), "\(run.stdout)")
        #expect(!run.stderr.contains("[mp4 @"), "FFmpeg's log leaked: \(run.stderr)")
        let c = try ClickTrack(out)
        #expect(c.beeps.count >= 5)
        for e in c.beepErrors { #expect(e <= 0.001) }
        // The same merge as the command line's.
        let cli = scratch.path("cli.mp4")
        let merged = try Tool.avtool("merge", video, audio, cli, "-q")
        try #require(merged.status == 0, "\(merged)")
        #expect(try PacketList(out).payloads == PacketList(cli).payloads)
        // A failure comes back as a MediaError with its category.
        let missing = try Tool.run(bin, ["/nonexistent.mp4", audio, scratch.path("none.mp4")])
        #expect(missing.status == 1 && missing.stderr.contains("[not-found]"), "\(missing)")
    }
}
