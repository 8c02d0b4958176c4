/// PCM has no sync pattern: its chunks are told only by where they lie.
/// A chunk is taken where its bytes are proven to be audio at their place:
/// it starts where a sample is proven to end and ends where one is proven
/// to start (at a length the reference's chunks take, see `MediaDataScan`;
/// or, where the recording's chunks are longer than the reference's, as a
/// camera's are beside a reference written again, by `pcmRun`), and no
/// sample of another track is proven to start there. Its time is the
/// frames of the track's chunks before it: proven only while no bytes
/// before it that may have held its audio were left out (`placePCM`).
extension MediaDataScan {
    /// A PCM chunk at `i`, where a sample of `previous`'s stream was proven
    /// to end and nothing of the reference's lengths was proven to start:
    /// the bytes up to the first place where a sample with a structure of
    /// its own (video, structured data) is proven to start, or up to the
    /// end of media data that was not cut, if they are whole sample frames.
    /// Only where the reference puts a chunk of that one PCM track after
    /// `previous`'s (after the last audio or video chunk, `lastAV`, when
    /// `previous` is of a data track: a reference written again keeps those
    /// apart) and of no other audio or unread track, and after it only
    /// video or data chunks (so the chunk ends where one of those starts);
    /// and only when every data track of the reference has a structure of
    /// its own (a sample known only by its size could lie inside the chunk,
    /// never ruled out). Else nil.
    func pcmRun(at i: Int, end: Int, open: Bool, after previous: Int?, lastAV: Int?) -> (sample: FoundSample, stream: Int)? {
        guard let previous, tracks.data.allSatisfy(\.shape.isStructured) else { return nil }
        let videos = Set(tracks.video.map(\.stream)), data = Set(tracks.data.map(\.stream))
        var after = tracks.chunkFollows[previous] ?? []
        if data.contains(previous), let lastAV { after.formUnion(tracks.chunkFollows[lastAV] ?? []) }
        let others = after.subtracting(videos).subtracting(data)
        guard others.count == 1, let t = tracks.pcm.first(where: { others.contains($0.stream) }), t.frameBytes > 0,
              (tracks.chunkFollows[t.stream] ?? []).subtracting(videos).subtracting(data).isEmpty else { return nil }
        // No data sample starts here.
        let shapes = tracks.data.map(\.shape)
        guard !shapes.contains(where: { $0.starts(b, at: i, end: end) }) else { return nil }
        // The first place a sample is proven to start, whole frames away or not (a walk no longer than `resync`'s).
        let scanners = tracks.video.indices.filter { videoScanner[$0] == $0 }.map { tracks.video[$0].scanner }
        var k = i + 1
        while k < end && !startsProven(at: k, end: end, open: open, scanners: scanners, shapes: shapes) { k += 1 }
        guard k < end || !open, (k - i) % t.frameBytes == 0 else { return nil }
        return (FoundSample(track: t.track, offset: i, size: k - i, keyframe: true), t.stream)
    }

    /// Whether a sample with a structure of its own starts at `p` and the
    /// sample after it is proven too (not by one that runs into the end of a
    /// cut file): a video sample (of `scanners`) or a structured data sample
    /// (of `shapes`, looked at first on their own).
    private func startsProven(at p: Int, end: Int, open: Bool, scanners: [AccessUnitScanner], shapes: [DataSampleShape]) -> Bool {
        for s in scanners {
            if case .sample(let e, _) = s.sample(b, at: p, end: end), e < end || !open,
               proven(e, end: end, open: open, depth: tracks.chainDepth, cut: false) {
                return true
            }
        }
        guard shapes.contains(where: { $0.starts(b, at: p, end: end) }) else { return false }
        return dataSample(at: p, end: end, open: open, structured: true) != nil
    }

    /// What the walk takes where `step` found nothing: a PCM chunk
    /// (`pcmRun`); or a structured data sample whose items parse here up to
    /// their first end, where a PCM chunk is found after it (a Live Photo's
    /// last `mebx` sample before its audio, whose end nothing else proves).
    /// Samples of several data tracks that parse here leave the bytes out.
    func pcmStep(at i: Int, end: Int, open: Bool, after previous: Int?, lastAV: Int?) -> Step? {
        if let run = pcmRun(at: i, end: end, open: open, after: previous, lastAV: lastAV) {
            return .sample(run.sample, stream: run.stream)
        }
        guard previous != nil else { return nil }
        let data = tracks.data.compactMap { d -> (track: DataTrack, end: Int)? in
            guard d.shape.isStructured, let e = d.shape.ends(b, at: i, end: end).first,
                  pcmRun(at: e, end: end, open: open, after: d.stream, lastAV: lastAV) != nil else { return nil }
            return (d, e)
        }
        guard data.count == 1, let d = data.first else { return nil }
        guard let track = d.track.track else { return .passed(stream: d.track.stream, next: d.end) }
        return .sample(FoundSample(track: track, offset: i, size: d.end - i, keyframe: true), stream: d.track.stream)
    }

    /// Leaves out each PCM track's chunks that lie after bytes left out
    /// (a stretch where no sample was proven, the rest of a media data box
    /// the walk could not place, a chunk that could be of this track or
    /// another): those bytes may have held the track's audio, so the frames
    /// before such a chunk, and its time, are not known (`pcmUnplaced`).
    mutating func placePCM() {
        for t in tracks.pcm {
            let lost = gaps.map(\.lowerBound) + tails.map(\.lowerBound)
                + ambiguous.filter { $0.tracks.contains(t.stream) }.map(\.range.lowerBound)
            guard let from = lost.min() else { continue }
            let unplaced = samples.filter { $0.track == t.track && $0.offset >= from }
            guard !unplaced.isEmpty else { continue }
            pcmUnplaced[t.stream] = (from, unplaced[0].offset..<(unplaced[unplaced.count - 1].offset + unplaced[unplaced.count - 1].size),
                                     unplaced.count, unplaced.reduce(0) { $0 + $1.size })
            samples.removeAll { $0.track == t.track && $0.offset >= from }
        }
    }
}
