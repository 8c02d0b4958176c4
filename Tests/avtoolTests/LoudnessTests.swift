import Foundation
import Testing

/// `avtool probe --loudness` and `avtool loudness`, checked against the
/// `ffmpeg` program's `ebur128` filter.
@Suite("loudness")
struct LoudnessTests {
    /// Each audio stream's `loudness` object from `probe --loudness --json`.
    func measured(_ path: String) throws -> [[String: Any]] {
        let run = try Tool.avtool("probe", path, "--loudness", "--json")
        try #require(run.status == 0, "\(run)")
        let json = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let streams = json["streams"] as? [[String: Any]] ?? []
        return streams.filter { $0["type"] as? String == "audio" }.compactMap { $0["loudness"] as? [String: Any] }
    }

    static func number(_ o: [String: Any], _ key: String) -> Double? {
        if let d = o[key] as? Double { return d }
        return (o[key] as? String) == "-inf" ? -.infinity : nil
    }

    /// Real recordings (5.1 AAC, a camera's and a phone's AAC, a silent MP3,
    /// a silent ALAC) and PCM: integrated within 0.2 LU, range within 0.2 LU
    /// and peaks within 0.3 dB of ebur128's summary (which has one decimal).
    @Test(arguments: [
        "real:bbb_720p_aac51.mp4", "real:cockatoo_yuv444_mp3.mp4", "real:alac.m4a",
        "device:gopro_max_heromode_gpmd.mp4", "device:iphone14pro_dv84_hlg_720p_mebx.MOV",
        "fixture:pcm_in_mov.mov", "fixture:clicks_audio.wav", "fixture:aac44_mono.m4a",
    ])
    func measurementAgreesWithEbur128(_ name: String) throws {
        let parts = name.split(separator: ":").map(String.init)
        let path = switch parts[0] {
        case "real": try Fixtures.real(parts[1])
        case "device": try Fixtures.device(parts[1])
        default: try Fixtures.path(parts[1])
        }
        let ours = try measured(path)
        try #require(ours.count == 1, "one audio stream measured in \(name)")
        let ref = try Ebur128(path)
        let m = ours[0]
        let integrated = try #require(Self.number(m, "integrated_lufs"))
        let range = try #require(Self.number(m, "range_lu"))
        let samplePeak = try #require(Self.number(m, "sample_peak_dbfs"))
        let truePeak = try #require(Self.number(m, "true_peak_dbtp"))
        #expect(abs(integrated - ref.integrated) <= 0.2, "integrated \(integrated) vs \(ref.integrated) in \(name)")
        #expect(abs(range - ref.range) <= 0.2, "range \(range) vs \(ref.range) in \(name)")
        for (ours, theirs, what) in [(samplePeak, ref.samplePeak, "sample"), (truePeak, ref.truePeak, "true")] {
            if theirs.isInfinite {
                #expect(ours == theirs, "\(what) peak \(ours) vs \(theirs) in \(name)")
            } else {
                #expect(abs(ours - theirs) <= 0.3, "\(what) peak \(ours) vs \(theirs) in \(name)")
            }
        }
        #expect(truePeak >= samplePeak)
    }

