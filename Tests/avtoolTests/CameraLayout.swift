import Foundation
import Testing

/// A recording laid out as a camera with PCM and timed metadata writes it
/// (an iPhone Live Photo: H.264, 16-bit PCM, a `mebx` track): the video and
/// PCM tracks of a QuickTime file GStreamer's `qtmux` wrote, and the
/// per-frame `mebx` track of a real iPhone XR Live Photo (its 144-byte
/// samples repeated, one per video frame), their chunks in rounds: `frames`
/// video samples, the PCM up to where those end, as many `mebx` samples, in
/// the order `order` names (`"vam"`: video, audio, metadata). Every track's
/// `stsc` and `stco` are written for the new chunks; the index follows the
/// media data, as a camera writes it.
enum CameraLayout {
    static func make(_ source: String, order: String, frames: Int, to path: String) throws {
        let d = try Data(contentsOf: URL(fileURLWithPath: source))
        let phone = try Fixtures.wild("iphonexr_ios15_hevc_livephoto_rot90.mov")
        let x = try Data(contentsOf: URL(fileURLWithPath: phone))
        let own = try RepairCameraTests.samples(source), its = try RepairCameraTests.samples(phone)
        let video = try #require(own["video:avc1:1"]).map(\.bytes)
        let pcm = try #require(own.first { $0.key.hasPrefix("audio:") }?.value).reduce(Data()) { $0 + $1.bytes }
        let metadata = try #require(its["data:mebx:3"]).map(\.bytes)
        let frameBytes = 4, rate = 48000.0, fps = 30000.0 / 1001
        let top = ShorterRecording.boxes(d, in: 0..<d.count)
        let ftyp = try #require(top.first { $0.0 == "ftyp" }).1
        let base = ftyp.count + 8
        var mdat = Data(), chunks: [Character: [(offset: Int, count: Int)]] = ["v": [], "a": [], "m": []]
        var (v, a, m) = (0, 0, 0)
        while v < video.count {
            for c in order {
                let at = base + mdat.count
                switch c {
                case "v" where v < video.count:
                    let n = min(frames, video.count - v)
                    chunks["v"]!.append((at, n))
                    for s in video[v..<(v + n)] { mdat += s }
                    v += n
                case "m" where m < video.count:
                    let n = min(frames, video.count - m)
                    chunks["m"]!.append((at, n))
                    for k in m..<(m + n) { mdat += metadata[k % metadata.count] }
                    m += n
                case "a":
                    let n = min(Int((Double(v) / fps * rate).rounded()), pcm.count / frameBytes) - a
                    guard n > 0 else { continue }
                    chunks["a"]!.append((at, n))
                    mdat += pcm.subdata(in: (a * frameBytes)..<((a + n) * frameBytes))
                    a += n
                default: break
                }
            }
        }
        let moov = try #require(top.first { $0.0 == "moov" }).1
        let inMoov = ShorterRecording.boxes(d, in: (moov.lowerBound + 8)..<moov.upperBound)
        let mvhd = try #require(inMoov.first { $0.0 == "mvhd" }).1
        var header = d.subdata(in: mvhd)
        header.replaceSubrange((header.count - 4)..<header.count, with: ShorterRecording.be32(4))  // next track id
        let traks = inMoov.filter { $0.0 == "trak" }.map(\.1)
        let xmoov = try #require(ShorterRecording.boxes(x, in: 0..<x.count).first { $0.0 == "moov" }).1
        let xtraks = ShorterRecording.boxes(x, in: (xmoov.lowerBound + 8)..<xmoov.upperBound).filter { $0.0 == "trak" }.map(\.1)
        let frameCount = chunks["a"]!.reduce(0) { $0 + $1.count }
        var body = header
        let be32 = ShorterRecording.be32
        body += rebuilt(d, traks[0], chunks: chunks["v"]!) { _, _ in nil }
        // PCM: a sample is a sample frame (QuickTime's counted frames), each lasting a tick of 1/48000 s.
        body += rebuilt(d, traks[1], chunks: chunks["a"]!) { type, _ -> Data? in
            if type == "stsz" { return full("stsz", be32(1) + be32(frameCount)) }
            if type == "stts" { return full("stts", be32(1) + be32(frameCount) + be32(1)) }
            return nil
        }
        // The metadata: one sample a frame (20 ticks of 1/600 s), track 3, describing track 1.
        body += rebuilt(x, xtraks[4], chunks: chunks["m"]!) { type, whole -> Data? in
            var b = whole
            switch type {
            case "stsz": return full("stsz", be32(144) + be32(video.count))
            case "stts": return full("stts", be32(1) + be32(video.count) + be32(20))
            case "edts": return Data()
            case "tref": return box("tref", box("cdsc", be32(1)))
            case "tkhd": b.replaceSubrange(20..<24, with: be32(3))
            case "mdhd": b.replaceSubrange(24..<28, with: be32(20 * video.count))
            default: return nil
            }
            return b
        }
        let out = d.subdata(in: ftyp) + ShorterRecording.be32(8 + mdat.count) + Data("mdat".utf8) + mdat + box("moov", body)
        try out.write(to: URL(fileURLWithPath: path))
    }

    static func box(_ type: String, _ body: Data) -> Data { ShorterRecording.be32(8 + body.count) + Data(type.utf8) + body }

    /// A full box (version 0, no flags).
    static func full(_ type: String, _ body: Data) -> Data { box(type, Data(count: 4) + body) }

    /// A box of `d` with its containers' children rewritten: `stsc` and
    /// `stco` for `chunks` (each chunk's offset and samples), the rest as
    /// `replaced` gives (the child's type and whole box; nil: kept).
    static func rebuilt(_ d: Data, _ range: Range<Int>, chunks: [(offset: Int, count: Int)],
                        replaced: (String, Data) -> Data?) -> Data {
        let type = String(decoding: d[(range.lowerBound + 4)..<(range.lowerBound + 8)], as: UTF8.self)
        guard ["trak", "mdia", "minf", "stbl"].contains(type) else { return d.subdata(in: range) }
        var body = Data()
        for (child, r) in ShorterRecording.boxes(d, in: (range.lowerBound + 8)..<range.upperBound) {
            switch child {
            case "stsc":
                var runs: [(first: Int, count: Int)] = []
                for (k, c) in chunks.enumerated() where runs.last?.count != c.count { runs.append((k + 1, c.count)) }
                body += full("stsc", runs.reduce(ShorterRecording.be32(runs.count)) {
                    $0 + ShorterRecording.be32($1.first) + ShorterRecording.be32($1.count) + ShorterRecording.be32(1)
                })
            case "stco":
                body += full("stco", chunks.reduce(ShorterRecording.be32(chunks.count)) { $0 + ShorterRecording.be32($1.offset) })
            default:
                body += replaced(child, d.subdata(in: r)) ?? rebuilt(d, r, chunks: chunks, replaced: replaced)
            }
        }
        return box(type, body)
    }
}
