import Foundation
import Testing

/// `avtool repair`: what a crash left, made deterministically from real
/// recordings. An unfinished MP4/MOV (media data written, index never) is
/// rebuilt with a reference recording: every packet in the file whole is
/// recovered, byte for byte the original's first packets, and decodes to the
/// original's frames in the original's order; the `ffmpeg` program cannot
/// open such a file at all. Files cut after their index (at the front, or
/// fragments) keep every complete packet.
@Suite("repair")
struct RepairTests {
    /// An index-last copy of `source` (as a recorder writes it), cut at
    /// `percent` of its media data as a crash leaves it: no index, the media
    /// data's size never filled in. Returns the whole copy and the cut file.
    static func unfinished(_ source: String, percent: Int, in scratch: Scratch,
                           name: String = "unfinished.mp4") throws -> (whole: String, cut: String, bytes: Int) {
        let whole = scratch.path("whole-" + name)
        let r = try Tool.run("ffmpeg", ["-v", "error", "-i", source, "-map", "0", "-c", "copy", "-f",
                                        name.hasSuffix(".mov") ? "mov" : "mp4", whole])
        try #require(r.status == 0, "\(r)")
        let path = scratch.path(name)
        let cut = try RepairCameraTests.cutBeforeIndex(whole, percent: percent, to: path)
        return (whole, path, cut)
    }

    /// Per stream of `path`, how many packets lie whole in its first `bytes`
    /// (ffprobe's positions and sizes).
    static func wholePackets(_ path: String, within bytes: Int) throws -> [Int: Int] {
        let r = try Tool.run("ffprobe", ["-v", "error", "-show_entries", "packet=stream_index,pos,size", "-of", "csv=p=0", path])
        var count: [Int: Int] = [:]
        for line in r.stdout.split(separator: "\n") {
            let f = line.split(separator: ",").compactMap { Int($0) }
            guard f.count == 3 else { continue }
            count[f[0], default: 0] += f[2] + f[1] <= bytes ? 1 : 0
        }
        return count
    }

