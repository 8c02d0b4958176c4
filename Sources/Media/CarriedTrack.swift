import FileAccess
import Glibc
import ISOBMFF
import Sync

/// A track of an MP4/MOV input that the muxer cannot write — a QuickTime
/// `mebx` timed-metadata track, a GoPro `gpmd` or `fdsc`, a Sony `rtmd`, a
/// timecode track of its own — carried into an MP4/MOV output by this
/// program: its samples gathered, as the verb's timeline maps them, while
/// the muxer writes the rest; its `trak` built afterwards from the source's
/// own boxes (sample description, handler, media header) and the gathered
/// timing (`IndexCompletion`). Sample bytes are kept as they are: where a
/// sample is the bytes of its source file at its packet's position (checked
/// as it is gathered), only that place is kept, and the bytes are copied from
/// the file when the track is written — memory does not grow with the track.
public struct CarriedTrack {
    /// The source track the first segment came from (handler, headers, references).
    public let source: SourceTrack
    /// The time base samples are given in: the source's media time scale.
    public let timeBase: Rational
    /// Sample descriptions, one per different source description met.
    private(set) var descriptions: [BoxNode] = []
    private var current = 0
    /// Each sample: where it starts (decode time), its size and description (0-based).
    private(set) var starts: [Int64] = []
    private(set) var sizes: [Int32] = []
    private(set) var descriptionOf: [Int32] = []
    /// Where the samples' bytes are, in order: ranges of source files, or of `memory`.
    private var pieces: [Piece] = []
    private var memory: [UInt8] = []
    private let files = SourceFiles()
    public private(set) var byteCount = 0

    private enum Piece {
        case file(OpenFile, offset: Int64, count: Int64)
        case memory(offset: Int, count: Int)
    }

    /// Source files open for reading, by path (closed with the last copy of the track).
    private final class SourceFiles {
        var open: [String: OpenFile] = [:]
        func file(_ path: String) -> OpenFile? {
            if let file = open[path] { return file }
            guard let file = try? OpenFile(path: path, O_RDONLY) else { return nil }
            open[path] = file
            return file
        }
    }
    /// The last sample's duration, as its packet gave it.
    private var lastDuration: Int64 = 0
    /// Where the output's content (its video, audio and text) ends, in
    /// ticks of `timeBase`: the track is shown no further, so that no data
    /// sample (a timecode's or a still-image marker's, whose one sample
    /// lasts a whole recording) makes the file last longer than what it shows.
    public var contentEnd: Int64?

    /// The track `stream` comes from, if it is one this program carries:
    /// a data stream of an MP4/MOV file whose index describes it.
    public init?(_ stream: InputStream) {
        guard Self.carries(stream), let track = stream.file.sourceIndex?.track(id: stream.id),
              let scale = track.timescale, scale > 0, scale <= UInt32(Int32.max),
              let first = track.sampleEntries.first else { return nil }
        source = track
        timeBase = Rational(unchecked: 1, Int32(scale))
        descriptions = [first]
    }

    /// Whether `stream` is of the kind carried: data or of no known type,
    /// not an attachment or a picture.
    public static func carries(_ stream: InputStream) -> Bool {
        (stream.mediaType == .data || stream.mediaType == .unknown) && !stream.isAttachedPicture
            && stream.file.sourceIndex?.track(id: stream.id)?.sampleEntries.isEmpty == false
    }

    /// Samples that follow come from `stream` (a later segment's): its
    /// sample description is used, added if it differs from those so far.
    /// False when `stream` is not a carried track.
    @discardableResult
    public mutating func use(_ stream: InputStream) -> Bool {
        guard let d = stream.file.sourceIndex?.track(id: stream.id)?.sampleEntries.first else { return false }
        if let k = descriptions.firstIndex(of: d) { current = k } else {
            descriptions.append(d)
            current = descriptions.count - 1
        }
        return true
    }

