import Media
import Testing

/// `IndexEdits` made by `MovieLayout` on index bytes built here: each box
/// the demuxer reads a tag from rewritten in place, new ones where the
/// file's kind keeps them, every other byte as it was. (The end-to-end
/// check, ffprobe reading real files edited this way, is in avtoolTests.)
@Suite("IndexEdits")
struct IndexEditsTests {
    typealias L = MovieLayoutTests
    static let ftyp = L.box("ftyp", Array("isom".utf8) + [0, 0, 2, 0])
    static let mdat = L.box("mdat", [UInt8](repeating: 7, count: 16))

    static func string(_ type: [UInt8], _ text: String, language: UInt16 = 0x55c4) -> [UInt8] {
        let payload = L.be(UInt64(text.utf8.count), 2) + L.be(UInt64(language), 2) + Array(text.utf8)
        return L.be(UInt64(payload.count + 8), 4) + type + payload
    }
    static func raw(_ type: [UInt8], _ payload: [UInt8]) -> [UInt8] { L.be(UInt64(payload.count + 8), 4) + type + payload }
    static func data(_ text: String, type: UInt64 = 1, locale: UInt64 = 0) -> [UInt8] {
        L.box("data", L.be(type, 4) + L.be(locale, 4) + Array(text.utf8))
    }
    static func hdlr(_ type: String) -> [UInt8] { L.box("hdlr", [0, 0, 0, 0, 0, 0, 0, 0] + Array(type.utf8) + [UInt8](repeating: 0, count: 13)) }
    static let nam: [UInt8] = [0xa9] + Array("nam".utf8)

    /// The index a layout writes for `moov` (at the end of a file with no chunk offsets) with `edits`.
    func index(_ moov: [UInt8], _ edits: IndexEdits) throws(MovieLayout.Refusal) -> [UInt8] {
        let file = Self.ftyp + Self.mdat + moov
        return try MovieLayout(fileSize: Int64(file.count), edits: edits) { offset, count in
            guard offset < file.count else { return nil }
            return Array(file[Int(offset)..<min(file.count, Int(offset) + count)])
        }.index
    }

    func contains(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard b.count <= a.count else { return false }
        return (0...(a.count - b.count)).contains { Array(a[$0..<($0 + b.count)]) == b }
    }

    @Test("a box whose type is not ASCII (©xyz, a numbered item) is written back as it was")
    func typesKeptAsBytes() throws {
        let moov = L.box("moov", L.box("mvhd", [UInt8](repeating: 0, count: 100))
            + L.box("trak", Self.raw([0xa9] + Array("xyz".utf8), [1, 2, 3]) + Self.raw([0, 0, 0, 1], [4, 5])))
        #expect(try index(moov, IndexEdits(family: .iso)) == moov)
    }

    @Test("QuickTime user data: a string replaced with its language, one removed, one added; the list's zero end kept")
    func userDataStrings() throws {
        let cmt: [UInt8] = [0xa9] + Array("cmt".utf8), art: [UInt8] = [0xa9] + Array("ART".utf8)
        let mvhd = L.box("mvhd", [UInt8](repeating: 0, count: 100))
        let moov = L.box("moov", mvhd + L.box("udta", Self.string(Self.nam, "Old", language: 0x15c7)
            + Self.string(cmt, "gone") + [0, 0, 0, 0]))
        var edits = IndexEdits(family: .quickTime)
        edits.fileTags = [("Title", "New"), ("comment", nil), ("artist", "Ann")]
        let expected = L.box("moov", mvhd + L.box("udta", Self.string(Self.nam, "New", language: 0x15c7)
            + Self.string(art, "Ann") + [0, 0, 0, 0]))
        #expect(try index(moov, edits) == expected)
    }

    @Test("iTunes items: text replaced with its locale kept; a key the set lacks goes to metadata keys; a number is not rewritten as text")
    func iTunesItems() throws {
        let mvhd = L.box("mvhd", [UInt8](repeating: 0, count: 100))
        let trkn = L.box("trkn", Self.data("\u{0}\u{0}\u{0}\u{1}", type: 0))
        let moov = L.box("moov", mvhd + L.box("udta", L.box("meta", [0, 0, 0, 0] + Self.hdlr("mdir")
            + L.box("ilst", Self.raw(Self.nam, Self.data("Old", locale: 9)) + trkn))))
        var edits = IndexEdits(family: .iso)
        edits.fileTags = [("title", "New"), ("recorder", "R1")]
        let out = try index(moov, edits)
        #expect(contains(out, Self.raw(Self.nam, Self.data("New", locale: 9)) + trkn))
        #expect(!contains(out, Array("Old".utf8)))
        // The key in a keyed list of the movie's own (the user data's list holds iTunes items).
        #expect(contains(out, L.be(1, 4) + L.be(16, 4) + Array("mdtarecorder".utf8)))
        #expect(contains(out, Self.raw([0, 0, 0, 1], Self.data("R1"))))

        let number = L.box("moov", mvhd + L.box("udta", L.box("meta", [0, 0, 0, 0] + Self.hdlr("mdir")
            + L.box("ilst", Self.raw(Self.nam, Self.data("7", type: 21))))))
        var title = IndexEdits(family: .iso)
        title.fileTags = [("title", "x")]
        #expect(throws: MovieLayout.Refusal.self) { try index(number, title) }
    }

