import Foundation
import Media
import Pipeline
import Sync
import Testing

/// The writing pipeline on real files, into memory: the mux session's
/// counts and timelines, segments joined on one track, and the track writers
/// (copy, audio re-encoded, audio copied with silent frames). What comes out
/// is read back through libavformat's demuxer.
@Suite("mux session and track writers")
struct MuxSessionTests {
    func input(_ name: String) throws -> InputFile {
        let path = MemoryIOTests.fixtures.appendingPathComponent(name).path
        guard FileManager.default.fileExists(atPath: path) else {
            try Test.cancel("fixture \(name) missing (run Tests/Fixtures/make-fixtures.sh)")
        }
        return try InputFile(path: path)
    }

    /// Every packet's stream and timing, read back from bytes in memory.
    func packets(_ memory: MemoryOutput) throws -> [(stream: Int, timing: PacketTiming)] {
        let file = try InputFile(memory: MemoryInput(memory.bytes), name: "written")
        let p = try Packet()
        var out: [(Int, PacketTiming)] = []
        while try file.read(into: p) { out.append((p.streamIndex, p.timing)) }
        return out
    }

    @Test func copyWritersCountWhatTheyWrite() throws {
        let input = try input("h264_bframes_2997_aac48_stereo.mp4")
        let memory = try MemoryOutput()
        let mp4 = try #require(Container(named: "mp4"))
        let session = try MuxSession(.memory(memory, name: "out.mp4"), container: mp4,
                                     streams: input.streams.map { .copy($0) }, metadataSource: input,
                                     cancellation: Cancellation())
        try session.beginTimelines(input.streams, start: .zero, repair: .fix)
        let writers = input.streams.indices.map { CopyWriter(track: $0, session: session) }
        let p = try Packet()
        var read = [Int](repeating: 0, count: input.streams.count)
        var bytes = [Int64](repeating: 0, count: input.streams.count)
        while try input.read(into: p) {
            read[p.streamIndex] += 1
            bytes[p.streamIndex] += Int64(p.size)
            try writers[p.streamIndex].send(p)
        }
        let result = try session.finish()
        #expect(result.packets == read)
        #expect(result.payloadBytes == bytes)
        #expect(result.outputBytes == Int64(memory.bytes.count))
        #expect(result.totalCorrections.total == 0)
        let back = try packets(memory)
        #expect((0..<read.count).map { s in back.filter { $0.stream == s }.count } == read)
    }

    @Test func aSecondSegmentContinuesTheTrackInOrder() throws {
        // The same video twice on one track, the second shifted to start
        // where the first ends: DTS strictly increasing across the joint.
        let first = try input("h264_bframes_2997_aac48_stereo.mp4")
        let video = try #require(first.streams.first { $0.mediaType == .video })
        let memory = try MemoryOutput()
        let session = try MuxSession(.memory(memory, name: "out.mp4"), container: try #require(Container(named: "mp4")),
                                     streams: [.copy(video)], metadataSource: nil, cancellation: Cancellation())
        let duration = try #require(video.duration)
        var written = 0
        for k in 0..<2 {
            let file = try input("h264_bframes_2997_aac48_stereo.mp4")
            let s = file.streams[video.index]
            // Each segment's frames start at k × its duration.
            let shift = Timestamp(duration.value * Int64(k) - (s.startTime?.value ?? 0), duration.timeBase)
            try session.beginTimeline(track: 0, stream: s, shift: shift)
            let p = try Packet()
            while try file.read(into: p) {
                guard p.streamIndex == video.index else { continue }
                try session.write(p, track: 0)
                written += 1
            }
        }
        let result = try session.finish()
        #expect(result.packets == [written])
        let dts = try packets(memory).compactMap(\.timing.dts)
        #expect(dts.count == written)
        #expect(zip(dts, dts.dropFirst()).allSatisfy { $0 < $1 }, "DTS not increasing: \(dts.prefix(8))…")
    }

