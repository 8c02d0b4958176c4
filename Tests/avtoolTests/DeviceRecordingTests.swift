import Foundation
import Testing

/// Today's phone and camera recordings kept whole: an iPhone's three `mebx`
/// timed-metadata tracks and Dolby Vision configuration, a GoPro's `gpmd`
/// telemetry, spatial video's layer boxes — through every writing verb into
/// MP4 and MOV (the data tracks' samples byte-identical, per ffprobe), and
/// named in a warning where the target (Matroska) cannot hold them.
@Suite("device recordings whole")
struct DeviceRecordingTests {
    static let iphone = "iphone14pro_dv84_hlg_720p_mebx.MOV"
    static let gopro = "gopro_max_heromode_gpmd.mp4"

    /// One data packet as ffprobe reads it: stream, time in seconds, size, payload hash.
    struct DataPacket: Equatable, CustomStringConvertible {
        var stream: Int
        var seconds: Double
        var size: Int
        var hash: String
        var description: String { "#\(stream) \(seconds)s \(size)B \(hash.prefix(8))" }
    }

    /// Every data stream's packets, by codec tag and handler name (stream
    /// order differs between inputs and outputs).
    static func dataPackets(_ path: String) throws -> [String: [DataPacket]] {
        let r = try Tool.run("ffprobe", ["-v", "error", "-of", "json", "-show_data_hash", "MD5", "-select_streams", "d",
                                         "-show_entries", "packet=stream_index,pts_time,size,data_hash:stream=index,codec_tag_string:stream_tags=handler_name",
                                         path])
        try #require(r.status == 0, "\(r)")
        let obj = try #require(try JSONSerialization.jsonObject(with: r.data) as? [String: Any])
        var kinds: [Int: String] = [:]
        for s in obj["streams"] as? [[String: Any]] ?? [] {
            // (libavformat keeps a QuickTime handler name's length byte: "\u{0B}GoPro MET  ".)
            let handler = ((s["tags"] as? [String: Any])?["handler_name"] as? String ?? "")
                .trimmingCharacters(in: .whitespaces.union(.controlCharacters))
            let kind = "\(s["codec_tag_string"] as? String ?? "?") \(handler)"
            // Tracks of one kind (an iPhone's three `mebx`) told apart by their order.
            let n = kinds.values.filter { $0.hasPrefix(kind) }.count
            kinds[s["index"] as? Int ?? -1] = n == 0 ? kind : "\(kind) \(n + 1)"
        }
        var out: [String: [DataPacket]] = [:]
        for p in obj["packets"] as? [[String: Any]] ?? [] {
            let stream = p["stream_index"] as? Int ?? -1
            out[kinds[stream] ?? "?", default: []].append(DataPacket(
                stream: stream, seconds: Double(p["pts_time"] as? String ?? "") ?? .nan,
                size: Int(p["size"] as? String ?? "") ?? -1, hash: p["data_hash"] as? String ?? ""))
        }
        return out
    }

    /// The data tracks an output must hold of `input`: all but a timecode
    /// track, which the muxer writes again from the video's timecode tag.
    static func carriedKinds(_ input: String) throws -> [String: [DataPacket]] {
        try dataPackets(input).filter { !$0.key.hasPrefix("tmcd") }
    }

    static func payloads(_ p: [DataPacket]) -> [String] { p.map { "\($0.size):\($0.hash)" } }

    /// `verb` of a device recording into `ext`, with the arguments a test of that verb needs.
    static func write(_ verb: String, _ input: String, _ out: String, scratch: Scratch) throws -> Run {
        switch verb {
        case "merge":
            // The recording's own audio, split out by ffmpeg, merged back onto it.
            let audio = scratch.path("audio.m4a")
            let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", input, "-map", "0:a:0", "-c", "copy", audio])
            try #require(r.status == 0, "\(r)")
            return try Tool.avtool(["merge", input, audio, out])
        case "concat": return try Tool.avtool(["concat", input, input, out])
        case "split":
            return try Tool.avtool(["split", input, out.replacingOccurrences(of: "out.", with: "out-{n}."), "--every", "1000"])
        default: return try Tool.avtool([verb, input, out])
        }
    }

