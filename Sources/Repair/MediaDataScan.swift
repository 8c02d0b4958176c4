import ISOBMFF
import Media

/// One sample found in the media data: its track, place and bytes.
struct FoundSample: Equatable {
    var track: Int
    var offset: Int
    var size: Int
    var keyframe: Bool
}

/// The samples of a recording's tracks found by walking media data whose
/// index is lost, sample by sample, in file order. At each place: a video
/// sample (H.264/HEVC) if the bytes start one; a data sample whose own
/// structure holds (GPMF, SMPTE KLV, boxed items) and after which the next
/// sample is proven to start; an AAC frame if the decoder takes the bytes
/// as one; a PCM chunk of a length the reference's chunks take, after which
/// the next sample is proven to start; a data sample of a size the
/// reference's take, likewise. "Proven" means a video sample or an AAC
/// frame parses there, a structured data sample starts there, or a sample
/// of known length leads to one of those, or the media data ends there
/// (and was not cut). Where nothing fits, the bytes up to the next place
/// where two samples in a row are proven are left out (named by byte
/// range), and the walk goes on; bytes after the last sample are unplaced.
/// With several audio or video tracks the walk also keeps to the
/// reference's order of chunks (`orderedStep`).
struct MediaDataScan {
    var samples: [FoundSample] = []
    /// Bytes of media data after the last sample found.
    var unplacedBytes = 0
    /// Where the walk found nothing more, if short of the media data's end.
    var stoppedAt: Int?
    /// Stretches within the media data where no sample was proven, walked past.
    var gaps: [Range<Int>] = []
    /// Samples of data tracks that are not rebuilt, passed over, by the
    /// reference's stream index.
    var skipped: [Int: Int] = [:]
    /// Samples that could be of more than one data track: left out, with the tracks.
    var ambiguous: [(range: Range<Int>, tracks: [Int])] = []
    /// Stretches of media data after the last sample found in a box that
    /// is not the last (where the walk found nothing more before the next).
    var tails: [Range<Int>] = []
    /// Of each PCM track (by the reference's stream index), the chunks left
    /// out after bytes that were left out and may have held its audio: where
    /// those bytes start, the bytes from the first chunk to the last, how
    /// many chunks, their bytes (`placePCM`).
    var pcmUnplaced: [Int: (after: Int, span: Range<Int>, chunks: Int, bytes: Int)] = [:]
    /// Of those, the samples of tracks that look alike (see `alike`), by
    /// their place in `ambiguous`: decided afterwards from the sample after.
    var alikeLeft: [(index: Int, sample: FoundSample, tracks: [Int])] = []
    /// Samples of each track found or passed over so far, by the reference's stream index.
    private var counted: [Int: Int] = [:]

    struct VideoTrack {
        var track: Int
        var stream: Int
        var scanner: AccessUnitScanner
    }

    struct AudioTrack {
        var track: Int
        var stream: Int
        var measure: AudioFrameMeasure
        /// When set, a frame must start with one of these elements (its first
        /// 7 bits: the syntax element's id and instance tag).
        var firstElements: Set<UInt8>? = nil
    }

    /// PCM audio: the lengths in bytes its chunks take in the reference (shortest first).
    struct PCMTrack {
        var track: Int
        var stream: Int
        var chunkBytes: [Int]
        /// The same, most used first: where the chunks of several tracks
        /// must follow in the reference's order, a chain of the lengths the
        /// reference's chunks take (a round's) over one of a last chunk's.
        var byUse: [Int] = []
        /// The bytes of one sample frame (every channel's sample): a chunk holds whole frames.
        var frameBytes = 1
    }

    /// A data track: `track` its place among the rebuilt tracks, nil when
    /// its samples are only passed over; `stream` the reference's stream.
    struct DataTrack {
        var track: Int?
        var stream: Int
        var shape: DataSampleShape
        /// The sizes the reference's samples take, to tell apart tracks of one shape.
        var sizes: Set<Int>
        /// The sizes of the reference's samples in its order: of samples known
        /// only by their size, one of the size the reference's sample of that
        /// place in the track takes is taken first (a GoPro's first `fdsc`
        /// samples, 620 then 152 bytes).
        var order: [Int] = []
    }

