import Foundation
import Media
import Sync
import Testing

/// The demuxer's index, where `indexedPackets` trusts it, lists exactly the
/// packets a read returns: same order, DTS, size, discard and keyframe
/// flags, and for audio the same PTS (the copied-audio scan
/// lays audio out from it without reading). Checked on every MP4/MOV/M4A
/// fixture and real recording.
@Suite("stream index")
struct StreamIndexTests {
    static var files: [String] {
        let repo = MemoryIOTests.fixtures.deletingLastPathComponent()
        let dirs = [MemoryIOTests.fixtures, repo.appendingPathComponent(".real-media")]
        return dirs.flatMap { dir in
            ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [])
                .filter { ["mp4", "mov", "m4a"].contains(($0 as NSString).pathExtension) }
                .sorted().map { dir.appendingPathComponent($0).path }
        }
    }

    struct Read: Equatable {
        var dts: Int64?
        var pts: Int64?
        var size: Int
        var isDiscard: Bool
        var isKeyframe: Bool
    }

    func read(_ path: String, _ index: Int) throws -> [Read] {
        let file = try InputFile(path: path)
        file.discardAll(except: [index])
        let p = try Packet()
        var out: [Read] = []
        while try file.read(into: p) {
            guard p.streamIndex == index else { continue }
            let t = p.timing
            out.append(Read(dts: t.dts, pts: t.pts, size: p.size, isDiscard: p.isDiscard,
                            isKeyframe: p.isKeyframe))
        }
        return out
    }

    @Test func indexListsWhatAReadReturns() throws {
        let files = Self.files
        try #require(files.count >= 10, "fixtures missing: run Tests/Fixtures/make-fixtures.sh .fixtures")
        var checked = 0
        for path in files {
            // Broken fixtures (empty, truncated) are other tests' business.
            guard let file = try? InputFile(path: path) else { continue }
            for stream in file.streams {
                guard let index = stream.indexedPackets else { continue }
                let reads = try read(path, stream.index)
                let name = "\((path as NSString).lastPathComponent) stream \(stream.index)"
                try #require(index.count == reads.count, "\(name): \(index.count) indexed, \(reads.count) read")
                for (i, (e, r)) in zip(index, reads).enumerated() {
                    #expect(r.dts == e.timestamp && r.size == Int(e.size) && r.isDiscard == e.isDiscard
                            && r.isKeyframe == e.isKeyframe, "\(name) packet \(i): \(e) vs \(r)")
                    // Audio whose first packet's PTS is its index timestamp (the scan's
                    // condition; a track with composition offsets fails it): every PTS
                    // is.
                    if stream.mediaType == .audio, reads.first?.pts == index.first?.timestamp {
                        #expect(r.pts == e.timestamp, "\(name) packet \(i)")
                    }
                }
                checked += 1
            }
        }
        #expect(checked >= 20)
    }

    @Test func matroskaAndCutFilesHaveNoTrustedIndex() throws {
        for name in ["audio_gap.mkv", "truncated_faststart.mp4"] {
            let file = try InputFile(path: MemoryIOTests.fixtures.appendingPathComponent(name).path)
            #expect(file.streams.allSatisfy { $0.indexedPackets == nil }, "\(name)")
        }
        // Their timings need the probe (the DTS of a Matroska or MPEG-TS file's
        // B-frame video comes from the codec delay it finds).
        for name in ["h264_aac.mkv", "h264_aac.ts"] {
            #expect(!(try InputFile(path: MemoryIOTests.fixtures.appendingPathComponent(name).path)).timingsNeedNoProbe)
        }
    }
}

/// An opening for packet reads only (no probe) of a file whose timings need
/// no probe (MP4/MOV) finds the same streams and reads the same video packets, with the same timings and flags, as a full
/// opening, from the start and after a seek near the end: the copied-audio
/// scan reads the video's last packets that way. (Audio can differ: the
/// probe supplies a frame size that fills in a last packet's duration.)
@Suite("packets-only opening")
struct PacketsOnlyOpeningTests {
    struct Read: Equatable {
        var timing: PacketTiming
        var size: Int
        var isKeyframe: Bool
        var isDiscard: Bool
    }

    func reads(_ file: InputFile, stream: Int, seekingTo: Int64? = nil) throws -> [Read] {
        file.discardAll(except: [stream])
        if let t = seekingTo { #expect(file.seek(stream: stream, toKeyframeBefore: t)) }
        let p = try Packet()
        var out: [Read] = []
        while try file.read(into: p) {
            guard p.streamIndex == stream else { continue }
            out.append(Read(timing: p.timing, size: p.size, isKeyframe: p.isKeyframe, isDiscard: p.isDiscard))
        }
        return out
    }

    @Test func readsTheVideoAProbedOpeningReads() throws {
        let dirs = [MemoryIOTests.fixtures, MemoryIOTests.fixtures.deletingLastPathComponent().appendingPathComponent(".real-media")]
        var checked = 0
        for dir in dirs {
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).sorted() {
                let path = dir.appendingPathComponent(name).path
                guard let full = try? InputFile(path: path), full.timingsNeedNoProbe else { continue }
                let light = try InputFile(path: path, packetsOnly: true)
                #expect(light.hasSameStreams(as: full), "\(name)")
                for v in full.streams where v.mediaType == .video && !v.isAttachedPicture {
                    let l = try reads(light, stream: v.index), f = try reads(full, stream: v.index)
                    let i = l.indices.first { $0 >= f.count || l[$0] != f[$0] } ?? l.count
                    #expect(l == f, "\(name) first difference at \(i) of \(f.count)")
                    if let d = v.duration, let s = v.startTime {
                        let target = s.value + d.value * 9 / 10
                        let a = try InputFile(path: path), b = try InputFile(path: path, packetsOnly: true)
                        #expect(try reads(b, stream: v.index, seekingTo: target) == (try reads(a, stream: v.index, seekingTo: target)),
                                "\(name) after a seek")
                    }
                    checked += 1
                }
            }
        }
        #expect(checked >= 20)
    }
}
