/// Damage an MP4/MOV index shows in its structure alone, found before any
/// reader trusts it: boxes nested deeper, or more of them, than a parse takes
/// (`BoxNode.depthLimit`, `countLimit`: a crafted file would exhaust the
/// stack or the memory), or a sample table that declares more entries than its box holds (2^32-1
/// entries in a file of kilobytes: libavformat tries to allocate them all,
/// and an index laid out by the bulk remux would carry the lie on). The walk
/// is iterative and reads only box headers and table counts. A fragmented
/// file's fragments are checked too (`fragments(in:)`).
public enum IndexDamage {
    /// Each sample table's count field (after version and flags) and entry size.
    private static let tables: [FourCC: Int] = ["stts": 8, "ctts": 8, "stsc": 12, "stco": 4, "co64": 8, "stss": 4, "stps": 4]

    /// What is damaged in the index of a whole MP4/MOV file's bytes, or nil
    /// (also for bytes that are not an MP4/MOV file).
    public static func find(in b: UnsafeRawBufferPointer) -> String? {
        let reader = BigEndianReader(b)
        guard TopLevelBoxes(b).isISOBMFF else { return nil }
        for box in BoxWalker(reader) where box.type == "moov" {
            if let damage = find(reader, moov: box.payload) { return damage }
        }
        return fragments(in: b)
    }

    /// The same for the payload of one `moov` box, `range` of `reader`'s bytes.
    static func find<B>(_ reader: BigEndianReader<B>, moov range: Range<Int>) -> String? {
        var pending: [(range: Range<Int>, depth: Int)] = [(range, 2)]
        var count = 1
        while let (range, depth) = pending.popLast() {
            for box in BoxWalker(reader, in: range) {
                count += 1
                if count > BoxNode.countLimit { return "it holds more than \(BoxNode.countLimit) boxes" }
                if BoxNode.sampleTableContainers.contains(box.type) {
                    if depth >= BoxNode.depthLimit { return "its boxes nest more than \(BoxNode.depthLimit) deep" }
                    if box.type == "stbl", let unheld = unheldSamples(reader, stbl: box.payload) { return unheld }
                    pending.append((box.payload, depth + 1))
                } else if let overrun = overrun(reader, box) {
                    return overrun
                }
            }
        }
        return nil
    }

    /// For samples of one size (an `stsz` without entries) that number more
    /// than the chunks hold (`stsc` runs over the `stco`/`co64` chunks): the
    /// counts. libavformat indexes none of them then, and a verb would write
    /// an empty output as if the input were whole.
    private static func unheldSamples<B>(_ reader: BigEndianReader<B>, stbl: Range<Int>) -> String? {
        var declared: Int?, chunks: Int?, runs: Range<Int>?
        for box in BoxWalker(reader, in: stbl) {
            let p = box.payload.lowerBound
            switch box.type {
            case "stsz":
                guard let size = reader.u32(at: p + 4), size != 0, let n = reader.u32(at: p + 8) else { return nil }
                declared = Int(n)
            case "stco", "co64": chunks = reader.u32(at: p + 4).map(Int.init)
            case "stsc": runs = box.payload
            default: break
            }
        }
        guard let declared, let chunks, let runs, let count = reader.u32(at: runs.lowerBound + 4) else { return nil }
        // Each run: first chunk, samples per chunk, description (only the entries the box holds).
        let entries = min(Int(count), max(0, (runs.count - 8) / 12))
        var held = 0
        for k in 0..<entries {
            let at = runs.lowerBound + 8 + 12 * k
            guard let first = reader.u32(at: at), let per = reader.u32(at: at + 4) else { return nil }
            let next = k + 1 < entries ? reader.u32(at: at + 12).map(Int.init) ?? chunks + 1 : chunks + 1
            let (samples, overflow) = max(0, min(next, chunks + 1) - Int(first)).multipliedReportingOverflow(by: Int(per))
            guard !overflow else { return nil }
            held += samples
            if held >= declared { return nil }
        }
        return "its 'stsz' box declares \(declared) samples but its chunks hold \(held)"
    }

    /// For a sample table that declares more entries than its box holds: which, and how many.
    private static func overrun<B>(_ reader: BigEndianReader<B>, _ box: BoxHeader) -> String? {
        let p = box.payload.lowerBound
        let countAt: Int, bits: Int
        switch box.type {
        case "stsz":
            // Entries only where the samples do not share one size.
            guard reader.u32(at: p + 4) == 0 else { return nil }
            (countAt, bits) = (8, 32)
        case "stz2":
            guard let field = reader.u8(at: p + 7) else { return "its 'stz2' box is cut short" }
            (countAt, bits) = (8, Int(field))
        default:
            guard let size = tables[box.type] else { return nil }
            (countAt, bits) = (4, size * 8)
        }
        guard let declared = reader.u32(at: p + countAt) else { return "its '\(box.type)' box is cut short" }
        let room = box.payload.count - countAt - 4
        guard Int(declared) * bits > room * 8 else { return nil }
        return "its '\(box.type)' box declares \(declared) entries but holds \(bits > 0 ? room * 8 / bits : 0)"
    }
}
