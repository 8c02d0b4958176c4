import Foundation
import Testing

/// `avtool repair` on what cameras record: PCM audio and data tracks in
/// the media data. A recording cut before its index (as a crash leaves it)
/// is rebuilt with a reference recording of the same kind; every sample
/// wholly inside the cut file comes back byte-identical and in its
/// track's order, compared through both files' own sample tables (each
/// sample's bytes read at its position), and none that was not recorded.
@Suite("repair cameras")
struct RepairCameraTests {
    /// A camera-like MOV made by ffmpeg: `seconds` of test pattern and a
    /// tone (its pitch from `take`), the video and PCM codecs given, a
    /// timecode track when asked.
    static func recording(_ path: String, video: String, audio: String, timecode: Bool, take: Int) throws {
        try recording(path, videos: [(video, "320x240")], audios: [(audio, 2)], timecode: timecode, take: take)
    }

    /// A camera-like MOV made by ffmpeg with several tracks: a test pattern
    /// per video track (codec, size), a tone per audio track (codec,
    /// channels; its pitch from `take` and the track's place), a timecode
    /// track when asked; each video track at 30000/1001 fps unless `rates` names another.
    static func recording(_ path: String, videos: [(codec: String, size: String)], audios: [(codec: String, channels: Int)],
                          timecode: Bool, take: Int, rates: [String] = []) throws {
        var args = ["-v", "error", "-y"], maps: [String] = [], codecs: [String] = []
        for (j, v) in videos.enumerated() {
            let rate = j < rates.count ? rates[j] : "30000/1001"
            args += ["-f", "lavfi", "-i", "testsrc2=size=\(v.size):rate=\(rate):duration=5"]
            maps += ["-map", "\(j):v"]
            codecs += ["-c:v:\(j)", v.codec]
        }
        for (k, a) in audios.enumerated() {
            args += ["-f", "lavfi", "-i", "sine=frequency=\(330 * take + 110 * k):sample_rate=48000:duration=5"]
            maps += ["-map", "\(videos.count + k):a"]
            codecs += ["-c:a:\(k)", a.codec, "-ac:a:\(k)", "\(a.channels)"]
        }
        args += maps + codecs + ["-g", "15", "-pix_fmt", "yuv420p"]
        if videos.contains(where: { $0.codec == "libx265" }) { args += ["-tag:v", "hvc1", "-x265-params", "log-level=none:bframes=2"] }
        if videos.contains(where: { $0.codec == "libx264" }) { args += ["-bf", "2"] }
        if timecode { args += ["-timecode", "10:00:0\(take):00"] }
        let r = try Tool.run("ffmpeg", args + ["-f", "mov", path])
        try #require(r.status == 0, "\(r)")
    }

    /// `source` (index last) cut at `percent` of its media data, its media
    /// data's size left 0 as a recorder leaves it until it finishes.
    static func cutBeforeIndex(_ source: String, percent: Int, to path: String) throws -> Int {
        var data = try Data(contentsOf: URL(fileURLWithPath: source))
        let mdat = try #require(data.firstRange(of: Data("mdat".utf8)))
        let moov = try #require(data.range(of: Data("moov".utf8), in: mdat.upperBound..<data.count))
        let mediaEnd = moov.lowerBound - 4
        data.replaceSubrange((mdat.lowerBound - 4)..<mdat.lowerBound, with: [0, 0, 0, 0])
        let cut = mdat.upperBound + (mediaEnd - mdat.upperBound) * percent / 100
        try data.prefix(cut).write(to: URL(fileURLWithPath: path))
        return cut
    }

