import Foundation
import Testing

/// `avtool probe --json` checked against ffprobe.
@Suite("probe")
struct ProbeTests {
    func probeJSON(_ path: String) throws -> [String: Any] {
        let run = try Tool.avtool("probe", path, "--json")
        try #require(run.status == 0, "\(run)")
        return try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
    }

    func streams(_ j: [String: Any]) -> [[String: Any]] { j["streams"] as? [[String: Any]] ?? [] }

    @Test(arguments: ["h264_bframes_2997_aac48_stereo.mp4", "h264_vfr.mkv", "rotated90.mp4", "pcm_in_mov.mov",
                      "ts_wrap.ts", "hevc_aac.mp4", "aac44_mono.m4a", "h264_aac.mkv", "odd_size_321x241.mp4"])
    func agreesWithFFprobe(_ name: String) throws {
        let path = try Fixtures.path(name)
        let ours = try probeJSON(path)
        let ref = try FFprobe(path, countPackets: true)
        let s = streams(ours)
        try #require(s.count == ref.streams.count)
        for (o, r) in zip(s, ref.streams) {
            #expect(o["codec"] as? String == FFprobe.string(r, "codec_name"))
            #expect(o["type"] as? String == FFprobe.string(r, "codec_type"))
            #expect(o["packets"] as? Int == FFprobe.int(r, "nb_read_packets"), "packet count of \(name)")
            #expect(o["time_base"] as? String == FFprobe.string(r, "time_base"))
            if let v = o["video"] as? [String: Any] {
                #expect(v["width"] as? Int == FFprobe.int(r, "width"))
                #expect(v["height"] as? Int == FFprobe.int(r, "height"))
                #expect(v["frame_rate"] as? String == FFprobe.string(r, "r_frame_rate"))
                #expect(v["pixel_format"] as? String == FFprobe.string(r, "pix_fmt"))
                #expect((v["rotation"] as? Double).map { Int($0) } == FFprobe.rotation(r))
            }
            if let a = o["audio"] as? [String: Any] {
                #expect(a["sample_rate"] as? Int == FFprobe.int(r, "sample_rate"))
                #expect(a["channels"] as? Int == FFprobe.int(r, "channels"))
                #expect(a["channel_layout"] as? String == FFprobe.string(r, "channel_layout"))
            }
            #expect(o["language"] as? String == FFprobe.tag(r, "language"))
        }
        if let d = FFprobe.double(ref.format, "duration") {
            #expect(abs((ours["duration_seconds"] as? Double ?? -1) - d) < 0.001)
        }
        #expect(ours["format"] as? String == FFprobe.string(ref.format, "format_name"))
    }

    @Test func aacPriming() throws {
        let j = try probeJSON(try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4"))
        let audio = try #require(streams(j).first { $0["type"] as? String == "audio" }?["audio"] as? [String: Any])
        #expect(audio["priming_samples"] as? Int == 1024)
        let sync = try #require(j["sync"] as? [String: Any])
        #expect(sync["gap_count"] as? Int == 0)
    }

    /// The skew is checked against ffprobe's stream start times.
    @Test func audioStartingLate() throws {
        let path = try Fixtures.path("audio_starts_late.mp4")
        let j = try probeJSON(path)
        let skew = try #require((j["sync"] as? [String: Any])?["skew"] as? [String: Any])
        let us = try #require(skew["start_microseconds"] as? Int)
        let ref = try FFprobe(path)
        let v = try #require(ref.streams.first { FFprobe.string($0, "codec_type") == "video" })
        let a = try #require(ref.streams.first { FFprobe.string($0, "codec_type") == "audio" })
        let expected = (FFprobe.double(a, "start_time")! - FFprobe.double(v, "start_time")!) * 1e6
        #expect(abs(Double(us) - expected) <= 1000, "skew \(us) µs, ffprobe says \(expected)")
        #expect(abs(us - 500_000) <= 25_000)
    }

    /// About one second of audio is missing in the middle; the gap is found
    /// with its sample count (one AAC frame of slack for the cut position).
    @Test(arguments: ["audio_gap.mkv", "audio_gap.mp4"])
    func audioGap(_ name: String) throws {
        let j = try probeJSON(try Fixtures.path(name))
        let sync = try #require(j["sync"] as? [String: Any])
        #expect(sync["gap_count"] as? Int == 1, "\(sync)")
        let gap = try #require((sync["gaps"] as? [[String: Any]])?.first)
        let samples = try #require(gap["samples"] as? Int)
        #expect(abs(samples - 48000) <= 1024, "gap of \(samples) samples")
        let at = try #require(gap["at_seconds"] as? Double)
        #expect(abs(at - 3.0) < 0.05, "gap at \(at)")
    }

    @Test func tsWrapIsContinuous() throws {
        let j = try probeJSON(try Fixtures.path("ts_wrap.ts"))
        let sync = try #require(j["sync"] as? [String: Any])
        #expect(sync["gap_count"] as? Int == 0)
        let d = try #require(j["duration_seconds"] as? Double)
        #expect(d > 9 && d < 11, "duration \(d)")
    }

    @Test func jsonIsStable() throws {
        let path = try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4")
        let a = try Tool.avtool("probe", path, "--json"), b = try Tool.avtool("probe", path, "--json")
        #expect(a.stdout == b.stdout)
        // Keys are sorted: re-encoding with sorted keys changes nothing.
        let obj = try JSONSerialization.jsonObject(with: a.data)
        let again = try JSONSerialization.data(withJSONObject: obj, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
        #expect(String(decoding: again, as: UTF8.self).filter { !$0.isWhitespace }
                == a.stdout.filter { !$0.isWhitespace })
    }

    @Test func humanTable() throws {
        let path = try Fixtures.path("audio_gap.mp4")
        let run = try Tool.avtool("probe", path)
        #expect(run.status == 0)
        #expect(run.stdout.contains("#0 video h264"))
        #expect(run.stdout.contains("audio gaps: 1"))
        #expect(run.stdout.contains("A/V start skew"))
    }
}