    @Test(arguments: ["remux", "transcode", "fill-silence", "merge", "concat", "split", "cut"],
          [iphone, gopro])
    func everyWritingVerbCarriesTheDataTracks(_ verb: String, _ name: String) throws {
        let input = try Fixtures.device(name)
        let source = try Self.carriedKinds(input)
        try #require(!source.isEmpty)
        for ext in ["mp4", "mov"] {
            let scratch = try Scratch()
            var out = scratch.path("out.\(ext)")
            let run = verb == "cut" ? try Tool.avtool(["cut", input, out, "--from", "0"])
                                    : try Self.write(verb, input, out, scratch: scratch)
            try #require(run.status == 0, "\(verb) → \(ext): \(run)")
            if verb == "split" { out = scratch.path("out-1.\(ext)") }
            let written = try Self.dataPackets(out)
            for (kind, packets) in source {
                let kept = try #require(written[kind], "\(verb) → \(ext): \(kind) missing; has \(written.keys.sorted())")
                let expected = verb == "concat" ? Self.payloads(packets) + Self.payloads(packets) : Self.payloads(packets)
                let got = Self.payloads(kept)
                #expect(got == expected, "\(verb) → \(ext): \(kind): \(got.count) samples for \(expected.count), first difference at \(Array(zip(got, expected)).firstIndex { $0 != $1 } ?? min(got.count, expected.count))")
                if verb != "concat" {
                    // The same times (a concat's second copy comes after the first's end).
                    let shift = kept[0].seconds - packets[0].seconds
                    let moved = zip(kept, packets).first { abs($0.seconds - $1.seconds - shift) >= 0.0011 }
                    #expect(moved == nil && abs(shift) < 0.0011, "\(verb) → \(ext): \(kind): shifted \(shift) s; \(moved.map { "\($0)" } ?? "")")
                }
            }
            #expect(try GstDiscoverer(out).ok, "\(verb) → \(ext): GStreamer reads it")
            let decode = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-xerror", "-i", out, "-f", "null", "-"])
            #expect(decode.status == 0, "\(verb) → \(ext): \(decode)")
        }
    }

    /// Matroska cannot hold them: the job goes ahead, a warning names each.
    @Test(arguments: ["remux", "transcode", "fill-silence", "cut"], [iphone, gopro])
    func intoMatroskaEachDataTrackIsNamed(_ verb: String, _ name: String) throws {
        let input = try Fixtures.device(name)
        let scratch = try Scratch()
        let out = scratch.path("out.mkv")
        let run = verb == "cut" ? try Tool.avtool(["cut", input, out, "--from", "0"]) : try Tool.avtool([verb, input, out])
        try #require(run.status == 0, "\(verb): \(run)")
        let named = name == Self.iphone
            ? ["mebx 'com.apple.quicktime.video-orientation'", "mebx 'com.apple.quicktime.detected-face'",
               "mebx 'com.apple.quicktime.live-photo-info'"]
            : ["gpmd 'GoPro MET'", "fdsc 'GoPro SOS'"]
        for n in named {
            #expect(run.stderr.contains("data track \(n) is not kept (mkv cannot hold it"), "\(verb): \(n)\n\(run.stderr)")
        }
        #expect(try Self.dataPackets(out).isEmpty)
    }

    /// A cut from 2.5 s: each telemetry sample inside the range lands at its
    /// source time minus the cut's start (the report's `start`: the frame
    /// shown at 2.5 s), to the tick (1 ms); the one that spans the start
    /// begins at 0, shortened.
    @Test(arguments: ["mp4", "mov"], ["keyframe", "exact"])
    func aCutRetimesTelemetryByItsStart(_ ext: String, _ mode: String) throws {
        let input = try Fixtures.device(Self.gopro)
        let scratch = try Scratch()
        let out = scratch.path("cut.\(ext)")
        let run = try Tool.avtool(["cut", input, out, "--from", "2.5", "--to", "7.3", "--mode", mode, "--json"])
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let start = try #require(report["start"] as? Double)
        #expect(start > 2.4 && start <= 2.5)
        let source = try #require(try Self.carriedKinds(input)["gpmd GoPro MET"])
        let cut = try #require(try Self.dataPackets(out)["gpmd GoPro MET"])
        let inside = source.filter { $0.seconds >= start && $0.seconds < 7.3 }
        let spanning = try #require(source.last { $0.seconds < start })
        #expect(cut.count == inside.count + 1)
        #expect(cut.first.map { $0.hash == spanning.hash && $0.seconds == 0 } == true, "\(cut)")
        for (c, s) in zip(cut.dropFirst(), inside) {
            #expect(c.hash == s.hash && abs(c.seconds - (s.seconds - start)) < 0.0011, "\(c) for \(s)")
        }
    }

