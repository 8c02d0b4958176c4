import FileAccess
import Glibc
import ISOBMFF

/// An MP4/MOV file's tracks as its index describes them, read from the boxes
/// themselves: what libavformat does not pass on — a timed-metadata track's
/// sample description (a `mebx` entry's keys, a GoPro `gpmd` entry), a video
/// sample entry's Dolby Vision, spatial and colour boxes, a track's handler
/// and references — for writers that carry them into an output.
public struct SourceIndex: Sendable {
    public let tracks: [SourceTrack]
    /// The movie's time scale and duration (`mvhd`): how long players say the file lasts.
    public let movieTimescale: UInt32?
    public let movieDuration: Int64?
    /// The byte counts of the pictures in the movie's iTunes `covr` item
    /// (`udta`/`meta`/`ilst`/`covr`/`data`), in order: the cover art the
    /// MP4/M4A muxer writes from attached-picture streams.
    public let coverArtSizes: [Int]

    /// The track with `id` (libavformat's stream `id` for MP4/MOV inputs).
    public func track(id: Int) -> SourceTrack? { tracks.first { $0.id == id } }

    /// Reads the index of the file at `path`; nil when it is not an MP4/MOV
    /// file with one readable `moov` (at most 256 MiB).
    public init?(path: String) {
        guard let file = try? OpenFile(path: path, O_RDONLY), let size = try? file.size() else { return nil }
        self.init(fileSize: size, read: { try? file.read($1, at: $0) })
    }

    /// The index of a file of `fileSize` bytes read by `read(offset, count)`.
    package init?(fileSize: Int64, read: (Int64, Int) -> [UInt8]?) {
        guard let top = try? MovieLayout.topLevelBoxes(fileSize: fileSize, read: read),
              let moov = top.first(where: { $0.type == "moov" }), moov.size <= 256 << 20,
              let bytes = read(moov.start, Int(moov.size)), bytes.count == Int(moov.size) else { return nil }
        self.init(moov: bytes)
    }

    /// The tracks of a whole `moov` box.
    init?(moov bytes: [UInt8]) {
        guard let tree = try? BoxNode.index(bytes[...]), let moov = tree.first, moov.type == "moov" else { return nil }
        self.init(moov: moov)
    }

    /// The tracks of a parsed `moov` box.
    init(moov: BoxNode) {
        tracks = (moov.children ?? []).filter { $0.type == "trak" }.compactMap(SourceTrack.init)
        let mvhd = (moov.children ?? []).first { $0.type == "mvhd" }?.value(MovieHeader.self)
        movieTimescale = mvhd.flatMap { $0.timescale > 0 ? $0.timescale : nil }
        movieDuration = mvhd.map { Int64(truncatingIfNeeded: $0.duration) }
        coverArtSizes = (moov.children ?? []).filter { $0.type == "udta" }.flatMap(Self.coverArtSizes(userData:))
    }

    /// The pictures of the `covr` items of a user data payload. Its `meta`
    /// is a full box in MP4 (version and flags before its `hdlr`) and not
    /// in QuickTime; a `data` box's value follows its type and locale.
    static func coverArtSizes(userData: BoxNode) -> [Int] {
        guard let udta = userData.value(UserData.self) else { return [] }
        var sizes: [Int] = []
        for meta in udta.list.boxes where meta.type == "meta" {
            for ilst in meta.value(Metadata.self)?.list.boxes ?? [] where ilst.type == "ilst" {
                for covr in ilst.value(ItemList.self)?.list.boxes ?? [] where covr.type == "covr" {
                    let values = try? BoxList(parsing: covr.payload, prefix: 0, type: covr.type)
                    for d in values?.boxes ?? [] where d.type == "data" { sizes.append(max(d.payload.count - 8, 0)) }
                }
            }
        }
        return sizes
    }

    /// The movie's duration in seconds, if its header gives it.
    public var movieSeconds: Double? {
        guard let movieTimescale, let movieDuration else { return nil }
        return Double(movieDuration) / Double(movieTimescale)
    }
}

/// One track of an MP4/MOV index (`SourceIndex`).
public struct SourceTrack: Sendable {
    /// The `tkhd` track id.
    public let id: Int
    /// The whole `trak` box, parsed down to its sample tables.
    let trak: BoxNode
    /// The media handler (`vide`, `soun`, `meta`, `tmcd`…) and its name.
    public let handlerType: FourCC?
    public let handlerName: String?
    /// The media's time scale and duration (`mdhd`: the sum of its samples' durations).
    public let timescale: UInt32?
    public let mediaDuration: Int64?
    /// The track's duration on the movie's timeline, in the movie's time scale (`tkhd`: its edits').
    public let duration: Int64?
    /// Each sample description (`stsd` entry), whole: header, fields, boxes.
    public var sampleDescriptions: [[UInt8]] { sampleEntries.map { $0.encoded() } }
    /// The same as boxes.
    package let sampleEntries: [BoxNode]
    /// The first description read into its fields and boxes (nil when they do not parse).
    let firstEntry: SampleEntry?
    /// Track ids this track refers to, by reference type (`tref`: a `mebx`
    /// track's `cdsc` names the video it describes).
    public let references: [(type: FourCC, ids: [Int])]

