import Foundation
import Testing

/// `avtool sync` and `merge --sync-by-audio` on generated scenes whose
/// offset and drift are built in and checked by a second method when the
/// fixtures are made (`make-sync-scenes.sh`), on a real recording cut,
/// resampled and re-encoded, and on click tracks measured from the decoded
/// output (every beep within 1 ms of its flash, first minute to last).
@Suite("auto-sync by waveform")
struct AutoSyncTests {
    /// One line of `sync_scenes.txt`: name, offset (s), drift (ppm).
    struct Truth: CustomStringConvertible, Sendable {
        let name: String
        let offset: Double
        let drift: Double
        var description: String { "\(name) (\(offset) s, \(drift) ppm)" }
    }

    static func truths() throws -> [String: Truth] {
        let text = try String(contentsOfFile: try Fixtures.path("sync_scenes.txt"), encoding: .utf8)
        var out: [String: Truth] = [:]
        for line in text.split(separator: "\n") {
            let f = line.split(separator: " ")
            guard f.count == 3, let o = Double(f[1]), let d = Double(f[2]) else { continue }
            out[String(f[0])] = Truth(name: String(f[0]), offset: o, drift: d)
        }
        return out
    }

    static func json(_ run: Run) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: run.data) as? [String: Any])
    }

    /// Offsets −4.8 … +29.7 s (whole samples, fractional ms), drifts 0, ±20,
    /// ±80 ppm, one recorder at 44.1 kHz.
    @Test(arguments: ["scene_a", "scene_b", "scene_c", "scene_d", "scene_e"])
    func estimatesOffsetAndDrift(scene: String) throws {
        let truth = try #require(try Self.truths()[scene])
        let run = try Tool.avtool("sync", try Fixtures.path("\(scene)_video.mp4"), try Fixtures.path("\(scene)_audio.m4a"), "--json")
        try #require(run.status == 0, "\(run)")
        let r = try Self.json(run)
        let offset = try #require(r["offset_milliseconds"] as? Double)
        let drift = try #require(r["drift_ppm"] as? Double)
        let confidence = try #require(r["confidence"] as? Double)
        #expect(abs(offset - truth.offset * 1000) <= 0.5, "\(truth): offset \(offset) ms")
        #expect(abs(drift - truth.drift) <= 3, "\(truth): drift \(drift) ppm")
        #expect(confidence >= 0.5, "\(truth): confidence \(confidence)")
        // Nothing written: stdout is the report only.
        #expect(run.stderr.isEmpty, "\(run.stderr)")
    }

    @Test func textReport() throws {
        let run = try Tool.avtool("sync", try Fixtures.path("scene_b_video.mp4"), try Fixtures.path("scene_b_audio.m4a"))
        try #require(run.status == 0, "\(run)")
        #expect(run.stdout.contains("offset -4821."), "\(run.stdout)")
        #expect(run.stdout.contains("merge --offset -4821."), "\(run.stdout)")
        #expect(run.stdout.contains("drift +"), "\(run.stdout)")
        #expect(run.stdout.contains("confidence "), "\(run.stdout)")
    }

    @Test(arguments: [
        ("scene_a_video.mp4", "unrelated_audio.m4a", "no clear match"),
        ("scene_a_video.mp4", "silence_audio.m4a", "AUDIO is silent"),
        ("scene_a_video.mp4", "short_audio.m4a", "AUDIO is 2.00 s long"),
        ("clicks_video.mp4", "scene_a_audio.m4a", "it has no audio stream"),
    ])
    func refused(video: String, audio: String, cause: String) throws {
        let v = try Fixtures.path(video), a = try Fixtures.path(audio)
        let run = try Tool.avtool("sync", v, a)
        #expect(run.status != 0)
        #expect(run.stdout.isEmpty, "\(run.stdout)")
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        #expect(run.stderr.contains(cause), "\(run.stderr)")
        #expect(run.stderr.contains("'\(a)'") || run.stderr.contains("'\(v)'"), "\(run.stderr)")
        // merge --sync-by-audio refuses the same way and writes nothing.
        let scratch = try Scratch()
        let m = try Tool.avtool("merge", v, a, scratch.path("o.mp4"), "--sync-by-audio")
        #expect(m.status != 0)
        #expect(m.stderr.contains(cause), "\(m.stderr)")
        #expect(scratch.contents.isEmpty)
    }

    /// A real recording whose audio track is digital silence.
    @Test func silentVideoAudioIsRefused() throws {
        let run = try Tool.avtool("sync", try Fixtures.real("camera_576p.mp4"), try Fixtures.path("scene_a_audio.m4a"))
        #expect(run.status != 0)
        #expect(run.stderr.contains("VIDEO's audio is silent") && run.stderr.contains("camera_576p.mp4"), "\(run.stderr)")
    }

    /// Pairs made from a real recording (Big Buck Bunny, 5.1 AAC): its audio
    /// cut at a known sample, downmixed, EQ'd, on a clock 80 ppm fast,
    /// re-encoded at 44.1 kHz; and cut, as 16-bit WAV.
    @Test(arguments: [
        ("bbb_cut.m4a", "asetrate=12500,aresample=12501,asetrate=48000,aresample=44100,pan=stereo|c0=FL+0.7*FC|c1=FR+0.7*FC,equalizer=f=3000:t=q:w=1:g=4", ["-c:a", "aac", "-b:a", "128k", "-ar", "44100"], 80.0),
        ("bbb_cut.wav", "anull", ["-c:a", "pcm_s16le"], 0.0),
    ])
    func realRecording(name: String, chain: String, codec: [String], drift: Double) throws {
        let scratch = try Scratch()
        let video = try Fixtures.real("bbb_720p_aac51.mp4")
        let audio = scratch.path(name)
        let cut: Int64 = 33_333
        let make = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", video, "-map", "0:a:0",
                                           "-af", "atrim=start_sample=\(cut),asetpts=N/SR/TB,\(chain)"] + codec + [audio])
        try #require(make.status == 0, "\(make)")
        // The cut's first sample sits at the audio's start + cut / 48000 on VIDEO's timeline.
        let probe = try FFprobe(video)
        let vStart = FFprobe.double(probe.stream(0), "start_time") ?? 0
        let aStart = FFprobe.double(probe.stream(1), "start_time") ?? 0
        let truth = (aStart - vStart + Double(cut) / 48_000) * 1000
        let run = try Tool.avtool("sync", video, audio, "--json")
        try #require(run.status == 0, "\(run)")
        let r = try Self.json(run)
        let offset = try #require(r["offset_milliseconds"] as? Double)
        let measured = try #require(r["drift_ppm"] as? Double)
        #expect(abs(offset - truth) <= 0.5, "offset \(offset) ms, truth \(truth) ms")
        // 4.6 s of overlap: 80 ppm is 0.37 ms over it, so the drift is known to a few ppm only.
        #expect(abs(measured - drift) <= 10, "drift \(measured) ppm, truth \(drift) ppm")
    }

    // MARK: merge on ten-minute click tracks

    /// Every beep (a pseudo-random quarter of the seconds) within 1 ms of
    /// its flash, including the first and last minute; returns the beeps.
    func expectInSync(_ c: ClickTrack, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(c.beeps.count > 100, "\(c.beeps.count) beeps", sourceLocation: sourceLocation)
        #expect((c.beeps.first ?? 99) < 60 && (c.beeps.last ?? 0) > 540, "beeps \(c.beeps.prefix(3)) … \(c.beeps.suffix(3))",
                sourceLocation: sourceLocation)
        for (b, e) in zip(c.beeps, c.beepErrors) {
            #expect(e <= 0.001, "beep at \(b) s is \(e * 1000) ms from its flash", sourceLocation: sourceLocation)
        }
    }

    @Test func mergeResamplesADriftingRecorder() throws {
        let scratch = try Scratch()
        let video = try Fixtures.path("clicks10m_video.mp4"), audio = try Fixtures.path("clicks10m_drift80_audio.m4a")
        let out = scratch.path("synced.mp4")
        let run = try Tool.avtool("merge", video, audio, out, "--sync-by-audio", "--json")
        try #require(run.status == 0, "\(run)")
        let r = try Self.json(run)
        #expect(r["audio_mode"] as? String == "re-encoded")
        #expect((r["reencode_reason"] as? String)?.contains("ppm fast: resampled once") == true, "\(run.stdout)")
        let corrected = try #require(r["drift_corrected_ppm"] as? Double)
        #expect(abs(corrected - 80) <= 3)
        expectInSync(try ClickTrack(out))

        // The same offset without the drift correction is 48 ms off at the
        // end: the measurement can tell.
        let offset = try #require((r["auto_sync"] as? [String: Any])?["offset_milliseconds"] as? Double)
        let plain = scratch.path("plain.mp4")
        let run2 = try Tool.avtool("merge", video, audio, plain, "--offset=\(offset)ms", "-q")
        try #require(run2.status == 0, "\(run2)")
        let c = try ClickTrack(plain)
        let late = zip(c.beeps, c.beepErrors).filter { $0.0 > 540 }.map(\.1)
        #expect(!late.isEmpty && late.allSatisfy { $0 > 0.040 }, "\(late)")
    }

    @Test func mergeCopiesARecorderWithoutDriftAndKeepsTheCameraAudio() throws {
        let scratch = try Scratch()
        let video = try Fixtures.path("clicks10m_video.mp4"), audio = try Fixtures.path("clicks10m_nodrift_audio.m4a")
        let out = scratch.path("synced.mp4")
        let run = try Tool.avtool("merge", video, audio, out, "--sync-by-audio", "--keep-original-audio", "--json")
        try #require(run.status == 0, "\(run)")
        let r = try Self.json(run)
        #expect(r["audio_mode"] as? String == "copied", "\(run.stdout)")
        #expect(r["drift_corrected_ppm"] == nil)
        expectInSync(try ClickTrack(out))
        // Three tracks: video, the recorder (default), the camera's own (not default, packets unchanged).
        let probe = try FFprobe(out)
        #expect(probe.streams.map { FFprobe.string($0, "codec_type") } == ["video", "audio", "audio"])
        let defaults = probe.streams.map { ($0["disposition"] as? [String: Any])?["default"] as? Int }
        #expect(defaults == [1, 1, 0], "\(defaults)")
        let ours = try PacketList(out), camera = try PacketList(video), recorder = try PacketList(audio)
        #expect(ours.payloads[2] == camera.payloads[1])
        #expect(Set(recorder.payloads[0]!).isSubset(of: Set(ours.payloads[1]!)))
    }

    @Test(arguments: [
        (["--offset", "1s"], "'--sync-by-audio' and '--offset' cannot be used together"),
        (["--align", "timestamps"], "'--sync-by-audio' and '--align timestamps' cannot be used together"),
    ])
    func conflictingOptions(extra: [String], message: String) throws {
        let scratch = try Scratch()
        let run = try Tool.avtool(["merge", try Fixtures.path("scene_a_video.mp4"), try Fixtures.path("scene_a_audio.m4a"),
                                   scratch.path("o.mp4"), "--sync-by-audio"] + extra)
        #expect(run.status != 0)
        #expect(run.stderr.contains(message), "\(run.stderr)")
        #expect(scratch.contents.isEmpty)
    }
}