    /// The first box of `type` in a file's index, whole (a byte search: the
    /// boxes asked for hold no such four letters before them).
    static func box(_ type: String, in path: String) throws -> [UInt8]? {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let tag = Array(type.utf8)
        var i = 4
        while i + 4 <= bytes.count {
            if bytes[i] == tag[0] && Array(bytes[i..<(i + 4)]) == tag {
                let size = bytes[(i - 4)..<i].reduce(0) { $0 << 8 | Int($1) }
                if size >= 8 && i - 4 + size <= bytes.count { return Array(bytes[(i - 4)..<(i - 4 + size)]) }
            }
            i += 1
        }
        return nil
    }

    /// The DOVI configuration record as ffprobe shows it for the first video stream.
    static func doviRecord(_ path: String) throws -> [String: Int]? {
        let s = try FFprobe(path).streams.first { FFprobe.string($0, "codec_type") == "video" }
        for sd in s?["side_data_list"] as? [[String: Any]] ?? [] where sd["side_data_type"] as? String == "DOVI configuration record" {
            var fields: [String: Int] = [:]
            for (k, v) in sd { if let n = v as? Int { fields[k] = n } }
            return fields
        }
        return nil
    }

    /// Dolby Vision (8.4 from an iPhone, 5 and 8.1 from Dolby's samples)
    /// kept MOV↔MP4 and into Matroska by a remux: the record's fields the source's,
    /// a profile 5 stream's `dvh1` entry kept.
    @Test(arguments: [(iphone, "mp4"), (iphone, "mov"), (iphone, "mkv"),
                      ("dolby_sparks_dv5_dvh1_360p.mp4", "mov"), ("dolby_sparks_dv5_dvh1_360p.mp4", "mkv"),
                      ("dolby_sparks_dv8_hvc1_360p.mp4", "mov"), ("dolby_sparks_dv8_hvc1_360p.mp4", "mkv")])
    func remuxKeepsDolbyVision(_ name: String, _ ext: String) throws {
        let input = try Fixtures.device(name)
        let scratch = try Scratch()
        let out = scratch.path("out.\(ext)")
        let run = try Tool.avtool(["remux", input, out])
        try #require(run.status == 0, "\(run)")
        let source = try #require(try Self.doviRecord(input))
        #expect(try Self.doviRecord(out) == source, "\(name) → \(ext)")
        if ext != "mkv" {
            let tag = FFprobe.string(try FFprobe(input).stream(0), "codec_tag_string")
            #expect(FFprobe.string(try FFprobe(out).stream(0), "codec_tag_string") == tag)
        }
        #expect(try GstDiscoverer(out).ok)
    }

    /// From Matroska (which holds the record as a block addition mapping)
    /// into MP4 and MOV: the record written as the sample entry's box, a
    /// profile 5 stream's entry `dvh1`.
    @Test(arguments: [iphone, "dolby_sparks_dv5_dvh1_360p.mp4", "dolby_sparks_dv8_hvc1_360p.mp4"])
    func dolbyVisionFromMatroska(_ name: String) throws {
        let input = try Fixtures.device(name)
        let scratch = try Scratch()
        let mkv = scratch.path("in.mkv")
        try #require(try Tool.avtool(["remux", input, mkv, "--no-data"]).status == 0)
        let source = try #require(try Self.doviRecord(input))
        try #require(try Self.doviRecord(mkv) == source)
        let tag = FFprobe.string(try FFprobe(input).stream(0), "codec_tag_string")
        for ext in ["mp4", "mov"] {
            let out = scratch.path("out.\(ext)")
            let run = try Tool.avtool(["remux", mkv, out])
            try #require(run.status == 0, "\(run)")
            #expect(try Self.doviRecord(out) == source, "\(name) → mkv → \(ext)")
            #expect(FFprobe.string(try FFprobe(out).stream(0), "codec_tag_string") == tag, "\(name) → mkv → \(ext)")
            let decode = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-xerror", "-i", out, "-f", "null", "-"])
            #expect(decode.status == 0, "\(decode)")
        }
    }

