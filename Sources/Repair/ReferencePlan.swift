import Media
import Pipeline

/// The reference's streams a rebuild can find in media data, and how.
struct ReferencePlan {
    var kept: [InputStream] = []
    var tracks = MediaDataScan.Tracks()
    var warnings: [String] = []
    /// The reference's streams left out, with why (by stream index).
    var leftOut: [(stream: InputStream, why: String)] = []

    init(_ reference: InputFile, container: Container) throws(MediaError) {
        tracks.follows = Self.follows(reference)
        let apart = Self.sizeOnlyApart(reference, follows: tracks.follows)
        // Every video track's scanner takes the same longest NAL unit, so
        // tracks of one codec find the same samples (told apart by the interleave).
        let videos = reference.streams.filter { $0.mediaType == .video && !$0.isAttachedPicture }
        let longest = videos.compactMap { $0.indexedPackets?.map { Int($0.size) }.max() }.max() ?? 0
        for s in reference.streams {
            switch s.mediaType {
            case .video where !s.isAttachedPicture:
                guard let scanner = AccessUnitScanner(codecName: s.codecName, extradata: s.extradata,
                                                      longestUnit: max(8 * longest, 2 << 20)) else {
                    let why = "its video is \(s.codecName) without avcC/hvcC settings; repair finds H.264 and HEVC samples only"
                    if tracks.video.isEmpty {
                        throw MediaError.invalid("could not repair with reference", path: reference.path, stream: s.index, message: why)
                    }
                    leftOut.append((s, why))
                    continue
                }
                tracks.video.append(MediaDataScan.VideoTrack(track: kept.count, stream: s.index, scanner: scanner))
            case .audio:
                if let measure = AudioFrameMeasure(stream: s) {
                    tracks.audio.append(MediaDataScan.AudioTrack(track: kept.count, stream: s.index, measure: measure))
                } else if let chunks = Self.pcmChunkBytes(s) {
                    tracks.pcm.append(MediaDataScan.PCMTrack(track: kept.count, stream: s.index, chunkBytes: chunks,
                                                             byUse: Self.pcmChunkBytesByUse(s), frameBytes: s.pcmSilence?.count ?? 1))
                } else {
                    let why = "its audio is \(s.codecName); repair finds AAC frames and PCM chunks (of the reference's lengths) only"
                    if tracks.audio.isEmpty && tracks.pcm.isEmpty {
                        throw MediaError.invalid("could not repair with reference", path: reference.path, stream: s.index, message: why)
                    }
                    leftOut.append((s, why))
                    continue
                }
            case .data, .unknown:
                guard try planData(s, reference: reference, container: container, apart: apart) else { continue }
            default:
                leftOut.append((s, "its samples cannot be found in media data"))
                continue
            }
            guard s.mediaType == .data || s.mediaType == .unknown || container.canHold(s) != false else {
                throw MediaError.invalid("could not repair into", path: nil, stream: s.index,
                                         message: "\(container.name) cannot hold \(s.mediaType.rawValue) \(s.codecName)",
                                         remedy: .nameContainer)
            }
            kept.append(s)
        }
        try planOrder(reference)
        guard !tracks.video.isEmpty || !tracks.audio.isEmpty || !tracks.pcm.isEmpty else {
            throw MediaError.invalid("could not repair with reference", path: reference.path,
                                     message: "it has no H.264/HEVC video, AAC or PCM audio stream")
        }
    }

