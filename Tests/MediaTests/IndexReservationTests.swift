import Foundation
import Media
import Remux
import Testing

/// MP4/MOV with faststart in one pass: the index's size is measured by a
/// trial write of the input read without its media data, reserved after the
/// header, and written there. Checked against the two-pass way (libavformat's
/// faststart, `--no-faststart` then moved): the same index byte for byte
/// length, every packet the same (framemd5), and only the smallest `free`
/// box (8 bytes) left of the reservation; and the fallback when the
/// reservation is too small.
@Suite("index reserved in one pass")
struct IndexReservationTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func fixture(_ name: String, real: Bool = false) throws -> String {
        let path = Self.repo.appendingPathComponent(real ? ".real-media" : ".fixtures").appendingPathComponent(name).path
        guard FileManager.default.fileExists(atPath: path) else { try Test.cancel("\(name) missing") }
        return path
    }

    func temporary(_ ext: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("avtool-index-\(UUID().uuidString).\(ext)").path
    }

    /// The top-level boxes: (type, size).
    static func boxes(_ path: String) throws -> [(String, Int)] {
        let d = try #require(FileManager.default.contents(atPath: path))
        var out: [(String, Int)] = []
        var i = 0
        while i + 8 <= d.count {
            let size = d[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) }
            out.append((String(decoding: d[(i + 4)..<(i + 8)], as: UTF8.self), size))
            guard size >= 8 else { break }
            i += size
        }
        return out
    }

    static func framemd5(_ path: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        p.arguments = ["-v", "error", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test(arguments: [("h264_bframes_2997_aac48_stereo.mp4", false, "mp4"), ("iphone_tags.mov", false, "mov"),
                      ("hevc_aac.mp4", false, "mov"), ("timecode.mov", false, "mov"),
                      ("itunes_tags_cover.m4a", true, "m4a"), ("camera_576p.mp4", true, "mp4"),
                      ("birds_handbrake_bframes.mp4", true, "mp4")])
    func onePassMatchesTwoPasses(name: String, real: Bool, ext: String) throws {
        let input = try fixture(name, real: real)
        let one = temporary(ext), two = temporary(ext)
        defer { unlink(one); unlink(two) }
        var options = RemuxOptions()
        options.bulk = false  // the muxer's way (same-container copies are bulk copies otherwise)
        options.payloadsByReference = false  // the payloads read and written (see ReferencedRemuxTests)
        let report = try remux(input: input, output: one, options: options)
        #expect(report.indexPlacement?.hasPrefix("written in front in one pass") == true, "\(report.indexPlacement ?? "")")
        options.faststart = false
        _ = try remux(input: input, output: two, options: options)
        let a = try Self.boxes(one), b = try Self.boxes(two)
        // The index first, as large as the two-pass one's, then at most 8 bytes of slack.
        #expect(a.first?.0 == "ftyp" && a.dropFirst().first?.0 == "moov", "\(a)")
        let moovA = try #require(a.first { $0.0 == "moov" }?.1), moovB = try #require(b.first { $0.0 == "moov" }?.1)
        #expect(moovA == moovB || (moovA < moovB + 64 && name.hasPrefix("birds")), "\(moovA) vs \(moovB)")
        let slack = a.drop { $0.0 != "moov" }.dropFirst().prefix { $0.0 != "mdat" }.filter { $0.0 == "free" }.map(\.1)
        #expect(slack.first.map { $0 <= 8 + 64 } == true, "\(a)")
        #expect(try Self.framemd5(one) == Self.framemd5(two))
    }

    /// A reservation too small: the index written again by the second pass, the output whole.
    @Test func tooSmallFallsBackToTwoPasses() throws {
        let input = try fixture("h264_bframes_2997_aac48_stereo.mp4")
        let out = temporary("mp4"), reference = temporary("mp4")
        defer { unlink(out); unlink(reference) }
        var options = RemuxOptions()
        options.bulk = false
        options.indexReservationAdjustment = -100
        let report = try remux(input: input, output: out, options: options)
        #expect(report.indexPlacement?.contains("were too few") == true, "\(report.indexPlacement ?? "")")
        let a = try Self.boxes(out)
        #expect(a.map(\.0).prefix(2) == ["ftyp", "moov"], "\(a)")
        var plain = RemuxOptions()
        plain.faststart = false
        _ = try remux(input: input, output: reference, options: plain)
        #expect(try Self.framemd5(out) == Self.framemd5(reference))
        // No temporary is left beside the output.
        let dir = (out as NSString).deletingLastPathComponent
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.contains((out as NSString).lastPathComponent) && $0 != (out as NSString).lastPathComponent }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    /// Inputs whose index cannot be measured from their index alone take the two-pass way.
    @Test func otherInputsTakeTwoPasses() throws {
        let out = temporary("mp4")
        defer { unlink(out) }
        let report = try remux(input: try fixture("h264_aac.mkv"), output: out, options: {
            var o = RemuxOptions()
            o.streams.subtitles = false
            return o
        }())
        #expect(report.indexPlacement == "moved to the front in a second pass")
    }
}
