import Foundation
import Testing

/// Files of audio alone (an iPhone's Voice Memos) joined and cut as video
/// files are: every packet copied, each joint where the segment before
/// ends, to the sample.
@Suite("audio-only joins and cuts")
struct AudioOnlyJoinTests {
    static func memo() throws -> String { try Fixtures.wild("ios_voicememos_2021.m4a") }

    @Test func concatOfTwoVoiceMemosKeepsEveryPacketAndJoinsOnTheSample() throws {
        let memo = try Self.memo()
        let scratch = try Scratch()
        let out = scratch.path("both.m4a")
        let run = try Tool.avtool("concat", memo, memo, out, "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(report["audio_mode"] as? String == "copied")
        #expect(report["audio_frames_reencoded"] as? Int == 0)
        #expect(report["silent_frames_added"] as? Int == 0)
        // Every packet of both, byte for byte, in order (48 + 48).
        let once = try AudioCopyTests.audioHashes(memo)
        #expect(once.count == 48)
        #expect(try AudioCopyTests.audioHashes(out) == once + once)
        // The second memo starts where the first one's audio ends (1.024 s:
        // 48 frames of 1024 samples at 48 kHz), within 1 ms, by ffprobe.
        let length = try #require(FFprobe.double(try FFprobe(memo).stream(0), "duration"))
        let packets = try PacketList(out)
        let pts = packets.packets.compactMap(\.pts)
        let joint = packets.seconds(pts[once.count], stream: 0) - packets.seconds(pts[0], stream: 0)
        #expect(abs(joint - length) <= 0.001, "joint at \(joint) s, the first memo lasts \(length) s")
        #expect(report["joints_samples"] as? [Int] == [0, 49_152])
        let total = try #require(FFprobe.double(try FFprobe(out).stream(0), "duration"))
        #expect(abs(total - 2 * length) <= 0.001, "\(total) s")
        // The report says so in words.
        let text = try Tool.avtool("concat", memo, memo, scratch.path("text.m4a"))
        #expect(text.stderr.contains("all 96 packets as they were"), "\(text.stderr)")
        #expect(text.stderr.contains("joints at sample 0 (0.000 s), sample 49152 (1.024 s)"), "\(text.stderr)")
    }

    /// FLAC from libFLAC (GStreamer's `flacenc`, not FFmpeg): its last frame
    /// is shorter than the others. Each frame says how long it is, so the
    /// joint needs nothing re-encoded: every packet of both, and the decoded
    /// samples are the two files' one after the other. (It failed the
    /// written-file check: the re-encode of the joint's frames ended with
    /// the encoder's packet of no bytes, which no muxer stores; and FLAC's
    /// codec record was compared byte for byte, frame sizes and MD5 included.)
    @Test func concatOfFLACFromLibFLACCopiesEveryFrame() throws {
        let scratch = try Scratch()
        let flac = scratch.path("tone.flac")
        let make = try Tool.run("gst-launch-1.0", ["-q", "audiotestsrc", "num-buffers=100", "wave=sine", "freq=440", "!",
                                                   "audio/x-raw,rate=44100,channels=2", "!", "flacenc", "!",
                                                   "filesink", "location=" + flac])
        try #require(make.status == 0, "\(make)")
        let once = try AudioCopyTests.audioHashes(flac)
        try #require(once.count == 23, "22 frames of 4608 samples and one of 1024")
        for name in ["both.mka", "both.mkv"] {
            let out = scratch.path(name)
            let run = try Tool.avtool("concat", flac, flac, out, "--json")
            try #require(run.status == 0, "\(run)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            #expect(report["audio_mode"] as? String == "copied", "\(run.stdout)")
            #expect(try AudioCopyTests.audioHashes(out) == once + once)
            // The decoded samples: the output's, and the file's twice over (FFmpeg's concat filter).
            let ours = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", out, "-f", "md5", "-"])
            let twice = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", flac, "-i", flac, "-filter_complex",
                                                "[0:a][1:a]concat=n=2:v=0:a=1", "-f", "md5", "-"])
            #expect(ours.status == 0 && twice.status == 0 && ours.stdout == twice.stdout, "\(ours) \(twice)")
        }
    }

    /// A memo whose edit list ends before its last packet does (0.8 s of its
    /// 1.024 s shown: the Voice Memos file with an `edts` put in its track,
    /// as an editor's trim writes it) joined before the whole memo: the
    /// joint is where the edit ends, sample 38,400, and none of the 512
    /// samples of its last packet the edit hides is heard. Before, the joint
    /// was that packet's end (38,912: 10.7 ms late) and the hidden samples
    /// were played. The second memo decodes to the recording's own samples
    /// once past the frames re-encoded at the joint.
    @Test func aMemoTrimmedAtItsEndJoinsWhereItsEditEnds() throws {
        let memo = try Self.memo()
        let scratch = try Scratch()
        let trimmed = scratch.path("trimmed.m4a")
        try Data(Self.withEditEnd(try [UInt8](Data(contentsOf: URL(fileURLWithPath: memo))), shown: 38_400))
            .write(to: URL(fileURLWithPath: trimmed))
        let shown = try #require(FFprobe.double(try FFprobe(trimmed).stream(0), "duration"))
        try #require(abs(shown - 0.8) < 0.001, "the crafted edit shows \(shown) s")
        let out = scratch.path("joined.m4a")
        let run = try Tool.avtool("concat", trimmed, memo, out, "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(report["joints_samples"] as? [Int] == [0, 38_400], "\(run.stdout)")
        let length = try #require(FFprobe.double(try FFprobe(out).stream(0), "duration"))
        #expect(abs(length - 1.824) <= 0.001, "\(length) s")
        let ours = try Self.decoded(out, decoder: "aac"), whole = try Self.decoded(memo, decoder: "aac")
        try #require(ours.count == 38_400 + whole.count, "\(ours.count) samples")
        // Past the joint's re-encoded frames and the one their overlap reaches, the memo's own samples.
        #expect(Array(ours[(38_400 + 3 * 1024)...]) == Array(whole[(3 * 1024)...]))
    }

    /// `bytes` of an MP4 with one track, with an edit list put in that track
    /// showing its first `shown` ticks (movie time scale) from media time 0.
    static func withEditEnd(_ bytes: [UInt8], shown: Int) throws -> [UInt8] {
        var b = bytes
        // The top-level boxes (the memo's `mdat` has a 64-bit size), then `trak` and its `tkhd`.
        var at = 0, moov: Range<Int>?
        while at + 8 <= b.count {
            var size = CraftedIndexTests.u32(b, at)
            if size == 1 { size = CraftedIndexTests.u32(b, at + 8) << 32 | CraftedIndexTests.u32(b, at + 12) }
            if String(decoding: b[(at + 4)..<(at + 8)], as: UTF8.self) == "moov" { moov = at..<(at + size) }
            at += max(size, 8)
        }
        let m = try #require(moov)
        let inside = CraftedIndexTests.boxes(b, (m.lowerBound + 8)..<m.upperBound)
        let trak = try #require(inside.first { $0.type == "trak" })
        let tkhd = try #require(inside.first { $0.type == "tkhd" })
        var edts: [UInt8] = [0, 0, 0, 36] + Array("edts".utf8) + [0, 0, 0, 28] + Array("elst".utf8) + [0, 0, 0, 0, 0, 0, 0, 1]
        edts += [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0]
        CraftedIndexTests.put32(&edts, 24, shown)
        b.insert(contentsOf: edts, at: tkhd.start + tkhd.size)
        for box in [m.lowerBound, trak.start] { CraftedIndexTests.put32(&b, box, CraftedIndexTests.u32(b, box) + edts.count) }
        return b
    }

    /// `cut --keep` joins its ranges by concat: on audio alone too (it
    /// said "no video stream"). The joint is laid to the sample: the frames
    /// around it re-encoded onto the copied ones' grid, the rest copied.
    @Test func cutKeepOfAVoiceMemoJoinsItsRanges() throws {
        let memo = try Self.memo()
        let scratch = try Scratch()
        let out = scratch.path("kept.m4a")
        let run = try Tool.avtool("cut", "--keep", "0.1-0.3,0.5-0.7", memo, out, "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect((report["audio"] as? String)?.hasPrefix("copied") == true, "\(run.stdout)")
        let length = try #require(FFprobe.double(try FFprobe(out).stream(0), "duration"))
        #expect(abs(length - 0.42) <= 0.03, "\(length) s for 0.4 s asked")
        // The first range's frames are the memo's own, byte for byte.
        let source = Set(try AudioCopyTests.audioHashes(memo))
        let ours = try AudioCopyTests.audioHashes(out)
        #expect(ours.prefix(8).allSatisfy { source.contains($0) }, "\(ours)")
        let decode = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-xerror", "-i", out, "-f", "null", "-"])
        #expect(decode.status == 0, "\(decode)")
    }

    @Test func audioAloneAndVideoAreNotJoinedTogether() throws {
        let memo = try Self.memo()
        let scratch = try Scratch()
        let video = try Fixtures.wild("telegram_videonote_2017_irregular_aac.mp4")
        let mixed = try Tool.avtool("concat", memo, video, scratch.path("mixed.m4a"))
        #expect(mixed.status != 0)
        #expect(mixed.stderr.contains("has audio only but '\(video)' has video"), "\(mixed.stderr)")
        #expect(mixed.stderr.split(separator: "\n").count <= 2, "\(mixed.stderr)")
        let opus = try Fixtures.wild("chrome_mediarecorder_opus_audio_only.webm")
        let codecs = try Tool.avtool("concat", memo, opus, scratch.path("codecs.mka"))
        #expect(codecs.status != 0)
        #expect(codecs.stderr.contains("audio codec differs from the first segment's (opus, not aac)"), "\(codecs.stderr)")
    }

    /// A browser's Opus with a 1 s hole (timestamps after 2 s moved 1 s
    /// later by FFmpeg's `setts`): filled with hand-made silent frames,
    /// every packet of the recording copied (it was re-encoded whole:
    /// libopus's frames carry a codec record of their own). Both libopus
    /// and libavcodec's decoder give zeros for the silence and 48,000 more
    /// samples in all.
    @Test func aHoleInBrowserOpusIsFilledWithSilentFramesMadeByHand() throws {
        let scratch = try Scratch()
        let holed = scratch.path("holed.webm"), out = scratch.path("filled.webm")
        let made = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try Fixtures.wild("chrome_mediarecorder_opus_audio_only.webm"),
                                           "-t", "4", "-c", "copy", "-bsf:a", "setts=ts=if(gte(PTS\\,2000)\\,PTS+1000\\,PTS)", holed])
        try #require(made.status == 0, "\(made)")
        let run = try Tool.avtool("fill-silence", holed, out, "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(report["audio_mode"] as? String == "copied")
        #expect(report["silence_inserted_samples"] as? Int == 48_000)
        let silent = try #require(report["silent_frames_added"] as? Int)
        // The recording's packets, in order, around the silent ones.
        let theirs = try AudioCopyTests.audioHashes(holed), ours = try AudioCopyTests.audioHashes(out)
        #expect(ours.count == theirs.count + silent)
        #expect(ours.filter { Set(theirs).contains($0) } == theirs)
        // The hole starts after the packet at 1.98 s (60 ms long): 2.04 s, sample 97,920.
        let hole = 97_920
        for decoder in ["opus", "libopus"] {
            let before = try Self.decoded(holed, decoder: decoder), after = try Self.decoded(out, decoder: decoder)
            #expect(after.count == before.count + 48_000, "\(decoder)")
            // After the first silent frame (the last sound's transform tail), zeros to the hole's end.
            let inside = after[(hole + 960)..<(hole + 48_000)]
            #expect(inside.allSatisfy { $0 == 0 }, "\(decoder): \(inside.map { abs(Int($0)) }.max() ?? 0)")
            #expect(after[(hole + 48_000)...].contains { $0 != 0 }, "\(decoder)")
        }
    }

    /// Mono 16-bit samples decoded by `decoder`.
    static func decoded(_ path: String, decoder: String) throws -> [Int16] {
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-c:a", decoder, "-i", path, "-ac", "1", "-f", "s16le", "-"])
        try #require(r.status == 0, "\(r)")
        return r.data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// AMR-NB from a 2005 QuickTime 3GPP export (3 s, taken out with
    /// `ffmpeg -c copy` to .amr: one frame a packet). libavcodec has no AMR
    /// encoder to make silence with, so the audio was re-encoded to AAC
    /// whether or not anything was missing. Now it is copied where nothing
    /// is; with a 50 ms hole it is re-encoded, the report saying why and
    /// which '--tolerance' copies it, and with that tolerance it is copied.
    @Test func amrIsCopiedWhereNothingHasToBeInserted() throws {
        let scratch = try Scratch()
        let amr = scratch.path("speech.amr"), holed = scratch.path("holed.mov")
        let export = try Fixtures.wild("qt_3gpp_export_2005_amrnb_mp4v_hinted.3gp")
        for args in [["-i", export, "-map", "0:a", "-c", "copy", "-t", "3", amr],
                     ["-i", amr, "-c", "copy", "-bsf:a", "setts=ts=if(gte(PTS\\,8000)\\,PTS+400\\,PTS)", holed]] {
            let made = try Tool.run("ffmpeg", ["-nostdin", "-v", "error"] + args)
            try #require(made.status == 0, "\(made)")
        }
        let whole = scratch.path("whole.mov")
        let run = try Tool.avtool("fill-silence", amr, whole, "--json")
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("\"audio_mode\" : \"copied\""), "\(run.stdout)")
        let theirs = try AudioCopyTests.audioHashes(amr)
        #expect(theirs.count == 150)
        #expect(try AudioCopyTests.audioHashes(whole) == theirs)
        // A hole of 400 samples (50 ms at 8 kHz) after 1 s.
        let filled = try Tool.avtool("fill-silence", holed, scratch.path("filled.mov"), "--json")
        try #require(filled.status == 0, "\(filled)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(filled.stdout.utf8)) as? [String: Any])
        #expect(report["audio_mode"] as? String == "re-encoded")
        let reason = report["reencode_reason"] as? String ?? ""
        #expect(reason.contains("a gap of 50.0 ms at 1.000 s needs silence (a '--tolerance' of 50ms or more"), "\(reason)")
        let kept = scratch.path("kept.mov")
        let tolerated = try Tool.avtool("fill-silence", "--tolerance", "50ms", holed, kept, "--json")
        try #require(tolerated.status == 0, "\(tolerated)")
        #expect(tolerated.stdout.contains("\"audio_mode\" : \"copied\""), "\(tolerated.stdout)")
        #expect(try AudioCopyTests.audioHashes(kept) == theirs)
    }

    /// AMR-WB from VisualOn's encoder (Android's) in 3GP (`sawb`, a frame a
    /// sample), 173 frames of 12.65 kb/s speech, and the same with a hole of
    /// 25 frames (0.5 s) after frame 80. The hole is filled with NO_DATA
    /// frames (FT 15: the 1-byte header `7C`, RFC 4867 §5.3), which
    /// libavcodec's AMR-WB decoder gives zeros for, so every packet is
    /// copied (the audio was re-encoded to AAC: "no amr_wb encoder"), and
    /// decoded it is the recording with 0.5 s of zeros in it; two such files
    /// are joined by copy. The oracles are ffprobe's payload hashes and the
    /// samples ffmpeg's `amrwb` decoder gives.
    @Test func amrWBGapsAreFilledWithNoDataFramesAndJoinedByCopy() throws {
        let speech = try Fixtures.wild("voamrwbenc_amrwb_speech.3gp"), holed = try Fixtures.wild("voamrwbenc_amrwb_speech_gap.3gp")
        let scratch = try Scratch()
        let frames = try #require(try PacketList(holed).payloads[0])
        try #require(frames.count == 173 && (try PacketList(speech).payloads[0]) == frames)
        let noData = "1:MD5:b99834bc19bbad24580b3adfa04fb947"
        let filled = scratch.path("filled.3gp"), joined = scratch.path("joined.3gp")
        let run = try Tool.avtool("fill-silence", holed, filled, "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(report["audio_mode"] as? String == "copied", "\(run.stdout)")
        #expect(report["silence_inserted_samples"] as? Int == 8_000)
        #expect(report["silent_frames_added"] as? Int == 25)
        let gapped = Array(frames[..<80]) + Array(repeating: noData, count: 25) + Array(frames[80...])
        #expect(try PacketList(filled).payloads[0] == gapped)
        // Decoded: the recording's own samples with 8,000 zeros where the hole was (198 frames of 320).
        let samples = try Self.decoded(filled, decoder: "amrwb"), recording = try Self.decoded(speech, decoder: "amrwb")
        try #require(recording.count == 173 * 320)
        #expect(samples == Array(recording[..<25_600]) + Array(repeating: 0, count: 8_000) + Array(recording[25_600...]))
        // Two recordings joined: every packet of both, the second's hole filled as above.
        let join = try Tool.avtool("concat", speech, holed, joined, "--json")
        try #require(join.status == 0, "\(join)")
        let joint = try #require(try JSONSerialization.jsonObject(with: Data(join.stdout.utf8)) as? [String: Any])
        #expect(joint["audio_mode"] as? String == "copied", "\(join.stdout)")
        #expect(joint["joints_samples"] as? [Int] == [0, 55_360])
        #expect(try PacketList(joined).payloads[0] == frames + gapped)
        #expect(try Self.decoded(joined, decoder: "amrwb").count == (173 + 198) * 320)
    }

    /// HE-AAC 5.1 from FDK (Android's encoder, raw ADTS) joined with
    /// itself: the joint falls on a frame boundary (sample 260,096 =
    /// 127 × 2048) and both segments' configurations are one, so nothing
    /// needs a silent frame and every frame is copied, twice over (it was
    /// re-encoded to AAC-LC: "a silent frame needs SBR extension data").
    /// ffmpeg decodes the output without a word, to twice the input's
    /// samples. Joined with AAC-LC 5.1 at the same rate (Big Buck Bunny's
    /// own track, a second of it, in ADTS too), it is re-encoded, the reason
    /// naming both configurations.
    @Test func heAACJoinedWithItselfIsCopiedAndWithAnotherConfigurationReencoded() throws {
        let aac = try Fixtures.wild("fdk_heaac51_bbb.aac")
        let scratch = try Scratch()
        let out = scratch.path("twice.m4a")
        let run = try Tool.avtool("concat", aac, aac, out, "--json")
        try #require(run.status == 0, "\(run)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(report["audio_mode"] as? String == "copied", "\(run.stdout)")
        #expect(report["silent_frames_added"] as? Int == 0)
        #expect(report["joints_samples"] as? [Int] == [0, 260_096])
        let once = try AudioCopyTests.audioHashes(aac)
        #expect(once.count == 127)
        #expect(try AudioCopyTests.audioHashes(out) == once + once)
        let input = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", aac, "-f", "s16le", "-"])
        let output = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", out, "-f", "s16le", "-"])
        #expect(input.status == 0 && output.status == 0 && output.stderr.isEmpty, "\(output.stderr)")
        #expect(output.data.count == 2 * input.data.count, "\(output.data.count / 12) samples, the input \(input.data.count / 12)")

        let lc = scratch.path("lc.aac")
        let cut = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try Fixtures.real("bbb_720p_aac51.mp4"),
                                          "-vn", "-c:a", "copy", "-t", "1", "-f", "adts", lc])
        try #require(cut.status == 0, "\(cut)")
        let mixed = try Tool.avtool("concat", aac, lc, scratch.path("mixed.m4a"), "--json")
        try #require(mixed.status == 0, "\(mixed)")
        let other = try #require(try JSONSerialization.jsonObject(with: Data(mixed.stdout.utf8)) as? [String: Any])
        #expect(other["audio_mode"] as? String == "re-encoded")
        let reason = other["reencode_reason"] as? String ?? ""
        #expect(reason.contains("segment 2's configuration (AAC object type 2, 48000 Hz, channel configuration 6, 1024-sample frames, profile LC) differs from the first's (AAC object type 2, 24000 Hz, channel configuration 6, 1024-sample frames, profile HE-AAC)"), "\(reason)")
    }

    /// AAC in ADTS (a raw `.aac`) joined with the same AAC in MP4: the muxer
    /// takes the ADTS headers off with a filter set up from the first
    /// packet, which refuses frames without them ("could not write …:
    /// Invalid data found", once ADTS segments' joints are copied); with the
    /// MP4 first, the ADTS headers were copied into the MP4's samples (the
    /// report said "copied"). The audio is re-encoded, the report saying why.
    @Test func aacWithAndWithoutADTSHeadersIsJoinedByReencoding() throws {
        let scratch = try Scratch()
        let m4a = scratch.path("lc.m4a"), adts = scratch.path("lc.aac")
        for args in [["-i", try Fixtures.real("bbb_720p_aac51.mp4"), "-vn", "-c:a", "copy", "-t", "1", m4a],
                     ["-i", m4a, "-c", "copy", "-f", "adts", adts]] {
            let made = try Tool.run("ffmpeg", ["-nostdin", "-v", "error"] + args)
            try #require(made.status == 0, "\(made)")
        }
        for (inputs, adtsSide) in [([adts, m4a], "the first segment's"), ([m4a, adts], "segment 2's")] {
            let out = scratch.path(UUID().uuidString + ".m4a")
            let run = try Tool.avtool(["concat"] + inputs + [out, "--json"])
            try #require(run.status == 0, "\(run)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            #expect(report["audio_mode"] as? String == "re-encoded", "\(run.stdout)")
            #expect((report["reencode_reason"] as? String ?? "").contains("\(adtsSide) AAC frames carry ADTS headers"), "\(run.stdout)")
            let decode = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", out, "-f", "null", "-"])
            #expect(decode.status == 0 && decode.stderr.isEmpty, "\(decode)")
        }
    }
}
