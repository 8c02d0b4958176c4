import Foundation
import Testing

/// merge, concat and fill-silence, checked on click tracks (a white frame
/// and a 1 kHz beep at every whole second of one clock) by decoding the
/// output with ffmpeg: every beep must sound within 1 ms of its flash.
@Suite("merge, concat, fill-silence")
struct SyncVerbTests {
    static let syncLimit = 0.001

    func expectInSync(_ c: ClickTrack, beeps expected: [Int], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(c.flashes.map { Int($0.rounded()) } == Array(0...9), "flashes \(c.flashes)", sourceLocation: sourceLocation)
        #expect(c.beeps.map { Int($0.rounded()) } == expected, "beeps \(c.beeps)", sourceLocation: sourceLocation)
        for (b, e) in zip(c.beeps, c.beepErrors) {
            #expect(e <= Self.syncLimit, "beep at \(b) s is \(e * 1000) ms from its flash", sourceLocation: sourceLocation)
        }
    }

    func merged(_ audio: String, _ args: [String] = [], name: String = "out.mp4") throws -> (Scratch, String, Run) {
        let scratch = try Scratch()
        let out = scratch.path(name)
        let run = try Tool.avtool(["merge", try Fixtures.path("clicks_video.mp4"), try Fixtures.path(audio), out, "--json"] + args)
        return (scratch, out, run)
    }

    @Test func mergeRecordingsStartedTogether() throws {
        let (keep, out, run) = try merged("clicks_audio.m4a")
        defer { withExtendedLifetime(keep) {} }
        try #require(run.status == 0, "\(run)")
        let c = try ClickTrack(out)
        expectInSync(c, beeps: Array(0...9))
        // --end video: audio as long as the video, within one AAC frame.
        let videoSeconds = FFprobe.double(try FFprobe(out).stream(0), "duration")!
        #expect(abs(c.audioSeconds - videoSeconds) <= 1024 / c.sampleRate)
        #expect(run.stdout.contains("\"audio_mode\" : \"copied\""), "\(run.stdout)")
        // The input's packets are in the output unchanged (stream copy).
        let ours = try PacketList(out), theirs = try PacketList(try Fixtures.path("clicks_audio.m4a"))
        #expect(Set(theirs.payloads[0]!).isSubset(of: Set(ours.payloads[1]!)))
        let video = try PacketList(try Fixtures.path("clicks_video.mp4"))
        #expect(ours.payloads[0] == video.payloads[0])
    }

