import Foundation
import ISOBMFF
import Testing

/// The movie-fragment values on real fragmented files: real recordings
/// fragmented by GStreamer's `mp4mux` and `qtmux` and by FFmpeg's muxer
/// (`frag_keyframe+empty_moov`, and with `dash` its `sidx` boxes), a
/// fragment every 400 ms. Every box
/// comes back byte for byte, each one this module reads through its
/// fields, and the samples the fragments list — place, size, decode time
/// (so each duration but the last), sync — are the packets
/// `ffprobe -show_packets` reads from the same file. (Its packet durations
/// are not the fragments': an AAC packet's is its codec's 1024 samples, a
/// video packet of a fragment has none.)
@Suite("movie fragments against ffprobe")
struct FragmentOracleTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let source: String
        let maker: String
        var testDescription: String { "\(source) by \(maker)" }
    }

    static let cases = ["telegram_videonote_2017_irregular_aac.mp4", "iphone4s_ios5_baseline_rot90_vfr.mov"].flatMap { source in
        ["mp4mux", "qtmux", "frag_keyframe+empty_moov", "frag_keyframe+empty_moov+dash"].map { Case(source: source, maker: $0) }
    }

    /// `source` (H.264 and AAC) fragmented by `maker` into `out`.
    static func fragment(_ source: String, by maker: String, to out: String) {
        if maker.hasSuffix("mux") {
            _ = try? ReferencedRemuxTests.run("gst-launch-1.0", [
                "-q", "filesrc", "location=\(source)", "!", "qtdemux", "name=d", "d.video_0", "!", "queue", "!", "h264parse", "!", "mux.",
                "d.audio_0", "!", "queue", "!", "aacparse", "!", "mux.", maker, "name=mux", "fragment-duration=400", "!",
                "filesink", "location=\(out)",
            ])
        } else {
            // A fragment at each keyframe and every 400 ms (these recordings have few keyframes).
            _ = try? ReferencedRemuxTests.run("ffmpeg", ["-v", "error", "-y", "-i", source, "-map", "0", "-c", "copy", "-f", "mp4",
                                                         "-movflags", maker, "-frag_duration", "400000", out])
        }
    }

    /// Per stream of `path` by track id: ffprobe's packets in file order, as
    /// "position size dts sync".
    static func probed(_ path: String) throws -> [UInt32: [String]] {
        let json = try ReferencedRemuxTests.run("ffprobe", ["-v", "error", "-show_entries",
                                                            "stream=index,id,codec_type:packet=stream_index,pos,size,dts,flags",
                                                            "-of", "json", path])
        let top = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], "\(json)")
        var ids: [Int: UInt32] = [:]
        for s in top["streams"] as? [[String: Any]] ?? [] {
            guard let index = s["index"] as? Int, let id = (s["id"] as? String).flatMap({ UInt32($0.dropFirst(2), radix: 16) }) else { continue }
            ids[index] = id
        }
        var out: [UInt32: [String]] = [:]
        for p in top["packets"] as? [[String: Any]] ?? [] {
            guard let s = p["stream_index"] as? Int, let id = ids[s] else { continue }
            let flags = p["flags"] as? String ?? ""
            out[id, default: []].append("\(p["pos"] ?? "?") \(p["size"] ?? "?") \(p["dts"] ?? "?") \(flags.hasPrefix("K"))")
        }
        return out
    }

    @Test(arguments: cases)
    func samplesAreFFprobesPackets(_ c: Case) throws {
        let source = IndexReservationTests.repo.appendingPathComponent("Tests/Fixtures/wild/\(c.source)").path
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("avtool-frag-\(UUID().uuidString).mp4").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        Self.fragment(source, by: c.maker, to: out)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
        try #require(bytes.count > 1000, "\(c.maker) wrote no file")

        // Every box back, the typed ones through their fields.
        let (boxes, tail) = try BoxNode.parse(bytes[...])
        var encoded: [UInt8] = []
        BoxNode.append(boxes, to: &encoded)
        #expect(encoded + tail == bytes, "the tree")
        var typed: [FourCC: Int] = [:]
        for box in boxes.flatMap(\.all) {
            guard let back = try KnownBoxes.reencoded(box) else { continue }
            typed[box.type, default: 0] += 1
            #expect(back.type == box.type && back.payload[...] == box.content, "'\(box.type)'")
        }
        #expect(typed["moof"] ?? 0 > 1 && typed["trun"] ?? 0 > 1 && typed["trex"] == 2, "\(typed)")
        if c.maker.hasSuffix("dash") { #expect(typed["sidx"] ?? 0 > 0, "\(typed)") }

        // The samples, against ffprobe's packets (audio samples are all sync, as libavformat takes them).
        let audio = try #require(boxes.first { $0.type == "moov" }?.children?.filter { $0.type == "trak" }.compactMap { trak -> UInt32? in
            guard trak.descendant(["mdia", "hdlr"]).flatMap({ try? HandlerReference($0) })?.handlerType == "soun" else { return nil }
            return trak.child("tkhd").flatMap { try? TrackHeader($0) }?.trackID
        }.first)
        var listed: [UInt32: [String]] = [:]
        let walk = bytes.withUnsafeBytes { b in
            Fragments.walk(b) { id, samples in
                listed[id, default: []] += samples.map { s in
                    "\(s.offset.map { String($0) } ?? "nil") \(s.size) \(s.decodeTime) \(id == audio || SampleFlags.isSync(s.flags))"
                }
            }
        }
        #expect(walk?.fragments == typed["moof"] && walk?.unreadableAt == nil)
        let packets = try Self.probed(out)
        #expect(listed.keys.sorted() == packets.keys.sorted())
        for (id, expected) in packets.sorted(by: { $0.key < $1.key }) {
            let got = listed[id] ?? []
            #expect(got.count == expected.count, "track \(id): \(got.count) samples, ffprobe \(expected.count) packets")
            let first = got.indices.first { $0 < expected.count && got[$0] != expected[$0] }
            #expect(first == nil, "track \(id), sample \(first ?? 0): \(first.map { got[$0] } ?? "") where ffprobe reads \(first.map { expected[$0] } ?? "")")
        }
        let whole = bytes.withUnsafeBytes { FragmentCoverage($0) }
        #expect(whole?.tracks.allSatisfy { $0.inFile == $0.listed && $0.listed == packets[$0.trackID]?.count } == true, "\(String(describing: whole))")

        // No damage; the first traf of the third fragment given a track the moov does not declare: named.
        #expect(bytes.withUnsafeBytes { IndexDamage.find(in: $0) } == nil)
        let moofs = BoxWalker(BigEndianReader(bytes)).filter { $0.type == "moof" }
        try #require(moofs.count >= 3)
        let third = moofs[2]
        let traf = try #require(BoxWalker(BigEndianReader(bytes), in: third.payload).first { $0.type == "traf" })
        let tfhd = try #require(BoxWalker(BigEndianReader(bytes), in: traf.payload).first { $0.type == "tfhd" })
        var damaged = bytes
        damaged.replaceSubrange((tfhd.payload.lowerBound + 4)..<(tfhd.payload.lowerBound + 8), with: [0, 0, 0, 99])
        let damage = damaged.withUnsafeBytes { IndexDamage.find(in: $0) }
        #expect(damage?.hasPrefix("its fragment 3 ('moof' at byte \(third.start)) has a 'traf' for track 99, which the 'moov' does not declare") == true,
                "\(damage ?? "no damage")")
    }
}