    struct Tracks {
        var video: [VideoTrack] = []
        var audio: [AudioTrack] = []
        var pcm: [PCMTrack] = []
        var data: [DataTrack] = []
        /// Which of the reference's streams a sample of each is followed by
        /// in its media data (`follows[a]` holds `b` when a sample of `a` ends
        /// where one of `b` starts): of samples that could each be next, one
        /// of a track the reference puts there is taken first.
        var follows: [Int: Set<Int>] = [:]
        /// The same of chunks (a PCM track's run of samples counted once),
        /// with what starts the media data under `start`: of tracks whose
        /// samples look alike (two video tracks of one codec, PCM tracks of
        /// one format), the one the reference puts after the chunk before;
        /// when it puts more than one there, or the chunk before is not
        /// known, the sample is left out.
        var chunkFollows: [Int: Set<Int>] = [:]
        /// The same after two chunks (`[a, b]`: a chunk of `a`, then one of
        /// `b`), where one chunk does not say which of alike tracks is next
        /// (a 30 fps and a 15 fps track: after a chunk of the first, either).
        var chunkFollowsTwo: [[Int]: Set<Int>] = [:]
        /// How many samples of unstructured length (PCM chunks, data
        /// samples known by their size) may lead to a proven sample: 2, and
        /// with several tracks one more than the reference has in a row (two
        /// rounds of three PCM tracks' chunks between video samples: 7).
        var chainDepth = 2
        /// Several audio or video tracks: each sample is one of a track the
        /// reference puts after the chunk before, and leads to one the
        /// reference puts after it (`orderedStep`).
        var ordered = false

        /// Stands for the sample before the first in the media data.
        static let start = -1
    }

    let b: UnsafeRawBufferPointer
    let tracks: Tracks
    let memo = Memo()

    /// Of each video track, the first track whose scanner is the same
    /// (tracks of one codec and length prefix find the same samples).
    let videoScanner: [Int]

    /// What was found at a place, kept: the same places are asked about
    /// again and again as candidates' ends, and an AAC frame is measured
    /// by decoding. Video by scanner, AAC by track, proofs by place and depth.
    final class Memo {
        var video: [Int: [Int: AccessUnitScanner.Result]] = [:]
        var audio: [Int: [Int: Int?]] = [:]
        var proven: [Int: Bool] = [:]
        var leads: [Int: Bool] = [:]
        var end = -1
        func reset(end e: Int) {
            if e != end { video = [:]; audio = [:]; proven = [:]; leads = [:]; end = e }
        }
        /// Places behind the walk are not asked about again.
        func forget(before p: Int) {
            for (k, m) in video where m.count > 4096 { video[k] = m.filter { $0.key >= p } }
            for (k, m) in audio where m.count > 4096 { audio[k] = m.filter { $0.key >= p } }
            if proven.count > 4096 { proven = proven.filter { $0.key >> 5 >= p } }
            if leads.count > 4096 { leads = leads.filter { $0.key >> 13 >= p } }
        }
    }

    /// What the scanner of video track `v` (its place in `tracks.video`) finds at `p`.
    func video(_ v: Int, at p: Int, end: Int) -> AccessUnitScanner.Result {
        memo.reset(end: end)
        let k = videoScanner[v]
        if let r = memo.video[k]?[p] { return r }
        let r = tracks.video[k].scanner.sample(b, at: p, end: end)
        memo.video[k, default: [:]][p] = r
        return r
    }

