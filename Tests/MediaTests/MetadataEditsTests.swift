import Media
import Testing

/// `MetadataEdits.applied`: the one account of what `--metadata` and
/// `--creation-time` do to tags, which the muxer's way writes and the bulk
/// remux checks its index against.
@Suite("MetadataEdits.applied")
struct MetadataEditsTests {
    func edits(_ tags: [String], creation: String? = nil) throws -> MetadataEdits {
        var e = MetadataEdits()
        e.tags = try tags.map { (t: String) throws(MediaError) in try MetadataEdits.Tag(parsing: t) }
        e.creationTime = creation
        return e
    }

    func dict(_ list: [(key: String, value: String)]) -> [String: String] {
        Dictionary(list.map { ($0.key, $0.value) }, uniquingKeysWith: { _, b in b })
    }

    @Test("keys matched without regard to case; an empty value removes; s:v skips cover art; the creation time everywhere first")
    func applied() throws {
        let before = IntendedTags(format: [("TITLE", "old"), ("artist", "A"), ("creation_time", "2020-01-01T00:00:00.000000Z")],
                                  streams: [[("language", "eng")], [("language", "eng")], []])
        let kinds: [EditedStream] = [.video, .audio, .picture]
        let e = try edits(["title=new", "artist=", "s:v:language=fra", "s:1:handler_name=Voice", "creation_time=2022-02-02T00:00:00Z"],
                          creation: "2021-01-01T00:00:00.000000Z")
        let after = try e.applied(to: before, streams: kinds)
        #expect(dict(after.format) == ["title": "new", "creation_time": "2022-02-02T00:00:00Z"])
        #expect(dict(after.streams[0]) == ["language": "fra", "creation_time": "2021-01-01T00:00:00.000000Z"])
        #expect(dict(after.streams[1]) == ["language": "eng", "handler_name": "Voice", "creation_time": "2021-01-01T00:00:00.000000Z"])
        #expect(dict(after.streams[2]) == ["creation_time": "2021-01-01T00:00:00.000000Z"])
    }

    @Test("a stream number the output lacks is an error naming it")
    func missingStream() throws {
        let e = try edits(["s:3:language=fra"])
        #expect(throws: MediaError.self) { try e.applied(to: IntendedTags(format: [], streams: [[]]), streams: [.video]) }
    }

    @Test("creation time to seconds since 1970; the matrix for a turn")
    func conversions() {
        #expect(MetadataEdits.epochSeconds("2031-01-01T00:00:00.500000Z") == 1_924_992_000)
        #expect(MetadataEdits.epochSeconds("garbage") == nil)
        #expect(MetadataEdits.displayMatrix(0) == [65536, 0, 0, 0, 65536, 0, 0, 0, 1 << 30])
        // A portrait phone recording's matrix (a = 0, b = 1, c = -1, d = 0).
        #expect(MetadataEdits.displayMatrix(90) == [0, 65536, 0, -65536, 0, 0, 0, 0, 1 << 30])
    }
}
