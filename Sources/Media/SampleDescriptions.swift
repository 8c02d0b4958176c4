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
    static func described(_ trak: BoxNode, _ d: Descriptions) throws(Failure) -> BoxNode {
        var trak = trak
        let handler = trak.descendant(["mdia", "hdlr"])?.value(HandlerReference.self)?.handlerType
        do {
            try trak.editChild("mdia", "minf", "stbl") { (stbl: inout BoxNode) throws(MovieLayout.Refusal) in
                guard var kids = stbl.children else { throw MovieLayout.Refusal(description: "its sample table is empty") }
                func at(_ type: FourCC) throws(MovieLayout.Refusal) -> Int {
                    guard let k = kids.firstIndex(where: { $0.type == type }) else {
                        throw MovieLayout.Refusal(description: "its sample table has no '\(type)'")
                    }
                    return k
                }
                let sd = try at("stsd"), sc = try at("stsc"), sz = try at("stsz")
                let co = try kids.contains { $0.type == "co64" } ? at("co64") : at("stco")
                kids[sd].set(try Self.entries(kids[sd], adding: d.records, handler: handler))
                guard let stsz = kids[sz].value(SampleSizes.self) else {
                    throw MovieLayout.Refusal(description: "its sample size table is cut short")
                }
                let sizes = stsz.sampleSize != 0 ? [Int64](repeating: Int64(stsz.sampleSize), count: Int(stsz.sampleCount))
                                                 : stsz.sizes.map(Int64.init)
                var uses = [Int](repeating: 1, count: sizes.count)
                for run in d.runs { for s in run.samples where s < uses.count { uses[s] = 2 + run.record } }
                guard let toChunk = kids[sc].value(SampleToChunk.self), var offsets = kids[co].value(ChunkOffsets.self) else {
                    throw MovieLayout.Refusal(description: "its sample-to-chunk or chunk offset table is cut short")
                }
                let chunks = try Self.chunks(toChunk.entries, offsets: offsets.offsets, sizes: sizes, uses: uses)
                kids[sc].set(Self.stsc(chunks))
                // (Written anew: version 0, a `co64` stays one, an `stco` widens when an offset needs it.)
                offsets = ChunkOffsets(offsets: chunks.map { UInt64(bitPattern: $0.offset) })
                offsets.wide = kids[co].type == "co64"
                kids[co].set(offsets)
                stbl.children = kids
            }
        } catch {
            throw Failure(description: "track \(d.track + 1): \(error.description)")
        }
        return trak
    }

    /// An `stsd` with one entry per record after its own: a copy of its
    /// first with its `hvcC` (or `avcC`) holding the record.
    private static func entries(_ stsd: BoxNode, adding records: [[UInt8]],
                                handler: FourCC?) throws(MovieLayout.Refusal) -> SampleDescriptionTable {
        guard var table = stsd.value(SampleDescriptionTable.self), let first = table.entries.first,
              let entry = try? SampleEntry(first, handler: handler) else {
            throw MovieLayout.Refusal(description: "its sample description cannot be read")
        }
        guard let k = entry.boxes.firstIndex(where: { $0.type == "hvcC" || $0.type == "avcC" }) else {
            throw MovieLayout.Refusal(description: "its sample description has no hvcC or avcC")
        }
        for record in records {
            var copy = entry
            copy.boxes[k] = BoxNode(entry.boxes[k].type, payload: record[...])
            table.entries.append(copy.box)
        }
        return table
    }

    /// The track's chunks split where the description its samples use
    /// changes: each run's offset, sample count and description.
    private static func chunks(_ runs: [SampleToChunk.Entry], offsets: [UInt64], sizes: [Int64],
                               uses: [Int]) throws(MovieLayout.Refusal) -> [(offset: Int64, samples: Int, description: Int)] {
        let cut = MovieLayout.Refusal(description: "its sample-to-chunk or chunk offset table is cut short")
        var out: [(offset: Int64, samples: Int, description: Int)] = []
        var sample = 0
        for (e, run) in runs.enumerated() {
            guard run.firstChunk >= 1 else { throw cut }
            let first = Int(run.firstChunk), perChunk = Int(run.samplesPerChunk)
            let last = e + 1 < runs.count ? Int(runs[e + 1].firstChunk) - 1 : offsets.count
            for chunk in first...max(first, last) where chunk <= offsets.count {
                guard sample + perChunk <= sizes.count else { throw cut }
                var offset = Int64(bitPattern: offsets[chunk - 1])
                for s in sample..<(sample + perChunk) {
                    if let l = out.last, l.description == uses[s], s > sample { out[out.count - 1].samples += 1 } else {
                        out.append((offset, 1, uses[s]))
                    }
                    offset += sizes[s]
                }
                sample += perChunk
            }
        }
        guard sample == sizes.count else {
            throw MovieLayout.Refusal(description: "its chunks hold \(sample) samples where its sizes count \(sizes.count)")
        }
        return out
    }

    /// The `stsc` for `chunks`: an entry where the count or description changes.
    private static func stsc(_ chunks: [(offset: Int64, samples: Int, description: Int)]) -> SampleToChunk {
        var entries: [SampleToChunk.Entry] = []
        var previous: (Int, Int)?
        for (k, c) in chunks.enumerated() where previous.map({ $0 != (c.samples, c.description) }) ?? true {
            entries.append(SampleToChunk.Entry(firstChunk: UInt32(k + 1), samplesPerChunk: UInt32(c.samples),
                                               sampleDescriptionIndex: UInt32(c.description)))
            previous = (c.samples, c.description)
        }
        return SampleToChunk(entries: entries)
    }
}