    /// Plans a data track: found by its shape, kept where the output can
    /// carry it and its samples can be told apart, else only passed over
    /// (false: not kept).
    private mutating func planData(_ s: InputStream, reference: InputFile, container: Container,
                                   apart: [Int]) throws(MediaError) -> Bool {
        let sizes = Self.sampleSizes(s)
        guard let shape = DataSampleShape(track: reference.sourceIndex?.track(id: s.id), sizes: sizes) else {
            leftOut.append((s, "its samples cannot be told apart in media data"))
            return false
        }
        let carried = container.isISOBMFF && CarriedTrack.carries(s) && s.indexedPackets?.isEmpty == false
        let unsure = !shape.isStructured && !apart.isEmpty
        if !carried {
            leftOut.append((s, container.isISOBMFF ? "its index lists no whole sample" : "\(container.name) cannot hold it"))
        } else if unsure {
            let kinds = apart.map { reference.streams[$0].dataKind }.joined(separator: ", ")
            leftOut.append((s, "its samples are known only by their size, and the reference keeps those of \(kinds) apart from its AAC frames (a file written again, not as the camera wrote it), so which such sample is which cannot be told"))
        }
        tracks.data.append(MediaDataScan.DataTrack(track: carried && !unsure ? kept.count : nil, stream: s.index, shape: shape,
                                                   sizes: Set(sizes), order: Self.sampleOrder(s)))
        return carried && !unsure
    }

    /// What tells the tracks' samples apart beyond their own bytes: the
    /// reference's order of chunks (which track's chunk follows which, and
    /// which starts its media data), for tracks whose samples look alike;
    /// beside samples known only by their size or another audio track, the
    /// elements the reference's AAC frames start with (AAC frames are told
    /// by a decoder taking the bytes, which short runs of other bytes often
    /// pass: a GoPro's `fdsc` and timecode, PCM); with several audio or
    /// video tracks, chains of chunks known by their length as long as the
    /// reference's.
    private mutating func planOrder(_ reference: InputFile) throws(MediaError) {
        let order = Self.chunkOrder(reference, runs: Set(tracks.pcm.map(\.stream)))
        tracks.chunkFollows = order.follows
        for (a, (b, c)) in zip(order.chunks, zip(order.chunks.dropFirst(), order.chunks.dropFirst(2))) {
            tracks.chunkFollowsTwo[[a, b], default: []].insert(c)
        }
        if let first = order.first { tracks.chunkFollows[MediaDataScan.Tracks.start] = [first] }
        let otherAudio = tracks.audio.count + tracks.pcm.count > 1
        if otherAudio || tracks.data.contains(where: { !$0.shape.isStructured }) {
            for j in tracks.audio.indices {
                tracks.audio[j].firstElements = try Self.firstElements(reference.streams[tracks.audio[j].stream], in: reference.path)
            }
        }
        tracks.ordered = tracks.video.count > 1 || tracks.audio.count + tracks.pcm.count > 1
        if tracks.ordered {
            // As many chunks known by their length as the reference has in a row, and one more.
            let sized = Set(tracks.pcm.map(\.stream) + tracks.data.filter { !$0.shape.isStructured }.map(\.stream))
            var run = 0, longest = 0
            for s in order.chunks {
                run = sized.contains(s) ? run + 1 : 0
                longest = max(longest, run)
            }
            tracks.chainDepth = max(2, min(longest + 1, 15))
        }
    }

    /// Which stream's sample follows which in the reference's media data
    /// (see `MediaDataScan.Tracks.follows`).
    static func follows(_ reference: InputFile) -> [Int: Set<Int>] {
        chunkOrder(reference, runs: []).follows
    }

    /// Which stream's chunk follows which in the reference's media data, a
    /// chunk being a run of one stream's samples in `runs` (PCM, which the
    /// demuxer cuts into packets as it likes) or one sample of any other,
    /// the stream whose chunk comes first, and the streams of the chunks in
    /// the order they lie.
    static func chunkOrder(_ reference: InputFile, runs: Set<Int>) -> (follows: [Int: Set<Int>], first: Int?, chunks: [Int]) {
        var placed: [(position: Int64, end: Int64, stream: Int)] = []
        for s in reference.streams {
            for p in s.packetsInSampleTables ?? [] { placed.append((p.position, p.position + Int64(p.size), s.index)) }
        }
        placed.sort { $0.position < $1.position }
        var follows: [Int: Set<Int>] = [:]
        var chunks = placed.prefix(1).map(\.stream)
        for (a, b) in zip(placed, placed.dropFirst()) {
            let together = a.end == b.position
            if together && a.stream == b.stream && runs.contains(a.stream) { continue }
            chunks.append(b.stream)
            if together { follows[a.stream, default: []].insert(b.stream) }
        }
        return (follows, placed.first?.stream, chunks)
    }