    /// Decoded frame hashes of stream `s` (ffmpeg's framemd5, timestamps as they are).
    static func decodedHashes(_ path: String, stream s: Int) throws -> [String] {
        let r = try Tool.run("ffmpeg", ["-v", "error", "-i", path, "-map", "0:\(s)", "-fps_mode", "passthrough",
                                        "-f", "framemd5", "-"])
        return r.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: ",").last.map(String.init) }
    }

    static let recordings = [
        "real:camera_576p.mp4", "real:bbb_720p_aac51.mp4", "real:bikes_bframes_videoonly.mp4",
        "h264_bframes_2997_aac48_stereo.mp4", "hevc_aac.mp4", "iphone_tags.mov",
        // Its timecode track's sample sits in the media data: passed over, the track left out.
        "timecode.mov",
    ]

    @Test(arguments: recordings)
    func rebuildsUnfinishedRecording(_ name: String) throws {
        let scratch = try Scratch()
        let source = try MetadataTests.input(name)
        let ext = name.hasSuffix(".mov") ? ".mov" : ".mp4"
        let (whole, cut, bytes) = try Self.unfinished(source, percent: 70, in: scratch, name: "unfinished" + ext)
        // Nothing else reads it.
        let ffmpeg = try Tool.run("ffmpeg", ["-v", "error", "-i", cut, "-c", "copy", "-f", "null", "-"])
        #expect(ffmpeg.status != 0)
        let remux = try Tool.avtool("remux", cut, scratch.path("remuxed" + ext))
        #expect(remux.status == 1 && remux.stderr.contains("avtool repair"), "\(remux)")

        let out = scratch.path("repaired" + ext)
        let run = try Tool.avtool("repair", cut, out, "--reference", source, "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        #expect(report["method"] as? String == "rebuilt", "\(run.stdout)")

        // Video and audio are recovered (a data track cannot be found in media data).
        let types = try FFprobe(whole).streams.map { FFprobe.string($0, "codec_type") }
        let original = try PacketList(whole).payloads.filter { ["video", "audio"].contains(types[$0.key] ?? "") }
        // (MOV writes a timecode track anew from the video's timecode tag.)
        let outTypes = try FFprobe(out).streams.map { FFprobe.string($0, "codec_type") }
        let kept = try PacketList(out).payloads.filter { ["video", "audio"].contains(outTypes[$0.key] ?? "") }
        let present = try Self.wholePackets(whole, within: bytes)
        #expect(kept.keys.sorted() == original.keys.sorted())
        for (s, packets) in original.sorted(by: { $0.key < $1.key }) {
            let got = kept[s] ?? []
            #expect(Array(packets.prefix(got.count)) == got, "stream \(s): not the original's first packets")
            // Every whole packet; a video sample ending exactly at the cut may have lost slices and is left.
            let whole = present[s] ?? 0
            #expect(got.count == whole || got.count == whole - 1, "stream \(s): \(got.count) recovered, \(whole) in the file whole")
            #expect(got.count > packets.count / 2, "stream \(s): \(got.count) of \(packets.count)")
        }
        // The video decodes to the original's frames, in its order (B-frames
        // reordered right). Frames shown before the last one recovered but
        // decoded after the cut are missing, so: in order, every one of them.
        let decoded = try Self.decodedHashes(out, stream: 0), reference = try Self.decodedHashes(whole, stream: 0)
        var rest = reference[...]
        let inOrder = decoded.allSatisfy { h in
            guard let i = rest.firstIndex(of: h) else { return false }
            rest = rest[(i + 1)...]
            return true
        }
        #expect(decoded.count == kept[0]?.count && inOrder, "\(decoded.count) frames, in the original's order: \(inOrder)")
        #expect(reference.count - rest.count - decoded.count <= 3, "frames skipped: \(reference.count - rest.count - decoded.count)")
        let check = try Tool.run("ffmpeg", ["-v", "error", "-xerror", "-i", out, "-f", "null", "-"])
        #expect(check.status == 0, "\(check)")
        #expect(try GstDiscoverer(out).ok)
    }

    /// A click-track recording that stopped at 75 %, rebuilt with another
    /// recording made with the same settings: every beep that survived is
    /// within 1 ms of its flash.
    @Test func rebuiltClickTrackStaysInSync() throws {
        let scratch = try Scratch()
        let recording = scratch.path("recording.mp4")
        let r = try Tool.run("ffmpeg", ["-v", "error", "-i", try Fixtures.path("clicks_video.mp4"),
                                        "-i", try Fixtures.path("clicks_audio.m4a"), "-map", "0", "-map", "1",
                                        "-c", "copy", recording])
        try #require(r.status == 0, "\(r)")
        let (_, cut, _) = try Self.unfinished(recording, percent: 75, in: scratch)
        let out = scratch.path("repaired.mp4")
        let run = try Tool.avtool("repair", cut, out, "--reference", try Fixtures.path("clicks_seg1.mp4"))
        try #require(run.status == 0, "\(run)")
        let c = try ClickTrack(out)
        #expect(c.beeps.count >= 7 && c.beeps.count <= 8, "beeps \(c.beeps)")
        #expect(c.flashes.count >= c.beeps.count, "flashes \(c.flashes)")
        for (b, e) in zip(c.beeps, c.beepErrors) {
            #expect(e <= 0.001, "beep at \(b) s is \(e * 1000) ms from its flash")
        }
    }

    /// Cut after its index (at the front, or in fragments): every complete
    /// packet, from the input's own index.
    @Test(arguments: [false, true])
    func keepsEveryCompletePacketOfACutFile(fragmented: Bool) throws {
        let scratch = try Scratch()
        let whole = scratch.path("whole.mp4")
        let flags = fragmented ? "frag_keyframe+empty_moov" : "faststart"
        let r = try Tool.run("ffmpeg", ["-v", "error", "-i", try Fixtures.real("camera_576p.mp4"), "-map", "0",
                                        "-c", "copy", "-movflags", flags, whole])
        try #require(r.status == 0, "\(r)")
        let data = try Data(contentsOf: URL(fileURLWithPath: whole))
        let bytes = data.count * 65 / 100
        let cut = scratch.path("cut.mp4")
        try data.prefix(bytes).write(to: URL(fileURLWithPath: cut))
        let out = scratch.path("repaired.mp4")
        let run = try Tool.avtool("repair", cut, out, "--json")
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("\"method\" : \"salvaged\""), "\(run.stdout)")
        let original = try PacketList(whole).payloads, kept = try PacketList(out).payloads
        let present = try Self.wholePackets(whole, within: bytes)
        for (s, packets) in original {
            let got = kept[s] ?? []
            #expect(Array(packets.prefix(got.count)) == got, "stream \(s)")
            #expect(got.count == present[s], "stream \(s): \(got.count) kept, \(present[s] ?? 0) whole in the file")
        }
    }

    @Test func refusals() throws {
        let scratch = try Scratch()
        let source = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        let (_, cut, _) = try Self.unfinished(source, percent: 50, in: scratch)
        let out = scratch.path("out.mp4")
        // Without a reference: what is missing and how to give it.
        var run = try Tool.avtool("repair", cut, out)
        #expect(run.status == 1 && run.stderr.contains("--reference"), "\(run)")
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        // A reference of other codecs finds nothing.
        run = try Tool.avtool("repair", cut, out, "--reference", try Fixtures.path("pcm_in_mov.mov"))
        #expect(run.status == 1, "\(run)")
        run = try Tool.avtool("repair", cut, out, "--reference", try Fixtures.path("aac44_mono.m4a"))
        #expect(run.status == 1 && run.stderr.contains("no sample"), "\(run)")
        // Not a recording at all.
        run = try Tool.avtool("repair", try Fixtures.path("random.mp4"), out, "--reference", source)
        #expect(run.status == 1, "\(run)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(scratch.contents.filter { $0.hasPrefix("out") || $0.hasPrefix(".") }.isEmpty, "\(scratch.contents)")
    }
}

