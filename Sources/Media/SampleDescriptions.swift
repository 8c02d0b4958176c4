import ISOBMFF

extension IndexCompletion {
    /// Sample descriptions of a video track beyond its first, and the
    /// samples that use them: an exact cut's re-encoded HEVC stretches,
    /// whose parameter sets are not the source's, each described by a copy
    /// of the track's first entry (`hvc1`) with the encoder's `hvcC`, as
    /// QuickTime files made by editors hold them. The muxer writes one
    /// description; these are added to its index after the trailer.
    public struct Descriptions: Sendable {
        /// The track, 0-based in `trak` order.
        public var track: Int
        /// The codec record (`hvcC` payload) of each added description, the
        /// first of them the track's description 2.
        public var records: [[UInt8]] = []
        /// Runs of samples (0-based, in decode order) and the record (index
        /// into `records`) whose description they use; the others use the first.
        public var runs: [(samples: Range<Int>, record: Int)] = []

        public init(track: Int) { self.track = track }

        /// `samples` use a description with `record` (one description per distinct record).
        public mutating func add(_ samples: Range<Int>, record: [UInt8]) {
            let k: Int
            if let known = records.firstIndex(of: record) { k = known } else {
                records.append(record)
                k = records.count - 1
            }
            runs.append((samples, k))
        }
    }

    /// `trak` with `d`'s descriptions after its first, and its chunks split
    /// where the description changes (a chunk's samples share one): the
    /// sample-to-chunk table (`stsc`) and chunk offsets (`stco`/`co64`)
    /// rebuilt from the sample sizes (`stsz`); the media data is untouched.
    static func described(_ trak: Box, _ d: Descriptions) throws(Failure) -> Box {
        var trak = trak
        do {
            try trak.editChild("mdia", "minf", "stbl") { (stbl: inout Box) throws(MovieLayout.Refusal) in
                guard var kids = stbl.children else { throw MovieLayout.Refusal(description: "its sample table is empty") }
                func at(_ type: FourCC) throws(MovieLayout.Refusal) -> Int {
                    guard let k = kids.firstIndex(where: { $0.type == type }) else {
                        throw MovieLayout.Refusal(description: "its sample table has no '\(type)'")
                    }
                    return k
                }
                let sd = try at("stsd"), sc = try at("stsc"), sz = try at("stsz")
                let co = try kids.contains { $0.type == "co64" } ? at("co64") : at("stco")
                kids[sd].payload = try Self.entries(Array(kids[sd].payload), adding: d.records)[...]
                let sizes = try Self.sampleSizes(Array(kids[sz].payload))
                var uses = [Int](repeating: 1, count: sizes.count)
                for run in d.runs { for s in run.samples where s < uses.count { uses[s] = 2 + run.record } }
                let chunks = try Self.chunks(stsc: Array(kids[sc].payload), offsets: Array(kids[co].payload), wide: kids[co].type == "co64",
                                             sizes: sizes, uses: uses)
                kids[sc].payload = Self.stsc(chunks)[...]
                let wide = kids[co].type == "co64" || chunks.contains { $0.offset > Int64(UInt32.max) }
                var table: [UInt8] = [0, 0, 0, 0]
                put(UInt64(chunks.count), 4, &table)
                for c in chunks { put(UInt64(c.offset), wide ? 8 : 4, &table) }
                kids[co] = Box(wide ? "co64" : "stco", payload: table[...])
                stbl.children = kids
            }
        } catch {
            throw Failure(description: "track \(d.track + 1): \(error.description)")
        }
        return trak
    }