    /// The data streams of a reference with AAC whose samples are known only
    /// by their size and lie in runs of their own, apart from the other
    /// tracks' (a file written again, not as a camera writes): the reference
    /// does not say where such samples lie among the AAC frames, so the
    /// walk can only pass over every sample known by its size.
    static func sizeOnlyApart(_ reference: InputFile, follows: [Int: Set<Int>]) -> [Int] {
        guard reference.streams.contains(where: { $0.mediaType == .audio && $0.codecName == "aac" }) else { return [] }
        return reference.streams.filter { s in
            guard s.mediaType == .data || s.mediaType == .unknown, case let sizes = sampleSizes(s),
                  let shape = DataSampleShape(track: reference.sourceIndex?.track(id: s.id), sizes: sizes),
                  !shape.isStructured, (s.packetsInSampleTables?.count ?? 0) > 1 else { return false }
            return follows[s.index].map { $0.subtracting([s.index]).isEmpty } ?? true
        }.map(\.index)
    }

    /// The first element (syntax element id and instance tag: the first 7
    /// bits) of each of an AAC stream's frames in the reference.
    static func firstElements(_ s: InputStream, in path: String) throws(MediaError) -> Set<UInt8> {
        let mapped = try MappedFile(path: path)
        return mapped.withBytes { b in
            Set((s.packetsInSampleTables ?? []).compactMap { p -> UInt8? in
                p.size > 0 && p.position >= 0 && p.position < Int64(b.count) ? b[Int(p.position)] >> 1 : nil
            })
        }
    }

    /// The sizes of a stream's samples in the reference's index, in its order.
    static func sampleOrder(_ s: InputStream) -> [Int] {
        (s.packetsInSampleTables ?? []).map { Int($0.size) }
    }

    /// The sizes a stream's samples take in the reference's index, most used first.
    static func sampleSizes(_ s: InputStream) -> [Int] {
        var count: [Int: Int] = [:]
        for p in s.packetsInSampleTables ?? [] { count[Int(p.size), default: 0] += 1 }
        return count.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map(\.key)
    }

    /// The lengths in bytes of a PCM stream's runs in the reference's media
    /// data (its packets, which the demuxer cuts from chunks, joined where
    /// one follows another), shortest first (a longer length can reach past
    /// the next sample to a later one that also parses, a shorter one only
    /// by chance); nil when the stream is not interleaved PCM or its index
    /// lists no packet.
    static func pcmChunkBytes(_ s: InputStream) -> [Int]? {
        pcmChunkUses(s).map { $0.keys.sorted() }
    }

    /// The lengths in bytes of a PCM stream's runs (see `pcmChunkBytes`),
    /// most used first.
    static func pcmChunkBytesByUse(_ s: InputStream) -> [Int] {
        (pcmChunkUses(s) ?? [:]).sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map(\.key)
    }

    /// How many of a PCM stream's runs take each length; nil when the
    /// stream is not interleaved PCM or its index lists no packet.
    private static func pcmChunkUses(_ s: InputStream) -> [Int: Int]? {
        guard let frame = s.pcmSilence?.count, frame > 0, let packets = s.packetsInSampleTables, !packets.isEmpty else { return nil }
        var runs: [Int] = []
        var runEnd: Int64 = -1
        for p in packets.sorted(by: { $0.position < $1.position }) {
            if p.position == runEnd, let last = runs.last {
                runs[runs.count - 1] = last + Int(p.size)
            } else {
                runs.append(Int(p.size))
            }
            runEnd = p.position + Int64(p.size)
        }
        var count: [Int: Int] = [:]
        for r in runs where r % frame == 0 { count[r, default: 0] += 1 }
        return count.isEmpty ? nil : count
    }
}