    /// The text report names a stream below the absolute gate as gated out.
    @Test func textReportSaysGatedOut() throws {
        let run = try Tool.avtool("probe", "--loudness", try Fixtures.device("iphone14pro_dv84_hlg_720p_mebx.MOV"))
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("loudness below -70 LUFS (gated out)"), "\(run.stdout)")
        #expect(run.stdout.contains("true peak -33.1 dBTP"), "\(run.stdout)")
    }

    /// A file without audio is probed as usual, with nothing measured.
    @Test func fileWithoutAudio() throws {
        let run = try Tool.avtool("probe", "--loudness", "--json", try Fixtures.real("bikes_bframes_videoonly.mp4"))
        try #require(run.status == 0, "\(run)")
        #expect(!run.stdout.contains("\"loudness\""), "\(run.stdout)")
    }

    // MARK: - avtool loudness

    /// Decoded audio of `path`'s first audio stream as 32-bit floats, all channels interleaved.
    static func decoded(_ path: String) throws -> [Float] {
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-f", "f32le", "-"])
        try #require(r.status == 0, "\(r.stderr)")
        return r.data.withUnsafeBytes { raw in
            (0..<(raw.count / 4)).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self))) }
        }
    }

    /// Every video packet's timing, size, flags and payload hash (`ffprobe -show_data_hash`); none without video.
    static func videoHashes(_ path: String) throws -> [String] {
        let r = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_packets", "-show_data_hash", "md5",
                                         "-show_entries", "packet=stream_index,pts,dts,duration,size,flags,data_hash",
                                         "-of", "csv=p=0", path])
        try #require(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").map(String.init)
    }

    /// The first audio stream's start time (s) from ffprobe.
    static func audioStart(_ path: String) throws -> Double? {
        let p = try FFprobe(path)
        return p.streams.first { FFprobe.string($0, "codec_type") == "audio" }.flatMap { FFprobe.double($0, "start_time") }
    }

    /// `--target podcast` on real recordings of several kinds whose peaks a
    /// gain alone would push over the ceiling (5.1 AAC-LC; a camera's stereo
    /// AAC-LC with its data tracks; a Telegram voice note's Opus; a Telegram
    /// video note's audio as 16-bit PCM in MOV, its video copied; the 5.1
    /// recording's sound as AC-3 and as stereo MP3, encoded by libavcodec's
    /// AC-3 and LAME, for no such recording from a device is kept; as
    /// HE-AAC 5.1 by the FDK encoder, in ADTS, written back as AAC-LC, the
    /// only AAC this FFmpeg encodes): loudness
    /// within 0.5 LU of -16 and true peak at most -0.9 dBTP by ebur128, at
    /// most 2 encodes, the video's packets unchanged, the audio's samples
    /// the input's, and its start (Matroska's Opus starts at its codec delay).
    @Test(arguments: [
        ("real:bbb_720p_aac51.mp4", "mp4"), ("device:gopro_max_heromode_gpmd.mp4", "mp4"),
        ("wild:telegram_voice_note_opus16k.ogg", "mka"), ("pcm:telegram_videonote_2017_irregular_aac.mp4", "mov"),
        ("ac3:bbb_720p_aac51.mp4", "mp4"), ("mp3:bbb_720p_aac51.mp4", "mp4"), ("wild:fdk_heaac51_bbb.aac", "mp4"),
    ])
    func podcastTargetOnRealRecordings(_ name: String, _ ext: String) throws {
        let parts = name.split(separator: ":").map(String.init)
        let scratch = try Scratch()
        var input = switch parts[0] {
        case "real", "ac3", "mp3": try Fixtures.real(parts[1])
        case "wild", "pcm": try Fixtures.wild(parts[1])
        default: try Fixtures.device(parts[1])
        }
        if let codec = ["pcm": "pcm_s16le", "ac3": "ac3", "mp3": "libmp3lame"][parts[0]] {
            let made = scratch.path(parts[0] + (parts[0] == "pcm" ? ".mov" : ".mp4"))
            let m = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", input, "-c:v", "copy", "-c:a", codec, made])
            try #require(m.status == 0, "\(m)")
            input = made
        }
        let out = scratch.path("podcast." + ext)
        let run = try Tool.avtool("loudness", input, out, "--target", "podcast")
        try #require(run.status == 0, "\(run)")
        #expect(run.stderr.contains(" 1 encode") || run.stderr.contains(" 2 encodes"), "\(run.stderr)")
        #expect(run.stderr.contains("true-peak limiter"), "\(run.stderr)")
        #expect(run.stderr.contains(" dB off the loudest peak, limiting for "), "\(run.stderr)")
        // Its second rehearsal, beside the encode at its gain, moves the gain:
        // that encode is stopped and the output is the next one's.
        if name == "wild:fdk_heaac51_bbb.aac" {
            #expect(run.stderr.contains("3 rehearsals of the limiter (1 encode begun beside a rehearsal that moved the gain, stopped)"), "\(run.stderr)")
        }
        let after = try Ebur128(out)
        #expect(abs(after.integrated - -16) <= 0.5, "integrated \(after.integrated)")
        #expect(after.truePeak <= -0.9, "true peak \(after.truePeak)")
        #expect(try Self.videoHashes(out) == Self.videoHashes(input))
        #expect(try Self.decoded(out).count == Self.decoded(input).count, "decoded sample count")
        // (A raw ADTS stream has no start time: it starts at 0.)
        if ext != "mka" { #expect(try Self.audioStart(out) == (Self.audioStart(input) ?? 0)) }
    }

    /// The figures the report gives for the output, measured on its packets
    /// as they were written (beside the encoder), are the written file's:
    /// `probe --loudness` of the output (itself checked against ebur128
    /// above) gives the same to 0.001, for AAC and AC-3 in MP4, whose edit
    /// list hides exactly the encoder's priming and padding.
    @Test(arguments: ["aac", "ac3"])
    func reportedFiguresAreTheWrittenFiles(_ codec: String) throws {
        let scratch = try Scratch()
        var input = try Fixtures.real("bbb_720p_aac51.mp4")
        if codec != "aac" {
            let made = scratch.path("in.mp4")
            let m = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", input, "-c:v", "copy", "-c:a", codec, made])
            try #require(m.status == 0, "\(m)")
            input = made
        }
        let out = scratch.path("podcast.mp4")
        let run = try Tool.avtool("loudness", input, out, "--target", "podcast", "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let streams = try #require(report["streams"] as? [[String: Any]])
        let reported = try #require(streams.first?["after"] as? [String: Any])
        let file = try #require(try measured(out).first)
        for key in ["integrated_lufs", "true_peak_dbtp", "sample_peak_dbfs", "range_lu"] {
            let a = try #require(Self.number(reported, key)), b = try #require(Self.number(file, key))
            #expect(abs(a - b) <= 0.001, "\(key): reported \(a), the file \(b)")
        }
    }

    /// A Photos export's 64 kb/s mono AAC brought up 27.7 dB: what the AAC
    /// encoder adds to the peaks grows as the limiter holds harder (1.0 dB
    /// over the limiter's ceiling, then 1.8 dB with it 1.1 dB lower), so the
    /// corrective encode sets it under by half as much again. Before: refused,
    /// the true peak -0.5 dBTP after 2 encodes.
    @Test func encoderOvershootThatGrowsIsHeldInTwoEncodes() throws {
        let scratch = try Scratch()
        let out = scratch.path("podcast.mov")
        let run = try Tool.avtool("loudness", try Fixtures.wild("photos_trimmed_export_mebx_offset.mov"), out, "--target", "podcast")
        try #require(run.status == 0, "\(run)")
        #expect(run.stderr.contains(" 2 encodes"), "\(run.stderr)")
        let after = try Ebur128(out)
        #expect(abs(after.integrated - -16) <= 0.5, "integrated \(after.integrated)")
        #expect(after.truePeak <= -0.9, "true peak \(after.truePeak)")
    }

    /// A ceiling the encoder cannot keep (8-bit PCM, made from a camera's
    /// AAC: one step of it is -42 dBFS, over a -43 dBTP ceiling however the
    /// limiter is set): refused after the corrective encode, exit status 1,
    /// nothing written (before: written, exit 0, the violation in the
    /// report); with --warn-over-ceiling written, with a warning.
    @Test func ceilingTheEncoderCannotKeepIsRefused() throws {
        let scratch = try Scratch()
        let input = scratch.path("u8.mov")
        let m = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try Fixtures.device("gopro_max_heromode_gpmd.mp4"),
                                        "-t", "2", "-map", "0:a", "-c:a", "pcm_u8", input])
        try #require(m.status == 0, "\(m)")
        let out = scratch.path("out.mov")
        let args = ["loudness", input, out, "--target", "-50", "--true-peak", "-43"]
        let refused = try Tool.avtool(args)
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr.contains("over the -43.0 dBTP ceiling (the pcm_u8 encoder adds to the peaks): nothing written"), "\(refused.stderr)")
        #expect(refused.stderr.contains("after 2 encodes"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(!fileExists(out))
        let warned = try Tool.avtool(args + ["--warn-over-ceiling"])
        #expect(warned.status == 0, "\(warned)")
        #expect(warned.stderr.contains("warning: stream #0: the true peak is"), "\(warned.stderr)")
        #expect(fileExists(out))
    }

    /// A linear plan changes nothing but the level: the decoded output is
    /// the decoded input times one gain, the planned one (AAC re-encoded;
    /// PCM stays PCM), and the beeps of a click track stay where they were.
    @Test(arguments: ["device:gopro_max_heromode_gpmd.mp4", "fixture:clicks_seg1.mp4", "fixture:pcm_in_mov.mov"])
    func linearGainKeepsTheWaveform(_ name: String) throws {
        let parts = name.split(separator: ":").map(String.init)
        let input = parts[0] == "device" ? try Fixtures.device(parts[1]) : try Fixtures.path(parts[1])
        let scratch = try Scratch()
        let out = scratch.path("ebu." + (parts[1].hasSuffix(".mov") ? "mov" : "mp4"))
        let run = try Tool.avtool("loudness", input, out, "--target", "ebu", "--json")
        try #require(run.status == 0, "\(run)")
        let json = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        let stream = try #require((json["streams"] as? [[String: Any]])?.first)
        let plan = try #require(stream["plan"] as? [String: Any])
        #expect(plan["mode"] as? String == "linear")
        let gainDB = try #require(plan["gain_db"] as? Double)
        let expected = pow(10, gainDB / 20)

        let x = try Self.decoded(input), y = try Self.decoded(out)
        try #require(x.count == y.count, "decoded sample count")
        var xy = 0.0, xx = 0.0, yy = 0.0
        for i in 0..<x.count {
            xy += Double(x[i]) * Double(y[i]); xx += Double(x[i]) * Double(x[i]); yy += Double(y[i]) * Double(y[i])
        }
        let correlation = xy / (xx * yy).squareRoot()
        let gain = xy / xx
        #expect(correlation >= 0.999, "correlation \(correlation)")
        #expect(abs(20 * log10(gain / expected)) <= 0.1, "gain \(gain) vs \(expected)")
        #expect(abs(try Ebur128(out).integrated - -23) <= 0.5)
        #expect(try Self.videoHashes(out) == Self.videoHashes(input))
        if parts[1].hasPrefix("clicks") {
            let before = try ClickTrack(input, audioOnly: true).beeps, now = try ClickTrack(out, audioOnly: true).beeps
            try #require(before.count == now.count && !before.isEmpty, "\(before) vs \(now)")
            for (a, b) in zip(before, now) { #expect(abs(a - b) <= 0.001, "beep at \(a) moved to \(b)") }
        }
        if parts[1].hasSuffix(".mov") { #expect(run.stdout.contains("pcm_s16le")) }
    }

    /// A file without audio, a silent recording and a target out of reach:
    /// one line, exit status 1, nothing written.
    @Test(arguments: [
        ("real:bikes_bframes_videoonly.mp4", [String](), "the file has no audio stream"),
        ("real:camera_576p.mp4", [String](), "the audio is silent"),
        ("device:gopro_max_heromode_gpmd.mp4", ["--target", "-3", "--max-limiting", "12"],
         "the target cannot be reached: its true-peak ceiling would need 13.4 dB off the peaks (--max-limiting 12.0); allow it with --max-limiting 13.4, or ask for a quieter target"),
        // A voice memo at -58.7 LUFS: the way forward is the loudest target within 40 dB.
        ("wild:ios_voicememos_2021.m4a", ["--target", "podcast"],
         "it needs a gain of 42.7 dB (at most 40.0 dB); ask for --target -18.8 or quieter, which is within reach"),
    ])
    func badInputIsRefused(_ name: String, _ extra: [String], _ message: String) throws {
        let parts = name.split(separator: ":").map(String.init)
        let input = switch parts[0] {
        case "real": try Fixtures.real(parts[1])
        case "wild": try Fixtures.wild(parts[1])
        default: try Fixtures.device(parts[1])
        }
        let scratch = try Scratch()
        let out = scratch.path("out.mp4")
        let run = try Tool.avtool(["loudness", input, out] + extra)
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        #expect(!fileExists(out))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)
    }

    /// `--dry-run` prints the plan and its reason, and writes nothing.
    @Test func dryRunWritesNothing() throws {
        let scratch = try Scratch()
        let out = scratch.path("out.mp4")
        let run = try Tool.avtool("loudness", try Fixtures.device("gopro_max_heromode_gpmd.mp4"), out,
                                  "--target", "ebu", "--dry-run")
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.contains("linear gain +16.3 dB"), "\(run.stderr)")
        #expect(run.stderr.contains("within the -1.0 dBTP ceiling"), "\(run.stderr)")
        #expect(!fileExists(out))
    }

    /// `loudness` as a batch verb: a recipe's defaults and a step's own
    /// options go through the same parser as the command line.
    @Test func batchVerb() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.path("in"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try Fixtures.device("gopro_max_heromode_gpmd.mp4"), toPath: scratch.path("in/a.mp4"))
        try FileManager.default.copyItem(atPath: try Fixtures.path("clicks_seg1.mp4"), toPath: scratch.path("in/b.mp4"))
        let recipe = """
            version: 1
            defaults:
              loudness:
                target: ebu
            steps:
              - verb: loudness
                inputs: in/*.mp4
                output: out/{stem}.mp4
              - verb: loudness
                inputs: in/a.mp4
                output: out/{stem}-podcast.mp4
                options:
                  target: podcast
                  true-peak: -1.5
                  max-limiting: 20
            """
        try recipe.write(toFile: scratch.path("r.yaml"), atomically: true, encoding: .utf8)
        let run = try Tool.avtool("batch", scratch.path("r.yaml"), "--base", scratch.url.path)
        try #require(run.status == 0, "\(run)")
        for name in ["a", "b"] {
            #expect(abs(try Ebur128(scratch.path("out/\(name).mp4")).integrated - -23) <= 0.5, "\(name)")
        }
        let podcast = try Ebur128(scratch.path("out/a-podcast.mp4"))
        #expect(abs(podcast.integrated - -16) <= 0.5)
        #expect(podcast.truePeak <= -1.4)
    }

    /// libavfilter is not linked: the meter and the limiter do without it
    /// (only transcode's --sdr loads it), and runs that never filter do not map it.
    @Test func libavfilterIsLoadedOnlyWhenMeasuring() throws {
        let ldd = try Tool.run("ldd", [Tool.avtool])
        try #require(ldd.status == 0, "\(ldd)")
        #expect(!ldd.stdout.contains("libavfilter"), "\(ldd.stdout)")
        let run = try Tool.avtool("probe", "--loudness", try Fixtures.path("aac44_mono.m4a"))
        #expect(run.status == 0 && run.stdout.contains("LUFS"), "\(run)")
    }

    /// `transcode --loudness`: the audio measured first, then re-encoded
    /// with the plan's gain in the transcode's one pass; its samples and
    /// start kept.
    @Test func transcodeBringsTheAudioToATarget() throws {
        let input = try Fixtures.device("gopro_max_heromode_gpmd.mp4")
        let scratch = try Scratch()
        let out = scratch.path("out.mp4")
        let run = try Tool.avtool("transcode", input, out, "--loudness", "ebu", "--preset", "ultrafast")
        try #require(run.status == 0, "\(run)")
        #expect(run.stderr.contains("re-encoded for loudness: -39.3 LUFS, linear gain +16.3 dB"), "\(run.stderr)")
        #expect(abs(try Ebur128(out).integrated - -23) <= 0.5)
        #expect(try Self.decoded(out).count == Self.decoded(input).count, "decoded sample count")
        #expect(try Self.audioStart(out) == Self.audioStart(input))
    }
}

