import Foundation
@testable import Media
import Testing

/// The bulk remux's check of an edited index on its boxes (`IndexTags`,
/// `MovieLayout.holdsEdits`) against libavformat reading the same index:
/// it reads what the demuxer reads, it approves only what the demuxer's
/// reading approves, and where it cannot tell it says so.
@Suite("index tags")
struct IndexTagsTests {
    /// The stream keys the demuxer takes from boxes not modelled (the
    /// sample description, a timecode sample), never edited in the index.
    static let unreadStreamKeys: Set<String> = ["vendor_id", "encoder", "timecode", "reel_name"]

    /// A file's layout and its `ftyp`, or nil when the bulk copy would not take it.
    func layout(_ path: String, edits: IndexEdits? = nil) throws -> (MovieLayout, head: [UInt8])? {
        try layout(bytes: [UInt8](try #require(FileManager.default.contents(atPath: path))), edits: edits)
    }

    func layout(bytes: [UInt8], edits: IndexEdits? = nil) throws -> (MovieLayout, head: [UInt8])? {
        let read: (Int64, Int) -> [UInt8]? = { at, n in
            at >= 0 && Int(at) + n <= bytes.count ? Array(bytes[Int(at)..<(Int(at) + n)]) : nil
        }
        guard let layout = try? MovieLayout(fileSize: Int64(bytes.count), edits: edits, read: read) else { return nil }
        let ftyp = layout.boxes.first { $0.type == "ftyp" }
        return (layout, ftyp.map { Array(bytes[Int($0.start)..<Int($0.start + $0.size)]) } ?? [])
    }

    /// libavformat's reading of an index (its sample tables emptied).
    func demuxed(_ index: [UInt8]) throws -> InputFile {
        try InputFile(memory: MemoryInput(index), name: "index", packetsOnly: true, format: "mov")
    }

    func name(_ path: String) -> String { (path as NSString).lastPathComponent }

    /// The fixtures, the real media and the device recordings (an iPhone's MOV, a GoPro's MP4…).
    static var files: [String] {
        let devices = MemoryIOTests.fixtures.deletingLastPathComponent().appendingPathComponent("Tests/Fixtures/devices")
        let recorded = ((try? FileManager.default.contentsOfDirectory(atPath: devices.path)) ?? [])
            .filter { ["mp4", "mov"].contains(($0 as NSString).pathExtension.lowercased()) }
            .sorted().map { devices.appendingPathComponent($0).path }
        return StreamIndexTests.files + recorded
    }

    /// Whether tags read from the boxes are those libavformat read (values
    /// kept as bytes match any value), but for the keys it takes from elsewhere.
    func agree(_ mine: IndexTags.Tags, _ theirs: [(key: String, value: String)], unread: Set<String>) -> Bool {
        let kept = theirs.filter { !unread.contains($0.key.lowercased()) }
        return mine.count == kept.count && mine.allSatisfy { m in
            kept.contains { $0.key == m.key && (m.value.hasPrefix("\u{0}") || $0.value == m.value) }
        }
    }

    /// Every key and value read from the boxes is libavformat's, but for
    /// values kept as bytes (whose keys must still be there) and the keys
    /// it takes from elsewhere.
    @Test func readsWhatTheDemuxerReads() throws {
        var read: [String] = []
        for path in Self.files {
            guard let (layout, head) = try layout(path) else { continue }
            let isom = head.count >= 12 && Array(head[8..<12]) != Array("qt  ".utf8)
            guard let tags = IndexTags(moov: layout.original, isom: isom) else { continue }
            let input = try demuxed(layout.hollowIndex(rewritten: false, head: head))
            let theirs = input.tags
            #expect(agree(tags.format, theirs.format, unread: IndexTags.unreadFileKeys),
                    "\(name(path)): \(tags.format) vs \(theirs.format)")
            #expect(tags.streams.count == theirs.streams.count, "\(name(path))")
            for (mine, t) in zip(tags.streams, theirs.streams) {
                #expect(agree(mine, t, unread: Self.unreadStreamKeys), "\(name(path)): \(mine) vs \(t)")
            }
            let identity = MetadataEdits.displayMatrix(0)
            if tags.movieMatrixIsIdentity {
                #expect(zip(tags.matrices, input.streams).allSatisfy { ($0 ?? identity) == ($1.displayMatrix ?? identity) },
                        "\(name(path))")
            }
            read.append(name(path))
        }
        for f in ["iphone_tags.mov", "android_tags.mp4", "timecode.mov", "aac44_mono.m4a", "rotated90.mp4",
                  "h264_bframes_2997_aac48_stereo.mp4", "birds_handbrake_bframes.mp4",
                  "iphone14pro_dv84_hlg_720p_mebx.MOV", "gopro_max_heromode_gpmd.mp4"] {
            #expect(read.contains(f), "\(f) is not read from its boxes")
        }
        // Cover art and `----` items are left to libavformat.
        #expect(!read.contains("itunes_tags_cover.m4a"))
    }

