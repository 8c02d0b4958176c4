import Media

/// The walk through media data of a reference with several audio or
/// video tracks, whose chunks look alike more often than one track's
/// (PCM bytes a video scanner or an AAC decoder takes, two tracks of one
/// format): every sample found follows the reference's order of chunks.
extension MediaDataScan {
    /// What starts at `i`: a sample of a track the reference puts after the
    /// chunk before (`previous`, its stream; any track when it is not
    /// known), after which a chunk the reference puts there is proven to
    /// start (`leads`). Video first, then structured data, AAC, PCM, data
    /// known by its size; of tracks that look alike, as `alike` decides.
    func orderedStep(at i: Int, end: Int, open: Bool, after previous: Int?, twoBack: Int?) -> Step {
        let next = previous.flatMap { tracks.chunkFollows[$0] }
        func allowed(_ stream: Int) -> Bool { next?.contains(stream) ?? true }
        func found(_ track: Int, _ stream: Int, _ size: Int, _ keyframe: Bool = true) -> Step {
            alike(.sample(FoundSample(track: track, offset: i, size: size, keyframe: keyframe), stream: stream),
                  at: i, end: end, after: previous, twoBack: twoBack)
        }
        var cutShort = false
        for (v, t) in tracks.video.enumerated() where allowed(t.stream) {
            switch video(v, at: i, end: end) {
            case .sample(let e, let keyframe):
                // A sample that ends exactly where a cut file does may have lost its last slices.
                if open && e == end { return .stop }
                // Where other bytes after it pass for NAL units, the sample ends at an earlier unit's end.
                let ends = [e] + t.scanner.unitEnds(b, at: i, end: e).reversed().filter { $0 != e }
                if let e = ends.first(where: { leads($0, after: t.stream, end: end, open: open, depth: tracks.chainDepth) }) {
                    return found(t.track, t.stream, e - i, keyframe)
                }
            case .cutShort:
                cutShort = true
            case .none:
                break
            }
        }
        // A structured data sample proven here, though not of a track the reference puts here, rules out a PCM chunk here.
        let data = dataSample(at: i, end: end, open: open, structured: true, likely: next)
        if let s = data, s.stream.map(allowed) ?? true { return s }
        for (a, t) in tracks.audio.enumerated() where allowed(t.stream) {
            if let length = audioFrame(a, at: i, end: end),
               leads(i + length, after: t.stream, end: end, open: open, depth: tracks.chainDepth) {
                return found(t.track, t.stream, length)
            }
        }
        for t in tracks.pcm where allowed(t.stream) && data == nil {
            if let length = t.byUse.first(where: { i + $0 <= end && leads(i + $0, after: t.stream, end: end, open: open, depth: tracks.chainDepth, cut: false) }) {
                return found(t.track, t.stream, length)
            }
        }
        if let s = dataSample(at: i, end: end, open: open, structured: false, likely: next), s.stream.map(allowed) ?? true { return s }
        return cutShort ? .stop : .nothing
    }

    /// Whether at `p` a chunk starts of a track the reference puts after
    /// `stream`'s: a video sample, an AAC frame or a structured data sample,
    /// or (within `depth` such steps) a PCM chunk or a data sample known by
    /// its size that leads to one in turn; or the media data ends there
    /// (and was not cut). `cut` as for `proven`.
    func leads(_ p: Int, after stream: Int, end: Int, open: Bool, depth: Int, cut: Bool = true) -> Bool {
        if p == end { return !open }
        let next = tracks.chunkFollows[stream] ?? []
        let key = p << 13 | (cut ? 1 << 12 : 0) | (stream & 0xff) << 4 | min(depth, 15)
        memo.reset(end: end)
        if stream < 256, let r = memo.leads[key] { return r }
        var r = false
        search: do {
            for (v, t) in tracks.video.enumerated() where next.contains(t.stream) {
                switch video(v, at: p, end: end) {
                case .sample: r = true; break search
                case .cutShort: if open && cut { r = true; break search }
                case .none: break
                }
            }
            for d in tracks.data where next.contains(d.stream) && d.shape.isStructured && !d.shape.ends(b, at: p, end: end).isEmpty {
                r = true; break search
            }
            for (a, t) in tracks.audio.enumerated() where next.contains(t.stream) && audioFrame(a, at: p, end: end) != nil {
                r = true; break search
            }
            guard depth > 0 else { break search }
            for t in tracks.pcm where next.contains(t.stream) {
                if t.chunkBytes.contains(where: { p + $0 <= end && leads(p + $0, after: t.stream, end: end, open: open, depth: depth - 1, cut: false) }) {
                    r = true; break search
                }
            }
            for d in tracks.data where next.contains(d.stream) && !d.shape.isStructured {
                if d.shape.ends(b, at: p, end: end).contains(where: { leads($0, after: d.stream, end: end, open: open, depth: depth - 1, cut: cut) }) {
                    r = true; break search
                }
            }
        }
        if stream < 256 { memo.leads[key] = r }
        return r
    }