    /// An `stsd` payload with one entry per record after its first: a copy
    /// of the first with its `hvcC` (or `avcC`) holding the record.
    private static func entries(_ stsd: [UInt8], adding records: [[UInt8]]) throws(MovieLayout.Refusal) -> [UInt8] {
        let r = BigEndianReader(stsd)
        var walker = BoxWalker(r, in: 8..<max(8, r.count))
        guard let count = r.u32(at: 4), let first = walker.next(), first.end - first.start >= 86 else {
            throw MovieLayout.Refusal(description: "its sample description cannot be read")
        }
        let entry = Array(r.bytes(in: first.start..<first.end))
        let inner = BigEndianReader(entry)
        let boxes = Array(BoxWalker(inner, in: 86..<entry.count))
        guard let record = boxes.first(where: { $0.type == "hvcC" || $0.type == "avcC" }) else {
            throw MovieLayout.Refusal(description: "its sample description has no hvcC or avcC")
        }
        var out = Array(stsd[0..<4])
        put(UInt64(count) + UInt64(records.count), 4, &out)
        out += stsd[8...]
        for rec in records {
            var body = Array(entry[8..<record.start])
            put(UInt64(rec.count + 8), 4, &body)
            put(UInt64(record.type.rawValue), 4, &body)
            body += rec + entry[record.end...]
            put(UInt64(body.count + 8), 4, &out)
            out += entry[4..<8] + body
        }
        return out
    }

    /// Each sample's size from an `stsz` payload.
    private static func sampleSizes(_ stsz: [UInt8]) throws(MovieLayout.Refusal) -> [Int64] {
        let r = BigEndianReader(stsz)
        guard let fixed = r.u32(at: 4), let n = r.length(at: 8, size: 4), fixed != 0 || r.count >= 12 + 4 * n else {
            throw MovieLayout.Refusal(description: "its sample size table is cut short")
        }
        if fixed != 0 { return [Int64](repeating: Int64(fixed), count: n) }
        return (0..<n).compactMap { r.u32(at: 12 + 4 * $0).map(Int64.init) }
    }

    /// The track's chunks split where the description its samples use
    /// changes: each run's offset, sample count and description.
    private static func chunks(stsc: [UInt8], offsets: [UInt8], wide: Bool, sizes: [Int64],
                               uses: [Int]) throws(MovieLayout.Refusal) -> [(offset: Int64, samples: Int, description: Int)] {
        let cut = MovieLayout.Refusal(description: "its sample-to-chunk or chunk offset table is cut short")
        let sc = BigEndianReader(stsc), co = BigEndianReader(offsets)
        let width = wide ? 8 : 4
        guard let entries = sc.length(at: 4, size: 4), sc.count >= 8 + 12 * entries,
              let chunkCount = co.length(at: 4, size: 4), co.count >= 8 + width * chunkCount else { throw cut }
        var out: [(offset: Int64, samples: Int, description: Int)] = []
        var sample = 0
        for e in 0..<entries {
            guard let firstChunk = sc.u32(at: 8 + 12 * e), let perChunk = sc.u32(at: 12 + 12 * e), firstChunk >= 1 else { throw cut }
            var last = chunkCount
            if e + 1 < entries {
                guard let next = sc.u32(at: 8 + 12 * (e + 1)) else { throw cut }
                last = Int(next) - 1
            }
            for chunk in Int(firstChunk)...max(Int(firstChunk), last) where chunk <= chunkCount {
                guard var offset = co.uint(at: 8 + width * (chunk - 1), size: width).map({ Int64(bitPattern: $0) }),
                      sample + Int(perChunk) <= sizes.count else { throw cut }
                for s in sample..<(sample + Int(perChunk)) {
                    if let l = out.last, l.description == uses[s], s > sample { out[out.count - 1].samples += 1 } else {
                        out.append((offset, 1, uses[s]))
                    }
                    offset += sizes[s]
                }
                sample += Int(perChunk)
            }
        }
        guard sample == sizes.count else {
            throw MovieLayout.Refusal(description: "its chunks hold \(sample) samples where its sizes count \(sizes.count)")
        }
        return out
    }

    /// An `stsc` payload for `chunks`: an entry where the count or description changes.
    private static func stsc(_ chunks: [(offset: Int64, samples: Int, description: Int)]) -> [UInt8] {
        var rows: [[UInt8]] = []
        var previous: (Int, Int)?
        for (k, c) in chunks.enumerated() where previous.map({ $0 != (c.samples, c.description) }) ?? true {
            var row: [UInt8] = []
            put(UInt64(k + 1), 4, &row)
            put(UInt64(c.samples), 4, &row)
            put(UInt64(c.description), 4, &row)
            rows.append(row)
            previous = (c.samples, c.description)
        }
        var out: [UInt8] = [0, 0, 0, 0]
        put(UInt64(rows.count), 4, &out)
        return out + rows.joined()
    }
}