    /// Edits made in the index and checked on its boxes: approved only
    /// where libavformat's reading of the new index holds what it would be
    /// given (as the bulk remux checks it), and approved for the files and
    /// edits it reads.
    @Test(arguments: [
        ("h264_bframes_2997_aac48_stereo.mp4", true),
        ("iphone_tags.mov", true), ("android_tags.mp4", true), ("timecode.mov", true), ("aac44_mono.m4a", true),
        ("rotated90.mp4", true), ("birds_handbrake_bframes.mp4", true), ("itunes_tags_cover.m4a", false),
        ("iphone14pro_dv84_hlg_720p_mebx.MOV", true), ("gopro_max_heromode_gpmd.mp4", true),
    ])
    func editsAreCheckedOnTheBoxes(file: String, readable: Bool) throws {
        let path = try #require(Self.files.first { name($0) == file })
        guard let (plain, head) = try layout(path) else { Issue.record("\(file) is not laid out"); return }
        let kinds: [EditedStream] = plain.sourceIndex.tracks.map {
            $0.knownStream.map { EditedStream($0.type, attachedPicture: false) } ?? .other
        }
        let quickTime = head.count < 12 || Array(head[8..<12]) == Array("qt  ".utf8)
        let audio = kinds.firstIndex(of: .audio), video = kinds.firstIndex(of: .video)
        var cases: [(MetadataEdits, IndexEdits)] = []
        func add(_ tags: [(Int?, String, String?)], rotation: Int? = nil, time: String? = nil) {
            var m = MetadataEdits(), e = IndexEdits(family: quickTime ? .quickTime : .iso)
            for (stream, key, value) in tags {
                m.tags.append(MetadataEdits.Tag(streams: stream.map { .index($0) }, key: key, value: value))
                if let stream { e.trackTags[stream, default: []].append((key, value)) } else { e.fileTags.append((key, value)) }
            }
            m.rotation = rotation
            if let rotation { for j in kinds.indices where kinds[j] == .video { e.matrices[j] = MetadataEdits.displayMatrix(rotation) } }
            m.creationTime = time
            e.creationTime = time.flatMap(MetadataEdits.epochSeconds)
            e.creationTimeText = time
            cases.append((m, e))
        }
        add([(nil, "title", "A title"), (nil, "artist", "Ann")])
        add([(nil, "comment", nil), (nil, "newkey", "v")], time: "2031-01-02T03:04:05.000000Z")
        add([(nil, "com.apple.quicktime.make", "Foo"), (nil, "encoder", "Grüße ✓")])
        if let audio { add([(audio, "language", "fra"), (audio, "handler_name", "Voice")]) }
        if let video { add([(video, "handler_name", "Camera"), (nil, "title", nil)], rotation: 90) }
        add([(nil, "major_brand", "abcd")])
        var approved = 0
        for (metadata, edits) in cases {
            guard let (edited, _) = try layout(path, edits: edits) else { continue }
            let boxes = edited.holdsEdits(metadata, streams: kinds, head: head)
            guard boxes else { continue }
            approved += 1
            // What libavformat reads of the new index is what it would be given.
            let old = try demuxed(plain.hollowIndex(rewritten: false, head: head))
            let new = try demuxed(edited.hollowIndex(rewritten: true, head: head))
            let wanted = try metadata.applied(to: old.tags, streams: kinds)
            #expect(TagCheck.sameTags(new.tags.format, wanted.format), "\(file) \(metadata): \(new.tags.format)")
            for (got, want) in zip(new.tags.streams, wanted.streams) {
                #expect(TagCheck.sameTags(got, want), "\(file) \(metadata): \(got) vs \(want)")
            }
            let identity = MetadataEdits.displayMatrix(0)
            for (j, s) in new.streams.enumerated() {
                let want = metadata.rotation.flatMap { kinds[j] == .video ? MetadataEdits.displayMatrix($0) : nil }
                    ?? old.streams[j].displayMatrix
                #expect((want ?? identity) == (s.displayMatrix ?? identity), "\(file) \(metadata): stream \(j)")
            }
            #expect(!metadata.tags.contains { $0.key == "major_brand" }, "a brand is not edited in the index")
        }
        if readable {
            #expect(approved >= cases.count - 2, "\(file): \(approved) of \(cases.count) approved on the boxes")
        } else {
            #expect(approved == 0)
        }
    }