    /// The length of an AAC frame of track `a` (its place in `tracks.audio`) at `p`.
    func audioFrame(_ a: Int, at p: Int, end: Int) -> Int? {
        memo.reset(end: end)
        if let r = memo.audio[a]?[p] { return r }
        let t = tracks.audio[a]
        if let first = t.firstElements, p >= end || !first.contains(b[p] >> 1) { return nil }
        let r = t.measure.frameLength(UnsafeRawBufferPointer(rebasing: b[p..<end]))
        memo.audio[a, default: [:]][p] = r
        return r
    }

    init(_ b: UnsafeRawBufferPointer, boxes: TopLevelBoxes, tracks: Tracks,
         cancellation: Cancellation, progress: ((Int) -> Void)? = nil) throws(MediaError) {
        self.b = b
        self.tracks = tracks
        videoScanner = tracks.video.map { v in tracks.video.firstIndex { $0.scanner == v.scanner } ?? 0 }
        var sinceCheck = 0
        let dataStreams = Set(tracks.data.map(\.stream))
        for (n, range) in boxes.mediaData.enumerated() {
            // Only the last box can have been cut off.
            let open = boxes.cutShort && n == boxes.mediaData.count - 1
            var i = range.lowerBound
            var previous: Int? = n == 0 ? Tracks.start : nil, twoBack: Int?
            // The stream of the last audio or video sample (data samples may lie apart in the reference).
            var lastAV: Int?
            walk: while i < range.upperBound {
                sinceCheck += 1
                if sinceCheck >= 256 {
                    sinceCheck = 0
                    try cancellation.check()
                    progress?(i)
                    memo.forget(before: i)
                }
                var found = step(at: i, end: range.upperBound, open: open, after: previous, twoBack: twoBack)
                if case .nothing = found,
                   let pcm = pcmStep(at: i, end: range.upperBound, open: open, after: previous, lastAV: lastAV) { found = pcm }
                switch found {
                case .sample(let s, let stream):
                    samples.append(s)
                    counted[stream, default: 0] += 1
                    i = s.offset + s.size
                    (twoBack, previous) = (previous, stream)
                    if !dataStreams.contains(stream) { lastAV = stream }
                case .passed(let stream, let next):
                    skipped[stream, default: 0] += 1
                    counted[stream, default: 0] += 1
                    i = next
                    (twoBack, previous) = (previous, stream)
                    if !dataStreams.contains(stream) { lastAV = stream }
                case .ambiguous(let next, let candidates, let sample):
                    if let sample { alikeLeft.append((ambiguous.count, sample, candidates)) }
                    ambiguous.append((i..<next, candidates))
                    i = next
                    (twoBack, previous, lastAV) = (nil, nil, nil)
                case .stop:
                    break walk
                case .nothing:
                    guard let next = resync(after: i, end: range.upperBound, open: open) else { break walk }
                    gaps.append(i..<next)
                    i = next
                    (twoBack, previous, lastAV) = (nil, nil, nil)
                }
            }
            if i < range.upperBound {
                unplacedBytes += range.upperBound - i
                if stoppedAt == nil { stoppedAt = i }
                if n < boxes.mediaData.count - 1 { tails.append(i..<range.upperBound) }
            }
        }
        decideAlikeBackward()
        placePCM()
    }

    enum Step {
        case sample(FoundSample, stream: Int)
        case passed(stream: Int, next: Int)
        /// `sample`: of tracks that look alike, the sample as found.
        case ambiguous(next: Int, tracks: [Int], sample: FoundSample? = nil)
        /// A sample runs into the end of a cut file: nothing after it is whole.
        case stop
        case nothing

        var stream: Int? {
            switch self {
            case .sample(_, let s), .passed(let s, _): s
            default: nil
            }
        }
    }

