import Foundation
import Testing

/// A writing verb run on tagged inputs: what ffprobe shows of the input's
/// tags must be in ffprobe's view of the output, or named in a warning.
struct TagCase: CustomTestStringConvertible, Sendable {
    /// The verb and its inputs (fixture names; `real:` for real recordings).
    let verb: [String]
    let container: String
    var extra: [String] = []
    /// Whether every tag must be kept (no warning allowed).
    var keepsAll = false

    var testDescription: String { "\(verb.joined(separator: " ")) → \(container)" }
}

let tagCases: [TagCase] = {
    var cases: [TagCase] = []
    for c in ["mov", "mp4"] { cases.append(TagCase(verb: ["remux", "iphone_tags.mov"], container: c, keepsAll: true)) }
    for c in ["mkv", "ts"] { cases.append(TagCase(verb: ["remux", "iphone_tags.mov"], container: c)) }
    for c in ["mp4", "mov"] { cases.append(TagCase(verb: ["remux", "android_tags.mp4"], container: c, keepsAll: true)) }
    cases.append(TagCase(verb: ["remux", "android_tags.mp4"], container: "mkv"))
    cases.append(TagCase(verb: ["remux", "attachment.mkv"], container: "mkv", keepsAll: true))
    cases.append(TagCase(verb: ["transcode", "iphone_tags.mov"], container: "mov", extra: ["--preset", "ultrafast"], keepsAll: true))
    cases.append(TagCase(verb: ["transcode", "android_tags.mp4"], container: "mp4", extra: ["--preset", "ultrafast"], keepsAll: true))
    cases.append(TagCase(verb: ["merge", "iphone_tags.mov", "aac48_stereo.m4a"], container: "mov"))
    cases.append(TagCase(verb: ["concat", "iphone_tags.mov", "iphone_tags.mov"], container: "mov", keepsAll: true))
    cases.append(TagCase(verb: ["fill-silence", "iphone_tags.mov"], container: "mov", keepsAll: true))
    cases.append(TagCase(verb: ["cut", "iphone_tags.mov"], container: "mov", extra: ["--from", "1"], keepsAll: true))
    cases.append(TagCase(verb: ["cut", "android_tags.mp4"], container: "mp4", extra: ["--to", "0:01.5"], keepsAll: true))
    for f in ["bbb_720p_aac51.mp4", "birds_handbrake_bframes.mp4", "camera_576p.mp4", "sample_1080p_23976.mp4",
              "itunes_tags_cover.m4a", "alac.m4a"] {
        for c in ["mov", "mkv"] {
            cases.append(TagCase(verb: ["remux", "real:" + f], container: c,
                                 extra: f.hasPrefix("itunes") ? ["--no-cover-art"] : []))
        }
    }
    return cases
}()

@Suite("tags: kept, or named in a warning")
struct MetadataTests {
    /// A fixture by name: `real:NAME` a fetched real recording, `device:NAME` a bundled device recording.
    static func input(_ name: String) throws -> String {
        if name.hasPrefix("real:") { return try Fixtures.real(String(name.dropFirst(5))) }
        if name.hasPrefix("device:") { return try Fixtures.device(String(name.dropFirst(7))) }
        return try Fixtures.path(name)
    }

    /// Keys that name the writer, which every muxer sets anew (not the recording's data).
    static func describesWriter(_ key: String, stream: Bool) -> Bool {
        let k = key.lowercased()
        if stream {
            let base = k.split(separator: "-").first.map(String.init) ?? k
            return ["vendor_id", "encoder", "duration", "bps", "number_of_frames", "number_of_bytes"].contains(base)
                || base.hasPrefix("_statistics_")
        }
        return ["major_brand", "minor_version", "compatible_brands", "encoder"].contains(k)
    }