    /// AUDIO from a pipe can be read only once: whether stream copy keeps it
    /// in sync cannot be checked before writing, so it is re-encoded (sample-
    /// exact, still in sync) and the report says why; nothing hangs on a
    /// second opening.
    @Test func mergeAudioFromAPipeIsReencodedInSync() throws {
        // WAV: a format read straight through (a pipe cannot seek), PCM,
        // which MOV holds, so stream copy would otherwise be tried.
        let scratch = try Scratch()
        let fifo = scratch.path("audio-pipe.wav")
        try #require(mkfifo(fifo, 0o600) == 0)
        let data = try Data(contentsOf: URL(fileURLWithPath: try Fixtures.path("clicks_audio.wav")))
        let feeder = Thread {
            if let w = FileHandle(forWritingAtPath: fifo) {
                w.write(data)
                try? w.close()
            }
        }
        feeder.start()
        let out = scratch.path("out.mov")
        let run = try Tool.avtool(["merge", try Fixtures.path("clicks_video.mp4"), fifo, out, "--json"])
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("\"audio_mode\" : \"re-encoded\""), "\(run.stdout)")
        #expect(run.stdout.contains("can be read only once"), "\(run.stdout)")
        expectInSync(try ClickTrack(out), beeps: Array(0...9))
    }

    @Test func mergeLateAudioWithOffset() throws {
        let (keep, out, run) = try merged("clicks_audio_late250.m4a", ["--offset", "250ms"])
        defer { withExtendedLifetime(keep) {} }
        try #require(run.status == 0, "\(run)")
        expectInSync(try ClickTrack(out), beeps: Array(1...9))
        #expect(run.stdout.contains("\"offset_samples\" : 12000"), "\(run.stdout)")
        // Without the offset the beeps are 250 ms early: the measurement can fail.
        let (keep2, wrong, run2) = try merged("clicks_audio_late250.m4a", name: "wrong.mp4")
        defer { withExtendedLifetime(keep2) {} }
        try #require(run2.status == 0, "\(run2)")
        let errors = try ClickTrack(wrong).beepErrors
        #expect(errors.allSatisfy { abs($0 - 0.25) < 0.002 }, "\(errors)")
    }

    /// A hole of part frames: the frames on one side of it are copied, the
    /// others re-encoded onto their grid; every beep stays in sync. (At
    /// `--tolerance 1ms`: merge's default, 20 ms, fills the hole with whole
    /// silent frames and absorbs the 444 samples left, 9.25 ms.)
    @Test func mergeAudioWithAHoleOfPartFramesReencodesOneSideAndStaysInSync() throws {
        let (keep, out, run) = try merged("clicks_audio_gap.m4a", ["--tolerance", "1ms"])
        defer { withExtendedLifetime(keep) {} }
        try #require(run.status == 0, "\(run)")
        let c = try ClickTrack(out)
        expectInSync(c, beeps: Array(0...9))
        #expect(run.stdout.contains("\"audio_mode\" : \"copied\""), "\(run.stdout)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let reencoded = try #require(report["audio_frames_reencoded"] as? Int)
        let total = try #require(report["audio_packets"] as? Int)
        #expect(reencoded > 0 && 2 * reencoded <= total + 2, "\(reencoded) of \(total) re-encoded")
        let video = FFprobe.double(try FFprobe(out).stream(0), "duration")!
        #expect(abs(c.audioSeconds - video) <= 1024 / c.sampleRate)
    }

    /// WAV into MP4 (which cannot hold PCM): encoded to AAC once, in sync;
    /// into MOV: PCM copied.
    @Test func mergeWAV() throws {
        let (keep, out, run) = try merged("clicks_audio.wav")
        defer { withExtendedLifetime(keep) {} }
        try #require(run.status == 0, "\(run)")
        expectInSync(try ClickTrack(out), beeps: Array(0...9))
        #expect(run.stdout.contains("\"reencode_reason\" : \"mp4 cannot hold pcm_s16le\""), "\(run.stdout)")
        #expect(FFprobe.string(try FFprobe(out).stream(1), "codec_name") == "aac")
        let (keep2, mov, run2) = try merged("clicks_audio.wav", name: "out.mov")
        defer { withExtendedLifetime(keep2) {} }
        try #require(run2.status == 0, "\(run2)")
        expectInSync(try ClickTrack(mov), beeps: Array(0...9))
        #expect(run2.stdout.contains("\"audio_mode\" : \"copied\""), "\(run2.stdout)")
    }

    @Test func mergeShortAudioIsPaddedToTheVideo() throws {
        let (keep, out, run) = try merged("clicks_audio_short.m4a")
        defer { withExtendedLifetime(keep) {} }
        try #require(run.status == 0, "\(run)")
        let c = try ClickTrack(out)
        expectInSync(c, beeps: Array(0...8))
        let video = FFprobe.double(try FFprobe(out).stream(0), "duration")!
        #expect(abs(c.audioSeconds - video) <= 1024 / c.sampleRate, "audio \(c.audioSeconds) s, video \(video) s")
        #expect(run.stdout.contains("\"audio_mode\" : \"copied\""), "\(run.stdout)")

        // --end shortest cuts the video at the audio's end instead.
        let (keep2, short, run2) = try merged("clicks_audio_short.m4a", ["--end", "shortest"], name: "short.mp4")
        defer { withExtendedLifetime(keep2) {} }
        try #require(run2.status == 0, "\(run2)")
        let v = FFprobe.double(try FFprobe(short).stream(0), "duration")!
        #expect(abs(v - 8.5) <= 0.1, "video \(v) s")
    }

    @Test func fillSilenceRepairsAHoleWithSilentFrames() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("clicks_av_gap.mp4")
        let out = scratch.path("fixed.mp4")
        let run = try Tool.avtool("fill-silence", input, out, "--json")
        try #require(run.status == 0, "\(run)")
        let c = try ClickTrack(out)
        // The hole swallowed the beep at 5 s; every other beep is on its flash.
        expectInSync(c, beeps: [0, 1, 2, 3, 4, 6, 7, 8, 9])
        #expect(run.stdout.contains("\"audio_mode\" : \"copied\""), "\(run.stdout)")
        // No timestamp jump left in the audio.
        let pts = try PacketList(out).packets.filter { $0.stream == 1 }.compactMap(\.pts).sorted()
        #expect(Set(zip(pts, pts.dropFirst()).map { $1 - $0 }) == [1024])
        // Before: the same measurement on the input shows the hole (decoded audio shorter).
        let before = try ClickTrack(input)
        #expect(c.audioSeconds - before.audioSeconds > 0.9)
    }

    /// Every beep of an audio-only click track within 1 ms of its whole
    /// second, counted from the first beep (`origin`: where the input's
    /// first beep sounds; an extraction to Matroska may drop the priming
    /// trim and move the whole track).
    func expectBeepsOnTheSecond(_ c: ClickTrack, _ expected: [Int], origin: Double = 0,
                                sourceLocation: SourceLocation = #_sourceLocation) {
        let beeps = c.beeps.map { $0 - origin }
        #expect(beeps.map { Int($0.rounded()) } == expected, "beeps \(c.beeps)", sourceLocation: sourceLocation)
        for b in beeps {
            #expect(abs(b - b.rounded()) <= Self.syncLimit, "beep at \(b) s", sourceLocation: sourceLocation)
        }
    }

    @Test func fillSilenceOnAudioAloneFillsAHoleOfPartFrames() throws {
        let scratch = try Scratch()
        // The microphone stopped 4.3 → 4.8 s, in 1000-sample frames: not whole AAC frames.
        // (At '--tolerance 1ms': fill-silence's default, 20 ms, absorbs what whole silent frames leave, 9.25 ms.)
        let input = try Fixtures.path("clicks_audio_gap.m4a")
        let out = scratch.path("fixed.m4a")
        let run = try Tool.avtool("fill-silence", input, out, "--json", "--tolerance", "1ms")
        try #require(run.status == 0, "\(run)")
        // Copied, with one side of the hole re-encoded onto the other's frame grid.
        #expect(run.stdout.contains("\"audio_mode\" : \"copied\""), "\(run.stdout)")
        #expect(!run.stdout.contains("\"audio_frames_reencoded\" : 0"), "\(run.stdout)")
        #expect(!run.stdout.contains("video_codec"), "\(run.stdout)")
        let probe = try FFprobe(out)
        #expect(probe.streams.map { FFprobe.string($0, "codec_type") } == ["audio"])
        let c = try ClickTrack(out, audioOnly: true)
        expectBeepsOnTheSecond(c, Array(0...9))
        // Before: the beeps after the hole play half a second early when decoded end to end.
        let before = try ClickTrack(input, audioOnly: true)
        #expect(before.beeps.map { Int($0.rounded()) } != Array(0...9) || before.audioSeconds < 9.6, "\(before.beeps)")
        #expect(abs(c.audioSeconds - 10) < 0.05, "\(c.audioSeconds) s")
    }

    @Test(arguments: ["m4a", "mka"])
    func fillSilenceOnAudioAloneCopiesWholeFrames(_ ext: String) throws {
        let scratch = try Scratch()
        // The audio of a recording with a hole of whole AAC frames (4.2 → 5.2 s), on its own.
        let input = scratch.path("gap.\(ext)")
        let extract = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try Fixtures.path("clicks_av_gap.mp4"),
                                              "-map", "0:a", "-c", "copy", input])
        try #require(extract.status == 0, "\(extract)")
        let out = scratch.path("fixed.\(ext)")
        let run = try Tool.avtool("fill-silence", input, out, "--json")
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("\"audio_mode\" : \"copied\""), "\(run.stdout)")
        let c = try ClickTrack(out, audioOnly: true)
        let before = try ClickTrack(input, audioOnly: true)
        // The hole swallowed the beep at 5 s; every other beep is on its second.
        expectBeepsOnTheSecond(c, [0, 1, 2, 3, 4, 6, 7, 8, 9], origin: try #require(before.beeps.first))
        #expect(c.beeps.first == before.beeps.first)
        #expect(c.audioSeconds - before.audioSeconds > 0.9, "\(before.audioSeconds) → \(c.audioSeconds) s")
        // The packets are the input's, with silent frames in the hole: no timestamp jump left.
        let list = try PacketList(out)
        let times = list.packets.compactMap(\.pts).sorted().map { list.seconds($0, stream: 0) }
        let widest = zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? 0
        #expect(widest < 0.025, "a step of \(widest) s between packets")
    }

    @Test func fillSilenceOnAudioAloneRefusesToVideoEnd() throws {
        let scratch = try Scratch()
        let out = scratch.path("fixed.m4a")
        let run = try Tool.avtool("fill-silence", try Fixtures.path("clicks_audio_gap.m4a"), out, "--to-video-end")
        #expect(run.status != 0)
        #expect(run.stderr.contains("audio only"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func concatThreeSegmentsWithDifferentOffsets() throws {
        let scratch = try Scratch()
        let segs = try ["clicks_seg1.mp4", "clicks_seg2.mp4", "clicks_seg3.mkv"].map { try Fixtures.path($0) }
        let out = scratch.path("joined.mp4")
        let run = try Tool.avtool(["concat"] + segs + [out, "--json"])
        try #require(run.status == 0, "\(run)")
        let c = try ClickTrack(out)
        // Segment 2's audio starts 0.1 s into it, so the beep at 4 s is not there.
        expectInSync(c, beeps: [0, 1, 2, 3, 5, 6, 7, 8, 9])
        // Every segment is 25 fps: its length is its frame count / 25.
        let total = try segs.map { path -> Double in
            let r = try Tool.run("ffprobe", ["-v", "error", "-count_packets", "-select_streams", "v:0",
                                             "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path])
            return Double(r.stdout.filter(\.isNumber))! / 25
        }.reduce(0, +)
        let v = FFprobe.double(try FFprobe(out).stream(0), "duration")!
        #expect(abs(v - total) <= 0.001, "joined \(v) s, segments \(total) s")
        #expect(abs(c.audioSeconds - v) <= 1024 / c.sampleRate)
        let warnings = try Tool.run("ffmpeg", ["-nostdin", "-v", "warning", "-i", out, "-f", "null", "-"])
        #expect(warnings.stderr.isEmpty, "\(warnings.stderr)")

        // --list gives the same.
        let list = scratch.path("list.txt")
        try (segs.joined(separator: "\n") + "\n").write(toFile: list, atomically: true, encoding: .utf8)
        let out2 = scratch.path("joined2.mp4")
        let run2 = try Tool.avtool("concat", "--list", list, out2, "-q")
        try #require(run2.status == 0, "\(run2)")
        #expect(try PacketList(out2).payloads == PacketList(out).payloads)
    }

    @Test(arguments: [
        (["merge", "clicks_video.mp4", "clicks_video.mp4"], "could not use AUDIO", "it has no audio stream"),
        (["merge", "clicks_audio.m4a", "clicks_audio.m4a"], "could not use VIDEO", "it has no video stream"),
        (["merge", "clicks_video.mp4", "clicks_audio.m4a", "--offset", "30s"], "clicks_audio.m4a", "entirely outside the video"),
        (["concat", "clicks_seg1.mp4", "h264_bframes_2997_aac48_stereo.mp4"], "h264_bframes_2997_aac48_stereo.mp4", "video size differs"),
        (["concat", "clicks_seg1.mp4", "clicks_video.mp4"], "clicks_video.mp4", "it has no audio"),
    ])
    func refused(args: [String], names: String, cause: String) throws {
        let scratch = try Scratch()
        let inputs = try args.dropFirst().map { $0.hasSuffix(".mp4") || $0.hasSuffix(".m4a") ? try Fixtures.path($0) : $0 }
        let hashes = try inputs.filter { $0.hasPrefix("/") }.map(sha256)
        let run = try Tool.avtool([args[0]] + inputs.prefix { !$0.hasPrefix("--") } + [scratch.path("o.mp4")]
                                  + inputs.drop { !$0.hasPrefix("--") })
        #expect(run.status != 0)
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        #expect(run.stderr.contains(names) && run.stderr.contains(cause), "\(run.stderr)")
        #expect(scratch.contents.isEmpty)
        #expect(try inputs.filter { $0.hasPrefix("/") }.map(sha256) == hashes)
    }
}