    /// Adds a sample decoded at `start` (ticks of `timeBase`) lasting
    /// `duration`, read from `position` of the file at `path` (-1: unknown).
    public mutating func append(start: Int64, duration: Int64, data: UnsafeRawBufferPointer, position: Int64, path: String?) {
        starts.append(start)
        sizes.append(Int32(clamping: data.count))
        descriptionOf.append(Int32(current))
        lastDuration = max(duration, 0)
        byteCount += data.count
        if position >= 0, data.count > 0, let path, let fd = files.file(path), let there = try? fd.read(data.count, at: position),
           there.elementsEqual(data) {
            if case .file(let f, let o, let n)? = pieces.last, f === fd, o + n == position {
                pieces[pieces.count - 1] = .file(fd, offset: o, count: n + Int64(data.count))
            } else {
                pieces.append(.file(fd, offset: position, count: Int64(data.count)))
            }
            return
        }
        pieces.append(.memory(offset: memory.count, count: data.count))
        memory.append(contentsOf: data)
    }

    public var sampleCount: Int { starts.count }

    /// Writes the samples' bytes, one after another, at `offset` of `fd`.
    func writeSamples(to fd: OpenFile, at offset: Int64) throws(FileError) {
        var at = offset
        for piece in pieces {
            switch piece {
            case .memory(let o, let n):
                try memory.withUnsafeBytes { b in
                    Result { () throws(FileError) in try fd.write(UnsafeRawBufferPointer(rebasing: b[o..<(o + n)]), at: at) }
                }.get()
                at += Int64(n)
            case .file(let source, let o, let n):
                // The source's bytes copied by the kernel where it can; a source that ended is a failed read.
                var done: Int64 = 0
                while done < n {
                    let got = try source.copy(Int(min(n - done, 64 << 20)), at: o + done, to: fd, at: at + done)
                    guard got > 0 else { throw FileError(code: EIO, call: "pread", path: source.path) }
                    done += Int64(got)
                }
                at += n
            }
        }
    }

    /// Each sample's duration: to the next one's start; the last's as its packet said
    /// (else the one before it's, else one tick).
    var durations: [Int64] {
        guard !starts.isEmpty else { return [] }
        var d = zip(starts, starts.dropFirst()).map { max($1 - $0, 0) }
        d.append(lastDuration > 0 ? lastDuration : d.last ?? 1)
        return d
    }

    /// The track's `trak` box: `id`, the chunk `offsets` of its runs (see
    /// `runs`), durations in the movie's `movieScale`, `references` as output track ids.
    func trak(id: UInt32, movieScale: UInt32, runOffsets: [Int64], references: [(type: FourCC, ids: [UInt32])]) -> BoxNode {
        let d = durations
        let first = starts.first ?? 0
        let mediaDuration = d.reduce(0, +)
        func movieTicks(_ t: Int64) -> Int64 {
            rescale(t, from: timeBase, to: Rational(unchecked: 1, Int32(clamping: movieScale)), rounding: .nearest) ?? 0
        }
        // A first sample before the output's start (never, where a cut clips
        // samples to its range) is partly hidden by the edit.
        let lead = max(first, 0), hidden = min(max(-first, 0), mediaDuration)
        // (Where nothing of the track would be shown before the content's end, it is left whole.)
        let shown = contentEnd.map { end in end > lead ? min(mediaDuration - hidden, end - lead) : mediaDuration - hidden }
            ?? mediaDuration - hidden
        let trackDuration = movieTicks(lead + shown)
        var children: [BoxNode] = []
        for child in source.trak.children ?? [] {
            switch child.type {
            case "tkhd": children.append(Self.patched(trackHeader: child, id: id, duration: trackDuration))
            case "mdia": children.append(mdia(child, duration: mediaDuration, runOffsets: runOffsets))
            case "edts", "tref": break
            default: children.append(child)
            }
        }
        // The samples start where the gathered times say: an empty edit before a late first sample.
        var elst = EditList(entries: [])
        // (Version 1, as these tracks have always been written.)
        elst.version = 1
        if lead > 0 { elst.entries.append(.init(segmentDuration: UInt64(bitPattern: movieTicks(lead)), mediaTime: -1)) }
        elst.entries.append(.init(segmentDuration: UInt64(bitPattern: movieTicks(shown)), mediaTime: hidden))
        // Samples that take no time (a GoPro's `fdsc`, all at 0) get no edit:
        // an entry of no duration would hide all but the first from readers.
        if lead > 0 || shown > 0 {
            children.insert(BoxNode("edts", children: [BoxNode("elst", payload: elst.encode()[...])]), at: 1)
        }
        let refs = references.filter { !$0.ids.isEmpty }
        if !refs.isEmpty {
            children.insert(TrackReferences(references: refs.map { .init(type: $0.type, trackIDs: $0.ids) }).box, at: 2)
        }
        return BoxNode("trak", children: children)
    }