/// `verb: repair` in a batch recipe, its reference resolved like its inputs.
@Suite("repair in batch")
struct RepairBatchTests {
    @Test func recipeRepairsAFolder() throws {
        let scratch = try Scratch()
        let source = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        try FileManager.default.createDirectory(atPath: scratch.path("crashed"), withIntermediateDirectories: true)
        for (name, percent) in [("a.mp4", 40), ("b.mp4", 80)] {
            let (_, cut, _) = try RepairTests.unfinished(source, percent: percent, in: scratch, name: name)
            try FileManager.default.moveItem(atPath: cut, toPath: scratch.path("crashed/" + name))
        }
        try FileManager.default.copyItem(atPath: source, toPath: scratch.path("good.mp4"))
        let recipe = scratch.path("repair.yaml")
        try """
            version: 1
            steps:
              - verb: repair
                inputs: ["crashed/*.mp4"]
                output: fixed/{stem}.mp4
                options:
                  reference: good.mp4
            """.write(toFile: recipe, atomically: true, encoding: .utf8)
        let r = try Tool.avtool(["batch", recipe, "--base", scratch.url.path, "-q"])
        #expect(r.status == 0, "\(r)")
        let a = try PacketList(scratch.path("fixed/a.mp4")).payloads, b = try PacketList(scratch.path("fixed/b.mp4")).payloads
        #expect((a[0]?.count ?? 0) > 0 && (b[0]?.count ?? 0) > (a[0]?.count ?? 0), "\(a[0]?.count ?? 0), \(b[0]?.count ?? 0)")
    }
}
