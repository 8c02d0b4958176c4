import Foundation
import Testing

/// A camera recording made shorter as the camera would have written it had
/// it stopped earlier: its media data up to `limit`, its index listing only
/// the samples wholly before it (each track's first ones), the same
/// interleaving, sample entries and tags. Handles what cameras write: one
/// `stsc` run per track, `stco` offsets, `stts`, `stss`; the index after the
/// media data. A second reference of the same kind where there is only one
/// recording.
enum ShorterRecording {
    static func make(_ source: String, keepingMediaBefore limit: Int, to path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: source))
        var out = Data()
        for (type, range) in boxes(data, in: 0..<data.count) {
            switch type {
            case "mdat":
                var mdat = data.subdata(in: range.lowerBound..<min(limit, range.upperBound))
                mdat.replaceSubrange(0..<4, with: be32(mdat.count))
                out += mdat
            case "moov": out += try rewritten(data, range, limit: limit)
            default: out += data.subdata(in: range)
            }
        }
        try out.write(to: URL(fileURLWithPath: path))
    }

    /// The boxes in `range` of `d`: type and whole range (32-bit sizes).
    static func boxes(_ d: Data, in range: Range<Int>) -> [(String, Range<Int>)] {
        var out: [(String, Range<Int>)] = [], p = range.lowerBound
        while p + 8 <= range.upperBound {
            let size = Int(u32(d, p))
            guard size >= 8, p + size <= range.upperBound else { break }
            out.append((String(decoding: d[(p + 4)..<(p + 8)], as: UTF8.self), p..<(p + size)))
            p += size
        }
        return out
    }

    static func u32(_ d: Data, _ p: Int) -> UInt32 {
        d[p..<(p + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func be32(_ v: Int) -> Data {
        Data([UInt8(v >> 24 & 0xff), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)])
    }

    /// A container box with its children rewritten (a track's tables cut to its samples before `limit`).
    static func rewritten(_ d: Data, _ box: Range<Int>, limit: Int, kept: Int? = nil) throws -> Data {
        let type = String(decoding: d[(box.lowerBound + 4)..<(box.lowerBound + 8)], as: UTF8.self)
        var kept = kept
        if type == "stbl" { kept = try keptSamples(d, box, limit: limit) }
        var body = Data()
        for (child, range) in boxes(d, in: (box.lowerBound + 8)..<box.upperBound) {
            if ["trak", "mdia", "minf", "stbl"].contains(child) {
                body += try rewritten(d, range, limit: limit, kept: kept)
            } else if let k = kept, ["stsz", "stco", "stts", "stss"].contains(child) {
                body += table(child, d.subdata(in: range), keeping: k)
            } else {
                body += d.subdata(in: range)
            }
        }
        return be32(8 + body.count) + d.subdata(in: (box.lowerBound + 4)..<(box.lowerBound + 8)) + body
    }

    /// How many of a track's first samples lie wholly before `limit` (one sample per chunk, as cameras write).
    static func keptSamples(_ d: Data, _ stbl: Range<Int>, limit: Int) throws -> Int {
        let children = Dictionary(boxes(d, in: (stbl.lowerBound + 8)..<stbl.upperBound), uniquingKeysWith: { a, _ in a })
        let stsz = try #require(children["stsz"]), stco = try #require(children["stco"]), stsc = try #require(children["stsc"])
        try #require(u32(d, stsc.lowerBound + 12) == 1 && u32(d, stsc.lowerBound + 20) == 1, "one sample per chunk")
        let fixed = Int(u32(d, stsz.lowerBound + 12)), count = Int(u32(d, stsz.lowerBound + 16))
        var k = 0
        while k < count {
            let size = fixed > 0 ? fixed : Int(u32(d, stsz.lowerBound + 20 + 4 * k))
            guard Int(u32(d, stco.lowerBound + 16 + 4 * k)) + size <= limit else { break }
            k += 1
        }
        return k
    }

    /// A sample table box cut to its first `k` samples.
    static func table(_ type: String, _ box: Data, keeping k: Int) -> Data {
        var p = box.startIndex
        let head = box.subdata(in: (p + 4)..<(p + 12))  // type, version and flags
        var body = Data()
        switch type {
        case "stsz":
            let fixed = u32(box, p + 12)
            body += box.subdata(in: (p + 12)..<(p + 16)) + be32(k)
            if fixed == 0 { body += box.subdata(in: (p + 20)..<(p + 20 + 4 * k)) }
        case "stco":
            body += be32(k) + box.subdata(in: (p + 16)..<(p + 16 + 4 * k))
        case "stss":
            let n = Int(u32(box, p + 12))
            let kept = (0..<n).map { Int(u32(box, p + 16 + 4 * $0)) }.filter { $0 <= k }
            body += be32(kept.count)
            for s in kept { body += be32(s) }
        default:  // stts: (count, delta) runs up to k samples
            var runs: [(Int, Int)] = [], left = k
            p += 16
            while left > 0 && p + 8 <= box.endIndex {
                let n = min(Int(u32(box, p)), left)
                runs.append((n, Int(u32(box, p + 4))))
                left -= n
                p += 8
            }
            body += be32(runs.count)
            for (n, delta) in runs { body += be32(n) + be32(delta) }
        }
        return be32(4 + head.count + body.count) + head + body
    }
}