    private func mdia(_ box: BoxNode, duration: Int64, runOffsets: [Int64]) -> BoxNode {
        var out = box
        out.children = (box.children ?? []).map { child in
            switch child.type {
            case "mdhd": return Self.patched(mediaHeader: child, duration: duration)
            case "minf":
                var minf = child
                var kids = (child.children ?? []).filter { $0.type != "dinf" && $0.type != "stbl" }
                // A data reference to this file (`url `, self-contained), as MP4 and MOV readers both know it.
                kids.append(BoxNode("dinf", children: [BoxNode("dref", payload: [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 12,
                                                                         0x75, 0x72, 0x6c, 0x20, 0, 0, 0, 1][...])]))
                kids.append(sampleTable(runOffsets: runOffsets))
                minf.children = kids
                return minf
            default: return child
            }
        }
        return out
    }

    /// Runs of samples of one description, each written as one chunk: (first sample, count).
    var runs: [(first: Int, count: Int)] {
        var out: [(first: Int, count: Int)] = []
        for i in descriptionOf.indices {
            if let last = out.last, descriptionOf[last.first] == descriptionOf[i] { out[out.count - 1].count += 1 } else { out.append((i, 1)) }
        }
        return out
    }

    /// Where each run's bytes start among the samples' bytes.
    var runByteStarts: [Int64] {
        var offsets: [Int64] = []
        var at: Int64 = 0
        var n = 0
        for run in runs {
            while n < run.first { at += Int64(sizes[n]); n += 1 }
            offsets.append(at)
        }
        return offsets
    }

    private func sampleTable(runOffsets: [Int64]) -> BoxNode {
        var deltas: [TimeToSample.Entry] = []
        for d in durations {
            let delta = UInt32(min(max(d, 0), Int64(UInt32.max)))
            if let last = deltas.last, last.sampleDelta == delta {
                deltas[deltas.count - 1].sampleCount += 1
            } else {
                deltas.append(.init(sampleCount: 1, sampleDelta: delta))
            }
        }
        let stsc = runs.enumerated().map { k, run in
            SampleToChunk.Entry(firstChunk: UInt32(k + 1), samplesPerChunk: UInt32(run.count),
                                sampleDescriptionIndex: UInt32(descriptionOf[run.first] + 1))
        }
        let tables: [any BoxPayload] = [SampleDescriptionTable(entries: descriptions), TimeToSample(entries: deltas),
                                        SampleToChunk(entries: stsc), SampleSizes(sizes: sizes.map { UInt32(bitPattern: $0) }),
                                        ChunkOffsets(offsets: runOffsets.map { UInt64($0) })]
        return BoxNode("stbl", children: tables.map { $0.box })
    }

    /// A `tkhd` with its track id and duration set (version 1 where the duration needs it).
    static func patched(trackHeader box: BoxNode, id: UInt32, duration: Int64) -> BoxNode {
        guard var tkhd = box.value(TrackHeader.self) else { return box }
        tkhd.trackID = id
        tkhd.duration = UInt64(max(duration, 0))
        var out = box
        out.set(tkhd)
        return out
    }

    /// An `mdhd` with its duration set (version 1 where it needs it).
    static func patched(mediaHeader box: BoxNode, duration: Int64) -> BoxNode {
        guard var mdhd = box.value(MediaHeader.self) else { return box }
        mdhd.duration = UInt64(max(duration, 0))
        var out = box
        out.set(mdhd)
        return out
    }
}