    /// A sample `s` at `i` of a track whose samples look like another's
    /// here (video tracks whose scanners find the same sample, AAC tracks
    /// whose decoders take the same frame, PCM tracks that both take
    /// chunks of its length): of those tracks, the one the reference puts
    /// after the chunk before (`previous`, its stream), or where it puts
    /// more than one there, after the two before (`twoBack`, `previous`);
    /// when it puts none or more than one of them there, or the chunk
    /// before is not known, the sample is left out with the tracks it could
    /// be of.
    func alike(_ s: Step, at i: Int, end: Int, after previous: Int?, twoBack: Int?) -> Step {
        guard case .sample(let f, let stream) = s else { return s }
        var candidates: [(track: Int, stream: Int)] = []
        if let v = tracks.video.firstIndex(where: { $0.stream == stream }) {
            let r = video(v, at: i, end: end)
            for (w, t) in tracks.video.enumerated() where w == v || video(w, at: i, end: end) == r {
                candidates.append((t.track, t.stream))
            }
        } else if tracks.audio.contains(where: { $0.stream == stream }) {
            for (a, t) in tracks.audio.enumerated() where t.stream == stream || audioFrame(a, at: i, end: end) == f.size {
                candidates.append((t.track, t.stream))
            }
        } else if tracks.pcm.contains(where: { $0.stream == stream }) {
            for t in tracks.pcm where t.stream == stream || t.chunkBytes.contains(f.size) {
                candidates.append((t.track, t.stream))
            }
        }
        guard candidates.count > 1 else { return s }
        let order = previous.flatMap { tracks.chunkFollows[$0] } ?? []
        var placed = candidates.filter { order.contains($0.stream) }
        // Where one chunk before does not decide, two may (as the reference has them).
        if placed.count > 1, let previous, let twoBack, let two = tracks.chunkFollowsTwo[[twoBack, previous]] {
            placed = placed.filter { two.contains($0.stream) }
        }
        guard placed.count == 1 else { return .ambiguous(next: i + f.size, tracks: candidates.map(\.stream), sample: f) }
        var g = f
        g.track = placed[0].track
        return .sample(g, stream: placed[0].stream)
    }


    /// Samples of tracks that look alike left out where the chunk before
    /// was not known (after lost bytes), decided from the sample after
    /// instead, last first: the one track of them the reference puts before
    /// a chunk of that sample's track. Those still undecided stay left out.
    mutating func decideAlikeBackward() {
        guard !alikeLeft.isEmpty else { return }
        var trackOf: [Int: Int] = [:], streamOf: [Int: Int] = [:]
        for (track, stream) in tracks.video.map({ ($0.track, $0.stream) }) + tracks.audio.map({ ($0.track, $0.stream) })
            + tracks.pcm.map({ ($0.track, $0.stream) }) {
            trackOf[stream] = track
            streamOf[track] = stream
        }
        var startsAt: [Int: Int] = [:]
        for s in samples { if let stream = streamOf[s.track] { startsAt[s.offset] = stream } }
        var decided: Set<Int> = []
        for left in alikeLeft.reversed() {
            guard let after = startsAt[left.sample.offset + left.sample.size] else { continue }
            let before = left.tracks.filter { tracks.chunkFollows[$0]?.contains(after) == true }
            guard before.count == 1, let track = trackOf[before[0]] else { continue }
            var s = left.sample
            s.track = track
            samples.append(s)
            startsAt[s.offset] = before[0]
            decided.insert(left.index)
        }
        guard !decided.isEmpty else { return }
        samples.sort { $0.offset < $1.offset }
        ambiguous = ambiguous.enumerated().filter { !decided.contains($0.offset) }.map(\.element)
        alikeLeft = alikeLeft.filter { !decided.contains($0.index) }
    }
}
