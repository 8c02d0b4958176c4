import FileAccess
import Foundation
import Media
import Remux
import Testing

/// The bulk copy's media data copied from before its index is parsed, at
/// the place the old index's size foretells: kept when the layout is the
/// one foretold (every byte after the index where the layout puts it), let
/// go when it is not (an edit that makes the index longer).
@Suite("early copy of the media data")
struct EarlyCopyTests {
    /// A fixture remuxed with its index at the end, as a camera writes it.
    func indexAtTheEnd() throws -> (path: String, bytes: [UInt8]) {
        let source = IndexReservationTests.repo.appendingPathComponent(".fixtures/h264_bframes_2997_aac48_stereo.mp4").path
        guard FileManager.default.fileExists(atPath: source) else { try Test.cancel("fixture missing") }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("avtool-early-\(UUID().uuidString).mp4").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        p.arguments = ["-nostdin", "-v", "error", "-i", source, "-map", "0", "-c", "copy", path]
        try p.run()
        p.waitUntilExit()
        try #require(p.terminationStatus == 0)
        return (path, [UInt8](try #require(FileManager.default.contents(atPath: path))))
    }

    func layout(_ fd: OpenFile, size: Int64, edits: IndexEdits? = nil) throws -> MovieLayout {
        try MovieLayout(fileSize: size, alignment: 4096, edits: edits) { try? fd.read($1, at: $0) }
    }

    /// An early copy of the fixture with its index at the end into a new
    /// file, given to `body` with the input's descriptor, size and bytes and the output's path.
    func withEarlyCopy(_ body: (EarlyCopy, OpenFile, Int64, [UInt8], String) throws -> Void) throws {
        let (path, bytes) = try indexAtTheEnd()
        let out = path + ".out"
        defer { unlink(path); unlink(out) }
        let fd = try OpenFile(path: path, O_RDONLY), o = try OpenFile(path: out, O_RDWR | O_CREAT | O_TRUNC, mode: 0o644)
        let size = Int64(bytes.count)
        let boxes = try MovieLayout.topLevelBoxes(fileSize: size) { try? fd.read($1, at: $0) }
        #expect(boxes.last?.type == "moov")
        let early = try #require(EarlyCopy(boxes: boxes, size: size, alignment: 4096, from: fd, to: o, path: out,
                                           cancellation: Cancellation()))
        try body(early, fd, size, bytes, out)
    }

    @Test func keptWhereTheLayoutIsTheOneForetold() throws {
        try withEarlyCopy { early, fd, size, bytes, out in
            let laid = try layout(fd, size: size)
            var told: [Int64] = []
            let copied = try #require(try early.keep(laid) { told.append($0) })
            #expect(copied == early.copyCount)
            // Every piece after the index at its place in the output.
            let written = [UInt8](try #require(FileManager.default.contents(atPath: out)))
            var at = 0, afterIndex = false
            for piece in laid.pieces {
                switch piece {
                case .index:
                    at += laid.index.count
                    afterIndex = true
                case .input(let start, let count):
                    if afterIndex {
                        #expect(Array(written[at..<(at + Int(count))]) == Array(bytes[Int(start)..<Int(start + count)]))
                    }
                    at += Int(count)
                }
            }
            #expect(written.count == at)
        }
    }

    @Test func letGoWhereTheIndexIsLaidOutOtherwise() throws {
        try withEarlyCopy { early, fd, size, _, _ in
            // A title of 5,000 characters: the index grows past what its padding takes up.
            var edits = IndexEdits(family: .iso)
            edits.fileTags = [("title", String(repeating: "x", count: 5_000))]
            let laid = try layout(fd, size: size, edits: edits)
            #expect(Int64(laid.index.count) != early.indexSize)
            #expect(try early.keep(laid, copied: nil) == nil)
        }
    }
}