    /// Each track's samples as its file's sample tables place them (the
    /// bytes at each packet's position), keyed by type, sample entry and
    /// which of that kind it is (`data:mebx:2`); with `within`, only the
    /// samples lying wholly in the file's first bytes.
    static func samples(_ path: String, within limit: Int? = nil) throws -> [String: [(end: Int, bytes: Data)]] {
        let r = try Tool.run("ffprobe", ["-v", "error", "-of", "json", "-show_entries",
                                         "packet=stream_index,pos,size:stream=index,codec_type,codec_tag_string", path])
        let obj = try #require(try JSONSerialization.jsonObject(with: r.data) as? [String: Any])
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        var keys: [Int: String] = [:], seen: [String: Int] = [:]
        for s in obj["streams"] as? [[String: Any]] ?? [] {
            let kind = "\(s["codec_type"] as? String ?? ""):\(s["codec_tag_string"] as? String ?? "")"
            seen[kind, default: 0] += 1
            keys[s["index"] as? Int ?? -1] = "\(kind):\(seen[kind]!)"
        }
        var out: [String: [(end: Int, bytes: Data)]] = [:]
        for p in obj["packets"] as? [[String: Any]] ?? [] {
            guard let key = keys[p["stream_index"] as? Int ?? -1], let pos = Int(p["pos"] as? String ?? ""),
                  let size = Int(p["size"] as? String ?? "") else { continue }
            if let limit, pos + size > limit { continue }
            out[key, default: []].append((pos + size, file.subdata(in: pos..<(pos + size))))
        }
        return out
    }