    /// The tags of `want` that `have` lacks or holds with another value
    /// (keys without regard to case; times to the second).
    static func missing(_ want: [String: String], in have: [String: String], stream: Bool) -> [String] {
        let lower = Dictionary(have.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        return want.keys.sorted().filter { key in
            guard !describesWriter(key, stream: stream), let value = want[key] else { return false }
            // "und" is no language, and a zero date (1970-01-01 00:00:00) no date.
            guard let now = lower[key.lowercased()] else {
                return !(key == "language" && value == "und") && !(key == "creation_time" && value.hasPrefix("1970-01-01T00:00:00"))
            }
            if key == "creation_time" { return value.prefix(19) != now.prefix(19) }
            return value != now
        }
    }

    static func tags(_ d: [String: Any]) -> [String: String] {
        (d["tags"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String }
    }

    @Test(arguments: tagCases)
    func everyTagKeptOrNamed(_ c: TagCase) throws {
        let scratch = try Scratch()
        let inputs = try c.verb.dropFirst().map(Self.input)
        let out = scratch.path("out.\(c.container)")
        let run = try Tool.avtool([c.verb[0]] + inputs + [out] + c.extra)
        try #require(run.status == 0, "\(run)")
        let before = try FFprobe(inputs[0]), after = try FFprobe(out)
        var lost = Self.missing(Self.tags(before.format), in: Self.tags(after.format), stream: false)
        // The first input's streams in order; merge's second stream comes from AUDIO.
        let compared = c.verb[0] == "merge" ? 1 : min(before.streams.count, after.streams.count)
        for i in 0..<compared where !FFprobe.isCoverArt(before.stream(i)) {
            lost += Self.missing(Self.tags(before.stream(i)), in: Self.tags(after.stream(i)), stream: true)
                .map { "stream #\(i) \($0)" }
        }
        if c.keepsAll {
            #expect(lost.isEmpty, "lost: \(lost)")
            #expect(!run.stderr.contains("tag(s) not kept"), "\(run.stderr)")
        }
        for entry in lost {
            #expect(run.stderr.contains("tag(s) not kept") && run.stderr.contains(entry),
                    "\(entry) is lost without a warning naming it: \(run.stderr)")
        }
    }

    /// A timecode track: MOV/MP4 write it again from the video's timecode
    /// tag; Matroska keeps the tag.
    @Test(arguments: ["mov", "mp4", "mkv"])
    func timecodeKept(_ container: String) throws {
        let scratch = try Scratch()
        let out = scratch.path("out.\(container)")
        let run = try Tool.avtool("remux", try Fixtures.path("timecode.mov"), out)
        try #require(run.status == 0, "\(run)")
        #expect(!run.stderr.contains("warning"), "\(run.stderr)")
        let p = try FFprobe(out)
        // Matroska spells tag names in capitals.
        #expect(Self.tags(p.stream(0)).first { $0.key.lowercased() == "timecode" }?.value == "10:00:00:00")
        let tmcd = p.streams.first { FFprobe.string($0, "codec_tag_string") == "tmcd" }
        if container == "mkv" {
            #expect(tmcd == nil)
        } else {
            #expect(tmcd.flatMap { FFprobe.tag($0, "timecode") } == "10:00:00:00")
        }
    }

    @Test func phoneKeysSurviveAsMetadataKeys() throws {
        let scratch = try Scratch()
        let out = scratch.path("out.mov")
        let run = try Tool.avtool("remux", try Fixtures.path("iphone_tags.mov"), out)
        try #require(run.status == 0, "\(run)")
        let tags = Self.tags(try FFprobe(out).format)
        #expect(tags["com.apple.quicktime.location.ISO6709"] == "+37.3349-122.0090+030.000/")
        #expect(tags["com.apple.quicktime.content.identifier"] == "6A1F1C2E-4B5D-4E6F-8A9B-0C1D2E3F4A5B")
        #expect(tags["com.apple.quicktime.creationdate"] == "2024-05-01T14:00:00+0200")
        #expect(tags["creation_time"]?.hasPrefix("2024-05-01T12:00:00") == true)
        // GStreamer, a second reader, sees the file whole.
        if let gst = try? Tool.run("gst-discoverer-1.0", [out]), gst.status == 0 {
            #expect(gst.stdout.contains("video") && gst.stdout.contains("audio"))
        }
    }

    static func attachment(_ path: String, in scratch: Scratch, as name: String) throws -> Data? {
        let dump = scratch.path(name)
        _ = try Tool.run("ffmpeg", ["-v", "error", "-y", "-dump_attachment:t:0", dump, "-i", path])
        return FileManager.default.contents(atPath: dump)
    }

    @Test func attachmentsKeptMatroskaToMatroskaByteForByte() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("attachment.mkv")
        let out = scratch.path("out.mkv")
        let run = try Tool.avtool("remux", input, out)
        try #require(run.status == 0, "\(run)")
        #expect(!run.stderr.contains("warning"), "\(run.stderr)")
        let original = try #require(try Self.attachment(input, in: scratch, as: "a.bin"))
        #expect(original.count == 4096)
        #expect(try Self.attachment(out, in: scratch, as: "b.bin") == original)
        let probe = try FFprobe(out)
        let att = try #require(probe.streams.first { FFprobe.string($0, "codec_type") == "attachment" })
        #expect(FFprobe.tag(att, "filename") == "font.ttf")
        #expect(FFprobe.tag(att, "mimetype") == "application/x-truetype-font")
    }

