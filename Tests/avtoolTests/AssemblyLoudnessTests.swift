import Foundation
import Testing

/// `--loudness` on merge, concat, fill-silence and cut: the output as
/// written without it, its audio brought to the target (ebur128 is the
/// meter), the video's packets, the audio's sample count and start and
/// every beep's place unchanged.
@Suite("--loudness on merge, concat, fill-silence and cut")
struct AssemblyLoudnessTests {
    /// The verb run twice, without and with `--loudness target`: both outputs.
    func both(_ args: [String], target: String, ext: String = "mp4") throws -> (Scratch, plain: String, loud: String, run: Run) {
        let scratch = try Scratch()
        let plain = scratch.path("plain." + ext), loud = scratch.path("loud." + ext)
        let p = try Tool.avtool(args + [plain])
        try #require(p.status == 0, "\(p)")
        let run = try Tool.avtool(args + [loud, "--loudness", target, "--json"])
        try #require(run.status == 0, "\(run)")
        return (scratch, plain, loud, run)
    }

    /// `decodedCount`: the `ffmpeg` program's decoded sample count equal
    /// too (it plays an MP4/MOV track's last packet whole, past the edit's
    /// end: a cut's output differs there by the encoder's padding).
    func expectSameAssembly(_ plain: String, _ loud: String, beeps: Bool = true, decodedCount: Bool = true,
                            sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try LoudnessTests.videoHashes(loud) == LoudnessTests.videoHashes(plain), sourceLocation: sourceLocation)
        if decodedCount {
            #expect(try LoudnessTests.decoded(loud).count == LoudnessTests.decoded(plain).count, "decoded sample count",
                    sourceLocation: sourceLocation)
        }
        #expect(try LoudnessTests.audioStart(loud) == LoudnessTests.audioStart(plain), sourceLocation: sourceLocation)
        guard beeps else { return }
        let before = try ClickTrack(plain), after = try ClickTrack(loud)
        #expect(after.beeps.count == before.beeps.count && !after.beeps.isEmpty, "\(before.beeps) vs \(after.beeps)",
                sourceLocation: sourceLocation)
        for (b, e) in zip(after.beeps, after.beepErrors) {
            #expect(e <= 0.001, "beep at \(b) s is \(e * 1000) ms from its flash", sourceLocation: sourceLocation)
        }
    }

    /// merge, linear (EBU R128's -23 LUFS is 2.1 dB up: no peak near the ceiling).
    @Test func mergeLinear() throws {
        let args = ["merge", try Fixtures.path("clicks_video.mp4"), try Fixtures.path("clicks_audio.m4a")]
        let (keep, plain, loud, run) = try both(args, target: "ebu")
        defer { withExtendedLifetime(keep) {} }
        #expect(abs(try Ebur128(loud).integrated - -23) <= 0.5)
        #expect(run.stdout.contains("\"mode\" : \"linear\""), "\(run.stdout)")
        #expect(run.stdout.contains("\"audio_mode\" : \"re-encoded\""), "\(run.stdout)")
        try expectSameAssembly(plain, loud)
    }

    /// merge to the podcast target with a real recording's 5.1 audio, which
    /// reaches it only through the limiter: true peak at most -1 dBTP (+0.1
    /// for the codec). (A click track's beeps cannot: limited to the ceiling,
    /// their loudness stays under -16 whatever the gain.)
    @Test func mergePodcastLimited() throws {
        let args = ["merge", try Fixtures.path("clicks_video.mp4"), try Fixtures.real("bbb_720p_aac51.mp4")]
        let (keep, plain, loud, run) = try both(args, target: "podcast")
        defer { withExtendedLifetime(keep) {} }
        let after = try Ebur128(loud)
        #expect(abs(after.integrated - -16) <= 0.5, "integrated \(after.integrated)")
        #expect(after.truePeak <= -0.9, "true peak \(after.truePeak)")
        #expect(run.stdout.contains("\"mode\" : \"limited\""), "\(run.stdout)")
        try expectSameAssembly(plain, loud, beeps: false)
    }

    /// concat of two segments: measured over the joined audio.
    @Test func concatLinear() throws {
        let args = ["concat", try Fixtures.path("clicks_seg1.mp4"), try Fixtures.path("clicks_seg2.mp4")]
        let (keep, plain, loud, _) = try both(args, target: "-20")
        defer { withExtendedLifetime(keep) {} }
        #expect(abs(try Ebur128(loud).integrated - -20) <= 0.5)
        #expect(abs(try Ebur128(plain).integrated - -20) > 1, "the plain concat is already at the target")
        try expectSameAssembly(plain, loud, beeps: false)
        let before = try ClickTrack(plain, audioOnly: true).beeps, after = try ClickTrack(loud, audioOnly: true).beeps
        try #require(before.count == after.count && !before.isEmpty, "\(before) vs \(after)")
        for (a, b) in zip(before, after) { #expect(abs(a - b) <= 0.001, "beep at \(a) moved to \(b)") }
    }

    /// fill-silence: the hole filled, then the level brought up.
    @Test func fillSilenceLinear() throws {
        let args = ["fill-silence", try Fixtures.path("clicks_av_gap.mp4")]
        let (keep, plain, loud, _) = try both(args, target: "ebu", ext: "mov")
        defer { withExtendedLifetime(keep) {} }
        #expect(abs(try Ebur128(loud).integrated - -23) <= 0.5)
        try expectSameAssembly(plain, loud)
    }

    /// cut: measured on the range kept; the audio ends where the cut's edit
    /// ends it (inside its last packet), as without `--loudness`.
    @Test func cutLinear() throws {
        let args = ["cut", try Fixtures.path("clicks_seg1.mp4"), "--from", "0.5", "--to", "3.2"]
        let (keep, plain, loud, _) = try both(args, target: "ebu", ext: "mov")
        defer { withExtendedLifetime(keep) {} }
        #expect(abs(try Ebur128(loud).integrated - -23) <= 0.5)
        try expectSameAssembly(plain, loud, decodedCount: false)
        func audioDuration(_ path: String) throws -> Double? {
            let p = try FFprobe(path)
            return p.streams.first { FFprobe.string($0, "codec_type") == "audio" }.flatMap { FFprobe.double($0, "duration") }
        }
        #expect(try audioDuration(loud) == audioDuration(plain))
    }

    /// Audio that is silent cannot be brought to a target: one line, exit
    /// status 1, nothing written (no unnamed file is left either).
    @Test func silentAudioIsRefused() throws {
        let scratch = try Scratch()
        let out = scratch.path("out.mp4")
        let run = try Tool.avtool("merge", try Fixtures.path("clicks_video.mp4"), try Fixtures.real("camera_576p.mp4"), out,
                                  "--loudness", "podcast")
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.contains("the audio is silent"), "\(run.stderr)")
        #expect(run.stderr.contains(out), "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)
    }

    /// The same options in a recipe.
    @Test func recipe() throws {
        let scratch = try Scratch()
        let recipe = scratch.path("r.yaml")
        try """
        version: 1
        steps:
          - verb: fill-silence
            inputs: \(try Fixtures.path("clicks_av_gap.mp4"))
            output: \(scratch.path("filled.mp4"))
            options:
              loudness: ebu
          - verb: cut
            inputs: \(try Fixtures.path("clicks_seg1.mp4"))
            output: \(scratch.path("cut.mp4"))
            options:
              from: 0.5
              loudness: -20
              true-peak: -2
        """.write(toFile: recipe, atomically: true, encoding: .utf8)
        let run = try Tool.avtool("batch", recipe)
        try #require(run.status == 0, "\(run)")
        #expect(abs(try Ebur128(scratch.path("filled.mp4")).integrated - -23) <= 0.5)
        let cut = try Ebur128(scratch.path("cut.mp4"))
        #expect(abs(cut.integrated - -20) <= 0.5)
        #expect(cut.truePeak <= -1.9)
    }

    @Test func truePeakNeedsLoudness() throws {
        let run = try Tool.avtool("fill-silence", try Fixtures.path("clicks_av_gap.mp4"), "/tmp/x.mp4", "--true-peak", "-2")
        #expect(run.status != 0)
        #expect(run.stderr.contains("'--true-peak' is for '--loudness'"), "\(run.stderr)")
    }
}
