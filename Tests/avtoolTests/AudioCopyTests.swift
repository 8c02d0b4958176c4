import Foundation
import Testing

/// Audio made by other encoders than libavcodec's (Apple's, a GoPro's,
/// HandBrake's, LAME, iTunes' ALAC, …) is copied by merge and fill-silence:
/// every packet hash-identical (`ffmpeg -f framemd5 -c copy`), the report
/// saying "copied".
@Suite("audio copied on real encoders' audio")
struct AudioCopyTests {
    /// Real recordings with audio, none of it from libavcodec's AAC encoder.
    static let recordings: [(name: String, path: @Sendable () throws -> String)] = [
        ("iPhone 14 Pro (Apple AAC)", { try Fixtures.device("iphone14pro_dv84_hlg_720p_mebx.MOV") }),
        ("GoPro MAX (camera AAC)", { try Fixtures.device("gopro_max_heromode_gpmd.mp4") }),
        ("HandBrake (AAC)", { try Fixtures.real("birds_handbrake_bframes.mp4") }),
        ("5.1 AAC", { try Fixtures.real("bbb_720p_aac51.mp4") }),
        ("camera (AAC)", { try Fixtures.real("camera_576p.mp4") }),
        ("23.976 fps (AAC, late video)", { try Fixtures.real("sample_1080p_23976.mp4") }),
        ("LAME (MP3 in MP4)", { try Fixtures.real("cockatoo_yuv444_mp3.mp4") }),
        ("iTunes (ALAC)", { try Fixtures.real("alac.m4a") }),
        ("VisualOn AAC (Android's encoder) in GStreamer's MP4", { try Fixtures.path("encoders/voaac_48k_stereo.mp4") }),
        ("VisualOn AAC, 44.1 kHz mono, audio only", { try Fixtures.path("encoders/voaac_44k_mono.m4a") }),
        ("LAME MP3 in GStreamer's MP4", { try Fixtures.path("encoders/lame_mp3_44k.mp4") }),
        ("TwoLAME MP2 in GStreamer's MOV", { try Fixtures.path("encoders/twolame_mp2_48k.mov") }),
        ("AC-3 5.1 in GStreamer's MP4", { try Fixtures.path("encoders/ac3_48k_51.mp4") }),
        ("16-bit big-endian PCM (twos) in GStreamer's MOV", { try Fixtures.path("encoders/pcm_s16be_twos.mov") }),
        ("24-bit PCM (in24)", { try Fixtures.path("encoders/pcm_s24le_in24.mov") }),
        ("24-bit PCM (sowt) in GStreamer's MOV", { try Fixtures.path("encoders/qtmux_pcm_s24le_sowt.mov") }),
        ("32-bit float PCM", { try Fixtures.path("encoders/pcm_f32le.mov") }),
        ("Chrome MediaRecorder Opus in WebM, audio only", { try Fixtures.wild("chrome_mediarecorder_opus_audio_only.webm") }),
        ("Telegram voice note (libopus in Ogg), audio only", { try Fixtures.wild("telegram_voice_note_opus16k.ogg") }),
        ("FDK HE-AAC 5.1 in ADTS (Android's encoder), audio only", { try Fixtures.wild("fdk_heaac51_bbb.aac") }),
        ("VisualOn AMR-WB (Android's encoder) in GStreamer's 3GP, audio only", { try Fixtures.wild("voamrwbenc_amrwb_speech.3gp") }),
    ]

    /// The output's name for an input: the same extension, but Matroska
    /// for what avtool does not write (Ogg), M4A for a raw ADTS stream.
    static func output(for input: String, in scratch: Scratch) -> String {
        let ext = (input as NSString).pathExtension
        return scratch.path("out." + (["ogg": "mka", "aac": "m4a"][ext] ?? ext))
    }

