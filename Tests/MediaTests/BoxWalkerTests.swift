import ISOBMFF
import Media
import Testing

/// The one big-endian reader and box walker: every field read in bounds or
/// not at all, and a walk that stops where no whole box starts, saying why
/// (the boxes are built here, byte by byte, as hostile files may hold them).
@Suite("BoxWalker")
struct BoxWalkerTests {
    typealias L = MovieLayoutTests

    /// A box whose header declares `size` (not the bytes given).
    static func declared(_ size: UInt32, _ type: String, _ payload: [UInt8]) -> [UInt8] {
        L.be(UInt64(size), 4) + Array(type.utf8) + payload
    }

    /// A box with a 64-bit size of `size` (header included).
    static func large(_ type: String, size: UInt64, _ payload: [UInt8]) -> [UInt8] {
        L.be(1, 4) + Array(type.utf8) + L.be(size, 8) + payload
    }

    static func walk(_ bytes: [UInt8], in range: Range<Int>? = nil) -> (boxes: [BoxHeader], stop: BoxWalkStop?) {
        var walker = BoxWalker(BigEndianReader(bytes), in: range)
        var boxes: [BoxHeader] = []
        while let b = walker.next() { boxes.append(b) }
        return (boxes, walker.stop)
    }

    @Test func readerReadsBigEndianFieldsInBounds() {
        let r = BigEndianReader([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09] as [UInt8])
        #expect(r.u8(at: 0) == 0x01)
        #expect(r.u16(at: 1) == 0x0203)
        #expect(r.u24(at: 1) == 0x02_0304)
        #expect(r.u32(at: 5) == 0x0607_0809)
        #expect(r.u64(at: 1) == 0x0203_0405_0607_0809)
        #expect(r.uint(at: 2, size: 0) == 0)
        #expect(r.length(at: 7, size: 2) == 0x0809)
        // Past the end, before the start, wider than 8 bytes: nil, not a trap.
        #expect(r.u32(at: 6) == nil)
        #expect(r.u8(at: 9) == nil)
        #expect(r.u8(at: -1) == nil)
        #expect(r.u16(at: Int.max) == nil)
        #expect(r.uint(at: 0, size: 9) == nil)
        #expect(r.uint(at: 0, size: -1) == nil)
        #expect(BigEndianReader([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff] as [UInt8]).length(at: 0, size: 8) == nil)
    }

    @Test func readerCountsFromASlicesStart() {
        let bytes: [UInt8] = [9, 9, 9, 0, 0, 1, 0]
        let r = BigEndianReader(bytes[3...])
        #expect(r.count == 4)
        #expect(r.u32(at: 0) == 256)
        #expect(r.u8(at: 4) == nil)
        #expect(Array(r.bytes(in: 2..<10)) == [1, 0])
        bytes.withUnsafeBytes { raw in
            #expect(BigEndianReader(raw).u24(at: 4) == 0x00_0100)
        }
    }

    @Test func fourCCsCompareAsNumbers() {
        let moov: FourCC = "moov"
        #expect(moov.rawValue == 0x6d6f_6f76)
        #expect(moov.description == "moov")
        #expect(moov.bytes == Array("moov".utf8))
        // QuickTime's user data strings: 0xA9, then three letters.
        let title: FourCC = "©nam"
        #expect(title.rawValue == 0xa96e_616d)
        #expect(title.description == "?nam")
        #expect(FourCC(rawValue: 1).description == "????")
        #expect(BigEndianReader(Array("xxmdat".utf8)).fourCC(at: 2) == "mdat")
    }

    @Test func walksBoxesOneAfterAnother() {
        let bytes = L.box("ftyp", [1, 2, 3, 4]) + L.box("free", []) + L.box("mdat", [7, 7])
        let (boxes, stop) = Self.walk(bytes)
        #expect(boxes.map(\.type) == ["ftyp", "free", "mdat"])
        #expect(boxes.map(\.start) == [0, 12, 20])
        #expect(boxes[0].payload == 8..<12 && boxes[1].payload == 20..<20 && boxes[2].end == bytes.count)
        #expect(stop == nil)
    }