    @Test(arguments: [["remux"], ["transcode", "--preset", "ultrafast"]])
    func attachmentsDroppedWithAWarningWhereTheyCannotGo(_ verb: [String]) throws {
        let scratch = try Scratch()
        let out = scratch.path("out.mov")
        let run = try Tool.avtool([verb[0], try Fixtures.path("attachment.mkv"), out] + verb.dropFirst())
        try #require(run.status == 0, "\(run)")
        #expect(run.stderr.contains("warning") && run.stderr.contains("'font.ttf'"), "\(run.stderr)")
        #expect(try FFprobe(out).streams.map { FFprobe.string($0, "codec_type") } == ["video", "audio"])
        // Asked to leave them out: no warning.
        let quiet = try Tool.avtool([verb[0], try Fixtures.path("attachment.mkv"), scratch.path("b.mkv"),
                                     "--no-attachments"] + verb.dropFirst())
        try #require(quiet.status == 0, "\(quiet)")
        #expect(!quiet.stderr.contains("font.ttf"), "\(quiet.stderr)")
        #expect(try FFprobe(scratch.path("b.mkv")).streams.count == 2)
    }
}

/// `--metadata`, `--rotate`, `--creation-time`: made as the output is
/// written, checked through ffprobe.
@Suite("tag edits")
struct TagEditTests {
    @Test func tagsSetChangedAndRemoved() throws {
        let scratch = try Scratch()
        let out = scratch.path("out.mov")
        let run = try Tool.avtool("remux", try Fixtures.path("iphone_tags.mov"), out,
                                  "--metadata", "title=Holiday 2024", "--metadata", "com.apple.quicktime.make=",
                                  "--metadata", "s:a:language=fra", "--metadata", "s:0:handler_name=Camera")
        try #require(run.status == 0, "\(run)")
        #expect(!run.stderr.contains("warning"), "\(run.stderr)")
        let p = try FFprobe(out)
        let tags = MetadataTests.tags(p.format)
        #expect(tags["title"] == "Holiday 2024")
        #expect(tags["com.apple.quicktime.make"] == nil)
        #expect(tags["com.apple.quicktime.model"] == "iPhone 15 Pro")
        #expect(FFprobe.tag(p.stream(1), "language") == "fra")
        #expect(FFprobe.tag(p.stream(0), "handler_name") == "Camera")
    }