    /// The audio packets' hashes as `ffmpeg -c copy -f framemd5` lists them
    /// (a raw ADTS stream's without their ADTS headers, as FFmpeg copies
    /// them into MP4: `aac_adtstoasc`).
    static func audioHashes(_ path: String) throws -> [String] {
        let adts = path.hasSuffix(".aac") ? ["-bsf:a", "aac_adtstoasc"] : []
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-c", "copy"] + adts
                                        + ["-f", "framemd5", "-"])
        try #require(r.status == 0, "\(r)")
        // The sixth field is the payload's hash (side data, such as a skip count, follows it).
        return r.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { line in
                let f = line.split(separator: ",")
                return f.count >= 6 ? f[5].trimmingCharacters(in: .whitespaces) : nil
            }
    }

    @Test(arguments: 0..<recordings.count)
    func fillSilenceOfARecordingWithoutGapsCopiesEveryPacket(_ k: Int) throws {
        let (name, path) = Self.recordings[k]
        let input = try path()
        let scratch = try Scratch()
        let out = Self.output(for: input, in: scratch)
        let run = try Tool.avtool(["fill-silence", input, out, "--json"])
        try #require(run.status == 0, "\(name): \(run)")
        #expect(run.stdout.contains("\"audio_mode\" : \"copied\""), "\(name): \(run.stdout)")
        #expect(try Self.audioHashes(out) == Self.audioHashes(input), "\(name)")
    }

    /// The video and the audio of one recording, split with `ffmpeg -c copy`
    /// and merged again: the audio is copied, every packet that starts
    /// before the video's end (`--end video`) unchanged and in order.
    @Test(arguments: recordings.indices.filter { !recordings[$0].name.contains("audio only") && !recordings[$0].name.contains("ALAC") })
    func mergeOfARecordingsOwnVideoAndAudioCopiesTheAudio(_ k: Int) throws {
        let (name, path) = Self.recordings[k]
        let input = try path()
        let scratch = try Scratch()
        // MOV for the audio: it holds PCM, MP4 does not.
        let video = scratch.path("v." + (input as NSString).pathExtension), audio = scratch.path("a.mov")
        for (map, out) in [("0:v:0", video), ("0:a:0", audio)] {
            let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", input, "-map", map, "-c", "copy", out])
            try #require(r.status == 0, "\(r)")
        }
        let out = scratch.path("out.mov")
        let run = try Tool.avtool(["merge", video, audio, out, "--json"])
        try #require(run.status == 0, "\(name): \(run)")
        #expect(run.stdout.contains("\"audio_mode\" : \"copied\""), "\(name): \(run.stdout)")
        let theirs = try Self.audioHashes(audio), ours = try Self.audioHashes(out)
        // Silent frames may follow (padding to the video's end); before them, the source's packets.
        let kept = Array(ours.prefix(theirs.count))
        #expect(kept == Array(theirs.prefix(kept.count)), "\(name)")
        let probe = try FFprobe(out)
        let v = try #require(probe.streams.first { FFprobe.string($0, "codec_type") == "video" })
        let videoEnd = (FFprobe.double(v, "start_time") ?? 0) + (FFprobe.double(v, "duration") ?? 0)
        let starts = try Self.audioPacketStarts(audio)
        #expect(kept.count >= starts.filter { $0 < videoEnd - 0.001 }.count, "\(name): \(kept.count) of \(theirs.count) kept")
    }

    static func audioPacketStarts(_ path: String) throws -> [Double] {
        let r = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pts_time",
                                         "-of", "csv=p=0", path])
        return r.stdout.split(separator: "\n").compactMap { Double($0) }
    }

    /// 24 whole AAC frames (512 ms) dropped from a VisualOn AAC track:
    /// every surviving packet copied in order, the hole filled with exactly
    /// 24 silent frames; decoded, silence where the hole was and the
    /// source's own samples elsewhere.
    @Test func dropoutOfWholeFramesIsFilledWithSilentFrames() throws {
        let source = try Fixtures.path("encoders/voaac_48k_stereo.mp4")
        let input = try Fixtures.path("encoders/voaac_dropout.mp4")
        let scratch = try Scratch()
        let out = scratch.path("out.mp4")
        let run = try Tool.avtool(["fill-silence", input, out, "--json"])
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("\"audio_mode\" : \"copied\""), "\(run.stdout)")
        #expect(run.stdout.contains("\"silence_inserted_samples\" : 24576"), "\(run.stdout)")
        let theirs = try Self.audioHashes(input), ours = try Self.audioHashes(out)
        try #require(theirs.count == 210 && ours.count == 234, "\(theirs.count) \(ours.count)")
        #expect(Array(ours[0..<100]) == Array(theirs[0..<100]))
        #expect(Array(ours[124...]) == Array(theirs[100...]))
        #expect(Set(ours[100..<124]).count == 1, "one silent frame, repeated")
        // Decoded: the source's samples up to a frame before the hole and
        // from a frame after it (the frames next to it overlap the silence);
        // silence inside.
        let a = try Self.decoded(source), b = try Self.decoded(out)
        try #require(a.count == b.count, "\(a.count) \(b.count)")
        let frame = 1024 * 2, hole = (100 * frame)..<(124 * frame)
        #expect(Array(a[..<(hole.lowerBound - frame)]) == Array(b[..<(hole.lowerBound - frame)]))
        #expect(Array(a[(hole.upperBound + frame)...]) == Array(b[(hole.upperBound + frame)...]))
        #expect(b[(hole.lowerBound + frame)..<hole.upperBound].allSatisfy { abs(Int($0)) <= 1 })
    }

    /// Interleaved 16-bit samples as ffmpeg decodes the first audio stream.
    static func decoded(_ path: String) throws -> [Int16] {
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-f", "s16le", "-"])
        try #require(r.status == 0, "\(r)")
        return r.data.withUnsafeBytes { raw in
            (0..<(raw.count / 2)).map { Int16(littleEndian: raw.loadUnaligned(fromByteOffset: 2 * $0, as: Int16.self)) }
        }
    }

    /// The audio of a VisualOn AAC recording 448 samples late from 2.005 s
    /// on: the gap is not whole frames, so whole frames cannot keep both
    /// sides in place. The larger side (after the gap) is copied, every
    /// packet unchanged and in order; the rest is re-encoded onto its frame
    /// grid; every beep lands within 1 ms of where the input's timestamps
    /// put it, and sounds as loud as in the source (within 1 dB). (At
    /// `--tolerance 1ms`: fill-silence's default, 20 ms, reads a 9.3 ms
    /// step as jitter and copies every packet, moved by at most 448 samples.)
    @Test func aGapOfPartFramesReencodesTheSmallerSideOntoTheCopiedGrid() throws {
        let source = try Fixtures.path("encoders/voaac_48k_stereo.mp4")
        let input = try Fixtures.path("encoders/voaac_oddgap.mp4")
        let scratch = try Scratch()
        let out = scratch.path("out.mp4")
        let run = try Tool.avtool(["fill-silence", input, out, "--json", "--tolerance", "1ms"])
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(report["audio_mode"] as? String == "copied")
        #expect(report["audio_frames_reencoded"] as? Int == 95, "\(run.stdout)")
        #expect(report["audio_stretches_reencoded"] as? Int == 1)
        let theirs = try Self.audioHashes(input), ours = try Self.audioHashes(out)
        // Packets 94… (140 of 234) are the copied side, at the end of the output.
        #expect(Array(ours.suffix(140)) == Array(theirs[94...]))
        let gapAt = 94.0 * 1024 / 48000, late = 448.0 / 48000
        let expected = try ClickTrack(source, audioOnly: true).beeps.map { $0 < gapAt ? $0 : $0 + late }
        let got = try ClickTrack(out, audioOnly: true).beeps
        try #require(got.count == expected.count, "\(got) vs \(expected)")
        for (g, e) in zip(got, expected) { #expect(abs(g - e) <= 0.001, "beep at \(g) s, expected at \(e) s") }
        try Self.expectLoudness(of: out, like: source, beeps: expected)
    }

    /// A recording joined to itself (VisualOn AAC; AC-3 5.1): the joint is
    /// not whole frames, so one segment's frames are copied and the other's
    /// re-encoded onto their grid; the beeps of both land where the joint
    /// puts them, within 1 ms, as loud as in the source.
    @Test(arguments: ["encoders/voaac_48k_stereo.mp4", "encoders/ac3_48k_51.mp4"])
    func concatOfARecordingWithItselfCopiesOneSideAndKeepsTheBeepsInPlace(_ name: String) throws {
        let input = try Fixtures.path(name)
        let scratch = try Scratch()
        let out = scratch.path("out.mp4")
        let run = try Tool.avtool(["concat", input, input, out, "--json"])
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(report["audio_mode"] as? String == "copied")
        let theirs = try Self.audioHashes(input), ours = try Self.audioHashes(out)
        // The first segment's frames copied, but for the last two: re-encoded with the joint.
        let copied = theirs.count - 2
        #expect(Array(ours.prefix(copied)) == Array(theirs.prefix(copied)), "the first segment's frames copied")
        let reencoded = try #require(report["audio_frames_reencoded"] as? Int)
        #expect(reencoded > 0 && reencoded <= theirs.count + 3, "\(run.stdout)")
        let joint = try #require((report["joints_seconds"] as? [Double])?.last)
        let once = try ClickTrack(input, audioOnly: true).beeps
        let expected = once + once.map { $0 + joint }
        let got = try ClickTrack(out, audioOnly: true).beeps
        try #require(got.count == expected.count, "\(got) vs \(expected)")
        for (g, e) in zip(got, expected) { #expect(abs(g - e) <= 0.001, "beep at \(g) s, expected at \(e) s") }
        try Self.expectLoudness(of: out, like: input, beeps: once.map { $0 + joint })
    }

    /// Seven GoPro clips one after another (each one's audio 6.5 ms longer
    /// than its video, so every joint is off the copied frames' grid): the
    /// copied runs lie within the tolerance of the grid on either side of
    /// it, and the stretches re-encoded between them start and end on the
    /// grid itself, so the copied frames after each stretch are laid where
    /// they belong. (Before, the seventh joint was refused: "not a whole
    /// number of aac frames (80 samples off)".)
    @Test func concatOfSevenCameraClipsCopiesTheAudio() throws {
        let input = try Fixtures.device("gopro_max_heromode_gpmd.mp4")
        let scratch = try Scratch()
        let out = scratch.path("out.mp4")
        let run = try Tool.avtool(["concat"] + Array(repeating: input, count: 7) + [out, "--json"])
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(report["audio_mode"] as? String == "copied")
        let once = try Self.audioHashes(input), ours = try Self.audioHashes(out)
        // (Each joint moves the audio off the grid by another 6.5 ms: the segments on the grid most
        // of them share are copied, the others re-encoded onto it.)
        let reencoded = try #require(report["audio_frames_reencoded"] as? Int)
        #expect(reencoded < ours.count, "\(reencoded) of \(ours.count) frames re-encoded")
        // Every frame is the source's or a re-encoded one; the copied ones in the source's order.
        let copied = ours.filter { Set(once).contains($0) }
        #expect(copied.count >= ours.count - reencoded - 7, "\(copied.count) copied of \(ours.count)")
        let decode = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-xerror", "-i", out, "-map", "0:a", "-f", "null", "-"])
        #expect(decode.status == 0, "\(decode)")
        let video = try #require(FFprobe.double(try FFprobe(out).streams[0], "duration"))
        let audio = try #require(FFprobe.double(try FFprobe(out).streams[1], "duration"))
        #expect(abs(video - audio) < 0.022, "video \(video) s, audio \(audio) s")
    }

    /// A Telegram video note (its own MP4 writer, 2017): every tenth audio
    /// frame 2–12.5 ms early or 8–18 ms late against 1024-sample frames,
    /// and two holes of 96 and 104 ms. At the default tolerance (20 ms for
    /// fill-silence) the jitter is absorbed and every packet copied as it
    /// was, in order, silent frames only in the two holes (which are real
    /// gaps: filled at the default), and the report says how far any
    /// packet was moved. `--tolerance 0` keeps the old exact placement: the
    /// frames off the grid re-encoded onto it, nothing moved.
    @Test func messagingAppJitterIsCopiedWithinTheToleranceAndTheShiftReported() throws {
        let input = try Fixtures.wild("telegram_videonote_2017_irregular_aac.mp4")
        let scratch = try Scratch()
        let out = scratch.path("jitter.mp4")
        let run = try Tool.avtool("fill-silence", input, out, "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(report["audio_mode"] as? String == "copied")
        #expect(report["audio_frames_reencoded"] as? Int == 0)
        let shift = try #require(report["largest_shift_milliseconds"] as? Double)
        #expect(shift > 1 && shift <= 20, "\(shift) ms")
        // Every packet of the recording, in order, around the silent frames of the two holes.
        let theirs = try Self.audioHashes(input), ours = try Self.audioHashes(out)
        #expect(ours.filter { Set(theirs).contains($0) } == theirs)
        let silent = try #require(report["silent_frames_added"] as? Int)
        #expect(ours.count == theirs.count + silent)
        let silence = try #require(report["silence_inserted_samples"] as? Int)
        #expect(silent == 8 && silence == 8 * 1024, "\(silent) silent frames, \(silence) samples")
        let exact = try Tool.avtool("fill-silence", "--tolerance", "0", input, scratch.path("exact.mp4"), "--json")
        try #require(exact.status == 0, "\(exact)")
        let strict = try #require(try JSONSerialization.jsonObject(with: Data(exact.stdout.utf8)) as? [String: Any])
        #expect(try #require(strict["audio_frames_reencoded"] as? Int) > 0, "\(exact.stdout)")
        #expect(strict["largest_shift_samples"] as? Int == 0)
    }

    /// The level of each beep (RMS over its first 40 ms, first channel) in
    /// `out` against the source's first beeps, within 1 dB.
    static func expectLoudness(of out: String, like source: String, beeps: [Double],
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        func level(_ samples: [Int16], at seconds: Double, channels: Int) -> Double {
            let from = Int(seconds * 48000) * channels, count = 1920 * channels
            guard from >= 0, from + count <= samples.count else { return 0 }
            var sum = 0.0
            for i in stride(from: from, to: from + count, by: channels) { sum += Double(samples[i]) * Double(samples[i]) }
            return (sum / 1920).squareRoot()
        }
        let channels = try FFprobe(source).streams.compactMap { FFprobe.int($0, "channels") }.first ?? 2
        let a = try decoded(source), b = try decoded(out)
        let reference = level(a, at: try ClickTrack(source, audioOnly: true).beeps[0], channels: channels)
        try #require(reference > 1000)
        for t in beeps {
            let dB = 20 * log10(level(b, at: t, channels: channels) / reference)
            #expect(abs(dB) <= 1, "beep at \(t) s is \(dB) dB from the source's", sourceLocation: sourceLocation)
        }
    }
}