    @Test func truncatedBoxStopsTheWalkAndIsReported() {
        let bytes = L.box("ftyp", [0, 0, 0, 0]) + Self.declared(1000, "mdat", [1, 2, 3])
        let (boxes, stop) = Self.walk(bytes)
        #expect(boxes.map(\.type) == ["ftyp"])
        #expect(stop == .cutShort(BoxHeader(type: "mdat", start: 12, headerSize: 8, size: 1000)))
        #expect(stop?.isCutShort == true)
    }

    @Test func sizeZeroRunsToTheEnd() {
        let bytes = L.box("ftyp", [0, 0, 0, 0]) + Self.declared(0, "mdat", [1, 2, 3, 4, 5])
        let (boxes, stop) = Self.walk(bytes)
        #expect(stop == nil)
        #expect(boxes.last == BoxHeader(type: "mdat", start: 12, headerSize: 8, size: 13, extendsToEnd: true))
        // Within a range, to the range's end.
        let inner = Self.walk(bytes, in: 12..<20)
        #expect(inner.boxes == [BoxHeader(type: "mdat", start: 12, headerSize: 8, size: 8, extendsToEnd: true)])
    }

    @Test func largeSizeIsRead() {
        let bytes = Self.large("mdat", size: 20, [1, 2, 3, 4]) + L.box("moov", [])
        let (boxes, stop) = Self.walk(bytes)
        #expect(stop == nil)
        #expect(boxes == [BoxHeader(type: "mdat", start: 0, headerSize: 16, size: 20),
                          BoxHeader(type: "moov", start: 20, headerSize: 8, size: 8)])
        #expect(boxes[0].payload == 16..<20)
    }

    @Test func sizesBelowTheHeaderAreMalformed() {
        for size in [2 as UInt32, 7] {
            let stop = Self.walk(Self.declared(size, "free", [0, 0, 0, 0])).stop
            #expect(stop == .malformed("free", at: 0, headerSize: 8, declared: UInt64(size)))
        }
        #expect(Self.walk(Self.large("mdat", size: 15, [0, 0])).stop == .malformed("mdat", at: 0, headerSize: 16, declared: 15))
        #expect(Self.walk(Self.large("mdat", size: 0, [])).stop == .malformed("mdat", at: 0, headerSize: 16, declared: 0))
        #expect(Self.walk(Self.large("mdat", size: .max, [])).stop == .malformed("mdat", at: 0, headerSize: 16, declared: .max))
        #expect(Self.walk(Self.large("mdat", size: .max, [])).stop?.isCutShort == false)
    }

    @Test func cutHeadersAndShortTails() {
        // A 64-bit size cut off.
        let cut = Self.walk(L.box("free", []) + L.be(1, 4) + Array("mdat".utf8) + [0, 0, 0])
        #expect(cut.boxes.count == 1 && cut.stop == .headerCutShort("mdat", at: 8) && cut.stop?.isCutShort == true)
        // Fewer bytes than a header: a tail (a QuickTime list's four zero bytes).
        let tail = Self.walk(L.box("free", []) + [0, 0, 0, 0])
        #expect(tail.boxes.count == 1 && tail.stop == .tail(at: 8) && tail.stop?.isCutShort == false)
        #expect(Self.walk([]).stop == nil && Self.walk([]).boxes.isEmpty)
    }

    @Test func nestedWalkWithinAPayload() throws {
        let trak = L.box("trak", L.box("tkhd", [0, 0, 0, 0]) + L.box("mdia", L.box("mdhd", [])))
        let bytes = L.box("moov", L.box("mvhd", [1]) + trak + L.box("trak", []))
        var top = BoxWalker(BigEndianReader(bytes))
        let first = top.next()
        let moov = try #require(first)
        var children = BoxWalker(BigEndianReader(bytes), in: moov.payload)
        #expect(children.next("trak")?.start == 17)
        #expect(children.next("trak")?.size == 8)
        #expect(children.next("trak") == nil && children.stop == nil)
        let inside = Self.walk(bytes, in: moov.payload)
        #expect(inside.boxes.map(\.type) == ["mvhd", "trak", "trak"])
        let mdia = try #require(Self.walk(bytes, in: inside.boxes[1].payload).boxes.last)
        #expect(Self.walk(bytes, in: mdia.payload).boxes == [BoxHeader(type: "mdhd", start: mdia.start + 8, headerSize: 8, size: 8)])
        // A child that runs past its parent is cut short there, though the bytes go on.
        let over = L.box("udta", Self.declared(40, "meta", [])) + [UInt8](repeating: 0, count: 40)
        #expect(Self.walk(over, in: 8..<16).stop == .cutShort(BoxHeader(type: "meta", start: 8, headerSize: 8, size: 40)))
    }

    @Test func topLevelBoxesOfAFileCutOff() {
        let ftyp = L.box("ftyp", Array("isom".utf8) + [0, 0, 2, 0])
        func boxes(_ bytes: [UInt8]) -> TopLevelBoxes { bytes.withUnsafeBytes { TopLevelBoxes($0) } }
        let cut = boxes(ftyp + Self.declared(1000, "mdat", [1, 2, 3]))
        #expect(cut.isISOBMFF && cut.cutShort && !cut.hasIndex && cut.lacksIndex)
        #expect(cut.mediaData == [24..<27])
        let open = boxes(ftyp + Self.declared(0, "mdat", [1, 2, 3]))
        #expect(open.cutShort && open.mediaData == [24..<27])
        // A 64-bit size of 0, as a recorder may leave it: to the end too.
        let openLarge = boxes(ftyp + Self.large("mdat", size: 0, [1, 2, 3]))
        #expect(openLarge.cutShort && openLarge.mediaData == [32..<35])
        let whole = boxes(ftyp + L.box("mdat", [1]) + L.box("moov", []))
        #expect(whole.hasIndex && !whole.cutShort && !whole.lacksIndex && whole.mediaData == [24..<25])
        let bad = boxes(ftyp + Self.declared(3, "mdat", [1, 2, 3]))
        #expect(!bad.cutShort && bad.mediaData.isEmpty)
        #expect(!boxes(Array("not a movie file".utf8)).isISOBMFF)
    }

    @Test func fileLevelWalkRefusesWhatIsNotWhole() throws {
        func top(_ file: [UInt8]) throws(MovieLayout.Refusal) -> [MovieLayout.TopBox] {
            try MovieLayout.topLevelBoxes(fileSize: Int64(file.count)) { offset, count in
                guard offset < file.count else { return nil }
                return Array(file[Int(offset)..<min(file.count, Int(offset) + count)])
            }
        }
        let ftyp = L.box("ftyp", [0, 0, 0, 0])
        #expect(try top(ftyp + Self.large("mdat", size: 20, [1, 2, 3, 4])).map(\.size) == [12, 20])
        let open = try #require(top(ftyp + Self.declared(0, "mdat", [1, 2])).last)
        #expect(open.type == "mdat" && open.start == 12 && open.size == 10)
        #expect(throws: MovieLayout.Refusal.self) { try top(ftyp + Self.declared(100, "mdat", [1])) }
        #expect(throws: MovieLayout.Refusal.self) { try top(ftyp + Self.large("mdat", size: 12, [1, 2, 3, 4])) }
        // Fewer bytes than a header after the last box are passed over, as
        // libavformat does (an iPhone 6s file ends with a text-mode copy's "\r\n").
        #expect(try top(ftyp + [0, 0, 0]).map(\.size) == [12])
        #expect(try top(ftyp + Array("\r\n".utf8)).map(\.type) == ["ftyp"])
        #expect(throws: MovieLayout.Refusal.self) { try top([0, 0, 0]) }
        #expect(throws: MovieLayout.Refusal.self) { try top(ftyp + L.be(1, 4) + Array("mdat".utf8) + [0, 0]) }
    }
}
