import Foundation
import Testing

/// A fixture and a container it fits, with the flags the case needs.
struct RemuxCase: CustomTestStringConvertible, Sendable {
    let fixture: String
    let container: String
    var flags: [String] = []
    var real = false

    var testDescription: String { "\(fixture) → \(container)" + (flags.isEmpty ? "" : " \(flags.joined(separator: " "))") }

    /// MPEG-TS carries H.264/HEVC as Annex B and AAC as ADTS; MP4/MOV/MKV as
    /// length-prefixed NALs and raw AAC. Crossing that line, libavformat's
    /// automatic bitstream filters rewrite the payload (as they do for
    /// `ffmpeg -c copy`), so the oracle is ffmpeg's own remux, not the input.
    var payloadChanges: Bool { (container == "ts") != fixture.hasSuffix(".ts") }
}

let generatedCases: [RemuxCase] = {
    let av = ["h264_bframes_2997_aac48_stereo.mp4", "h264_vfr.mp4", "h264_vfr.mkv", "odd_size_321x241.mp4",
              "audio_starts_late.mp4", "audio_gap.mkv", "audio_gap.mp4", "ts_wrap.ts", "h264_aac.ts",
              "hevc_aac.mp4", "rotated90.mp4"]
    var cases: [RemuxCase] = []
    for f in av { for c in ["mp4", "mov", "mkv", "ts"] { cases.append(RemuxCase(fixture: f, container: c)) } }
    for c in ["mp4", "mov", "mkv"] { cases.append(RemuxCase(fixture: "hevc.mkv", container: c)) }
    for f in ["aac44_mono.m4a", "aac48_stereo.m4a"] {
        for c in ["m4a", "mp4", "mkv", "ts"] { cases.append(RemuxCase(fixture: f, container: c)) }
    }
    cases.append(RemuxCase(fixture: "pcm_in_mov.mov", container: "mov"))
    cases.append(RemuxCase(fixture: "pcm_in_mov.mov", container: "mkv"))
    cases.append(RemuxCase(fixture: "h264_aac.mkv", container: "mkv"))
    cases.append(RemuxCase(fixture: "h264_aac.mkv", container: "mp4", flags: ["--no-subtitles"]))
    return cases
}()

/// Recordings nobody here made (phones, HandBrake, cameras, iTunes).
let realCases: [RemuxCase] = {
    var cases: [RemuxCase] = []
    for f in ["bbb_720p_aac51.mp4", "bikes_bframes_videoonly.mp4", "birds_handbrake_bframes.mp4", "camera_576p.mp4",
              "carphone_pristine.mp4", "sample_1080p_23976.mp4", "cockatoo_yuv444_mp3.mp4"] {
        for c in ["mp4", "mov", "mkv", "ts"] { cases.append(RemuxCase(fixture: f, container: c, real: true)) }
    }
    for c in ["m4a", "mov", "mkv"] { cases.append(RemuxCase(fixture: "alac.m4a", container: c, real: true)) }
    cases.append(RemuxCase(fixture: "itunes_tags_cover.m4a", container: "m4a", real: true))
    cases.append(RemuxCase(fixture: "itunes_tags_cover.m4a", container: "mp4", real: true))
    cases.append(RemuxCase(fixture: "itunes_tags_cover.m4a", container: "mov", flags: ["--no-cover-art"], real: true))
    cases.append(RemuxCase(fixture: "itunes_tags_cover.m4a", container: "mkv", flags: ["--no-cover-art"], real: true))
    return cases
}()

@Suite("remux: every sample to every container it fits")
struct RemuxMatrixTests {
    @Test(arguments: generatedCases)
    func remuxMatchesOracles(_ c: RemuxCase) throws {
        try checkRemux(input: try Fixtures.path(c.fixture), case: c)
    }

    @Test(arguments: realCases)
    func realRecordings(_ c: RemuxCase) throws {
        try checkRemux(input: try Fixtures.real(c.fixture), case: c)
    }
}

