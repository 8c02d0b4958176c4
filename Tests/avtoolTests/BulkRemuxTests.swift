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

    func packets(_ p: String) throws -> String {
        try Tool.run("ffprobe", ["-v", "error", "-show_entries", "packet=stream_index,pts,dts,duration,size,flags,data_hash",
                                 "-of", "csv=p=0", p]).stdout
    }

    /// Tags as ffprobe reads them: the file's, then each stream's.
    func tags(_ path: String) throws -> [[String: String]] {
        let probe = try FFprobe(path)
        func strings(_ d: [String: Any]) -> [String: String] { (d["tags"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String } }
        return [strings(probe.format)] + probe.streams.map(strings)
    }

    /// `--metadata`, `--creation-time` (given as ffprobe prints it) and
    /// `--rotate` made on an input's tags, as the options document them:
    /// the creation time on the file and every stream, each key set or
    /// removed without regard to case, `s:v` on video that is not cover art.
    func edited(_ tags: [[String: String]], _ args: [String], probe: FFprobe) -> [[String: String]] {
        var out = tags
        func set(_ d: inout [String: String], _ key: String, _ value: String?) {
            for k in d.keys where k.lowercased() == key.lowercased() { d[k] = nil }
            if let value { d[key] = value }
        }
        for (option, value) in zip(args, args.dropFirst()) {
            if option == "--creation-time" { for i in out.indices { set(&out[i], "creation_time", value) } }
            guard option == "--metadata", let eq = value.firstIndex(of: "=") else { continue }
            var key = String(value[..<eq])
            let v = value[value.index(after: eq)...]
            var targets = [0]
            if key.hasPrefix("s:") {
                let parts = key.split(separator: ":", maxSplits: 2)
                key = String(parts[2])
                targets = probe.streams.indices.filter { j in
                    let type = FFprobe.string(probe.streams[j], "codec_type")
                    switch parts[1] {
                    case "v": return type == "video" && !FFprobe.isCoverArt(probe.streams[j])
                    case "a": return type == "audio"
                    default: return Int(parts[1]) == j
                    }
                }.map { $0 + 1 }
            }
            for t in targets { set(&out[t], key, v.isEmpty ? nil : String(v)) }
        }
        return out
    }

    /// `--metadata`, `--rotate` and `--creation-time` on an MP4/MOV/M4A into
    /// the same kind of file: made in the index, the media data copied as it
    /// is. The tags ffprobe reads are the input's with the edits made (the
    /// rest as they were, which the muxer's way does not always manage:
    /// brands, an iTunes file's own items), the rotation is the muxer's
    /// way's, every packet is the input's, and GStreamer reads the file.
    @Test(arguments: [
        ("h264_bframes_2997_aac48_stereo.mp4", false, "mp4", ["--metadata", "title=Talk", "--metadata", "artist=Ann",
            "--metadata", "foo=bar", "--rotate", "90", "--metadata", "s:a:language=fra",
            "--creation-time", "2024-03-04T05:06:07.000000Z"]),
        ("iphone_tags.mov", false, "mov", ["--metadata", "title=T", "--metadata", "com.apple.quicktime.make=Foo",
            "--metadata", "s:v:handler_name=Camera", "--rotate", "180", "--creation-time", "2025-01-01T00:00:00.000000Z"]),
        ("android_tags.mp4", false, "mp4", ["--metadata", "com.android.version=15", "--metadata", "title=X",
            "--metadata", "com.android.capture.fps="]),
        ("rotated90.mp4", false, "mp4", ["--rotate", "0", "--metadata", "title="]),
        ("aac44_mono.m4a", false, "m4a", ["--metadata", "album=A", "--metadata", "s:a:handler_name=Voice", "--metadata", "title="]),
        // A time past 2040 does not fit a version 0 header's 32 bits: the headers move to version 1 (the
        // muxer's way wraps the tracks' to 1979).
        ("timecode.mov", false, "mov", ["--metadata", "title=Grüße ✓", "--metadata", "s:0:language=deu",
            "--creation-time", "2050-01-02T03:04:05.000000Z"]),
        ("itunes_tags_cover.m4a", true, "mp4", ["--metadata", "title=New", "--metadata", "artist=", "--metadata", "newkey=v",
            "--metadata", "s:a:language=fra"]),
        ("birds_handbrake_bframes.mp4", true, "mp4", ["--metadata", "description=D", "--rotate", "270",
            "--metadata", "s:v:language=jpn"]),
    ])
    func editsAreMadeInTheIndex(name: String, real: Bool, ext: String, edits: [String]) throws {
        let scratch = try Scratch()
        let input = real ? try Fixtures.real(name) : try Fixtures.path(name)
        let out = scratch.path("out.\(ext)"), muxed = scratch.path("muxed.\(ext)")
        let run = try Tool.avtool(["remux", input, out, "--json"] + edits)
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("the media data copied as it is") && run.stdout.contains("edited in the index"), "\(run.stdout)")
        let general = try Tool.avtool(["remux", input, muxed, "--no-bulk"] + edits)
        try #require(general.status == 0, "\(general)")

        let probe = try FFprobe(input)
        #expect(try tags(out) == edited(try tags(input), edits, probe: probe))
        let (a, b) = (try FFprobe(out), try FFprobe(muxed))
        #expect(a.streams.map(FFprobe.rotation) == b.streams.map(FFprobe.rotation))
        if let r = zip(edits, edits.dropFirst()).first(where: { $0.0 == "--rotate" }).map({ Int($0.1)! }) {
            // ffprobe prints the counter-clockwise turn, within [-180, 180).
            let printed = -r < -180 ? 360 - r : -r
            #expect(a.streams.filter { FFprobe.string($0, "codec_type") == "video" }.map(FFprobe.rotation)
                        .allSatisfy { ($0 ?? 0) == printed })
        }
        #expect(try packets(out) == packets(input))
        let strict = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-xerror", "-i", out, "-f", "null", "-"])
        #expect(strict.status == 0 && strict.stderr.isEmpty, "\(strict.stderr)")
        let gst = try GstDiscoverer(out)
        #expect(gst.ok, "\(gst.output.prefix(300))")
    }

    /// Device recordings (an iPhone's MOV with its metadata tracks and keys,
    /// a GoPro's MP4 with its firmware string and place): edits made in the
    /// index hold what ffprobe reads as the input's tags with the edits made.
    @Test(arguments: [
        ("iphone14pro_dv84_hlg_720p_mebx.MOV", "mov", ["--metadata", "title=T", "--metadata", "com.apple.quicktime.make=Foo",
            "--metadata", "s:v:handler_name=Camera", "--rotate", "90", "--creation-time", "2025-01-01T00:00:00.000000Z"]),
        ("gopro_max_heromode_gpmd.mp4", "mp4", ["--metadata", "title=Ride", "--metadata", "s:a:language=fra",
            "--creation-time", "2024-06-07T08:09:10.000000Z"]),
    ])
    func deviceRecordingsAreEditedInTheIndex(name: String, ext: String, edits: [String]) throws {
        let scratch = try Scratch()
        let input = try Fixtures.device(name), out = scratch.path("out.\(ext)")
        let run = try Tool.avtool(["remux", input, out, "--json"] + edits)
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("the media data copied as it is") && run.stdout.contains("edited in the index"), "\(run.stdout)")
        #expect(try tags(out) == edited(try tags(input), edits, probe: try FFprobe(input)))
        #expect(try packets(out) == packets(input))
    }

    /// An index holding what the check on its boxes does not read (a user
    /// data string in an old Macintosh language, code 1) is checked by
    /// libavformat reading the new one back: still copied as it is, the
    /// edits made in the index.
    @Test func anIndexTheBoxesCannotTellIsReadBackByLibavformat() throws {
        let scratch = try Scratch()
        let bytes = [UInt8](try #require(FileManager.default.contents(atPath: try Fixtures.path("android_tags.mp4"))))
        let moov = try #require(try placedBoxes(try Fixtures.path("android_tags.mp4")).last)
        try #require(moov.type == "moov" && moov.at + moov.size == bytes.count)
        func be(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        let text = Array("Bonjour".utf8)
        let comment = be(12 + text.count, 4) + [0xa9, 0x63, 0x6d, 0x74] + be(text.count, 2) + [0, 1] + text
        let udta = be(8 + comment.count, 4) + Array("udta".utf8) + comment
        let crafted = Array(bytes[..<moov.at]) + be(moov.size + udta.count, 4) + Array(bytes[(moov.at + 4)...]) + udta
        let input = scratch.path("in.mp4"), out = scratch.path("out.mp4")
        try Data(crafted).write(to: URL(fileURLWithPath: input))
        let edits = ["--metadata", "title=X", "--metadata", "s:a:language=fra"]
        let run = try Tool.avtool(["remux", input, out, "--json"] + edits)
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("the media data copied as it is") && run.stdout.contains("edited in the index"), "\(run.stdout)")
        let before = try tags(input)
        #expect(before[0]["comment"] == "Bonjour")
        #expect(try tags(out) == edited(before, edits, probe: try FFprobe(input)))
        #expect(try packets(out) == packets(input))
    }

    /// An edit that names a stream the file lacks is the same error either way.
    @Test func anEditNamingAMissingStreamFails() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        for extra in [[], ["--no-bulk"]] {
            let run = try Tool.avtool(["remux", input, scratch.path("o.mp4"), "--metadata", "s:5:language=fra"] + extra)
            #expect(run.status != 0 && run.stderr.contains("output stream 5"), "\(run)")
            #expect(!FileManager.default.fileExists(atPath: scratch.path("o.mp4")))
        }
    }

    @Test(arguments: [("h264_bframes_2997_aac48_stereo.mp4", false, "mp4"), ("iphone_tags.mov", false, "mov"),
                      ("audio_starts_late.mp4", false, "mp4"), ("timecode.mov", false, "mov"),
                      ("pcm_in_mov.mov", false, "mov"), ("hdr10_pcm.mov", false, "mov"),
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
            ("o1.mp4", ["--metadata", "s:v:title=Talk"]), ("o2.mov", []), ("o3.mp4", ["--no-bulk"]),
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

    /// A file cut off inside its media data whose boxes all still end within
    /// it (the media data box's size made the cut file's): only the sample
    /// tables show chunks past the end. The bulk copy reads them and leaves
    /// the job to the muxer's way, which refuses it as cut off.
    @Test func chunksPastTheEndAreSeenFromTheSampleTables() throws {
        let scratch = try Scratch()
        let input = scratch.path("in.mp4")
        let made = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4"),
                                           "-map", "0", "-c", "copy", "-movflags", "+faststart", input])
        try #require(made.status == 0, "\(made)")
        var bytes = try #require(FileManager.default.contents(atPath: input))
        let mdat = try #require(try placedBoxes(input).first { $0.type == "mdat" })
        let cut = mdat.at + mdat.size * 7 / 10
        bytes = bytes.prefix(cut)
        let size = UInt32(cut - mdat.at)
        for k in 0..<4 { bytes[mdat.at + k] = UInt8(truncatingIfNeeded: size >> (8 * UInt32(3 - k))) }
        try bytes.write(to: URL(fileURLWithPath: input))
        #expect(try boxes(input).last == "mdat")
        let run = try Tool.avtool("remux", input, scratch.path("o.mp4"))
        #expect(run.status != 0 && run.stderr.contains("cut off"), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("o.mp4")))
    }

    /// The bulk copy's report names the streams as the muxer's way does
    /// (types, codecs, count, duration), also where it names them from the
    /// sample descriptions without libavformat. (A timecode track is not
    /// compared: the muxer's way writes it again from the video's tag.)
    @Test(arguments: [("h264_bframes_2997_aac48_stereo.mp4", false, "mp4"), ("hevc_aac.mp4", false, "mp4"),
                      ("iphone_tags.mov", false, "mov"), ("aac44_mono.m4a", false, "m4a"),
                      ("pcm_in_mov.mov", false, "mov"), ("itunes_tags_cover.m4a", true, "mp4"),
                      ("camera_576p.mp4", true, "mp4"), ("bbb_720p_aac51.mp4", true, "mp4")])
    func theReportNamesTheStreamsAsTheMuxersWay(name: String, real: Bool, ext: String) throws {
        let scratch = try Scratch()
        let input = real ? try Fixtures.real(name) : try Fixtures.path(name)
        func report(_ extra: [String]) throws -> [String: Any] {
            let run = try Tool.avtool(["remux", input, scratch.path("o.\(ext)"), "--json", "--overwrite"] + extra)
            try #require(run.status == 0, "\(run)")
            return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        }
        let bulk = try report([]), general = try report(["--no-bulk"])
        #expect((bulk["index_placement"] as? String)?.contains("copied as it is") == true)
        func streams(_ r: [String: Any]) -> [String] {
            (r["streams"] as? [[String: Any]] ?? []).map { "\($0["type"] ?? "") \($0["codec"] ?? "")" }
        }
        #expect(streams(bulk) == streams(general))
        let (a, b) = (bulk["duration_seconds"] as? Double, general["duration_seconds"] as? Double)
        #expect(a != nil && b != nil && abs(a! - b!) < 0.001, "\(String(describing: a)) \(String(describing: b))")
    }
}
