import Media
import Pipeline
import Sync

/// The segments of an assembly, opened one at a time. Planning opens each
/// once, checks it against the first and keeps what the later steps need of
/// it as a small value (`SegmentFacts`); the copied-audio scan and the run
/// open it again when they reach it and let it go after. The opener finds
/// the file as planning found it (its identity), and the reopened segment
/// must have the streams planning saw; otherwise it is an error naming the
/// file. Only the first segment stays open throughout (the output's streams,
/// metadata and plan come from it), with any that can be read only once (a
/// pipe): a concat of thousands of files holds a few open, not all of them,
/// each with its parsers (about 300 KB).
final class Segments {
    let specs: [SegmentSpec]
    /// The first segment, open throughout.
    let first: Segment
    /// Per segment, what planning found.
    let facts: [SegmentFacts]
    /// The segments whose trimmed start is re-encoded, those whose trimmed
    /// end is (`spliceCoding`), and the first such one's coding: its codec
    /// record is the output's.
    let spliced: Set<Int>
    let trimmedEnds: Set<Int>
    let coding: StretchCoding?
    /// The first input the copied-audio scan would have to read again but
    /// cannot (a pipe): the audio, and with several segments the video too.
    let readOnce: String?
    let dataWarnings: [String]
    /// Segments kept open: the first, and those that cannot be opened again.
    private let held: [Int: Segment]
    private let open: InputOpener
    private let container: Container
    private let dataContainer: Container?
    private let verb: String
    private let cancellation: Cancellation

    var count: Int { specs.count }

    /// Opens and checks every segment in turn. `keepData`: the container's
    /// data tracks are kept (`AssemblyOptions.data`).
    init(_ specs: [SegmentSpec], open: InputOpener, container: Container, keepData: Bool, verb: String,
         cancellation: Cancellation) throws(MediaError) {
        let dataContainer = keepData ? container : nil
        var first: Segment?
        var facts: [SegmentFacts] = []
        facts.reserveCapacity(specs.count)
        var spliced = Set<Int>(), trimmedEnds = Set<Int>(), coding: StretchCoding?, readOnce: String?
        var warnings: [String] = [], held: [Int: Segment] = [:]
        for (k, spec) in specs.enumerated() {
            var seg = try Segment(spec, open: open, container: dataContainer, cancellation: cancellation)
            if let first { try checkCompatible(seg, with: first) } else { try checkVideoHeld(seg, container: container) }
            let head = try showsTrimmedStart(seg, index: k, container: container)
            var tail = false
            if k < specs.count - 1 { tail = try hidesReferencedTail(seg, open: open, cancellation: cancellation) }
            if let c = try spliceCoding(seg, index: k, head: head, tail: tail, container: container, verb: verb) {
                if let other = coding, other.record != c.record || other.tag != c.tag {
                    throw MediaError.invalid("could not \(verb)", path: c.stream.file.path, stream: c.stream.index,
                                             message: "its trimmed \(tail ? "end" : "start") cannot be re-encoded with the same codec record as another segment's")
                }
                coding = coding ?? c
                if tail {
                    trimmedEnds.insert(k)
                    seg.splicedUntil = seg.shownEnd
                }
                if head {
                    spliced.insert(k)
                    seg.spliced = true
                }
            }
            let once = seg.readOnce(several: specs.count > 1)
            readOnce = readOnce ?? once
            warnings += seg.dataWarnings
            facts.append(SegmentFacts(seg))
            if first == nil { first = seg }
            if k == 0 || !seg.canBeOpenedAgain { held[k] = seg }
        }
        guard let first else {
            throw MediaError.invalid("could not \(verb)", message: "there is no input to read")
        }
        self.specs = specs
        self.open = open
        self.container = container
        self.dataContainer = dataContainer
        self.verb = verb
        self.cancellation = cancellation
        self.first = first
        self.facts = facts
        self.spliced = spliced
        self.trimmedEnds = trimmedEnds
        self.coding = coding
        self.readOnce = readOnce
        dataWarnings = warnings
        self.held = held
    }