    /// What starts at `i`: of the kinds of sample that could, in the order
    /// of the type's summary, the first of a track the reference puts after
    /// the sample before (`after`, its stream), else the first; of tracks
    /// whose samples look alike, as `alike` decides.
    private func step(at i: Int, end: Int, open: Bool, after previous: Int?, twoBack: Int?) -> Step {
        if tracks.ordered { return orderedStep(at: i, end: end, open: open, after: previous, twoBack: twoBack) }
        var first: Step?
        let likely = previous.flatMap { tracks.follows[$0] }
        func offer(_ s: Step) -> Step? {
            if first == nil { first = s }
            guard let likely, !likely.isEmpty, let stream = s.stream else { return s }
            return likely.contains(stream) ? s : nil
        }
        func taken(_ s: Step) -> Step { alike(s, at: i, end: end, after: previous, twoBack: twoBack) }
        func found(_ track: Int, _ stream: Int, _ size: Int, _ keyframe: Bool = true) -> Step {
            .sample(FoundSample(track: track, offset: i, size: size, keyframe: keyframe), stream: stream)
        }
        var cutShort = false
        // A video or structured data sample proven here rules out a PCM chunk here.
        var other = false
        for (v, t) in tracks.video.enumerated() {
            switch video(v, at: i, end: end) {
            case .sample(let e, let keyframe):
                // A sample that ends exactly where a cut file does may have lost its last slices.
                if open && e == end { return .stop }
                if let s = offer(found(t.track, t.stream, e - i, keyframe)) { return taken(s) }
                other = other || proven(e, end: end, open: open, depth: tracks.chainDepth)
            case .cutShort:
                cutShort = true
            case .none:
                break
            }
        }
        if cutShort && first == nil {
            // Only a data sample proven here says the long length was not a video sample's.
            for structured in [true, false] {
                if let found = dataSample(at: i, end: end, open: open, structured: structured, likely: likely),
                   found.stream != nil { return found }
            }
            return .stop
        }
        if let found = dataSample(at: i, end: end, open: open, structured: true) {
            if let s = offer(found) { return s }
            other = true
        }
        for (a, t) in tracks.audio.enumerated() {
            guard let length = audioFrame(a, at: i, end: end) else { continue }
            // Beside PCM, whose bytes a decoder may take for a frame, the sample after it must be proven.
            if !tracks.pcm.isEmpty && !proven(i + length, end: end, open: open, depth: tracks.chainDepth) { continue }
            if let s = offer(found(t.track, t.stream, length)) { return taken(s) }
        }
        for p in tracks.pcm where !other {
            if let length = p.chunkBytes.first(where: { i + $0 <= end && proven(i + $0, end: end, open: open, depth: tracks.chainDepth, cut: false) }),
               let s = offer(found(p.track, p.stream, length)) {
                return taken(s)
            }
        }
        if let found = dataSample(at: i, end: end, open: open, structured: false, likely: likely), let s = offer(found) {
            // A sample known only by its size, where the reference would put
            // one, does not displace a video sample or an AAC frame after
            // which the next sample is proven.
            if case .sample(let f, let stream)? = first, stream != s.stream,
               tracks.video.contains(where: { $0.stream == stream }) || tracks.audio.contains(where: { $0.stream == stream }),
               proven(f.offset + f.size, end: end, open: open, depth: tracks.chainDepth) {
                return taken(.sample(f, stream: stream))
            }
            return s
        }
        return first.map(taken) ?? .nothing
    }

    /// A data sample at `i` of the tracks whose shape is (or is not)
    /// structured, ending where the next sample is proven. The candidates
    /// proven through the fewest samples of unstructured length win (a
    /// 16-byte sample followed by a video sample over four 4-byte ones),
    /// then the shortest; two tracks still tied leave the sample out.
    func dataSample(at i: Int, end: Int, open: Bool, structured: Bool, likely: Set<Int>? = nil) -> Step? {
        let candidates = tracks.data.filter { $0.shape.isStructured == structured }
        guard !candidates.isEmpty else { return nil }
        for depth in 0...2 {
            var matches: [(track: DataTrack, end: Int)] = []
            for d in candidates {
                let ends = d.shape.ends(b, at: i, end: end).filter { proven($0, end: end, open: open, depth: depth) }
                // A structured sample ends at its nearest proven end; one known by size may take any.
                for e in structured ? Array(ends.prefix(1)) : ends { matches.append((d, e)) }
            }
            if !structured { matches = preferred(matches, at: i, likely: likely) }
            guard let shortest = matches.map(\.end).min() else { continue }
            matches = matches.filter { $0.end == shortest }
            if matches.count > 1 {
                let sized = matches.filter { $0.track.sizes.contains($0.end - i) }
                guard sized.count == 1 else { return .ambiguous(next: shortest, tracks: matches.map(\.track.stream)) }
                matches = sized
            }
            let m = matches[0]
            guard let track = m.track.track else { return .passed(stream: m.track.stream, next: m.end) }
            return .sample(FoundSample(track: track, offset: i, size: m.end - i, keyframe: true), stream: m.track.stream)
        }
        return nil
    }

