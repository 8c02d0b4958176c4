/// What one track's sample tables (`stsz`/`stz2`, `stsc`, `stco`/`co64`)
/// list, read from the boxes without building an entry per sample: how
/// many samples, their bytes, and the furthest byte any chunk takes — so a
/// file cut off before the end of its media data is seen from its index
/// alone (the way libavformat's index entries would show it, without them).
public struct TrackSamples: Sendable, Equatable {
    public var samples: Int
    public var bytes: Int64
    /// One past the last byte of the chunk that ends furthest into the file
    /// (0 without chunks).
    public var end: Int64

    public init(samples: Int, bytes: Int64, end: Int64) {
        self.samples = samples
        self.bytes = bytes
        self.end = end
    }

    /// Whether every chunk's bytes lie within a file of `size` bytes.
    public func lies(within size: Int64) -> Bool { end <= size }

    /// The tables of a `stbl` box; nil when they are missing or do not
    /// agree (a chunk run past the samples, samples no chunk holds, a
    /// table cut short). `frameBytes` is the bytes of `per` samples for a
    /// QuickTime sound track whose `stsz` counts audio frames (a sample size
    /// of 1): the size the table gives is not a byte count then. `visit` is
    /// told each chunk's offset and bytes, in the table's order.
    public init?(stbl: BoxNode, frameBytes: (bytes: Int64, per: Int64)? = nil, visit: ((Int64, Int64) -> Void)? = nil) {
        func child(_ type: FourCC) -> ArraySlice<UInt8>? { stbl.children?.first { $0.type == type }?.payload }
        // Sample sizes: one for all, or one each (stz2: 4, 8 or 16 bits).
        let sizes: BigEndianReader<ArraySlice<UInt8>>
        let uniform: Int64
        let width: Int  // bits per entry
        let count: Int
        if let p = child("stsz") {
            let r = BigEndianReader(p)
            guard let size = r.u32(at: 4), let n = r.length(at: 8, size: 4) else { return nil }
            (sizes, uniform, width, count) = (r, Int64(size), 32, n)
            guard uniform != 0 || r.count >= 12 + n * 4 else { return nil }
        } else if let p = child("stz2") {
            let r = BigEndianReader(p)
            guard let field = r.u8(at: 7), [4, 8, 16].contains(field), let n = r.length(at: 8, size: 4),
                  r.count >= 12 + (n * Int(field) + 7) / 8 else { return nil }
            (sizes, uniform, width, count) = (r, 0, Int(field), n)
        } else {
            return nil
        }
        func size(_ i: Int) -> Int64 {
            switch width {
            case 32: Int64(sizes.u32(at: 12 + 4 * i) ?? 0)
            case 16: Int64(sizes.u16(at: 12 + 2 * i) ?? 0)
            case 8: Int64(sizes.u8(at: 12 + i) ?? 0)
            default: Int64(((sizes.u8(at: 12 + i / 2) ?? 0) >> (i % 2 == 0 ? 4 : 0)) & 0x0F)
            }
        }
        // The bytes of samples of the uniform size (audio frames' for QuickTime's counted frames).
        let each: (bytes: Int64, per: Int64) = uniform == 1 ? (frameBytes ?? (1, 1)) : (uniform, 1)
        // Chunk offsets.
        let offsets: BigEndianReader<ArraySlice<UInt8>>
        let offsetWidth: Int
        if let p = child("stco") {
            offsets = BigEndianReader(p)
            offsetWidth = 4
        } else if let p = child("co64") {
            offsets = BigEndianReader(p)
            offsetWidth = 8
        } else {
            return nil
        }
        guard let chunks = offsets.length(at: 4, size: 4), offsets.count >= 8 + chunks * offsetWidth else { return nil }
        // Runs of chunks with as many samples each.
        guard let stsc = child("stsc").map(BigEndianReader.init), let runs = stsc.length(at: 4, size: 4),
              stsc.count >= 8 + runs * 12 else { return nil }
        guard chunks == 0 || (runs > 0 && stsc.u32(at: 8) == 1) else { return nil }
        var run = 0
        var sample = 0
        var bytes: Int64 = 0
        var end: Int64 = 0
        for chunk in 1...max(chunks, 1) where chunks > 0 {
            while run + 1 < runs, let next = stsc.u32(at: 8 + (run + 1) * 12), Int(next) <= chunk { run += 1 }
            guard let perChunk = stsc.u32(at: 8 + run * 12 + 4).map(Int.init), sample + perChunk <= count else { return nil }
            var chunkBytes: Int64 = 0
            if uniform != 0 {
                let (product, overflow) = Int64(perChunk).multipliedReportingOverflow(by: each.bytes)
                guard !overflow, each.per > 0 else { return nil }
                chunkBytes = (product + each.per - 1) / each.per
            } else if width == 32 {
                // (The table's length was checked above.)
                chunkBytes = sizes.bytes.withContiguousStorageIfAvailable { raw in
                    var sum: Int64 = 0
                    let base = 12 + 4 * sample
                    for i in 0..<perChunk {
                        let at = base + 4 * i
                        var v = UInt32(raw[at]) << 24
                        v |= UInt32(raw[at + 1]) << 16
                        v |= UInt32(raw[at + 2]) << 8
                        v |= UInt32(raw[at + 3])
                        sum += Int64(v)
                    }
                    return sum
                } ?? (sample..<(sample + perChunk)).reduce(0) { $0 + size($1) }
            } else {
                for i in sample..<(sample + perChunk) { chunkBytes += size(i) }
            }
            sample += perChunk
            guard let offset = offsets.uint(at: 8 + (chunk - 1) * offsetWidth, size: offsetWidth),
                  offset <= UInt64(Int64.max - chunkBytes) else { return nil }
            if chunkBytes > 0 { end = max(end, Int64(offset) + chunkBytes) }
            visit?(Int64(offset), chunkBytes)
            bytes += chunkBytes
        }
        guard sample == count else { return nil }
        self.samples = count
        self.bytes = bytes
        self.end = end
    }
}

