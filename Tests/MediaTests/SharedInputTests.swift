@testable import Concat
import Media
import Sync
import Testing

/// A segment's video and audio read through one opening of the file: each
/// reader gets exactly its stream's packets, in order, whichever reads
/// ahead; a queue that outgrows its limit hands its stream to an opening of
/// its own, which resumes where the reader was.
@Suite("shared input")
struct SharedInputTests {
    /// Each stream's packet timings read on their own.
    func alone(_ path: String, _ index: Int) throws -> [PacketTiming] {
        let file = try InputFile(path: path)
        file.discardAll(except: [index])
        let p = try Packet()
        var out: [PacketTiming] = []
        while try file.read(into: p) {
            if p.streamIndex == index { out.append(p.timing) }
        }
        return out
    }

    func drain(_ r: StreamReader, atMost n: Int = .max) throws -> [PacketTiming] {
        var out: [PacketTiming] = []
        while out.count < n, try r.peek() {
            out.append(r.packet.timing)
            r.consume()
        }
        return out
    }

    @Test(arguments: [32 << 20, 20_000])
    func eachReaderGetsItsStream(queueLimit: Int) throws {
        let path = MemoryIOTests.fixtures.appendingPathComponent("h264_bframes_2997_aac48_stereo.mp4").path
        let file = try InputFile(path: path)
        let v = try #require(file.streams.first { $0.mediaType == .video }).index
        let a = try #require(file.streams.first { $0.mediaType == .audio }).index
        let shared = try SharedInput(file: file, streams: [v, a], queueLimit: queueLimit)
        var reopened = 0
        let reopen = { () throws(MediaError) -> InputFile in
            reopened += 1
            return try InputFile(path: path)
        }
        let video = try StreamReader(shared: shared, stream: v, reopen: reopen)
        let audio = try StreamReader(shared: shared, stream: a, reopen: reopen)
        // A little audio, then all the video (the audio queues up), then the rest.
        let firstAudio = try drain(audio, atMost: 5)
        let allVideo = try drain(video)
        let restAudio = try drain(audio)
        #expect(allVideo == (try alone(path, v)))
        #expect(firstAudio + restAudio == (try alone(path, a)))
        // The small limit detaches the audio: one opening of its own.
        #expect(reopened == (queueLimit < 1 << 20 ? 1 : 0))
    }
}