    /// Of samples known only by their size that could each start at `i`:
    /// those of a track the reference puts after the sample before
    /// (`likely`), then those of the size the reference's sample of that
    /// place in its track takes.
    private func preferred(_ matches: [(track: DataTrack, end: Int)], at i: Int,
                           likely: Set<Int>?) -> [(track: DataTrack, end: Int)] {
        var m = matches
        if let likely, case let l = m.filter({ likely.contains($0.track.stream) }), !l.isEmpty { m = l }
        let placed = m.filter { c in
            let n = counted[c.track.stream, default: 0]
            return n < c.track.order.count && c.track.order[n] == c.end - i
        }
        return placed.isEmpty ? m : placed
    }

    /// Whether a sample is shown to start at `p` (see the type's summary);
    /// `depth` bounds how many samples of unstructured length may lead to
    /// one. `cut`: whether a video sample that runs into the end of a cut
    /// file counts (it may be one, or bytes that only start like one: at the
    /// end of a PCM chunk, whose bytes show nothing of their own, it does not).
    func proven(_ p: Int, end: Int, open: Bool, depth: Int, cut: Bool = true) -> Bool {
        if p == end { return !open }
        for v in tracks.video.indices where videoScanner[v] == v {
            switch video(v, at: p, end: end) {
            case .sample: return true
            case .cutShort: if open && cut { return true }
            case .none: break
            }
        }
        for d in tracks.data where d.shape.isStructured && !d.shape.ends(b, at: p, end: end).isEmpty {
            return true
        }
        if tracks.audio.indices.contains(where: { audioFrame($0, at: p, end: end) != nil }) { return true }
        guard depth > 0 else { return false }
        let key = p << 5 | (cut ? 16 : 0) | min(depth, 15)
        memo.reset(end: end)
        if let r = memo.proven[key] { return r }
        var r = tracks.pcm.contains { pcm in
            pcm.chunkBytes.contains { p + $0 <= end && proven(p + $0, end: end, open: open, depth: depth - 1, cut: false) }
        }
        if !r {
            r = tracks.data.contains { d in
                !d.shape.isStructured && d.shape.ends(b, at: p, end: end).contains { proven($0, end: end, open: open, depth: depth - 1, cut: cut) }
            }
        }
        memo.proven[key] = r
        return r
    }

    /// The next place after `i` where a video sample starts and the sample
    /// after it is proven too (with several tracks, one the reference puts
    /// after a sample of that video track); nil when there is none (or no
    /// video track).
    private func resync(after i: Int, end: Int, open: Bool) -> Int? {
        guard !tracks.video.isEmpty else { return nil }
        var p = i + 1
        while p < end {
            for (v, t) in tracks.video.enumerated() where tracks.ordered || videoScanner[v] == v {
                if case .sample(let e, _) = t.scanner.sample(b, at: p, end: end), e < end || !open,
                   tracks.ordered ? leads(e, after: t.stream, end: end, open: open, depth: tracks.chainDepth)
                                  : proven(e, end: end, open: open, depth: tracks.chainDepth) {
                    return p
                }
            }
            p += 1
        }
        return nil
    }
}
