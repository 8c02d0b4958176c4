import Foundation
import Media
import Remux
import Testing

/// MP4/MOV into MP4/MOV with the index in front, the payloads never read:
/// the muxer writes from packets read from the index alone, and the media
/// data is copied from the input by each payload's place. Checked against
/// the same remux with every payload read and written (the one-pass write
/// of a measured index), and against the input itself: the same packets,
/// byte for byte and time for time (ffmpeg's framemd5 of both outputs), the
/// same streams and tags (ffprobe), the index in front, every payload the
/// input's (framemd5 hashes of the output against the input's).
@Suite("remux with payloads copied by their place")
struct ReferencedRemuxTests {
    static let repo = IndexReservationTests.repo

    func fixture(_ name: String) throws -> String {
        for folder in [".fixtures", ".real-media", "Tests/Fixtures/devices"] {
            let path = Self.repo.appendingPathComponent(folder).appendingPathComponent(name).path
            if FileManager.default.fileExists(atPath: path) { return path }
        }
        try Test.cancel("\(name) missing")
    }

    func temporary(_ ext: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("avtool-referenced-\(UUID().uuidString).\(ext)").path
    }

    static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/\(tool)")
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Each packet's stream, size and hash, in each stream's order (framemd5 without its timing).
    static func payloads(_ path: String) throws -> [String: [String]] {
        var streams: [String: [String]] = [:]
        for line in try IndexReservationTests.framemd5(path).split(separator: "\n") where !line.hasPrefix("#") {
            let f = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard f.count >= 6 else { continue }
            streams[f[0], default: []].append("\(f[4]) \(f[5])")
        }
        return streams
    }

    /// What ffprobe says of the streams and tags (not of the file's size or bit rates).
    static func streams(_ path: String) throws -> String {
        try run("ffprobe", ["-v", "error", "-show_entries",
                            "stream=index,codec_name,codec_tag_string,width,height,pix_fmt,sample_rate,channels,channel_layout,"
                                + "time_base,start_pts,duration_ts,nb_frames:stream_tags:stream_side_data:format_tags",
                            "-of", "json", path])
    }

    @Test(arguments: [("h264_bframes_2997_aac48_stereo.mp4", "mov"), ("iphone_tags.mov", "mp4"), ("hevc_aac.mp4", "mov"),
                      ("timecode.mov", "mov"), ("pcm_in_mov.mov", "mov"), ("hdr10_pcm.mov", "mov"),
                      ("rotated90.mp4", "mp4"), ("android_tags.mp4", "mov"), ("camera_576p.mp4", "mp4"),
                      ("cockatoo_yuv444_mp3.mp4", "mov"), ("alac.m4a", "m4a"), ("bbb_720p_aac51.mp4", "mov"),
                      ("iphone14pro_dv84_hlg_720p_mebx.MOV", "mov"), ("dolby_sparks_dv8_hvc1_360p.mp4", "mp4"),
                      ("apple_vt_spatial_mvhevc_160x120.mp4", "mov")])
    func sameFileAsPayloadsReadAndWritten(name: String, ext: String) throws {
        let input = try fixture(name)
        let referenced = temporary(ext), read = temporary(ext)
        defer { unlink(referenced); unlink(read) }
        var options = RemuxOptions()
        options.bulk = false
        let report = try remux(input: input, output: referenced, options: options)
        #expect(report.indexPlacement?.hasPrefix("written in front: the media data copied from the input") == true,
                "\(report.indexPlacement ?? "")")
        options.payloadsByReference = false
        let other = try remux(input: input, output: read, options: options)
        #expect(try IndexReservationTests.framemd5(referenced) == IndexReservationTests.framemd5(read))
        #expect(try Self.streams(referenced) == Self.streams(read))
        #expect(try Self.payloads(referenced) == Self.payloads(input))
        let boxes = try IndexReservationTests.boxes(referenced)
        #expect(boxes.map(\.0).prefix(2) == ["ftyp", "moov"], "\(boxes)")
        #expect(report.outputBytes == Int64(try #require(fileSize(referenced))))
        #expect(report.streams.map(\.packets) == other.streams.map(\.packets))
        #expect(report.streams.map(\.bytes) == other.streams.map(\.bytes))
    }

    /// A tag edit through the muxer, the payloads copied all the same.
    @Test func editsAreMade() throws {
        let input = try fixture("iphone_tags.mov")
        let out = temporary("mov")
        defer { unlink(out) }
        var options = RemuxOptions()
        options.bulk = false
        options.edits.tags = [MetadataEdits.Tag(key: "title", value: "by place")]
        options.edits.rotation = 90
        let report = try remux(input: input, output: out, options: options)
        #expect(report.indexPlacement?.hasPrefix("written in front: the media data copied") == true)
        let probe = try Self.streams(out)
        #expect(probe.contains("\"title\": \"by place\""), "\(probe)")
        #expect(probe.contains("\"rotation\": -90") || probe.contains("\"rotation\": 270"), "\(probe)")
        #expect(try Self.payloads(out) == Self.payloads(input))
    }

    /// The GoPro's telemetry track ends as its sample tables say (the
    /// demuxer, reading payloads, cuts the last sample's duration to the
    /// length it probed); every sample the input's.
    @Test func cameraTracksKeepTheirTables() throws {
        let input = try fixture("gopro_max_heromode_gpmd.mp4")
        let out = temporary("mov")
        defer { unlink(out) }
        var options = RemuxOptions()
        options.bulk = false
        let report = try remux(input: input, output: out, options: options)
        #expect(report.indexPlacement?.hasPrefix("written in front: the media data copied") == true)
        #expect(try Self.payloads(out) == Self.payloads(input))
        options.payloadsByReference = false
        let read = temporary("mov")
        defer { unlink(read) }
        let other = try remux(input: input, output: read, options: options)
        #expect(report.streams.map(\.packets) == other.streams.map(\.packets))
        #expect(report.streams.map(\.bytes) == other.streams.map(\.bytes))
    }

    /// Nothing of the muxer's file is left beside the output, and a failed
    /// remux (the output's folder gone) leaves nothing either.
    @Test func leavesNothingBehind() throws {
        let input = try fixture("h264_bframes_2997_aac48_stereo.mp4")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("avtool-referenced-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var options = RemuxOptions()
        options.bulk = false
        _ = try remux(input: input, output: dir.appendingPathComponent("out.mov").path, options: options)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["out.mov"])
    }
}