    init?(_ trak: BoxNode) {
        func child(_ box: BoxNode?, _ type: FourCC) -> BoxNode? { box?.children?.first { $0.type == type } }
        guard let tkhd = child(trak, "tkhd")?.value(TrackHeader.self) else { return nil }
        id = Int(tkhd.trackID)
        duration = Int64(truncatingIfNeeded: tkhd.duration)
        self.trak = trak
        let mdia = child(trak, "mdia")
        (handlerType, handlerName) = Self.handler(child(mdia, "hdlr")?.value(HandlerReference.self))
        let mdhd = child(mdia, "mdhd")?.value(MediaHeader.self)
        timescale = mdhd.flatMap { $0.timescale > 0 ? $0.timescale : nil }
        mediaDuration = mdhd.map { Int64(truncatingIfNeeded: $0.duration) }
        let stsd = child(child(child(mdia, "minf"), "stbl"), "stsd")
        sampleEntries = stsd?.value(SampleDescriptionTable.self)?.entries ?? []
        let handler = handlerType
        firstEntry = sampleEntries.first.flatMap { try? SampleEntry($0, handler: handler) }
        references = (child(trak, "tref")?.value(TrackReferences.self)?.references ?? []).map { ($0.type, $0.trackIDs.map(Int.init)) }
    }

    /// How much further than libavformat does the decoding times of this
    /// track's samples must be lowered for none to be shown before it is
    /// decoded, in the media's time scale (libavformat's time base for the
    /// stream). libavformat lowers them by the largest negative composition
    /// offset (`ctts`) but leaves the table's last two entries out of that
    /// (`mov_read_ctts`: `i + 2 < entries`, against files whose last entries
    /// are wrong), and drops a table holding an offset beyond 2^28. An
    /// iPhone 14 Pro clip whose only negative offsets are its last two is
    /// then read with PTS before DTS. 0 when every offset is counted.
    public var decodeLead: Int64 {
        func child(_ box: BoxNode?, _ type: FourCC) -> BoxNode? { box?.children?.first { $0.type == type } }
        guard let ctts = child(child(child(child(trak, "mdia"), "minf"), "stbl"), "ctts")?.value(CompositionOffsets.self)
        else { return 0 }
        let entries = ctts.entries
        var shift: Int64 = 0, least: Int64 = 0
        for (i, entry) in entries.enumerated() where entry.sampleCount > 0 {
            let offset = Int64(entry.sampleOffset)
            if i + 2 < entries.count {
                guard offset.magnitude <= 1 << 28 else { return 0 }
                shift = max(shift, -offset)
            }
            least = min(least, offset)
        }
        return max(0, -least - shift)
    }

    /// What the track's sample tables list (count, bytes, furthest chunk); nil when they do not agree.
    public var samples: TrackSamples? { TrackSamples(trak: trak) }

    /// Where the track's bytes lie: each chunk's offset and bytes, in the
    /// track's order; nil when its tables do not agree.
    public var chunks: [(offset: Int64, bytes: Int64)]? {
        var out: [(offset: Int64, bytes: Int64)] = []
        guard TrackSamples(trak: trak, visit: { out.append(($0, $1)) }) != nil else { return nil }
        return out
    }

    /// The size of the track's `trak` box: about what the track takes in an index.
    public var indexBytes: Int { trak.encodedSize }

    /// The handler type and name of an `hdlr`: the name is a C
    /// string in MP4, a Pascal string (a length byte first) in QuickTime.
    static func handler(_ hdlr: HandlerReference?) -> (FourCC?, String?) {
        guard let hdlr else { return (nil, nil) }
        var name = hdlr.name
        guard !name.isEmpty else { return (hdlr.handlerType, nil) }
        // A length byte first when it counts the rest (or the rest up to a terminating zero).
        if let n = name.first.map(Int.init), n > 0, n == name.count - 1 || (n < name.count - 1 && name[n + 1] == 0) {
            name = Array(name[1...n])
        }
        if let nul = name.firstIndex(of: 0) { name = Array(name[..<nul]) }
        let text = String(decoding: name, as: UTF8.self).trimmingCharacters(in: " ")
        return (hdlr.handlerType, text.isEmpty ? nil : text)
    }

    /// The first sample description's type (`avc1`, `hvc1`, `dvh1`, `mebx`, `gpmd`…).
    public var sampleEntryType: FourCC? {
        sampleEntries.first?.type
    }

    /// The boxes inside the first sample description after its fields, by
    /// type and whole (header included): for a video entry its `hvcC`,
    /// `dvcC`/`dvvC`, `lhvC`, `vexu`, `colr`, `pasp`…; for a sound entry its
    /// `esds`, `wave`, `chan`…; for a `mebx` entry its `keys`.
    public var sampleEntryBoxes: [(type: FourCC, bytes: [UInt8])] {
        (firstEntry?.boxes ?? []).map { ($0.type, $0.encoded()) }
    }

