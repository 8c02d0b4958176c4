import Foundation
import Media
import Sync
import Testing

/// `AudioFrameMeasure` finds each AAC frame's length from the bytes alone,
/// as `repair` needs for media data without an index: checked against the
/// index of every MP4/MOV/M4A fixture and real recording with AAC, each
/// frame measured where it lies in the file (followed by whatever the file
/// holds next: the next frame, a video sample, the index).
@Suite("audio frame measure")
struct AudioFrameMeasureTests {
    @Test(arguments: StreamIndexTests.files)
    func measuresEveryFrameAsTheIndexListsIt(_ path: String) throws {
        // Fixtures no demuxer can index (empty, random, cut) have nothing to compare with.
        guard let file = try? InputFile(path: path) else { return }
        let mapped = try MappedFile(path: path)
        for s in file.streams where s.mediaType == .audio && s.codecName == "aac" {
            guard let entries = s.indexedPackets else { continue }
            let measure = try #require(AudioFrameMeasure(stream: s))
            var wrong: [(Int, Int32, Int?)] = []
            mapped.withBytes { b in
                for (n, e) in entries.prefix(400).enumerated() {
                    let found = measure.frameLength(UnsafeRawBufferPointer(rebasing: b[Int(e.position)...]))
                    if found != Int(e.size) { wrong.append((n, e.size, found)) }
                }
            }
            #expect(wrong.isEmpty, "\((path as NSString).lastPathComponent) stream \(s.index): (frame, size, measured) \(wrong.prefix(5))")
        }
    }

    @Test func isNotFooledByVideo() throws {
        let path = MemoryIOTests.fixtures.appendingPathComponent("h264_bframes_2997_aac48_stereo.mp4").path
        let file = try InputFile(path: path)
        let mapped = try MappedFile(path: path)
        let audio = try #require(file.streams.first { $0.mediaType == .audio })
        let video = try #require(file.streams.first { $0.mediaType == .video }?.indexedPackets)
        let measure = try #require(AudioFrameMeasure(stream: audio))
        let taken = mapped.withBytes { b in
            video.filter { measure.frameLength(UnsafeRawBufferPointer(rebasing: b[Int($0.position)...])) != nil }.count
        }
        #expect(taken == 0, "\(taken) of \(video.count) video samples taken as AAC frames")
    }
}
