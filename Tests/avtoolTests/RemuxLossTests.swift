import Foundation
import Testing

/// Remuxes that exited 0 and lost something (issue 46), on recordings of the
/// kinds that showed it: checked with ffprobe's packets and data hashes.
@Suite("remux: nothing lost on the way")
struct RemuxLossTests {
    /// Per stream: codec name and every packet's "size:hash", in order.
    static func packets(_ path: String) throws -> [String: [String]] {
        let probe = try FFprobe(path), list = try PacketList(path)
        var r: [String: [String]] = [:]
        for (i, s) in probe.streams.enumerated() {
            r["\(i) \(FFprobe.string(s, "codec_name") ?? "?")"] = list.payloads[i] ?? []
        }
        return r
    }

    /// AC-3 (GStreamer's mp4mux; no camcorder AC-3 recording is kept here)
    /// and E-AC-3 beside H.264 into MOV and MP4, by every way the remux
    /// takes: the muxer parses their every packet (`dac3`/`dec3`), so a
    /// remux by reference, which gives it no payloads, lost the track.
    @Test(arguments: ["ac3", "eac3"], ["mov", "mp4"])
    func dolbyAudioKept(_ codec: String, _ container: String) throws {
        let scratch = try Scratch()
        let input: String
        if codec == "ac3" {
            input = try Fixtures.path("encoders/ac3_48k_51.mp4")
        } else {
            input = scratch.path("in.mp4")
            let made = try Tool.run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=2",
                                               "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
                                               "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "eac3", input])
            try #require(made.status == 0, "\(made)")
        }
        let expected = try Self.packets(input)
        try #require(expected.count == 2 && expected.keys.contains { $0.hasSuffix(codec) }, "\(expected.keys)")
        for flags in [[], ["--no-bulk"]] {
            let out = scratch.path("out\(flags.joined()).\(container)")
            let r = try Tool.avtool(["remux", input, out] + flags)
            try #require(r.status == 0, "\(r)")
            let got = try Self.packets(out)
            #expect(got.keys.sorted() == expected.keys.sorted(), "\(flags): streams \(got.keys.sorted())")
            for (stream, list) in expected {
                #expect(got[stream]?.count == list.count, "\(flags) stream \(stream): \(got[stream]?.count ?? 0) of \(list.count) packets")
                let same = got[stream] == list
                #expect(same, "\(flags) stream \(stream): the payloads differ")
            }
        }
    }
}
