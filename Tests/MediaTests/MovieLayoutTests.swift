import ISOBMFF
import Media
import Testing

/// `MovieLayout` on index bytes built here: the index moved in front, each
/// chunk offset moved by as much as its box moved, an `stco` widened to
/// `co64` when an offset passes 4 GiB, and the files it refuses.
@Suite("MovieLayout")
struct MovieLayoutTests {
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        be(UInt64(payload.count + 8), 4) + Array(type.utf8) + payload
    }
    static func be(_ v: UInt64, _ n: Int) -> [UInt8] { (0..<n).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) } }
    static func stco(_ offsets: [UInt64]) -> [UInt8] {
        box("stco", [0, 0, 0, 0] + be(UInt64(offsets.count), 4) + offsets.flatMap { be($0, 4) })
    }
    static func moov(_ table: [UInt8], entry: String = "avc1") -> [UInt8] {
        let stsd = box("stsd", [0, 0, 0, 0, 0, 0, 0, 1] + box(entry, [UInt8](repeating: 0, count: 8)))
        return box("moov", box("mvhd", [UInt8](repeating: 0, count: 100))
            + box("trak", box("mdia", box("minf", box("stbl", stsd + table)))))
    }

    /// The offsets of the (only) chunk offset table in an index.
    static func offsets(_ index: [UInt8]) -> (type: String, values: [UInt64])? {
        for i in 0..<(index.count - 8) {
            let t = String(decoding: index[(i + 4)..<(i + 8)], as: UTF8.self)
            guard t == "stco" || t == "co64" else { continue }
            let n = Int(index[(i + 12)..<(i + 16)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            let w = t == "co64" ? 8 : 4
            let values = (0..<n).map { k in
                index[(i + 16 + k * w)..<(i + 16 + (k + 1) * w)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            }
            return (t, values)
        }
        return nil
    }

    func layout(_ file: [UInt8]) throws(MovieLayout.Refusal) -> MovieLayout {
        try MovieLayout(fileSize: Int64(file.count)) { offset, count in
            guard offset < file.count else { return nil }
            return Array(file[Int(offset)..<min(file.count, Int(offset) + count)])
        }
    }

    @Test("index at the end: moved in front, offsets moved by its size")
    func moveToFront() throws {
        let ftyp = Self.box("ftyp", Array("isom".utf8) + [0, 0, 2, 0])
        let mdat = Self.box("mdat", [UInt8](repeating: 7, count: 100))
        let first = UInt64(ftyp.count + 8), second = first + 40
        let moov = Self.moov(Self.stco([first, second]))
        let l = try layout(ftyp + mdat + moov)
        #expect(l.pieces == [.input(start: 0, count: Int64(ftyp.count)), .index,
                             .input(start: Int64(ftyp.count), count: Int64(mdat.count))])
        #expect(l.index.count == moov.count)
        #expect(Self.offsets(l.index)! == ("stco", [first + UInt64(moov.count), second + UInt64(moov.count)]))
        #expect(l.widened == 0)
        #expect(!l.indexAlreadyInFront)
    }

    @Test("aligned: a free box after the index puts the media data where it was within a page", arguments: [0, 3, 100, 4000])
    func alignedToPages(extra: Int) throws {
        let ftyp = Self.box("ftyp", Array("isom".utf8) + [0, 0, 2, 0] + [UInt8](repeating: 0, count: extra))
        let mdat = Self.box("mdat", [UInt8](repeating: 7, count: 100))
        let first = UInt64(ftyp.count + 8)
        let moov = Self.moov(Self.stco([first]))
        let file = ftyp + mdat + moov
        let l = try MovieLayout(fileSize: Int64(file.count), alignment: 4096) { offset, count in
            guard offset < file.count else { return nil }
            return Array(file[Int(offset)..<min(file.count, Int(offset) + count)])
        }
        // Where the media data box lands in the output, and its place in a page as in the input.
        let landing = ftyp.count + l.index.count
        #expect(landing % 4096 == ftyp.count % 4096)
        let pad = l.index.count - moov.count
        #expect(pad == 0 || pad >= 8)
        if pad > 0 {
            #expect(Array(l.index[moov.count + 4..<moov.count + 8]) == Array("free".utf8))
        }
        // The chunk offset follows the data to its new place.
        #expect(Self.offsets(Array(l.index[0..<moov.count]))! == ("stco", [UInt64(landing + 8)]))
    }

    @Test("index already in front: offsets unchanged, the bytes after copied as one range")
    func alreadyInFront() throws {
        let ftyp = Self.box("ftyp", Array("isom".utf8) + [0, 0, 2, 0])
        let free = Self.box("free", [])
        let probe = Self.moov(Self.stco([0]))
        let dataStart = UInt64(ftyp.count + probe.count + free.count + 8)
        let moov = Self.moov(Self.stco([dataStart]))
        let mdat = Self.box("mdat", [UInt8](repeating: 1, count: 32))
        let l = try layout(ftyp + moov + free + mdat)
        #expect(l.indexAlreadyInFront)
        #expect(Self.offsets(l.index)! == ("stco", [dataStart]))
        #expect(l.pieces == [.input(start: 0, count: Int64(ftyp.count)), .index,
                             .input(start: Int64(ftyp.count + moov.count), count: Int64(free.count + mdat.count))])
    }

    @Test("an offset pushed past 4 GiB widens its table to co64; the index grows and every offset follows")
    func widensPast4GiB() throws {
        let ftyp = Self.box("ftyp", Array("isom".utf8) + [0, 0, 2, 0])
        // A media data box of 4 GiB − 16 (large size), whose last chunk the
        // index's move in front pushes past 2^32.
        let mdatSize: UInt64 = (1 << 32) - 16
        let mdatHeader = Self.be(1, 4) + Array("mdat".utf8) + Self.be(mdatSize, 8)
        let last = UInt64(ftyp.count) + mdatSize - 100
        let moov = Self.moov(Self.stco([UInt64(ftyp.count + 16), last]))
        let size = Int64(ftyp.count) + Int64(mdatSize) + Int64(moov.count)
        let l = try MovieLayout(fileSize: size) { offset, count in
            if offset == 0 { return Array((ftyp + mdatHeader).prefix(count)) }
            if offset == Int64(ftyp.count) { return Array(mdatHeader.prefix(count)) }
            if offset == Int64(ftyp.count) + Int64(mdatSize) { return Array(moov.prefix(count)) }
            return nil
        }
        #expect(l.widened == 1)
        #expect(l.index.count == moov.count + 8)  // two entries, 4 bytes wider each
        let moved = UInt64(l.index.count)
        #expect(Self.offsets(l.index)! == ("co64", [UInt64(ftyp.count + 16) + moved, last + moved]))
    }

    @Test("refused: fragments, no index, offsets outside the media, sample-aux offsets")
    func refusals() throws {
        let ftyp = Self.box("ftyp", Array("isom".utf8) + [0, 0, 2, 0])
        let mdat = Self.box("mdat", [UInt8](repeating: 0, count: 16))
        #expect(throws: MovieLayout.Refusal.self) { try layout(ftyp + mdat) }
        #expect(throws: MovieLayout.Refusal.self) { try layout(ftyp + Self.moov(Self.stco([])) + Self.box("moof", []) + mdat) }
        #expect(throws: MovieLayout.Refusal.self) { try layout(ftyp + mdat + Self.moov(Self.stco([5000]))) }
        let saio = Self.box("moov", Self.box("trak", Self.box("mdia", Self.box("minf", Self.box("stbl", Self.box("saio", [0, 0, 0, 0]))))))
        #expect(throws: MovieLayout.Refusal.self) { try layout(ftyp + mdat + saio) }
        // A box running past the end of the file (a recording cut off).
        #expect(throws: MovieLayout.Refusal.self) { try layout(ftyp + Array(mdat.dropLast(4)) + Self.moov(Self.stco([]))) }
    }

    // MARK: sample tables

    static func stsz(uniform: UInt64 = 0, _ sizes: [UInt64], count: Int? = nil) -> [UInt8] {
        box("stsz", [0, 0, 0, 0] + be(uniform, 4) + be(UInt64(count ?? sizes.count), 4) + sizes.flatMap { be($0, 4) })
    }
    static func stsc(_ runs: [(first: UInt64, perChunk: UInt64)]) -> [UInt8] {
        box("stsc", [0, 0, 0, 0] + be(UInt64(runs.count), 4) + runs.flatMap { be($0.first, 4) + be($0.perChunk, 4) + be(1, 4) })
    }
    static func stts(_ count: UInt64) -> [UInt8] { box("stts", [0, 0, 0, 0, 0, 0, 0, 1] + be(count, 4) + be(1, 4)) }

    /// A file of one track whose chunks start at the given offsets of its mdat's payload.
    func file(tables: (_ base: UInt64) -> [UInt8], payload: Int = 100) -> [UInt8] {
        let ftyp = Self.box("ftyp", Array("isom".utf8) + [0, 0, 2, 0])
        let mdat = Self.box("mdat", [UInt8](repeating: 7, count: payload))
        return ftyp + mdat + Self.moov(tables(UInt64(ftyp.count + 8)))
    }

    @Test("sample tables: samples, bytes and the furthest chunk end, from runs of chunks")
    func sampleTables() throws {
        // Chunks of 2, 2 and 1 samples (two runs), sizes 10, 20 | 5, 5 | 30.
        let f = file { base in
            Self.stts(5) + Self.stsc([(1, 2), (3, 1)]) + Self.stsz([10, 20, 5, 5, 30]) + Self.stco([base, base + 30, base + 40])
        }
        let l = try layout(f)
        let t = try #require(l.tracks?.first)
        #expect(t.samples == 5 && t.bytes == 70)
        #expect(t.end == 16 + 8 + 70)
        #expect(t.lies(within: Int64(f.count)))
        // One size for all.
        let u = try layout(file { base in Self.stts(4) + Self.stsc([(1, 2)]) + Self.stsz(uniform: 9, [], count: 4) + Self.stco([base, base + 50]) })
        #expect(u.tracks?.first == TrackSamples(samples: 4, bytes: 36, end: 16 + 8 + 50 + 18))
    }

    @Test("sample tables: a chunk past the file's end is seen; tables that disagree give none")
    func sampleTablesCutOrBroken() throws {
        // The last chunk's 60 bytes run past the 100-byte media data and the file (the index after it).
        let f = file(tables: { base in Self.stts(2) + Self.stsc([(1, 1)]) + Self.stsz([40, 60]) + Self.stco([base, base + 90]) },
                     payload: 100)
        let t = try #require(try layout(f).tracks?.first)
        #expect(t.end == 16 + 8 + 90 + 60)
        #expect(!t.lies(within: 16 + 8 + 100))
        // More samples in chunks than the sizes list; fewer; no stsc.
        #expect(try layout(file { b in Self.stts(2) + Self.stsc([(1, 3)]) + Self.stsz([1, 2]) + Self.stco([b]) }).tracks == nil)
        #expect(try layout(file { b in Self.stts(3) + Self.stsc([(1, 1)]) + Self.stsz([1, 2, 3]) + Self.stco([b]) }).tracks == nil)
        #expect(try layout(file { b in Self.stts(1) + Self.stsz([1]) + Self.stco([b]) }).tracks == nil)
    }

    @Test("hollow index: every sample table emptied, the rest of the index as it was")
    func hollowIndex() throws {
        let f = file { base in Self.stts(2) + Self.stsc([(1, 2)]) + Self.stsz([40, 60]) + Self.stco([base]) }
        let l = try layout(f)
        let ftyp = Self.box("ftyp", Array("isom".utf8) + [0, 0, 2, 0])
        let hollow = l.hollowIndex(rewritten: false, head: ftyp)
        let stsd = Self.box("stsd", [0, 0, 0, 0, 0, 0, 0, 1] + Self.box("avc1", [UInt8](repeating: 0, count: 8)))
        let empty = Self.box("stts", [0, 0, 0, 0, 0, 0, 0, 0]) + Self.box("stsc", [0, 0, 0, 0, 0, 0, 0, 0])
            + Self.box("stsz", [UInt8](repeating: 0, count: 12)) + Self.box("stco", [0, 0, 0, 0, 0, 0, 0, 0])
        let expected = ftyp + Self.box("moov", Self.box("mvhd", [UInt8](repeating: 0, count: 100))
            + Self.box("trak", Self.box("mdia", Self.box("minf", Self.box("stbl", stsd + empty)))))
        #expect(hollow == expected)
    }
}
