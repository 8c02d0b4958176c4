import Foundation
import Media
import Sync
import Testing

/// The trial write that stands for an MP4/MOV output's tags (so the written
/// file need not be read back) finds what reading the whole written output
/// back finds: same muxer, same tags, every packet or one per track.
@Suite("tag trial")
struct TagTrialTests {
    /// Every packet of `path`'s `kept` streams written, then read back.
    func writtenWhole(_ path: String, kept: [Int], container: Container,
                      options: [(String, String)]) throws -> [TagLoss] {
        let input = try InputFile(path: path)
        let streams = kept.map { input.streams[$0] }
        let memory = try MemoryOutput(limit: 1 << 28)
        let out = try OutputFile(memory: memory, name: "whole", container: container, streams: streams.map { .copy($0) },
                                 metadataSource: input, options: options)
        var track = [Int?](repeating: nil, count: input.streams.count)
        for (j, s) in streams.enumerated() { track[s.index] = j }
        var timelines = try streams.map { s in
            try TrackTimeline(source: s.timeBase!, target: out.timeBases[track[s.index]!], shift: .zero(.microseconds),
                              order: container.dtsOrder, repair: .fix, wrapBits: s.wrapBits, reorderDelay: s.reorderDelay,
                              untimedAtOrigin: s.isAttachedPicture)
        }
        let p = try Packet()
        while try input.read(into: p) {
            guard p.streamIndex < track.count, let j = track[p.streamIndex], !p.isCorrupt else { continue }
            p.timing = try timelines[j].map(p.timing)
            p.streamIndex = j
            try out.write(p)
        }
        try out.finish()
        return TagCheck.losses(out.intendedTags, in: try InputFile(memory: MemoryInput(memory.bytes), name: "back"))
    }

    @Test func trialFindsWhatTheWrittenFileHolds() throws {
        var checked = 0
        for path in StreamIndexTests.files {
            // Tags do not depend on length: the long click tracks are left out.
            guard let input = try? InputFile(path: path), input.cutOff == nil, (input.duration?.seconds ?? 0) < 60 else { continue }
            for name in ["mov", "mp4"] {
                let container = try #require(Container(named: name))
                let streams = input.streams.filter { container.canHold($0) == true && $0.timeBase != nil && !$0.isTimecodeTrack }
                guard !streams.isEmpty else { continue }
                for keys in [false, true] {
                    var options: [(String, String)] = keys ? [("movflags", "+use_metadata_tags")] : []
                    if let a = streams.first(where: { $0.mediaType == .audio }) { options.append(("movie_timescale", String(a.sampleRate))) }
                    let trial = OutputFile.trialTagLosses(container: container, streams: streams.map { .copy($0) },
                                                          metadataSource: input, edits: MetadataEdits(), options: options)
                    // Where the muxer refuses the stream set, both say so.
                    let whole = try? writtenWhole(path, kept: streams.map(\.index), container: container, options: options)
                    #expect((trial == nil) == (whole == nil),
                            "\((path as NSString).lastPathComponent) → \(name)\(keys ? " (keys)" : ""): trial \(trial == nil ? "failed" : "made"), written \(whole == nil ? "failed" : "made")")
                    guard let trial, let whole else { continue }
                    #expect(trial == whole, "\((path as NSString).lastPathComponent) → \(name)\(keys ? " (keys)" : "")")
                    checked += 1
                }
            }
        }
        #expect(checked >= 40)
    }
}

/// Tags compared as a writer keeps them.
@Suite("tag comparison")
struct TagComparisonTests {
    /// MP4's `loci` keeps a place to 1/65536 of a degree (or metre): the
    /// same place, not a lost tag; another place is.
    @Test func placesMatchToTheBoxesPrecision() {
        #expect(TagCheck.sameTags([("location", "+51.5334-000.1255+081.120/")], [("location", "+51.5334-000.1255+81.119995/")]))
        #expect(TagCheck.sameTags([("location", "+37.3349-122.0090/")], [("location", "+37.334900-122.009003/")]))
        #expect(!TagCheck.sameTags([("location", "+51.5334-000.1255+081.120/")], [("location", "+51.5334-000.1255+082.120/")]))
        #expect(!TagCheck.sameTags([("location", "+51.5334-000.1255/")], [("location", "somewhere")]))
        #expect(!TagCheck.sameTags([("title", "+1.0/")], [("title", "+1.00001/")]))
    }
}