    /// Rebuilds `cut` (cut at `bytes` from `whole`) with `reference` and
    /// checks every track: the samples recovered are the recording's, in
    /// order, every one wholly in the file that ends before the last bytes
    /// the rebuild could not place (where the recording stopped: a sample
    /// running into the cut cannot be proven whole). PCM is compared as
    /// its bytes (the demuxer cuts chunks into packets as it likes); AAC
    /// beside it, by its samples.
    static func checkRebuild(whole: String, cut: String, bytes: Int, reference: String, out: String,
                             pcm: Bool, dataTracks: Set<String> = []) throws {
        let run = try Tool.avtool("repair", cut, out, "--reference", reference, "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        #expect(report["method"] as? String == "rebuilt")
        let unplaced = report["unplaced_bytes"] as? Int ?? 0
        let tail = bytes - unplaced
        // Nothing left out before the tail: no gap the walk could not prove.
        let leftOut = report["left_out"] as? [[String: Any]] ?? []
        #expect(leftOut.allSatisfy { ($0["offset"] as? Int).map { $0 >= tail } ?? true }, "\(leftOut)")
        #expect(unplaced < 64 << 10, "\(unplaced) bytes unplaced")

        let original = try samples(whole, within: bytes), rebuilt = try samples(out)
        #expect(Set(rebuilt.keys).isSubset(of: Set(original.keys)), "\(rebuilt.keys.sorted()) vs \(original.keys.sorted())")
        for (key, want) in original.sorted(by: { $0.key < $1.key }) {
            let got = rebuilt[key] ?? []
            let before = want.filter { $0.end <= tail }
            if pcm && key.hasPrefix("audio:") && !key.hasPrefix("audio:mp4a:") {
                let w = want.reduce(Data()) { $0 + $1.bytes }, g = got.reduce(Data()) { $0 + $1.bytes }
                #expect(w.prefix(g.count) == g, "\(key): not the recording's audio bytes")
                #expect(g.count >= before.reduce(0) { $0 + $1.bytes.count }, "\(key): \(g.count) bytes of \(w.count)")
            } else {
                #expect(got.map(\.bytes) == Array(want.prefix(got.count)).map(\.bytes), "\(key): not the recording's samples in order")
                #expect(got.count >= before.count, "\(key): \(got.count) of \(before.count) whole samples")
            }
        }
        for kind in dataTracks {
            let want = original.filter { $0.key.hasPrefix("data:\(kind):") }.values.reduce(0) { $0 + $1.filter { $0.end <= tail }.count }
            let got = rebuilt.filter { $0.key.hasPrefix("data:\(kind):") }.values.reduce(0) { $0 + $1.count }
            #expect(got == want && want > 0, "\(kind): \(got) rebuilt of \(want)")
        }
        let check = try Tool.run("ffmpeg", ["-v", "error", "-xerror", "-i", out, "-map", "0:v", "-map", "0:a", "-f", "null", "-"])
        #expect(check.status == 0, "\(check)")
    }

    static let kinds: [(video: String, audio: String, timecode: Bool)] = [
        ("libx264", "pcm_s16le", false), ("libx264", "pcm_s16be", true),
        ("libx265", "pcm_s24le", true), ("libx264", "pcm_s24be", false), ("libx265", "pcm_s16be", false),
    ]

    /// H.264/HEVC with 16/24-bit PCM of both byte orders, with and without
    /// a timecode track, cut at three points; the reference another take.
    @Test(arguments: kinds.indices)
    func rebuildsPCMRecording(_ k: Int) throws {
        let kind = Self.kinds[k]
        let scratch = try Scratch()
        let whole = scratch.path("take1.mov"), reference = scratch.path("take2.mov")
        try Self.recording(whole, video: kind.video, audio: kind.audio, timecode: kind.timecode, take: 1)
        try Self.recording(reference, video: kind.video, audio: kind.audio, timecode: kind.timecode, take: 2)
        for percent in [23, 58, 91] {
            let cut = scratch.path("cut\(percent).mov")
            let bytes = try Self.cutBeforeIndex(whole, percent: percent, to: cut)
            try Self.checkRebuild(whole: whole, cut: cut, bytes: bytes, reference: reference,
                                  out: scratch.path("out\(percent).mov"), pcm: true, dataTracks: kind.timecode ? ["tmcd"] : [])
        }
    }

    /// The iPhone's HEVC (Dolby Vision 8.4, its RPU units inside the
    /// samples) with AAC and three `mebx` tracks whose samples follow the
    /// video's: every sample back into its track, told apart by their
    /// sizes in the reference; one cut through the last metadata sample.
    @Test(arguments: [60, 96, 100])
    func rebuildsIPhoneRecordingWithMetadataTracks(_ percent: Int) throws {
        let scratch = try Scratch()
        let source = try Fixtures.device("iphone14pro_dv84_hlg_720p_mebx.MOV")
        let cut = scratch.path("cut.MOV")
        let bytes = try Self.cutBeforeIndex(source, percent: percent, to: cut)
        // The only recording of its kind here: the reference is the recording itself, whole.
        try Self.checkRebuild(whole: source, cut: cut, bytes: bytes, reference: source, out: scratch.path("out.MOV"),
                              pcm: false, dataTracks: percent == 100 ? ["mebx"] : [])
    }

    /// 4 s of H.264 and 16-bit stereo PCM as GStreamer's `qtmux` interleaves
    /// them, as a camera does: 8 frames, then 0.256 s of audio (the first
    /// audio chunk 0.512 s), each audio chunk of 12 to 24 of the demuxer's
    /// 1024-frame packets.
    static func qtmuxRecording(_ path: String) throws {
        let r = try Tool.run("gst-launch-1.0", ["-q", "qtmux", "name=m", "!", "filesink", "location=" + path,
                                                "videotestsrc", "num-buffers=120", "pattern=ball", "!",
                                                "video/x-raw,width=320,height=240,framerate=30000/1001", "!",
                                                "x264enc", "key-int-max=30", "bframes=2", "!", "h264parse", "!", "m.",
                                                "audiotestsrc", "num-buffers=188", "samplesperbuffer=1024", "wave=sine", "volume=0.3", "!",
                                                "audio/x-raw,format=S16LE,rate=48000,channels=2", "!", "m."])
        try #require(r.status == 0, "\(r)")
    }

    /// A camera's PCM beside H.264, in chunks far longer than those of a
    /// reference written again: the recording's first 2 s cut out by
    /// `avtool cut` (its PCM in runs of 1 to 5 packets, its `mebx` samples
    /// apart at the end), the recording cut at 60 % before its index. As
    /// `qtmux` lays it out (the first audio chunk twice as long as the
    /// rest), and in a Live Photo's order with its per-frame `mebx` samples
    /// (audio, 8 video frames, their metadata: `CameraLayout`): every PCM
    /// byte rebuilt is the recording's at its place in the track, every
    /// chunk before the cut is rebuilt, none of another track's bytes, and
    /// the rebuilt PCM is compared with the bytes it came from before the
    /// output is named (a first chunk written from a sample frame later is
    /// refused); with a video sample's bytes lost, the PCM after them is left
    /// out and named. Before: the first chunk was left out and the rest
    /// played 0.512 s early (and after lost bytes, the PCM after them); with
    /// `mebx`, no chunk was found and the repair failed.
    @Test(arguments: [false, true])
    func rebuildsCameraPCMWithReferenceWrittenAgain(_ metadata: Bool) throws {
        let scratch = try Scratch()
        var whole = scratch.path("qtmux.mov")
        try Self.qtmuxRecording(whole)
        if metadata {
            try CameraLayout.make(whole, order: "avm", frames: 8, to: scratch.path("camera.mov"))
            whole = scratch.path("camera.mov")
        }
        let reference = scratch.path("first2s.mov"), cut = scratch.path("cut.mov"), out = scratch.path("out.mov")
        let part = try Tool.avtool("cut", whole, reference, "--to", "2")
        try #require(part.status == 0, "\(part)")
        let bytes = try Self.cutBeforeIndex(whole, percent: 60, to: cut)
        try Self.checkRebuild(whole: whole, cut: cut, bytes: bytes, reference: reference, out: out,
                              pcm: true, dataTracks: metadata ? ["mebx"] : [])
        if !metadata {
            // A video sample's bytes lost (zeroed) after 1 s: the PCM after them is left out and named, not played early.
            let original = try Self.samples(whole, within: bytes)
            let lost = try #require(original["video:avc1:1"]?[40])
            var data = try Data(contentsOf: URL(fileURLWithPath: cut))
            data.replaceSubrange((lost.end - lost.bytes.count)..<lost.end, with: Data(count: lost.bytes.count))
            try data.write(to: URL(fileURLWithPath: cut))
            let holed = scratch.path("holed.mov")
            let run = try Tool.avtool("repair", cut, holed, "--reference", reference, "--json")
            try #require(run.status == 0, "\(run)")
            let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
            let named = (report["left_out"] as? [[String: Any]] ?? []).filter { ($0["streams"] as? [Int]) == [1] }
            let audio = original["audio:sowt:1"] ?? []
            let want = audio.reduce(Data()) { $0 + $1.bytes }
            let beforeLost = audio.filter { $0.end <= lost.end - lost.bytes.count }.reduce(0) { $0 + $1.bytes.count }
            let got = (try Self.samples(holed)["audio:sowt:1"] ?? []).reduce(Data()) { $0 + $1.bytes }
            #expect(named.count == 1 && got.count > 0 && got.count <= beforeLost, "\(named), \(got.count) of \(beforeLost)")
            #expect(want.prefix(got.count) == got, "the PCM kept is not the recording's at its place")
            try FileManager.default.removeItem(atPath: holed)
        }
        let before = scratch.contents
        let spoiled = try Tool.run(Tool.avtool, ["repair", cut, scratch.path("spoiled.mov"), "--reference", reference, "--json"],
                                   environment: VerifiedOutputTests.environment(fault: "shift-pcm"))
        #expect(spoiled.status == 1 && spoiled.stdout.contains("\"internal-mismatch\""), "\(spoiled)")
        #expect(scratch.contents == before, "\(scratch.contents)")
    }

    /// A click-track recording with 16-bit big-endian PCM that stopped at
    /// 75 %, rebuilt with another recording made the same way: every beep
    /// that survived is within 1 ms of its flash.
    @Test func rebuiltPCMClickTrackStaysInSync() throws {
        let scratch = try Scratch()
        func pcmRecording(_ video: String, _ audio: String?, to path: String) throws {
            var args = ["-v", "error", "-i", try Fixtures.path(video)]
            if let audio { args += ["-i", try Fixtures.path(audio), "-map", "0:v", "-map", "1:a"] } else { args += ["-map", "0:v", "-map", "0:a"] }
            let r = try Tool.run("ffmpeg", args + ["-c:v", "copy", "-c:a", "pcm_s16be", "-f", "mov", path])
            try #require(r.status == 0, "\(r)")
        }
        let recording = scratch.path("recording.mov"), reference = scratch.path("reference.mov")
        try pcmRecording("clicks_video.mp4", "clicks_audio.m4a", to: recording)
        try pcmRecording("clicks_seg1.mp4", nil, to: reference)
        let cut = scratch.path("cut.mov")
        _ = try Self.cutBeforeIndex(recording, percent: 75, to: cut)
        let out = scratch.path("repaired.mov")
        let run = try Tool.avtool("repair", cut, out, "--reference", reference)
        try #require(run.status == 0, "\(run)")
        let c = try ClickTrack(out)
        #expect(c.beeps.count >= 7 && c.beeps.count <= 8, "beeps \(c.beeps)")
        #expect(c.flashes.count >= c.beeps.count, "flashes \(c.flashes)")
        for (b, e) in zip(c.beeps, c.beepErrors) {
            #expect(e <= 0.001, "beep at \(b) s is \(e * 1000) ms from its flash")
        }
    }

    /// The GoPro MAX's media data: H.264, AAC, a timecode sample (4 bytes),
    /// GPMF, and an `fdsc` sample between every two others (620 and 152
    /// bytes first, then 16 each): all but GPMF known only by their size,
    /// and a decoder takes such bytes for AAC frames. The reference's pattern
    /// (which track's sample follows which, each track's sizes in order) and
    /// the first element of its AAC frames tell them apart: cut at four
    /// points, every track comes back whole. The only GoPro recording here,
    /// so two references: the recording itself, whole, and the recording as
    /// the camera would have written it had it stopped at 1.5 MB
    /// (`ShorterRecording`), whose index lists none of the samples after.
    @Test(arguments: [15, 37, 64, 100])
    func rebuildsGoProRecording(_ percent: Int) throws {
        let scratch = try Scratch()
        let source = try Fixtures.device("gopro_max_heromode_gpmd.mp4")
        let shorter = scratch.path("shorter.mp4")
        try ShorterRecording.make(source, keepingMediaBefore: 1_500_000, to: shorter)
        let listed = try Self.samples(shorter).mapValues(\.count), all = try Self.samples(source).mapValues(\.count)
        #expect(Set(listed.keys) == Set(all.keys) && listed["video:avc1:1"] ?? 0 < (all["video:avc1:1"] ?? 0) / 2, "\(listed) of \(all)")
        let cut = scratch.path("cut.mp4")
        let bytes = try Self.cutBeforeIndex(source, percent: percent, to: cut)
        for reference in [source, shorter] {
            try Self.checkRebuild(whole: source, cut: cut, bytes: bytes, reference: reference, out: scratch.path("out.mp4"),
                                  pcm: false, dataTracks: ["fdsc", "gpmd", "tmcd"])
            try FileManager.default.removeItem(atPath: scratch.path("out.mp4"))
        }
    }

    /// A GoPro reference written again (`avtool cut`: its `fdsc` samples in
    /// runs of their own, apart from the AAC frames) does not say which
    /// sample known only by its size is which in the recording: those tracks
    /// (`fdsc`, timecode) are passed over and named; video, AAC and GPMF come
    /// back whole, and nothing that was not recorded.
    @Test func leavesOutWhatItCannotTellApart() throws {
        let scratch = try Scratch()
        let source = try Fixtures.device("gopro_max_heromode_gpmd.mp4")
        let reference = scratch.path("part.mp4")
        let part = try Tool.avtool("cut", source, reference, "--to", "5")
        try #require(part.status == 0, "\(part)")
        let cut = scratch.path("cut.mp4"), out = scratch.path("out.mp4")
        let bytes = try Self.cutBeforeIndex(source, percent: 55, to: cut)
        let run = try Tool.avtool("repair", cut, out, "--reference", reference, "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let named = (report["left_out"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        #expect(named.contains { $0.hasPrefix("fdsc") } && named.contains { $0.hasPrefix("tmcd") }, "\(named)")
        let tail = bytes - (report["unplaced_bytes"] as? Int ?? 0)
        let original = try Self.samples(source, within: bytes), rebuilt = try Self.samples(out)
        #expect(Set(rebuilt.keys) == ["video:avc1:1", "audio:mp4a:1", "data:gpmd:1"], "\(rebuilt.keys)")
        for (key, got) in rebuilt {
            let want = original[key] ?? []
            #expect(got.map(\.bytes) == Array(want.prefix(got.count)).map(\.bytes), "\(key): not the recording's samples in order")
            #expect(got.count >= want.filter { $0.end <= tail }.count, "\(key): \(got.count) of \(want.count)")
        }
    }
}
