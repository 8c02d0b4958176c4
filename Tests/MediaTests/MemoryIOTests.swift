import Foundation
import Media
import Pipeline
import Probe
import Remux
import Testing

/// The in-memory I/O the fuzz harness uses (custom AVIOContexts) behaves as
/// files do: probing bytes in memory finds what probing the file finds, and
/// a remux into memory writes the very bytes a remux into a file writes.
@Suite("in-memory input and output")
struct MemoryIOTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".fixtures")

    func fixture(_ name: String) throws -> (path: String, bytes: [UInt8]) {
        let path = Self.fixtures.appendingPathComponent(name).path
        guard let data = FileManager.default.contents(atPath: path) else {
            try Test.cancel("fixture \(name) missing (run Tests/Fixtures/make-fixtures.sh)")
        }
        return (path, [UInt8](data))
    }

    @Test(arguments: ["h264_bframes_2997_aac48_stereo.mp4", "ts_wrap.ts", "h264_vfr.mkv", "hevc_aac.mp4"])
    func probeMatchesFile(name: String) throws {
        let (path, bytes) = try fixture(name)
        let fromFile = try probe(path: path)
        let fromMemory = try probe(InputFile(memory: MemoryInput(bytes), name: path))
        #expect(fromMemory.format == fromFile.format)
        #expect(fromMemory.streams.map(\.packets) == fromFile.streams.map(\.packets))
        #expect(fromMemory.streams.map(\.firstPTS) == fromFile.streams.map(\.firstPTS))
        #expect(fromMemory.sync?.gapCount == fromFile.sync?.gapCount)
    }

    // MP4 without faststart and MPEG-TS are deterministic byte for byte
    // (Matroska writes random UIDs).
    @Test(arguments: [("h264_bframes_2997_aac48_stereo.mp4", "mp4"), ("ts_wrap.ts", "ts"), ("h264_vfr.mkv", "mp4"),
                      ("audio_gap.mkv", "ts")])
    func remuxMatchesFile(name: String, format: String) throws {
        let (path, bytes) = try fixture(name)
        let container = try #require(Container(named: format))
        var options = RemuxOptions()
        options.faststart = false
        options.overwrite = true
        let target = FileManager.default.temporaryDirectory.appendingPathComponent("avtool-memory-\(UUID().uuidString).\(format)").path
        defer { try? FileManager.default.removeItem(atPath: target) }
        let fileReport = try remux(input: path, output: target, options: options)
        let memory = try MemoryOutput()
        let memoryReport = try remux(InputFile(memory: MemoryInput(bytes), name: path), into: memory,
                                     container: container, options: options)
        let written = try #require(FileManager.default.contents(atPath: target))
        #expect(memory.bytes.count == written.count)
        #expect(memory.bytes == [UInt8](written), "the same bytes")
        #expect(memoryReport.streams.map(\.packets) == fileReport.streams.map(\.packets))
    }

    @Test func outputOverItsLimitIsAFullDisk() throws {
        let (path, bytes) = try fixture("h264_bframes_2997_aac48_stereo.mp4")
        let error = #expect(throws: MediaError.self) {
            try remux(InputFile(memory: MemoryInput(bytes), name: path), into: MemoryOutput(limit: 100_000),
                      container: Container(named: "mkv")!, options: RemuxOptions())
        }
        #expect(error?.code == MediaError.noSpace.code)
        #expect(error?.description.contains("no space left on device") == true, "\(String(describing: error))")
    }

    @Test func emptyAndGarbageBytesAreRefused() throws {
        for bytes in [[UInt8](), [UInt8](repeating: 0, count: 4096), Array("not a media file".utf8)] {
            #expect(throws: MediaError.self) { try probe(InputFile(memory: MemoryInput(bytes), name: "bytes")) }
        }
    }
}
