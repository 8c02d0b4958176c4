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
        for s in reference.streams {
            switch s.mediaType {
            case .video where !s.isAttachedPicture && tracks.video == nil:
                let largest = s.indexedPackets?.map { Int($0.size) }.max() ?? 0
                guard let scanner = AccessUnitScanner(codecName: s.codecName, extradata: s.extradata,
                                                      longestUnit: max(8 * largest, 2 << 20)) else {
                    throw MediaError.invalid("could not repair with reference", path: reference.path, stream: s.index,
                                             message: "its video is \(s.codecName) without avcC/hvcC settings; repair finds H.264 and HEVC samples only")
                }
                tracks.video = MediaDataScan.VideoTrack(track: kept.count, stream: s.index, scanner: scanner)
            case .audio where tracks.audio == nil && tracks.pcm == nil:
                if let measure = AudioFrameMeasure(stream: s) {
                    tracks.audio = MediaDataScan.AudioTrack(track: kept.count, stream: s.index, measure: measure)
                } else if let chunks = Self.pcmChunkBytes(s) {
                    tracks.pcm = MediaDataScan.PCMTrack(track: kept.count, stream: s.index, chunkBytes: chunks)
                } else {
                    throw MediaError.invalid("could not repair with reference", path: reference.path, stream: s.index,
                                             message: "its audio is \(s.codecName); repair finds AAC frames and PCM chunks (of the reference's lengths) only")
                }
            case .data, .unknown:
                let sizes = Self.sampleSizes(s)
                guard let shape = DataSampleShape(track: reference.sourceIndex?.track(id: s.id), sizes: sizes) else {
                    leftOut.append((s, "its samples cannot be told apart in media data"))
                    continue
                }
                // Kept where the output can carry it, else only passed over.
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
                if !carried || unsure { continue }
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
        // AAC frames are told by a decoder taking the bytes, which short runs
        // of other bytes often pass: beside samples known only by their size
        // (a GoPro's `fdsc` and timecode), a frame must also start with an
        // element the reference's frames start with.
        if let aac = tracks.audio, tracks.data.contains(where: { !$0.shape.isStructured }) {
            tracks.audio?.firstElements = try Self.firstElements(reference.streams[aac.stream], in: reference.path)
        }
        guard tracks.video != nil || tracks.audio != nil || tracks.pcm != nil else {
            throw MediaError.invalid("could not repair with reference", path: reference.path,
                                     message: "it has no H.264/HEVC video, AAC or PCM audio stream")
        }
    }

    /// Which stream's sample follows which in the reference's media data
    /// (see `MediaDataScan.Tracks.follows`).
    static func follows(_ reference: InputFile) -> [Int: Set<Int>] {
        var placed: [(position: Int64, end: Int64, stream: Int)] = []
        for s in reference.streams {
            for p in s.packetsInSampleTables ?? [] { placed.append((p.position, p.position + Int64(p.size), s.index)) }
        }
        placed.sort { $0.position < $1.position }
        var follows: [Int: Set<Int>] = [:]
        for (a, b) in zip(placed, placed.dropFirst()) where a.end == b.position {
            follows[a.stream, default: []].insert(b.stream)
        }
        return follows
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
    /// one follows another), shortest first; nil when the stream is not
    /// interleaved PCM or its index lists no packet.
    static func pcmChunkBytes(_ s: InputStream) -> [Int]? {
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
        // Shortest first: a longer length can reach past the next sample to
        // a later one that also parses, a shorter one only by chance.
        let lengths = count.keys.sorted()
        return lengths.isEmpty ? nil : lengths
    }
}
