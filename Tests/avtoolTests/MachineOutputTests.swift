import Foundation
import Testing

/// What programs wrapping avtool read: `--progress json` lines, `--json`
/// failures with a stable code, `--version`, and usage errors in one form.
@Suite("machine-readable progress and errors")
struct MachineOutputTests {
    /// The JSON objects of a run's stderr lines that are JSON.
    static func lines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").filter { $0.hasPrefix("{") }.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], "\($0)")
        }
    }

    /// A transcode of several seconds: lines at least once a second, percent rising to 100.
    @Test func progressLinesOfATranscode() throws {
        let scratch = try Scratch()
        let out = scratch.path("out.mov")
        let run = try Tool.avtool("transcode", try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4"), out,
                                  "--preset", "slow", "--progress", "json")
        try #require(run.status == 0, "\(run)")
        let lines = try Self.lines(run.stderr)
        let progress = lines.filter { $0["event"] as? String == "progress" }
        let end = try #require(lines.last)
        #expect(end["event"] as? String == "end" && end["status"] as? String == "ok", "\(end)")
        #expect(end["percent"] as? Double == 100)
        let percents = lines.compactMap { $0["percent"] as? Double }
        #expect(percents == percents.sorted(), "\(percents)")
        let times = lines.compactMap { $0["elapsed_s"] as? Double }
        let total = try #require(times.last)
        #expect(total > 2, "the transcode took \(total) s: too short to check the rate")
        // About a line a second: no gap of more than 3 s (the emitter aims at 0.75 s;
        // the margin is for a machine loaded by the tests running beside this one).
        for (a, b) in zip(times, times.dropFirst()) { #expect(b - a <= 3, "\(a) → \(b)") }
        // What is not known yet is left out (a line before the first frame is
        // encoded, on a loaded machine); from the first percent on, every field.
        let known = progress.drop { $0["percent"] == nil }
        #expect(known.count >= 2, "\(progress)")
        for l in known {
            for key in ["percent", "out_time_s", "speed", "elapsed_s", "bytes_written"] {
                #expect(l[key] != nil, "\(key) missing in \(l)")
            }
        }
        #expect(progress.contains { $0["eta_s"] != nil })
        // The output's bytes, rising to the file's size (not what the muxer rewrote or read back).
        let written = lines.compactMap { ($0["bytes_written"] as? NSNumber)?.int64Value }
        #expect(written == written.sorted(), "\(written)")
        let size = (try FileManager.default.attributesOfItem(atPath: out)[.size] as? NSNumber)?.int64Value
        #expect((end["bytes_written"] as? NSNumber)?.int64Value == size, "\(end), the file has \(size ?? 0) bytes")
        // The summary still follows for people.
        #expect(run.stderr.contains("transcoded"))
    }

    /// `--progress-fd 1`: the lines go to stdout instead.
    @Test func progressOnAnotherDescriptor() throws {
        let scratch = try Scratch()
        let run = try Tool.avtool("remux", try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4"), scratch.path("o.mkv"),
                                  "--progress", "json", "--progress-fd", "1")
        try #require(run.status == 0, "\(run)")
        #expect(try Self.lines(run.stdout).last?["status"] as? String == "ok")
        #expect(try Self.lines(run.stderr).isEmpty)
    }

    /// A batch: the batch's percent, a line per job started and finished.
    @Test func batchProgress() throws {
        let scratch = try Scratch()
        try Fixtures.batchSamples(in: scratch)
        let run = try Tool.avtool("batch", Tool.repo.appendingPathComponent("recipes/remux-to-mp4.yaml").path,
                                  "--base", scratch.url.path, "--progress", "json")
        try #require(run.status == 0, "\(run)")
        let lines = try Self.lines(run.stderr)
        let finished = lines.filter { $0["event"] as? String == "job" && $0["status"] as? String == "done" }
        #expect(finished.count == 3, "\(lines)")
        #expect(Set(finished.compactMap { $0["output"] as? String }).count == 3)
        #expect(lines.last?["event"] as? String == "end" && lines.last?["percent"] as? Double == 100)
        // The batch's bytes: its outputs' sizes summed.
        var sizes: Int64 = 0
        for f in Set(finished.compactMap { $0["output"] as? String }) {
            let path = f.hasPrefix("/") ? f : scratch.url.appendingPathComponent(f).path
            sizes += (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
        }
        #expect((lines.last?["bytes_written"] as? NSNumber)?.int64Value == sizes, "\(lines.last ?? [:]), outputs \(sizes) bytes")
        let percents = lines.compactMap { $0["event"] as? String == "job" ? nil : $0["percent"] as? Double }
        #expect(percents == percents.sorted(), "\(percents)")
    }

    /// `--json` failures are JSON on stdout with a stable code, for runtime and usage errors.
    @Test(arguments: [
        (["probe", "/nonexistent/clip.mov", "--json"], "not-found", 1),
        (["remux", "FIXTURE:h264_aac.mkv", "OUT:o.mp4", "--json"], "unsupported", 1),
        (["cut", "FIXTURE:h264_aac.mkv", "OUT:o.mkv", "--keep", "500-600", "--json"], "invalid-option", 1),
        (["cut", "FIXTURE:h264_aac.mkv", "OUT:o.mkv", "--from", "5", "--to", "4", "--json"], "usage", 64),
        (["remux", "FIXTURE:h264_aac.mkv", "OUT:o.mkv", "--bogus", "--json"], "usage", 64),
        (["remx", "a", "b", "--json"], "usage", 64),
    ] as [([String], String, Int32)])
    func jsonFailures(arguments: [String], code: String, status: Int32) throws {
        let scratch = try Scratch()
        let args = try arguments.map { a in
            if a.hasPrefix("FIXTURE:") { return try Fixtures.path(String(a.dropFirst(8))) }
            if a.hasPrefix("OUT:") { return scratch.path(String(a.dropFirst(4))) }
            return a
        }
        let run = try Tool.avtool(args)
        #expect(run.status == status, "\(run)")
        let object = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any], "\(run)")
        let error = try #require(object["error"] as? [String: Any])
        #expect(error["code"] as? String == code, "\(error)")
        #expect(error["exit_status"] as? Int == Int(status))
        #expect((error["message"] as? String)?.isEmpty == false)
        // People get the same one line on stderr, with the one prefix.
        #expect(run.stderr.hasPrefix("avtool: error: "), "\(run.stderr)")
    }

    /// A mistyped verb: the verb meant.
    @Test func mistypedVerb() throws {
        let run = try Tool.avtool("remx", "a.mov", "b.mp4")
        #expect(run.status == 64)
        #expect(run.stderr.contains("unknown verb 'remx'; did you mean 'remux'?"), "\(run.stderr)")
        let far = try Tool.avtool("zzzz")
        #expect(far.stderr.contains("the verbs are probe, remux"), "\(far.stderr)")
    }

    /// `--version` names the libraries a bug report needs.
    @Test func version() throws {
        let run = try Tool.avtool("--version")
        #expect(run.status == 0)
        let text = run.stdout
        for needed in ["avtool 0.", "FFmpeg ", "libavformat 59.", "libavcodec 59.", "x265 ", "Swift 6"] {
            #expect(text.contains(needed), "\(text)")
        }
        // Each library's version is what the loaded library says (ffmpeg -version prints the same).
        let ffmpeg = try Tool.run("ffmpeg", ["-hide_banner", "-version"])
        for line in ffmpeg.stdout.split(separator: "\n") where line.hasPrefix("libavformat") || line.hasPrefix("libavcodec") {
            // "libavformat    59. 27.100 / 59. 27.100"
            let parts = line.split(separator: "/").last.map { $0.replacingOccurrences(of: " ", with: "") } ?? ""
            let name = line.split(separator: " ").first.map(String.init) ?? ""
            #expect(text.contains("\(name) \(parts)"), "\(name) \(parts) in \(text)")
        }
    }
}
