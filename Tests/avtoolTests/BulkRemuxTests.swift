import Foundation
import Testing

/// `avtool remux` of an MP4, MOV or M4A into the same kind of file: the
/// media data copied as it is, the index rewritten in front. Checked with
/// ffprobe (every packet's hash, timing and flags; tags; durations; start
/// times, which carry the edit lists), `ffmpeg -xerror` and GStreamer, and
/// against the muxer's way (`--no-bulk`) for the cases that must take it.
@Suite("remux: bulk copy")
struct BulkRemuxTests {
    /// The top-level box types of a file.
    func boxes(_ path: String) throws -> [String] { try placedBoxes(path).map(\.type) }

    /// The top-level boxes: type, offset, size.
    func placedBoxes(_ path: String) throws -> [(type: String, at: Int, size: Int)] {
        let d = try #require(FileManager.default.contents(atPath: path))
        var out: [(type: String, at: Int, size: Int)] = []
        var i = 0
        while i + 8 <= d.count {
            var size = d[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) }
            if size == 1 { size = d[(i + 8)..<(i + 16)].reduce(0) { $0 << 8 | Int($1) } }
            out.append((String(decoding: d[(i + 4)..<(i + 8)], as: UTF8.self), i, size))
            guard size >= 8 else { break }
            i += size
        }
        return out
    }

    /// What must be the same in the copy: every packet (stream, timing,
    /// flags, size, hash), the tags, the streams' codecs, start times and durations.
    func same(_ a: String, _ b: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        func packets(_ p: String) throws -> String {
            try Tool.run("ffprobe", ["-v", "error", "-show_entries", "packet=stream_index,pts,dts,duration,size,flags,data_hash",
                                     "-of", "csv=p=0", p]).stdout
        }
        func streams(_ p: String) throws -> String {
            try Tool.run("ffprobe", ["-v", "error", "-show_entries",
                                     "stream=index,codec_name,codec_tag_string,start_time,duration,nb_frames:stream_tags:format_tags:stream_disposition",
                                     "-of", "json", p]).stdout
        }
        #expect(try packets(a) == packets(b), "packets differ", sourceLocation: sourceLocation)
        #expect(try streams(a) == streams(b), "streams or tags differ", sourceLocation: sourceLocation)
    }

    @Test(arguments: [("h264_bframes_2997_aac48_stereo.mp4", false, "mp4"), ("iphone_tags.mov", false, "mov"),
                      ("audio_starts_late.mp4", false, "mp4"), ("timecode.mov", false, "mov"),
                      ("aac44_mono.m4a", false, "m4a"), ("itunes_tags_cover.m4a", true, "m4a"),
                      ("camera_576p.mp4", true, "mp4"), ("birds_handbrake_bframes.mp4", true, "mp4")])
    func sameContainerIsCopiedWithTheIndexInFront(name: String, real: Bool, ext: String) throws {
        let scratch = try Scratch()
        let fixture = real ? try Fixtures.real(name) : try Fixtures.path(name)
        // The index at the end, as a camera writes it.
        let input = scratch.path("in.\(ext)")
        let moved = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", fixture, "-map", "0", "-c", "copy",
                                            "-map_metadata", "0", "-movflags", "use_metadata_tags", input])
        try #require(moved.status == 0, "\(moved)")
        let inputBoxes = try boxes(input)
        #expect(inputBoxes.last == "moov", "\(inputBoxes)")
        let out = scratch.path("out.\(ext)")
        let run = try Tool.avtool("remux", input, out, "--json")
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("the media data copied as it is"), "\(run.stdout)")
        let b = try boxes(out)
        #expect(b.firstIndex(of: "moov")! < b.firstIndex(of: "mdat")!, "\(b)")
        // The same bytes but for a `free` box after the index (under a page
        // and a box header) that puts the media data where it was within a page.
        let inSize = try #require(FileManager.default.attributesOfItem(atPath: input)[.size] as? Int)
        let outSize = try #require(FileManager.default.attributesOfItem(atPath: out)[.size] as? Int)
        let placed = try placedBoxes(out)
        let diff = outSize - inSize
        #expect(diff >= 0 && diff < 4096 + 8, "\(placed)")
        if diff > 0, let m = placed.firstIndex(where: { $0.type == "moov" }), m + 1 < placed.count {
            #expect(placed[m + 1].type == "free" && placed[m + 1].size == diff, "\(placed)")
        }
        let dataIn = try #require(try placedBoxes(input).first { $0.type == "mdat" }?.at)
        let dataOut = try #require(placed.first { $0.type == "mdat" }?.at)
        #expect(dataIn % 4096 == dataOut % 4096)
        try same(input, out)
        let strict = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-xerror", "-i", out, "-f", "null", "-"])
        #expect(strict.status == 0 && strict.stderr.isEmpty, "\(strict.stderr)")
        let gst = try GstDiscoverer(out)
        #expect(gst.ok, "\(gst.output.prefix(300))")
        // A second remux of the output (index already in front) is the same file again.
        let again = scratch.path("again.\(ext)")
        let second = try Tool.avtool("remux", out, again, "--json")
        #expect(second.stdout.contains("already in front"), "\(second.stdout)")
        #expect(FileManager.default.contents(atPath: again) == FileManager.default.contents(atPath: out))
    }

    /// Anything else asked, another container or a fragmented input: the
    /// muxer's way, as before.
    @Test func otherJobsTakeTheMuxersWay() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        let cases: [(String, [String])] = [
            ("o1.mp4", ["--metadata", "title=Talk"]), ("o2.mov", []), ("o3.mp4", ["--no-bulk"]),
            ("o4.mp4", ["--no-audio"]), ("o5.mp4", ["--start", "keep"]), ("o6.mp4", ["--no-faststart"]),
        ]
        for (name, extra) in cases {
            let run = try Tool.avtool(["remux", input, scratch.path(name), "--json"] + extra)
            try #require(run.status == 0, "\(run)")
            #expect(!run.stdout.contains("copied as it is"), "\(name) \(extra): \(run.stdout)")
        }
        let fragmented = scratch.path("frag.mp4")
        try #require(try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", input, "-c", "copy", "-movflags",
                                             "frag_keyframe+empty_moov", fragmented]).status == 0)
        let f = try Tool.avtool("remux", fragmented, scratch.path("unfrag.mp4"), "--json")
        #expect(f.status == 0 && !f.stdout.contains("copied as it is"), "\(f)")
    }

    @Test func aCutOffInputIsRefusedAsBefore() throws {
        let scratch = try Scratch()
        let run = try Tool.avtool("remux", try Fixtures.path("truncated_faststart.mp4"), scratch.path("o.mp4"))
        #expect(run.status != 0, "\(run)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("o.mp4")))
    }
}