/// Loudness of the recordings people have, into the containers they ask for.
@Suite("loudness: encoders and stream flags")
struct LoudnessEncoderTests {
    /// Chrome's Opus recording (its first 2 s): Opus by libopus into .mka
    /// (before: "could not open encoder opus …: Experimental feature"), and
    /// AAC into .m4a, said in the report (before: "m4a cannot hold opus audio").
    @Test(arguments: [("mka", "opus"), ("m4a", "aac")])
    func browserOpusRecording(_ ext: String, _ codec: String) throws {
        let scratch = try Scratch()
        let clip = scratch.path("chrome.webm")
        let m = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try Fixtures.wild("chrome_mediarecorder_opus_audio_only.webm"),
                                        "-t", "2", "-c", "copy", clip])
        try #require(m.status == 0, "\(m)")
        let out = scratch.path("out.\(ext)")
        // Its first seconds are quiet (-56 LUFS): a target 40 dB above is out of reach.
        let r = try Tool.avtool("loudness", clip, out, "--target", "-40")
        try #require(r.status == 0, "\(r)")
        #expect(try FFprobe(out).streams.map { FFprobe.string($0, "codec_name") } == [codec])
        if codec == "aac" { #expect(r.stderr.contains("stream #0: encoded as AAC (m4a cannot hold libopus audio)"), "\(r.stderr)") }
    }

    /// A 2005 phone's AMR-NB (a QuickTime 3GPP export): libavcodec has no
    /// AMR encoder, so the audio is written as AAC, into .3gp as into .mp4,
    /// and the report says why (before: refused, "this FFmpeg build has no
    /// encoder for amr_nb audio", with no way forward). At the target by
    /// ebur128, the video and the hint track copied, and the audio as long
    /// as the input's to the sample by its edit list (699 packets of 5
    /// frames of 160 samples: 559,200).
    @Test func amrWithNoEncoderIsWrittenAsAAC() throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild("qt_3gpp_export_2005_amrnb_mp4v_hinted.3gp")
        let out = scratch.path("out.3gp")
        let r = try Tool.avtool("loudness", input, out, "--target", "podcast")
        try #require(r.status == 0, "\(r)")
        #expect(r.stderr.contains("stream #0: encoded as AAC (this FFmpeg build has no amr_nb encoder)"), "\(r.stderr)")
        let probe = try FFprobe(out)
        #expect(probe.streams.map { FFprobe.string($0, "codec_type") } == ["audio", "video", "data", "data"])
        #expect(FFprobe.string(probe.stream(0), "codec_name") == "aac")
        #expect(FFprobe.int(probe.stream(0), "duration_ts") == 559_200)
        let after = try Ebur128(out)
        #expect(abs(after.integrated - -16) <= 0.5, "integrated \(after.integrated)")
        #expect(after.truePeak <= -0.9, "true peak \(after.truePeak)")
        // Every video packet, byte for byte, at its time (the muxer writes the track's
        // 1/600 time scale as 1/19200, as it does for any copy through it).
        let a = try PacketList(input), b = try PacketList(out)
        #expect(b.payloads[1] == a.payloads[1])
        let times = { (l: PacketList) in l.packets.filter { $0.stream == 1 }.compactMap(\.pts).map { l.seconds($0, stream: 1) } }
        #expect(times(b) == times(a))
    }

    /// A voice memo given a cover (both real: the memo's AAC, an iTunes
    /// file's pictures) into MOV: the refusal names --no-cover-art, and
    /// loudness takes it (before: exit 64, "Unknown option '--no-cover-art'").
    @Test func takesTheFlagItsHintNames() throws {
        let scratch = try Scratch()
        let input = scratch.path("memo.m4a")
        let m = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try Fixtures.wild("ios_voicememos_2021.m4a"),
                                        "-i", try Fixtures.real("itunes_tags_cover.m4a"), "-map", "0:a", "-map", "1:v",
                                        "-c", "copy", "-disposition:v:0", "attached_pic", input])
        try #require(m.status == 0, "\(m)")
        let out = scratch.path("out.mov")
        let refused = try Tool.avtool("loudness", input, out, "--target", "-40")
        #expect(refused.status == 1 && refused.stderr.contains("mov cannot hold cover art; drop it with --no-cover-art"), "\(refused)")
        let r = try Tool.avtool("loudness", input, out, "--target", "-40", "--no-cover-art")
        try #require(r.status == 0, "\(r)")
        #expect(try FFprobe(out).streams.map { FFprobe.string($0, "codec_name") } == ["aac"])
    }

    /// Two real recordings' audio as the two tracks of one file (an iPhone
    /// voice memo's AAC, a Telegram video note's AAC; 3 s of each):
    /// `--audio 1` brings track #1 alone to the target and copies track #0
    /// packet for packet (before: both were re-encoded, each to the target);
    /// an N that is not an audio stream is refused naming the file's audio
    /// streams, on the command line and as a recipe's `audio` key.
    @Test func audioChoosesTheStreamToNormalize() throws {
        let scratch = try Scratch()
        let input = scratch.path("two.mka")
        let m = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try Fixtures.wild("ios_voicememos_2021.m4a"),
                                        "-i", try Fixtures.wild("telegram_videonote_2017_irregular_aac.mp4"),
                                        "-map", "0:a", "-map", "1:a", "-t", "3", "-c", "copy", input])
        try #require(m.status == 0, "\(m)")
        let out = scratch.path("out.mka")
        let r = try Tool.avtool("loudness", input, out, "--audio", "1", "--target", "-30", "--json")
        try #require(r.status == 0, "\(r)")
        let report = try #require(try JSONSerialization.jsonObject(with: r.data) as? [String: Any])
        let planned = (report["streams"] as? [[String: Any]] ?? []).compactMap { ($0["plan"] as? [String: Any])?["stream"] as? Int }
        #expect(planned == [1], "\(r.stdout)")
        #expect(report["copied_streams"] as? [Int] == [0], "\(r.stdout)")
        #expect(try AudioCopyTests.audioHashes(out) == AudioCopyTests.audioHashes(input))
        #expect(abs(try Ebur128(out, stream: 1).integrated - -30) <= 0.5)

        let bad = try Tool.avtool("loudness", input, scratch.path("bad.mka"), "--audio", "2")
        #expect(bad.status == 1, "\(bad)")
        #expect(bad.stderr.contains("'--audio' 2: the file has no stream #2; its audio: #0 (aac, 1 ch), #1 (aac, 1 ch)"), "\(bad.stderr)")
        #expect(bad.stderr.split(separator: "\n").count == 1, "\(bad.stderr)")
        let recipe = """
            version: 1
            steps:
              - verb: loudness
                inputs: two.mka
                output: batch.mka
                options: {audio: 5, target: ebu}
            """
        try recipe.write(toFile: scratch.path("r.yaml"), atomically: true, encoding: .utf8)
        let batch = try Tool.avtool("batch", scratch.path("r.yaml"), "--base", scratch.url.path)
        #expect(batch.status != 0, "\(batch)")
        #expect(batch.stderr.contains("'--audio' 5: the file has no stream #5"), "\(batch.stderr)")
    }

    /// Decoded frames of a file's first audio stream: how many samples, and
    /// when the first frame is presented (s), as `ffprobe -show_frames` reads them.
    static func frames(_ path: String) throws -> (samples: Int, first: Double?) {
        let r = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_frames",
                                         "-show_entries", "frame=pts_time,nb_samples", "-of", "csv=p=0", path])
        try #require(r.status == 0, "\(r)")
        let rows = r.stdout.split(separator: "\n").map { $0.split(separator: ",") }
        return (rows.compactMap { $0.count == 2 ? Int($0[1]) : nil }.reduce(0, +), rows.first.flatMap { Double($0[0]) })
    }

    /// A KDDI phone's 3G2 (2005): its AAC's first frame is libfaac's
    /// 1024-sample delay, which libavcodec's decoder drops by itself (the
    /// encoder's name in the first frame; the container marks nothing), so
    /// the audio decodes from 1024 samples in. After a gain alone, the
    /// output's encoder priming lay after the track's zero and was decoded
    /// too: 360,448 samples for the input's 359,424. Now its edit list hides
    /// it (an empty edit of 1024 samples, media from 1024): the same count,
    /// the first sample at the same time.
    @Test func aDecoderDroppedDelayIsNotReplacedByPriming() throws {
        let input = try Fixtures.wild("kddi_3g2_aac_2005.3g2")
        let scratch = try Scratch()
        let out = scratch.path("out.3g2")
        let r = try Tool.avtool("loudness", input, out, "--target", "-30", "--json")
        try #require(r.status == 0, "\(r)")
        #expect(r.stdout.contains("\"mode\" : \"linear\""), "\(r.stdout)")
        let before = try Self.frames(input), after = try Self.frames(out)
        #expect(before.samples == 359_424)
        #expect(after.samples == before.samples, "\(after.samples) samples decoded, \(before.samples) in the input")
        let first = try #require(after.first), expected = try #require(before.first)
        #expect(abs(first - expected) < 0.5 / 22_050, "first sample at \(first) s, \(expected) s in the input")
        #expect(abs(try Ebur128(out).integrated - -30) <= 0.5)
    }
}