/// Remuxes `input` to `c.container` and checks the output against oracles:
/// packet payload hashes (framemd5), PTS within one tick, stream properties
/// and tags (ffprobe), and a second demuxer (GStreamer).
func checkRemux(input: String, case c: RemuxCase) throws {
    let scratch = try Scratch()
    let output = scratch.path("out.\(c.container)")
    let inputHash = try sha256(input)
    let run = try Tool.avtool(["remux", input, output, "--quiet"] + c.flags)
    try #require(run.status == 0, "\(run)")
    #expect(try sha256(input) == inputHash, "input changed")
    #expect(scratch.contents == ["out.\(c.container)"], "leftover files: \(scratch.contents)")

    // Which input stream each output stream comes from.
    let a = try FFprobe(input), b = try FFprobe(output)
    let dropSubs = c.flags.contains("--no-subtitles"), dropCovers = c.flags.contains("--no-cover-art")
    let kept = a.streams.filter {
        !(dropSubs && FFprobe.string($0, "codec_type") == "subtitle") && !(dropCovers && FFprobe.isCoverArt($0))
    }
    let keptIndices = kept.map { FFprobe.int($0, "index")! }
    try #require(b.streams.count == kept.count, "ffprobe stream count")

    // Packet payloads: identical to the input's (every packet, DISCARD ones
    // such as AAC priming included), or to ffmpeg's own remux where the
    // container forces a bitstream conversion.
    let inputPackets = try PacketList(input)
    let produced = try PacketList(output)
    // ffmpeg's own remux of the same input, made when a check needs it.
    var ffmpegRemux: String?
    func ffmpegReference() throws -> String {
        if let r = ffmpegRemux { return r }
        let ref = scratch.path("ref.\(c.container)")
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", input, "-map", "0"]
                                + (dropSubs ? ["-sn"] : []) + (dropCovers ? ["-map", "-0:v"] : []) + ["-c", "copy", ref])
        try #require(r.status == 0, "\(r)")
        ffmpegRemux = ref
        return ref
    }
    var expected: [Int: [String]] = [:]
    var reference: FFprobe?
    if c.payloadChanges {
        let ref = try ffmpegReference()
        expected = try PacketList(ref).payloads
        reference = try FFprobe(ref)
    } else {
        let all = inputPackets.payloads
        for (j, i) in keptIndices.enumerated() { expected[j] = all[i] ?? [] }
    }
    let got = produced.payloads
    #expect(got.count == expected.count, "streams with packets: \(got.count) vs \(expected.count)")
    for (j, exp) in expected {
        let ours = got[j] ?? []
        #expect(ours.count == exp.count, "stream \(j): \(ours.count) packets, expected \(exp.count)")
        if let k = zip(ours, exp).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            Issue.record("stream \(j): packet \(k) differs: \(ours[k]) vs \(exp[k])")
        }
    }

    // Presentation timestamps, relative to each file's earliest PTS, agree
    // with the input's within one tick of the coarser time base. MP4/MOV
    // edit lists (start offsets) are written in the movie time scale, 1/1000
    // in movenc, so there one millisecond is the tick. Where the input's own
    // demuxed timestamps are inconsistent (a first packet with PTS ahead of
    // DTS and no reordering), ffmpeg's remux is the reference instead.
    let editTick = ["mp4", "mov", "m4a"].contains(c.container) ? 0.001 : 0
    let tolerance = max(inputPackets.coarsestTick, produced.coarsestTick, editTick) + 1e-6
    func worstPTS(_ theirs: [Int: [Double]], map: (Int) -> Int) -> [Int: Double] {
        var r: [Int: Double] = [:]
        let ours = produced.relativePTS
        for j in keptIndices.indices {
            guard let t = theirs[map(j)], let o = ours[j], t.count == o.count else { continue }
            r[j] = zip(o, t).map { abs($0 - $1) }.filter { !$0.isNaN }.max() ?? 0
        }
        return r
    }
    var worst = worstPTS(inputPackets.relativePTS) { keptIndices[$0] }
    if worst.values.contains(where: { $0 > tolerance }) {
        let viaFFmpeg = worstPTS(try PacketList(try ffmpegReference()).relativePTS) { $0 }
        if !viaFFmpeg.values.contains(where: { $0 > tolerance }) { worst = viaFFmpeg }
    }
    for (j, w) in worst {
        #expect(w <= tolerance, "stream \(j): PTS off by \(w) s (tolerance \(tolerance))")
    }

    // Muxer invariants in the output as libavformat reads it back.
    var lastDTS: [Int: Int64] = [:]
    for p in produced.packets {
        guard let dts = p.dts else { continue }
        if let last = lastDTS[p.stream] {
            if ["mp4", "mov", "m4a"].contains(c.container) {
                #expect(dts > last, "stream \(p.stream): DTS not increasing at \(dts)")
            } else {
                #expect(dts >= last, "stream \(p.stream): DTS going back at \(dts)")
            }
        }
        lastDTS[p.stream] = dts
    }

    // Stream properties and tags (ffprobe).
    for (s, t) in zip(kept, b.streams) {
        #expect(FFprobe.string(s, "codec_name") == FFprobe.string(t, "codec_name"))
        for key in ["width", "height", "sample_rate", "channels"] {
            #expect(FFprobe.int(s, key) == FFprobe.int(t, key), "\(key)")
        }
        if let lang = FFprobe.tag(s, "language"), lang != "und", c.container != "ts" || FFprobe.string(s, "codec_type") != "video" {
            #expect(FFprobe.tag(t, "language") == lang, "language of stream \(FFprobe.int(s, "index") ?? -1)")
        }
        if ["mp4", "mov"].contains(c.container) {
            #expect(FFprobe.rotation(s) == FFprobe.rotation(t), "rotation")
            if FFprobe.string(t, "codec_name") == "hevc" {
                #expect(FFprobe.string(t, "codec_tag_string") == "hvc1", "HEVC must be tagged hvc1")
            }
        }
    }
    // MP4's "unset" creation time is 0, which reads back as absent.
    if ["mp4", "mov", "mkv", "m4a"].contains(c.container), let created = FFprobe.tag(a.format, "creation_time"),
       !created.hasPrefix("1970-01-01T00:00:00") {
        #expect(FFprobe.tag(b.format, "creation_time") == created, "creation_time")
    }
    // Duration as libavformat estimates it; for MPEG-TS (no stored duration)
    // the reference is ffmpeg's own remux.
    if let d0 = FFprobe.double((reference ?? a).format, "duration"), let d1 = FFprobe.double(b.format, "duration") {
        #expect(abs(d0 - d1) < 0.1, "duration \(d1) vs \(d0)")
    }

    // A second, independent demuxer reads it. Where GStreamer lacks a
    // plugin for a codec in this container, it must say the same of
    // ffmpeg's own remux.
    let gst = try GstDiscoverer(output)
    if !gst.ok, let missing = gst.missingPlugins {
        #expect(try GstDiscoverer(try ffmpegReference()).missingPlugins == missing,
                "GStreamer: \(missing) for ours only")
    } else {
        #expect(gst.ok, "GStreamer could not read \(c.testDescription): \(gst.output.prefix(500))")
    }
}
