import Foundation
import Testing

/// `split --size`, `split --chapters`, and `cut`/`split` in batch recipes.
@Suite("split by size and chapters; cut and split in batch")
struct SplitMoreTests {
    /// The payloads of the parts' first two streams (video, audio), part after part.
    static func packets(of parts: [String]) throws -> (video: [String], audio: [String]) {
        var video: [String] = [], audio: [String] = []
        for p in parts {
            let l = try PacketList(p)
            video += l.payloads[0] ?? []
            audio += l.payloads[1] ?? []
        }
        return (video, audio)
    }

    static func parts(_ run: Run) throws -> [[String: Any]] {
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        return try #require(report["parts"] as? [[String: Any]])
    }

    /// Every part within the size (each starts on a keyframe), and together
    /// they hold every packet of the input once.
    @Test func partsFitTheSize() throws {
        let scratch = try Scratch()
        let source = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        let total = (try FileManager.default.attributesOfItem(atPath: source)[.size] as? NSNumber)?.int64Value ?? 0
        let limit = total / 3
        let run = try Tool.avtool("split", source, scratch.path("p{n}.mp4"), "--size", "\(limit)", "--json")
        try #require(run.status == 0, "\(run)")
        let parts = try Self.parts(run)
        #expect(parts.count >= 3, "\(parts.count) parts of ≤ \(limit) bytes from \(total)")
        var video: [String] = [], audio: [String] = []
        for p in parts.compactMap({ $0["output"] as? String }) {
            let size = (try FileManager.default.attributesOfItem(atPath: p)[.size] as? NSNumber)?.int64Value ?? .max
            #expect(size <= limit, "\(p): \(size) bytes > \(limit)")
            let l = try PacketList(p)
            video += l.payloads[0] ?? []
            audio += l.payloads[1] ?? []
        }
        let original = try PacketList(source).payloads
        #expect(video == original[0] && audio == original[1], "the parts do not hold every packet once")
        // Sizes as users write them.
        for bad in ["0", "2XB", "-5MB", "GB"] {
            let r = try Tool.avtool("split", source, scratch.path("q{n}.mp4"), "--size", bad)
            #expect(r.status != 0 && r.stderr.contains("--size"), "\(bad): \(r)")
        }
    }

    /// HEVC of open GOPs (x265's default: each keyframe a CRA followed in
    /// decode order by leading pictures shown before it) split at its two
    /// later keyframes, into MOV as an iPhone's clip would be: each packet
    /// in exactly one part, in order (a split of such a clip once wrote
    /// the whole recording again as its second part).
    @Test func openGOPsSplitEachPacketOnce() throws {
        let scratch = try Scratch()
        let source = try Fixtures.path("hevc_aac.mp4")
        let run = try Tool.avtool("split", source, scratch.path("part-{n}.mov"), "--at", "2.4,4.8", "--json")
        try #require(run.status == 0, "\(run)")
        let parts = try Self.parts(run).compactMap { $0["output"] as? String }
        #expect(parts.count == 3, "\(parts)")
        let original = try PacketList(source).payloads
        let (video, audio) = try Self.packets(of: parts)
        #expect(video == original[0] ?? [], "\(video.count) video packets of \(original[0]?.count ?? 0)")
        #expect(audio == original[1] ?? [], "\(audio.count) audio packets of \(original[1]?.count ?? 0)")
    }

    /// A part per chapter, starting at the keyframe at or before each chapter.
    @Test func aPartPerChapter() throws {
        let scratch = try Scratch()
        let meta = scratch.path("chapters.txt")
        try """
            ;FFMETADATA1
            [CHAPTER]
            TIMEBASE=1/1000
            START=0
            END=2400
            title=one
            [CHAPTER]
            TIMEBASE=1/1000
            START=2400
            END=7200
            title=two
            [CHAPTER]
            TIMEBASE=1/1000
            START=7200
            END=10000
            title=three

            """.write(toFile: meta, atomically: true, encoding: .utf8)
        let source = scratch.path("chapters.mp4"), clicks = try CutTests.clickRecording(scratch)
        let r = try Tool.run("ffmpeg", ["-v", "error", "-i", clicks, "-i", meta,
                                        "-map", "0", "-map_chapters", "1", "-c", "copy", source])
        try #require(r.status == 0, "\(r)")
        let run = try Tool.avtool("split", source, scratch.path("ch{n}.mp4"), "--chapters", "--json")
        try #require(run.status == 0, "\(run)")
        let starts = try Self.parts(run).compactMap { $0["start"] as? Double }
        #expect(starts == [0, 2.4, 7.2], "\(starts)")
        // Each part keeps its own chapter.
        let probe = try Tool.run("ffprobe", ["-v", "error", "-show_chapters", "-of", "json", scratch.path("ch2.mp4")])
        let chapters = (try JSONSerialization.jsonObject(with: probe.data) as? [String: Any])?["chapters"] as? [[String: Any]] ?? []
        #expect(chapters.compactMap { ($0["tags"] as? [String: Any])?["title"] as? String } == ["two"])
        // Without chapters it is an error.
        let none = try Tool.avtool("split", clicks, scratch.path("x{n}.mp4"), "--chapters")
        #expect(none.status != 0 && none.stderr.contains("no chapters"), "\(none)")
    }

    /// `verb: cut` (with --keep and exact mode) and `verb: split` in a
    /// recipe: the same results as the verbs run alone; a second run skips
    /// both (the ledger knows a split by its first part).
    @Test func cutAndSplitInARecipe() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.path("in"), withIntermediateDirectories: true)
        _ = try FileManager.default.copyItem(atPath: try CutTests.clickRecording(scratch), toPath: scratch.path("in/take.mp4"))
        let recipe = scratch.path("r.yaml")
        try """
            version: 1
            steps:
              - verb: cut
                inputs: ["in/*.mp4"]
                output: out/{stem}-best.mp4
                options:
                  keep: "1.3-3.55,5.02-7.7"
                  mode: exact
              - verb: split
                inputs: ["in/*.mp4"]
                output: out/{stem}-part{n}.mp4
                options:
                  every: 3
            """.write(toFile: recipe, atomically: true, encoding: .utf8)
        let first = try Tool.avtool(["batch", recipe, "--base", scratch.url.path, "-q"])
        #expect(first.status == 0, "\(first)")
        let alone = scratch.path("alone.mp4")
        #expect(try Tool.avtool("cut", scratch.path("in/take.mp4"), alone, "--keep", "1.3-3.55,5.02-7.7", "--mode", "exact").status == 0)
        #expect(try CutTests.decoded(scratch.path("out/take-best.mp4")).map(\.hash) == (try CutTests.decoded(alone).map(\.hash)))
        for n in 1...4 {
            #expect(FileManager.default.fileExists(atPath: scratch.path("out/take-part\(n).mp4")), "part \(n)")
        }
        let second = try Tool.avtool(["batch", recipe, "--base", scratch.url.path, "--json"])
        #expect(second.status == 0, "\(second)")
        let summary = try #require(try JSONSerialization.jsonObject(with: second.data) as? [String: Any])
        #expect(summary["skipped"] as? Int == 2, "\(second.stdout)")
        // A split whose output has no {n} is a recipe error naming the line.
        try """
            version: 1
            steps:
              - verb: split
                inputs: ["in/*.mp4"]
                output: out/{stem}.mp4
                options:
                  every: 3
            """.write(toFile: recipe, atomically: true, encoding: .utf8)
        let bad = try Tool.avtool(["batch", recipe, "--base", scratch.url.path])
        #expect(bad.status != 0 && bad.stderr.contains("{n}"), "\(bad)")
    }
}