    /// What a target cannot hold of a video is said, the job done: spatial
    /// video into Matroska or MPEG-TS, Dolby Vision into MPEG-TS, spatial
    /// video through a re-encode.
    @Test func videoPropertiesATargetCannotHoldAreNamed() throws {
        let spatial = try Fixtures.device("apple_vt_spatial_mvhevc_160x120.mp4")
        let dolby = try Fixtures.device("dolby_sparks_dv8_hvc1_360p.mp4")
        let scratch = try Scratch()
        for (args, said) in [(["remux", spatial, scratch.path("a.mkv")], "stream #0: spatial video's second view is not kept (mkv cannot hold"),
                             (["remux", spatial, scratch.path("a.ts")], "stream #0: spatial video's second view is not kept (ts cannot hold"),
                             (["transcode", spatial, scratch.path("b.mp4")], "stream #0: spatial video (MV-HEVC, 2 views) is encoded as its first view only"),
                             (["remux", dolby, scratch.path("c.ts")], "stream #0: Dolby Vision (profile 8) is not kept (ts cannot hold")] {
            let run = try Tool.avtool(args)
            #expect(run.status == 0, "\(args): \(run)")
            #expect(run.stderr.contains(said), "\(args): \(run.stderr)")
        }
        let kept = try Tool.avtool(["remux", dolby, scratch.path("d.mkv")])
        #expect(kept.status == 0 && !kept.stderr.contains("Dolby Vision"), "Matroska holds the record: \(kept)")
    }

    /// A picture attached to a Matroska file (libavformat shows it as cover
    /// art) stays an attachment MKV→MKV, byte for byte under its name and
    /// MIME type, as `ffmpeg -map 0 -c copy` keeps it; an MP4's cover art
    /// becomes the attachment `cover.jpg`/`cover.png` Matroska players look for.
    @Test func pictureAttachmentsStayInMatroska() throws {
        let scratch = try Scratch()
        let png = scratch.path("cover.png"), mkv = scratch.path("in.mkv"), out = scratch.path("out.mkv")
        for args in [["-f", "lavfi", "-i", "testsrc=s=64x64:d=1", "-frames:v", "1", png],
                     ["-f", "lavfi", "-i", "testsrc=d=2:s=160x120", "-c:v", "libx264", "-attach", png,
                      "-metadata:s:t", "mimetype=image/png", "-metadata:s:t", "filename=front.png", mkv]] {
            let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-y"] + args)
            try #require(r.status == 0, "\(r)")
        }
        let run = try Tool.avtool(["remux", mkv, out])
        try #require(run.status == 0, "\(run)")
        let picture = try #require(try FFprobe(out).streams.first { FFprobe.isCoverArt($0) })
        #expect(FFprobe.tag(picture, "filename") == "front.png" && FFprobe.tag(picture, "mimetype") == "image/png")
        let extracted = scratch.path("back.png")
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", out, "-map", "0:1", "-c", "copy", "-f", "image2", extracted])
        try #require(r.status == 0, "\(r)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: extracted)) == Data(contentsOf: URL(fileURLWithPath: png)))

        let m4a = try Fixtures.real("itunes_tags_cover.m4a")
        let fromMP4 = scratch.path("cover.mkv")
        try #require(try Tool.avtool(["remux", m4a, fromMP4]).status == 0)
        let names = try FFprobe(fromMP4).streams.filter { FFprobe.isCoverArt($0) }.compactMap { FFprobe.tag($0, "filename") }
        #expect(names.sorted() == ["cover.jpg", "cover.png"], "\(names)")
    }

    /// Spatial video (Apple's MV-HEVC) remuxed MP4→MOV and cut: its layer and
    /// stereo boxes byte-identical, so it still plays as spatial video.
    @Test(arguments: ["remux", "cut"])
    func spatialVideoKeepsItsBoxes(_ verb: String) throws {
        let input = try Fixtures.device("apple_vt_spatial_mvhevc_160x120.mp4")
        let scratch = try Scratch()
        let out = scratch.path("out.mov")
        let run = verb == "cut" ? try Tool.avtool(["cut", input, out, "--from", "0"]) : try Tool.avtool(["remux", input, out])
        try #require(run.status == 0, "\(run)")
        for type in ["lhvC", "vexu", "hfov"] {
            let source = try #require(try Self.box(type, in: input), "\(type) in the source")
            #expect(try Self.box(type, in: out) == source, "\(verb): \(type)")
        }
        #expect(try PacketList(out).payloads[0] == PacketList(input).payloads[0], "\(verb): video packets copied")
    }
}