    /// A `mebx` (QuickTime timed metadata) track's key table, from its first sample description.
    public var metadataKeyTable: TimedMetadataKeys? {
        guard sampleEntryType == "mebx", let keys = firstEntry?.child("keys") else { return nil }
        return try? TimedMetadataKeys(parsing: keys.payload)
    }

    /// The key names of a `mebx` (QuickTime timed metadata) track, in the
    /// order its sample description declares them
    /// (`com.apple.quicktime.video-orientation`…); the fields of a
    /// structured key (namespace `fiel`: a detected face's bounds) left out.
    public var metadataKeys: [String] {
        guard let table = metadataKeyTable else { return [] }
        return table.declarations.compactMap { key in
            guard let key, key.namespace != "fiel", !key.value.isEmpty else { return nil }
            return String(decoding: key.value, as: UTF8.self)
        }
    }
}

extension String {
    func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return String(s)
    }
}

extension InputStream {
    /// The codec as reports name it: for a data track libavformat knows no
    /// codec of (`none`, `bin_data`), its sample entry's type (`mebx`,
    /// `gpmd`) or codec tag.
    public var reportedCodec: String {
        guard mediaType == .data || mediaType == .unknown else { return codecName }
        return file.sourceIndex?.track(id: id)?.sampleEntryType?.description ?? codecTag ?? codecName
    }

    /// A data track named for messages: its sample entry's type and what it
    /// holds — a `mebx` track's keys, else its handler's name
    /// (`mebx 'com.apple.quicktime.video-orientation'`, `gpmd 'GoPro MET'`).
    public var dataKind: String {
        let track = file.sourceIndex?.track(id: id)
        let type = track?.sampleEntryType?.description ?? codecTag ?? codecName
        if let keys = track?.metadataKeys, !keys.isEmpty { return "\(type) '\(keys.joined(separator: "', '"))'" }
        if let name = track?.handlerName ?? tag("handler_name")?.trimmingCharacters(in: " "), !name.isEmpty { return "\(type) '\(name)'" }
        return type
    }
}

extension SourceTrack {
    /// The stream libavformat's MP4/MOV demuxer makes of this track, named
    /// from the boxes alone, for the sample descriptions whose naming is
    /// certain (H.264, HEVC, AV1, VP9, ProRes video; AAC by its `esds`,
    /// AC-3, E-AC-3, Opus, FLAC, ALAC audio; timecode and timed-metadata
    /// data tracks, named by their entry's type as reports name them); nil
    /// for anything else (then libavformat is asked).
    public var knownStream: (type: MediaType, codec: String)? {
        guard sampleEntries.count == 1, let entry = sampleEntryType else { return nil }
        switch (handlerType?.description, entry.description) {
        case ("vide", "avc1"), ("vide", "avc3"): return (.video, "h264")
        case ("vide", "hvc1"), ("vide", "hev1"), ("vide", "dvh1"), ("vide", "dvhe"): return (.video, "hevc")
        case ("vide", "av01"): return (.video, "av1")
        case ("vide", "vp09"): return (.video, "vp9")
        case ("vide", "apch"), ("vide", "apcn"), ("vide", "apcs"), ("vide", "apco"), ("vide", "ap4h"), ("vide", "ap4x"):
            return (.video, "prores")
        case ("soun", "mp4a"): return audioObjectType == 0x40 ? (.audio, "aac") : nil
        case ("soun", "ac-3"): return (.audio, "ac3")
        case ("soun", "ec-3"): return (.audio, "eac3")
        case ("soun", "Opus"): return (.audio, "opus")
        case ("soun", "fLaC"): return (.audio, "flac")
        case ("soun", "alac"): return (.audio, "alac")
        case ("tmcd", "tmcd"): return (.data, "tmcd")
        case ("meta", "mebx"), ("meta", "gpmd"): return (.data, entry.description)
        default: return nil
        }
    }

    /// The object type of a sound entry's `esds` decoder configuration
    /// (0x40: MPEG-4 audio, AAC); nil without one.
    var audioObjectType: UInt8? {
        guard handlerType == "soun", let esds = firstEntry?.child("esds") else { return nil }
        let r = BigEndianReader(esds.payload)
        // Version and flags, then descriptors: tag, a length of 1–4 bytes (7 bits each), contents.
        var at = 4
        func descriptor(_ tag: UInt8) -> Bool {
            guard r.u8(at: at) == tag else { return false }
            at += 1
            for _ in 0..<4 {
                guard let b = r.u8(at: at) else { return false }
                at += 1
                if b & 0x80 == 0 { break }
            }
            return true
        }
        guard descriptor(0x03), let flags = r.u8(at: at + 2) else { return nil }
        at += 3
        if flags & 0x80 != 0 { at += 2 }
        if flags & 0x40 != 0 { at += 1 + Int(r.u8(at: at) ?? 0) }
        if flags & 0x20 != 0 { at += 2 }
        guard descriptor(0x04), at < r.count else { return nil }
        return r.u8(at: at)
    }
}