    /// PCM from a MOV, encoded to AAC through a ReencodeWriter (with the
    /// encoder on its own thread or inline): the input's sample count and
    /// what was written.
    func encodePCM(threaded: Bool) throws -> (samples: Int64, memory: MemoryOutput) {
        let input = try input("pcm_in_mov.mov")
        let audio = try #require(input.streams.first { $0.mediaType == .audio })
        var settings = AudioEncoderSettings(codec: "aac", sampleRate: audio.sampleRate, channels: audio.channelCount)
        settings.bitRate = 128_000
        let reencoder = try AudioReencoder(settings: settings, source: audio)
        try reencoder.begin(audio)
        if threaded { reencoder.encodeOnThread() }
        let memory = try MemoryOutput()
        let session = try MuxSession(.memory(memory, name: "out.m4a"), container: try #require(Container(named: "m4a")),
                                     streams: [.encoded(reencoder.encoder)], metadataSource: nil,
                                     cancellation: Cancellation())
        try session.beginTimeline(track: 0, stream: audio, retimedIn: reencoder.encoder.timeBase)
        let writer = ReencodeWriter(reencoder, track: 0, session: session)
        let p = try Packet()
        var samples: Int64 = 0
        while try input.read(into: p) {
            guard p.streamIndex == audio.index else { continue }
            samples += audio.samples(in: p)
            try writer.send(p)
        }
        try writer.finish()
        _ = try session.finish()
        return (samples, memory)
    }

    @Test func reencodedAudioKeepsEverySample() throws {
        let (samples, memory) = try encodePCM(threaded: false)
        // The AAC track holds the input's samples, within one frame of padding.
        let back = try packets(memory)
        let total = back.reduce(Int64(0)) { $0 + $1.timing.duration }
        #expect(samples > 0)
        #expect(total >= samples && total - samples < 2048, "\(total) samples written for \(samples)")
    }

    @Test func anEncoderOnItsOwnThreadWritesTheSamePackets() throws {
        // The same encode with the encoder beside the decoder: every packet's
        // payload and timing equal the inline encode's, in the same order.
        func read(_ memory: MemoryOutput) throws -> [(PacketTiming, [UInt8])] {
            let file = try InputFile(memory: MemoryInput(memory.bytes), name: "written")
            let p = try Packet()
            var out: [(PacketTiming, [UInt8])] = []
            while try file.read(into: p) { out.append((p.timing, p.withData { Array($0) })) }
            return out
        }
        let inline = try read(encodePCM(threaded: false).memory)
        let threaded = try read(encodePCM(threaded: true).memory)
        #expect(inline.count > 100)
        #expect(threaded.count == inline.count)
        #expect(zip(inline, threaded).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 })
    }

    @Test func copiedAudioFillsAGapWithWholeSilentFrames() throws {
        // AAC with a gap: positions that leave a 10-frame hole are filled with
        // exactly ten silent frames, and every packet lands on its place.
        let input = try input("aac48_stereo.m4a")
        let audio = try #require(input.streams.first { $0.mediaType == .audio })
        guard case .silence(let silence) = try SilentAudio.matching(audio) else {
            Issue.record("no silence matches \(audio.codecName)")
            return
        }
        let memory = try MemoryOutput()
        let session = try MuxSession(.memory(memory, name: "out.m4a"), container: try #require(Container(named: "m4a")),
                                     streams: [.copy(audio)], metadataSource: nil, cancellation: Cancellation())
        try session.beginTimeline(track: 0, stream: audio, retimedIn: Rational.perSecond(audio.sampleRate)!)
        let track = try AudioCopyTrack(track: 0, session: session, silence: silence, sampleRate: audio.sampleRate,
                                       toleranceSamples: 48, fill: true, longestFillSeconds: 60)
        try track.begin(audio, segment: 0, shift: 0, drift: nil, anchor: 0)
        let p = try Packet()
        var n: Int64 = 0
        while n < 40, try input.read(into: p) {
            guard p.streamIndex == audio.index else { continue }
            // Packet 20 onwards is ten frames late.
            let position = n * 1024 + (n >= 20 ? 10 * 1024 : 0)
            try track.send(p, at: position)
            n += 1
        }
        try track.finish()
        _ = try session.finish()
        #expect(track.summary.silenceInserted == 10 * 1024)
        let end: Int64 = 50 * 1024
        #expect(track.summary.end == end)
        let starts = try packets(memory).compactMap(\.timing.pts)
        #expect(starts.count == 50)
        #expect(zip(starts, starts.dropFirst()).allSatisfy { $1 - $0 == 1024 }, "\(starts)")
    }
}