extension TrackSamples {
    /// The tables of a `trak` box; nil without them or when they do not
    /// agree. `visit` is told each chunk's offset and bytes, in order.
    public init?(trak: BoxNode, visit: ((Int64, Int64) -> Void)? = nil) {
        func child(_ box: BoxNode?, _ type: FourCC) -> BoxNode? { box?.children?.first { $0.type == type } }
        let mdia = child(trak, "mdia"), minf = child(mdia, "minf")
        guard let stbl = child(minf, "stbl") else { return nil }
        let handler = child(mdia, "hdlr").flatMap { try? HandlerReference($0) }?.handlerType
        self.init(stbl: stbl, frameBytes: handler == "soun" ? Self.soundFrameBytes(stbl) : nil, visit: visit)
    }

    /// For a sound track: the bytes of so many audio frames its first sample
    /// description declares, for tables that count frames (`SampleEntry.soundFrameBytes`).
    static func soundFrameBytes(_ stbl: BoxNode) -> (bytes: Int64, per: Int64)? {
        guard let first = stbl.child("stsd").flatMap({ try? SampleDescriptionTable($0) })?.entries.first else { return nil }
        return SampleEntry.soundFrameBytes(first)
    }
}

extension BoxNode {
    /// The sample tables' boxes, emptied by `hollowed`.
    public static let sampleTables: Set<FourCC> = ["stts", "ctts", "stsc", "stsz", "stz2", "stco", "co64", "stss", "stps", "sdtp",
                                            "cslg", "sbgp", "subs", "saiz", "saio"]

    /// This tree with every track's sample tables emptied (no entries):
    /// what a demuxer reads of it is the tracks, their descriptions, edit
    /// lists, matrices and tags, without an entry per sample.
    public func hollowed() -> BoxNode {
        var copy = self
        if let kids = children {
            copy.children = kids.map { $0.hollowed() }
            return copy
        }
        guard Self.sampleTables.contains(type) else { return copy }
        let r = BigEndianReader(payload)
        // Version and flags kept; every count 0.
        let head = Array(r.bytes(in: 0..<min(4, r.count))) + [UInt8](repeating: 0, count: max(0, 4 - r.count))
        switch type {
        case "stsz": copy.payload = (head + [0, 0, 0, 0, 0, 0, 0, 0])[...]
        case "stz2": copy.payload = (head + [0, 0, 0, r.u8(at: 7) ?? 16, 0, 0, 0, 0])[...]
        case "sdtp", "cslg", "saiz", "saio", "subs", "sbgp":
            // Not tables a demuxer needs to know the tracks: left out.
            copy.type = "free"
            copy.payload = []
        default: copy.payload = (head + [0, 0, 0, 0])[...]
        }
        return copy
    }
}