    @Test("metadata keys: a value replaced, a new key numbered after the others, a removed one's item gone")
    func metadataKeys() throws {
        let mvhd = L.box("mvhd", [UInt8](repeating: 0, count: 100))
        let keys = L.box("keys", [0, 0, 0, 0] + L.be(2, 4) + L.be(9, 4) + Array("mdtaa".utf8) + L.be(9, 4) + Array("mdtab".utf8))
        let moov = L.box("moov", mvhd + L.box("meta", [0, 0, 0, 0] + Self.hdlr("mdta") + keys
            + L.box("ilst", Self.raw([0, 0, 0, 1], Self.data("1")) + Self.raw([0, 0, 0, 2], Self.data("2")))))
        var edits = IndexEdits(family: .quickTime)
        edits.fileTags = [("A", "one"), ("b", nil), ("c", "3")]
        edits.creationTimeText = "2031-01-01T00:00:00.000000Z"
        let out = try index(moov, edits)
        // A creation time is a key only where the file has one.
        #expect(!contains(out, Array("creation_time".utf8)))
        #expect(contains(out, L.be(3, 4) + L.be(9, 4) + Array("mdtaa".utf8) + L.be(9, 4) + Array("mdtab".utf8)
            + L.be(9, 4) + Array("mdtac".utf8)))
        #expect(contains(out, L.box("ilst", Self.raw([0, 0, 0, 1], Self.data("one")) + Self.raw([0, 0, 0, 3], Self.data("3")))))
    }

    @Test("creation time in the movie, track and media headers; a language packed; a matrix in the track header")
    func headers() throws {
        let mvhd = L.box("mvhd", [UInt8](repeating: 0, count: 100))
        let tkhd = L.box("tkhd", [UInt8](repeating: 0, count: 84))
        let mdhd = L.box("mdhd", [UInt8](repeating: 0, count: 24))
        let moov = L.box("moov", mvhd + L.box("trak", tkhd + L.box("mdia", mdhd)))
        var edits = IndexEdits(family: .iso)
        edits.creationTime = 1_924_992_000  // 2031-01-01T00:00:00Z
        edits.trackTags = [0: [("language", "fra")]]
        edits.matrices = [0: [0, 65536, 0, -65536, 0, 0, 0, 0, 1 << 30]]
        let out = try index(moov, edits)
        #expect(out.count == moov.count)
        let since1904 = L.be(1_924_992_000 + 2_082_844_800, 4)
        let at = { (type: String) in (0...(out.count - 4)).first { String(decoding: out[$0..<($0 + 4)], as: UTF8.self) == type }! + 4 }
        for type in ["mvhd", "tkhd", "mdhd"] {
            let p = at(type)
            #expect(Array(out[(p + 4)..<(p + 12)]) == since1904 + since1904, "\(type)")
        }
        // f=6, r=18, a=1, five bits each.
        #expect(Array(out[(at("mdhd") + 20)..<(at("mdhd") + 22)]) == L.be(6 << 10 | 18 << 5 | 1, 2))
        #expect(Array(out[(at("tkhd") + 40)..<(at("tkhd") + 52)]) == L.be(0, 4) + L.be(65536, 4) + L.be(0, 4))
        #expect(Array(out[(at("tkhd") + 52)..<(at("tkhd") + 56)]) == L.be(UInt64(UInt32(bitPattern: -65536)), 4))

        // After February 2040 a version 0 header cannot hold the time: the
        // three headers move to version 1 (64-bit times), in the index.
        var late = IndexEdits(family: .iso)
        late.creationTime = 2_300_000_000
        let wide = try index(moov, late)
        #expect(wide.count == moov.count + 3 * 12)
        let since1904Wide = L.be(2_300_000_000 + 2_082_844_800, 8)
        for type in ["mvhd", "tkhd", "mdhd"] {
            let p = (0...(wide.count - 4)).first { String(decoding: wide[$0..<($0 + 4)], as: UTF8.self) == type }! + 4
            #expect(wide[p] == 1, "\(type) version")
            #expect(Array(wide[(p + 4)..<(p + 20)]) == since1904Wide + since1904Wide, "\(type)")
        }
        var badLanguage = IndexEdits(family: .iso)
        badLanguage.trackTags = [0: [("language", "French")]]
        #expect(throws: MovieLayout.Refusal.self) { try index(moov, badLanguage) }
    }
}