    /// Segment `k`, opened for reading from its start (the first, and one
    /// that can be read only once, as planning left it: peeked, not read).
    func segment(_ k: Int) throws(MediaError) -> Segment {
        if let seg = held[k] { return seg }
        // The openings let go leave their pages among allocations that stay
        // (the output's index, the plan): given back every 64 segments.
        if k % 64 == 0 { releaseFreedMemory() }
        var seg = try Segment(specs[k], open: open, container: dataContainer, cancellation: cancellation)
        try checkCompatible(seg, with: first)
        guard SegmentFacts(seg) == facts[k] else {
            let s = seg.main.stream
            throw MediaError.invalid("could not read", path: s.file.path, stream: s.index,
                                     message: "the file changed while it was being read (its streams are not what they were when the run began)",
                                     hint: "let whatever writes it finish, then run again")
        }
        seg.spliced = spliced.contains(k)
        if trimmedEnds.contains(k) { seg.splicedUntil = seg.shownEnd }
        return seg
    }

    /// The coding of segment `k`'s trimmed start or end for the opening
    /// `seg` of it; nil where it has none. A segment opened again makes its
    /// coding again, which must give the planned codec record.
    func coding(for seg: Segment, index k: Int) throws(MediaError) -> StretchCoding? {
        let coded = spliced.union(trimmedEnds)
        guard coded.contains(k), let planned = coding else { return nil }
        // (The planned coding is the first such segment's; kept open, it is the same opening.)
        if k == coded.min(), held[k] != nil { return planned }
        let c = try spliceCoding(seg, index: k, head: try showsTrimmedStart(seg, index: k, container: container),
                                 tail: trimmedEnds.contains(k), container: container, verb: verb)
        guard let c, c.record == planned.record, c.tag == planned.tag else {
            let s = seg.main.stream
            throw MediaError.invalid("could not read", path: s.file.path, stream: s.index,
                                     message: "the file changed while it was being read (its trimmed start is not what it was when the run began)",
                                     hint: "let whatever writes it finish, then run again")
        }
        return c
    }
}

/// What planning found of one segment and the run needs before it opens
/// the segment again: its streams as a small value (nothing of the opened
/// file), to be found the same when it is opened again.
struct SegmentFacts: Equatable {
    /// Every stream of its files that it reads.
    var streams: [StreamFacts]
    /// The duration of its main stream, in seconds (for progress).
    var duration: Double?
    /// Its data tracks: the stream index and what matches it to an output track.
    var data: [DataTrackFacts]
    /// Its audio stream (also among `streams`).
    var audio: StreamFacts?

    init(_ seg: Segment) {
        let readers = [seg.video, seg.audio, seg.original].compactMap { $0 } + seg.data
        streams = readers.map { StreamFacts($0.stream) }
        audio = seg.audio.map { StreamFacts($0.stream) }
        duration = seg.main.stream.duration?.seconds
        data = seg.data.map { DataTrackFacts($0.stream) }
    }
}

/// One stream's parameters, as a value.
struct StreamFacts: Equatable {
    let index: Int
    let codec: String
    let timeBase: Rational?
    let start: Timestamp?
    let duration: Timestamp?
    let width: Int, height: Int
    let sampleRate: Int32, channels: Int
    let extradata: [UInt8]

    init(_ s: InputStream) {
        index = s.index
        codec = s.codecName
        timeBase = s.timeBase
        start = s.startTime
        duration = s.duration
        width = s.width
        height = s.height
        sampleRate = s.sampleRate
        channels = s.channelCount
        extradata = s.extradata
    }
}

/// A data track of a segment: its stream, and what matches it to the
/// first segment's track of its kind (`DataTrackKey`).
struct DataTrackFacts: Equatable {
    let index: Int
    let key: DataTrackKey
    let isAttachedPicture: Bool
    let kind: String

    init(_ s: InputStream) {
        index = s.index
        key = DataTrackKey(s)
        isAttachedPicture = s.isAttachedPicture
        kind = s.dataKind
    }
}

extension Segment {
    /// The first of its files the copied-audio scan would have to read
    /// again but cannot (a pipe): the audio, and with `several` segments the video too.
    func readOnce(several: Bool) -> String? {
        var files = audio.map { [$0.file] } ?? []
        if several, let v = video { files.append(v.file) }
        return files.first(where: { !$0.canBeReadAgain })?.path
    }

    /// Whether every file it reads can be opened again and read the same.
    var canBeOpenedAgain: Bool {
        ([video, audio, original].compactMap { $0 } + data).allSatisfy { $0.file.canBeReadAgain }
    }

    /// The reader of its data track of stream `index`.
    func dataReader(_ index: Int?) -> StreamReader? {
        index.flatMap { i in data.first { $0.stream.index == i } }
    }
}
