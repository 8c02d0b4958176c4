import ISOBMFF
import Testing

/// The version rules and hostile-input limits of the typed boxes and the
/// tree, on boxes built byte by byte.
@Suite("ISOBMFF box values")
struct BoxValueTests {
    static func be(_ v: UInt64, _ n: Int) -> [UInt8] { (0..<n).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) } }
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { be(UInt64(payload.count + 8), 4) + Array(type.utf8) + payload }

    @Test func editListMovesToVersion1OnlyWhenAnEntryNeedsIt() throws {
        var elst = EditList(entries: [EditList.Entry(segmentDuration: 1000, mediaTime: -1)])
        #expect(elst.encode().count == 8 + 12 && elst.encode()[0] == 0)
        #expect(try EditList(parsing: elst.encode()[...], type: "elst") == elst)
        elst.entries.append(EditList.Entry(segmentDuration: 1 << 33, mediaTime: 0))
        let wide = elst.encode()
        #expect(wide[0] == 1 && wide.count == 8 + 2 * 20)
        let back = try EditList(parsing: wide[...], type: "elst")
        #expect(back.entries == elst.entries && back.entries[0].mediaTime == -1)
    }

    @Test func headersMoveToVersion1ForA64BitDuration() throws {
        // An mdhd, version 0: times, time scale 48000, duration 96000, language 'und' (0x55c4).
        let v0 = [0, 0, 0, 0] + Self.be(1, 4) + Self.be(2, 4) + Self.be(48000, 4) + Self.be(96000, 4) + Self.be(0x55c4, 2) + [0, 0]
        var mdhd = try MediaHeader(parsing: v0[...], type: "mdhd")
        #expect(mdhd.timescale == 48000 && mdhd.duration == 96000 && mdhd.language == 0x55c4 && mdhd.encode() == v0)
        mdhd.duration = UInt64(UInt32.max) + 1
        let v1 = mdhd.encode()
        #expect(v1.count == 36 && v1[0] == 1)
        #expect(try MediaHeader(parsing: v1[...], type: "mdhd").duration == UInt64(UInt32.max) + 1)
    }

    @Test func chunkOffsetsWidenToCo64() throws {
        let stco = [0, 0, 0, 0] + Self.be(2, 4) + Self.be(48, 4) + Self.be(1000, 4)
        var offsets = try ChunkOffsets(parsing: stco[...], type: "stco")
        #expect(offsets.type == "stco" && offsets.offsets == [48, 1000] && offsets.encode() == stco)
        offsets.offsets[1] = 5 << 30
        #expect(offsets.type == "co64")
        #expect(offsets.encode() == [0, 0, 0, 0] + Self.be(2, 4) + Self.be(48, 8) + Self.be(5 << 30, 8))
    }

    @Test func countsBeyondThePayloadAreRefused() {
        // An stsz declaring 2^32-1 sizes in 12 bytes; an stts declaring a million entries in 8.
        #expect(throws: BoxError.fieldsCutShort("stsz", needs: 12 + 4 * Int(UInt32.max), has: 12)) {
            try SampleSizes(parsing: ([0, 0, 0, 0] + Self.be(0, 4) + Self.be(UInt64(UInt32.max), 4))[...], type: "stsz")
        }
        #expect(throws: BoxError.self) { try TimeToSample(parsing: ([0, 0, 0, 0] + Self.be(1_000_000, 4))[...], type: "stts") }
        #expect(throws: BoxError.unknownVersion("mvhd", 2)) { try MovieHeader(parsing: ([2] + [UInt8](repeating: 0, count: 120))[...], type: "mvhd") }
    }

    @Test func treeKeepsHeaderFormsTailsAndUnknownBoxes() throws {
        // moov holding: an mvhd-less unknown box with a 64-bit size, a udta ending with four zero bytes.
        let large = Self.be(1, 4) + Array("abcd".utf8) + Self.be(20, 8) + [1, 2, 3, 4]
        let name = Self.be(13, 4) + [0xa9, 0x6e, 0x61, 0x6d] + [0, 1, 0, 0, 65]  // '©nam', its first byte not ASCII
        let udta = Self.box("udta", name + [0, 0, 0, 0])
        let moov = Self.box("moov", large + udta)
        let (boxes, tail) = try BoxNode.parse(moov[...])
        #expect(boxes.count == 1 && tail.isEmpty)
        #expect(boxes[0].children?[0].sizeField == .large && boxes[0].children?[1].children?.count == 1)
        #expect(boxes[0].encoded() == moov)
    }

    @Test func nestingAndCountLimitsHold() {
        var deep = Self.box("trak", [])
        for _ in 0..<BoxNode.depthLimit { deep = Self.box("trak", deep) }
        #expect(throws: BoxError.tooDeep(limit: BoxNode.depthLimit)) { try BoxNode.parse(deep[...]) }
        // A udta (kept as bytes when its children do not parse) does not hide a nesting past the limit.
        var lenient = Self.box("udta", [])
        for _ in 0..<BoxNode.depthLimit { lenient = Self.box("udta", lenient) }
        #expect(throws: BoxError.tooDeep(limit: BoxNode.depthLimit)) { try BoxNode.parse(lenient[...]) }
        #expect(throws: BoxError.runsPastParent("moov", at: 0)) { try BoxNode.parse((Self.be(100, 4) + Array("moov".utf8))[...]) }
        #expect(throws: BoxError.endsInsideHeader(at: 8)) { try BoxNode.parse((Self.box("free", []) + [1, 2, 3])[...]) }
    }

    @Test func sampleEntriesKeepTheirFieldsAndBoxes() throws {
        // An stsd of one avc1 entry: 78 bytes of video fields, an avcC, a pasp, four zero bytes.
        let fields = [UInt8](repeating: 0, count: 6) + Self.be(1, 2) + [UInt8](repeating: 7, count: 70)
        let avc1 = Self.box("avc1", fields + Self.box("avcC", [1, 2, 3]) + Self.box("pasp", Self.be(1, 4) + Self.be(1, 4)) + [0, 0, 0, 0])
        let stsd = [0, 0, 0, 0] + Self.be(1, 4) + avc1
        var table = try SampleDescriptionTable(parsing: stsd[...], type: "stsd")
        #expect(table.entries.count == 1 && table.encode() == stsd)
        var entry = try SampleEntry(table.entries[0], handler: "vide")
        #expect(entry.fields == fields && entry.boxes.map(\.type) == ["avcC", "pasp"] && entry.tail.count == 4)
        #expect(entry.box.encoded() == avc1)
        entry.boxes.append(BoxNode("dvvC", payload: [9]))
        table.entries.append(entry.box)
        let two = try SampleDescriptionTable(parsing: table.encode()[...], type: "stsd")
        let added = try SampleEntry(two.entries[1], handler: "vide")
        #expect(two.entries.count == 2 && added.child("dvvC")?.payload == [9])
        // A count past the entries there are is refused.
        #expect(throws: BoxError.self) { try SampleDescriptionTable(parsing: ([0, 0, 0, 0] + Self.be(2, 4) + avc1)[...], type: "stsd") }
    }

    @Test func timedMetadataKeyTableRoundTripsWithItsLocalIDs() throws {
        // A mebx entry's keys as an iPhone writes them: no version or count, one box per key whose
        // type is its local id (3 before 1 here), each a keyd (namespace, key) and a dtyp.
        func key(_ id: UInt64, _ namespace: String, _ name: String) -> [UInt8] {
            let inner = Self.box("keyd", Array((namespace + name).utf8)) + Self.box("dtyp", Self.be(0, 4) + Self.be(1, 4))
            return Self.be(UInt64(inner.count + 8), 4) + Self.be(id, 4) + inner
        }
        let payload = key(3, "fiel", "com.apple.quicktime.detected-face") + key(1, "mdta", "com.apple.quicktime.video-orientation")
        let table = try TimedMetadataKeys(parsing: payload[...])
        #expect(table.localIDs == [3, 1] && table.encode() == payload)
        #expect(table.declarations.map { $0?.namespace } == ["fiel", "mdta"])
        #expect(table.declarations[1].map { String(decoding: $0.value, as: UTF8.self) } == "com.apple.quicktime.video-orientation")
        // A key box running past the table is refused.
        #expect(throws: BoxError.self) { try TimedMetadataKeys(parsing: (payload + Self.be(40, 4) + Self.be(2, 4))[...]) }
    }

    @Test func metadataListsReadAsTheDemuxerReadsThem() throws {
        // A QuickTime meta (no version and flags): hdlr mdta, keys of one name, an ilst item 1 of UTF-8 text.
        let hdlr = Self.box("hdlr", [0, 0, 0, 0, 0, 0, 0, 0] + Array("mdta".utf8) + [UInt8](repeating: 0, count: 13))
        let keys = Self.box("keys", [0, 0, 0, 0] + Self.be(1, 4) + Self.be(8 + 24, 4) + Array("mdta".utf8) + Array("com.apple.quicktime.make".utf8))
        let data = Self.box("data", Self.be(1, 4) + [0, 0, 0, 0] + Array("Apple".utf8))
        let ilst = Self.box("ilst", Self.be(UInt64(8 + data.count), 4) + Self.be(1, 4) + data)
        let payload = hdlr + keys + ilst
        let meta = try Metadata(parsing: payload[...], type: "meta")
        #expect(meta.list.prefix.isEmpty && meta.handler == "mdta" && meta.encode() == payload)
        let keysBox = try #require(meta.list.first("keys")), ilstBox = try #require(meta.list.first("ilst"))
        #expect(try MetadataKeys(keysBox).keys.map(\.name) == ["com.apple.quicktime.make"])
        let item = try #require(try ItemList(ilstBox).list.boxes.first)
        let dataBox = try #require(BoxNode.first(of: item.payload))
        let value = try ItemData(dataBox)
        #expect(item.type.rawValue == 1 && value.valueType == 1 && value.value == Array("Apple".utf8))
        #expect(ItemData(text: "Apple").box.encoded() == data)
        // A user data string and its packed language.
        let und = try #require(MediaHeader.packedLanguage("und"))
        #expect(und == 0x55c4 && UserDataText("Hi", language: und).encode() == [0, 2, 0x55, 0xc4, 72, 105])
    }

    @Test func trackReferencesAndASizeOfZeroOnlyLast() throws {
        let tref = Self.box("cdsc", Self.be(1, 4)) + Self.box("chap", Self.be(2, 4) + Self.be(3, 4))
        let refs = try TrackReferences(parsing: tref[...], type: "tref")
        #expect(refs.references.map(\.trackIDs) == [[1], [2, 3]] && refs.encode() == tref)
        // A box of size 0 (to the end) keeps it while it is last; one put after it gets its size written.
        let toEnd = Self.be(0, 4) + Array("free".utf8) + [1, 2]
        var list = try BoxList(parsing: toEnd[...], prefix: 0, type: "udta")
        #expect(list.boxes[0].sizeField == .toEnd && list.encode() == toEnd)
        list.boxes.append(BoxNode("abcd"))
        #expect(list.encode() == Self.box("free", [1, 2]) + Self.box("abcd", []))
    }
}