    /// A file whose index (last in it) has a second user data list holding `extra`.
    static func withUserData(_ bytes: [UInt8], _ extra: [UInt8]) throws -> [UInt8] {
        var at = 0, moov: Int?
        while at + 8 <= bytes.count {
            let size = bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) }
            if bytes[(at + 4)..<(at + 8)].elementsEqual("moov".utf8) { moov = at }
            try #require(size >= 8)
            at += size
        }
        let m = try #require(moov)
        let size = bytes.count - m + 8 + extra.count
        return Array(bytes[..<m]) + MovieLayoutTests.be(UInt64(size), 4) + Array(bytes[(m + 4)...])
            + MovieLayoutTests.box("udta", extra)
    }

    /// A user data string in an old Macintosh language (French, code 1):
    /// the key the demuxer adds for its language is not read here, so the
    /// check is left to libavformat, which approves the edit.
    @Test func aStringInAnOldMacintoshLanguageIsLeftToLibavformat() throws {
        let path = try #require(StreamIndexTests.files.first { name($0) == "android_tags.mp4" })
        let text = Array("Bonjour".utf8)
        let comment = MovieLayoutTests.be(UInt64(8 + 4 + text.count), 4) + [0xa9, 0x63, 0x6d, 0x74]
            + MovieLayoutTests.be(UInt64(text.count), 2) + [0, 1] + text
        let bytes = try Self.withUserData([UInt8](try #require(FileManager.default.contents(atPath: path))), comment)
        var metadata = MetadataEdits(), edits = IndexEdits(family: .iso)
        metadata.tags = [MetadataEdits.Tag(key: "title", value: "X")]
        edits.fileTags = [("title", "X")]
        let (plain, head) = try #require(try layout(bytes: bytes))
        let (edited, _) = try #require(try layout(bytes: bytes, edits: edits))
        #expect(IndexTags(moov: plain.original, isom: true) == nil)
        #expect(!edited.holdsEdits(metadata, streams: [.video, .audio], head: head))
        let old = try demuxed(plain.hollowIndex(rewritten: false, head: head))
        let new = try demuxed(edited.hollowIndex(rewritten: true, head: head))
        #expect(old.tags.format.contains { $0.key == "comment" && $0.value == "Bonjour" })
        let wanted = try metadata.applied(to: old.tags, streams: [.video, .audio])
        #expect(TagCheck.sameTags(new.tags.format, wanted.format), "\(new.tags.format)")
    }

    /// User data strings and items read each the demuxer's way, as
    /// libavformat reads them: an old Macintosh English string (also keyed
    /// with "-eng"), one of no language, a raw firmware string, a length past
    /// its box (the whole box is the text), parsed items (track number,
    /// season), text and number items, an item of a type skipped.
    @Test func userDataIsReadTheDemuxersWay() throws {
        typealias L = MovieLayoutTests
        func string(_ type: [UInt8], _ text: String, language: UInt64, length: Int? = nil) -> [UInt8] {
            let payload = L.be(UInt64(length ?? text.utf8.count), 2) + L.be(language, 2) + Array(text.utf8)
            return L.be(UInt64(payload.count + 8), 4) + type + payload
        }
        func item(_ type: [UInt8], _ value: [UInt8], dataType: UInt64) -> [UInt8] {
            let data = L.box("data", L.be(dataType, 4) + [0, 0, 0, 0] + value)
            return L.be(UInt64(data.count + 8), 4) + type + data
        }
        let c: UInt8 = 0xa9
        let items = item(Array("trkn".utf8), [0, 0, 0, 3, 0, 9, 0, 0], dataType: 0) + item(Array("tvsn".utf8), [0, 0, 0, 2], dataType: 21)
            + item([c] + Array("gen".utf8), Array("Jazz".utf8), dataType: 1) + item([c] + Array("too".utf8), [1, 2], dataType: 2)
            + item([c] + Array("cmt".utf8), [0, 7], dataType: 22) + item(Array("desc".utf8), Array("Plain".utf8), dataType: 0)
        let meta = L.box("meta", [0, 0, 0, 0] + IndexEditsTests.hdlr("mdir") + L.box("ilst", items))
        let extra = string([c] + Array("day".utf8), "2024", language: 0) + string([c] + Array("enc".utf8), "x", language: 0x7fff)
            + IndexEditsTests.raw(Array("FIRM".utf8), Array("HD9.01".utf8))
            + string([c] + Array("nam".utf8), "Long", language: 0x15c7, length: 300) + meta
        let path = try #require(StreamIndexTests.files.first { name($0) == "android_tags.mp4" })
        let bytes = try Self.withUserData([UInt8](try #require(FileManager.default.contents(atPath: path))), extra)
        let (layout, head) = try #require(try layout(bytes: bytes))
        let tags = try #require(IndexTags(moov: layout.original, isom: true))
        let theirs = try demuxed(layout.hollowIndex(rewritten: false, head: head)).tags
        #expect(agree(tags.format, theirs.format, unread: IndexTags.unreadFileKeys), "\(tags.format) vs \(theirs.format)")
        for key in ["date", "date-eng", "encoder", "firmware", "title", "track", "season_number", "genre", "comment", "description"] {
            #expect(tags.format.contains { $0.key == key }, "\(key)")
        }
    }
}