    @Test(arguments: [("h264_bframes_2997_aac48_stereo.mp4", 90, -90), ("h264_bframes_2997_aac48_stereo.mp4", 270, 90),
                      ("h264_bframes_2997_aac48_stereo.mp4", 180, 180), ("rotated90.mp4", 0, 0)])
    func rotationSetAsDisplayMatrix(_ fixture: String, _ degrees: Int, _ probed: Int) throws {
        let scratch = try Scratch()
        let out = scratch.path("out.mp4")
        let run = try Tool.avtool("remux", try Fixtures.path(fixture), out, "--rotate", String(degrees))
        try #require(run.status == 0, "\(run)")
        let got = FFprobe.rotation(try FFprobe(out).stream(0)) ?? 0
        #expect(abs(got) % 360 == abs(probed) % 360 && (probed == 180 || got == probed), "ffprobe rotation \(got)")
        // The packets are the input's.
        #expect(try PacketList(out).payloads[0] == (try PacketList(try Fixtures.path(fixture)).payloads[0]))
        // A player (ffmpeg's autorotate) shows the picture turned clockwise.
        if degrees == 90 {
            func firstFrame(_ path: String, _ filter: [String]) throws -> Data {
                let r = try Tool.run("ffmpeg", ["-v", "error", "-i", path, "-frames:v", "1"] + filter
                                     + ["-f", "rawvideo", "-pix_fmt", "gray", "-"])
                return r.data
            }
            let shown = try firstFrame(out, [])
            let turned = try firstFrame(try Fixtures.path(fixture), ["-vf", "transpose=clock"])
            #expect(!shown.isEmpty && shown == turned)
        }
    }

    @Test(arguments: [["remux"], ["concat", "SAME"], ["transcode", "--preset", "ultrafast"]])
    func creationTimeOnFileAndStreams(_ verb: [String]) throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        let out = scratch.path("out.mp4")
        let inputs = verb.count > 1 && verb[1] == "SAME" ? [input, input] : [input]
        let flags = verb.count > 1 && verb[1] == "SAME" ? [] : Array(verb.dropFirst())
        let run = try Tool.avtool([verb[0]] + inputs + [out, "--creation-time", "2020-01-02T03:04:05Z",
                                                        "--metadata", "title=Edited"] + flags)
        try #require(run.status == 0, "\(run)")
        let p = try FFprobe(out)
        #expect(FFprobe.tag(p.format, "creation_time")?.hasPrefix("2020-01-02T03:04:05") == true)
        #expect(FFprobe.tag(p.format, "title") == "Edited")
        for s in p.streams { #expect(FFprobe.tag(s, "creation_time")?.hasPrefix("2020-01-02T03:04:05") == true) }
    }

    /// A recipe takes the same flags: a list for a repeated one.
    @Test func editsFromARecipe() throws {
        let s = try Scratch()
        try FileManager.default.createDirectory(atPath: s.path("in"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try Fixtures.path("iphone_tags.mov"), toPath: s.path("in/clip.mov"))
        try """
            version: 1
            steps:
              - verb: remux
                inputs: in/*.mov
                output: out/{stem}.mp4
                options: {metadata: [title=From a recipe, "s:a:language=fra"], rotate: 90, creation-time: "2021-02-03T04:05:06Z"}
            """.write(toFile: s.path("r.yaml"), atomically: true, encoding: .utf8)
        let run = try Tool.avtool("batch", s.path("r.yaml"), "-q")
        try #require(run.status == 0, "\(run)")
        let p = try FFprobe(s.path("out/clip.mp4"))
        #expect(FFprobe.tag(p.format, "title") == "From a recipe")
        #expect(FFprobe.tag(p.format, "creation_time")?.hasPrefix("2021-02-03T04:05:06") == true)
        #expect(FFprobe.tag(p.format, "com.apple.quicktime.model") == "iPhone 15 Pro")
        #expect(FFprobe.tag(p.stream(1), "language") == "fra")
        #expect(FFprobe.rotation(p.stream(0)) == -90)
    }

    @Test(arguments: [(["--rotate", "45"], "'--rotate' takes 0, 90, 180 or 270"),
                      (["--metadata", "title"], "'--metadata' takes KEY=VALUE"),
                      (["--metadata", "s:x:title=a"], "is not v, a, s or a stream number"),
                      (["--metadata", "s:7:title=a"], "names output stream 7"),
                      (["--creation-time", "yesterday"], "'--creation-time' takes a UTC time"),
                      (["--rotate", "90", "--format", "mkv"], "'--rotate' needs an MP4 or MOV output")])
    func badEditsAreRefused(_ flags: [String], _ message: String) throws {
        let scratch = try Scratch()
        let out = scratch.path("out.mp4")
        let run = try Tool.avtool(["remux", try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4"), out] + flags)
        #expect(run.status != 0)
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(scratch.contents.isEmpty, "\(scratch.contents)")
    }
}
