import ISOBMFF
import Media

/// What a data track's samples look like in media data whose index is
/// lost, as the reference's sample entry and samples say: where a sample
/// that starts at a place may end. Each end is only a candidate: the walk
/// takes one where the next sample of some track is proven to start.
enum DataSampleShape: Equatable {
    /// Samples of the sizes the reference's take (a timecode track's 4 bytes).
    case sizes([Int])
    /// GoPro's GPMF (`gpmd`): KLV items, a four-character key, a type,
    /// a structure size and a repeat count, the value padded to 4 bytes;
    /// at the top level, nested items only (`DEVC`).
    case gpmf
    /// SMPTE KLV (Sony's `rtmd`): 16-byte universal labels (`06 0E 2B 34`)
    /// and BER lengths.
    case smpteKLV
    /// QuickTime timed metadata (`mebx`): boxed items, each a 32-bit size
    /// and one of the local key ids the sample entry's key table declares
    /// (`TimedMetadataKeys`; an empty sample: one item of 8 bytes, key 0).
    case boxedItems(keys: Set<UInt32>)

    /// The shape of `track`'s samples, from its sample entry; a kind with no
    /// structure of its own falls back to the sizes the reference's samples
    /// take, if they take few (`sizes`, the reference's in order of use).
    init?(track: SourceTrack?, sizes: [Int]) {
        switch track?.sampleEntryType {
        case "gpmd"?: self = .gpmf
        case "rtmd"?: self = .smpteKLV
        case "mebx"?:
            guard let keys = track?.metadataKeyTable, !keys.localIDs.isEmpty else { return nil }
            self = .boxedItems(keys: Set(keys.localIDs))
        default:
            guard !sizes.isEmpty, sizes.count <= 8, sizes.allSatisfy({ $0 > 0 }) else { return nil }
            self = .sizes(sizes)
        }
    }

    /// Whether samples of this shape show a structure of their own (so a
    /// valid start is itself evidence, not only the sample after it).
    var isStructured: Bool {
        if case .sizes = self { return false }
        return true
    }

    /// Where a sample starting at `i` may end, nearest first, within `end`.
    func ends(_ b: UnsafeRawBufferPointer, at i: Int, end: Int) -> [Int] {
        let r = BigEndianReader(b)
        var out: [Int] = []
        switch self {
        case .sizes(let sizes):
            return sizes.map { i + $0 }.filter { $0 <= end }.sorted()
        case .gpmf:
            // A payload is a run of nested items (`DEVC`), never a bare value.
            var p = i
            while r.u8(at: p + 4) == 0, let n = Self.gpmfItem(r, at: p, end: end) {
                p += n
                out.append(p)
            }
        case .smpteKLV:
            var p = i
            while let n = Self.smpteItem(r, at: p, end: end) {
                p += n
                out.append(p)
            }
        case .boxedItems(let keys):
            var p = i
            while let size = Self.boxedItem(r, at: p, end: end, keys: keys) {
                p += size
                out.append(p)
            }
        }
        return out
    }

    /// Whether a sample of this shape may start at `i`: its first item is
    /// whole within `end` (`ends` would not be empty), without listing where it ends.
    func starts(_ b: UnsafeRawBufferPointer, at i: Int, end: Int) -> Bool {
        let r = BigEndianReader(b)
        switch self {
        case .sizes(let sizes): return sizes.contains { i + $0 <= end }
        case .gpmf: return r.u8(at: i + 4) == 0 && Self.gpmfItem(r, at: i, end: end) != nil
        case .smpteKLV: return Self.smpteItem(r, at: i, end: end) != nil
        case .boxedItems(let keys): return Self.boxedItem(r, at: i, end: end, keys: keys) != nil
        }
    }

    /// The length of the boxed item at `p`: a 32-bit size, one of `keys` (0 for an empty item of 8 bytes).
    private static func boxedItem(_ r: BigEndianReader<UnsafeRawBufferPointer>, at p: Int, end: Int, keys: Set<UInt32>) -> Int? {
        guard p + 8 <= end, let size = r.u32(at: p).map(Int.init), size >= 8, p + size <= end,
              let key = r.u32(at: p + 4), keys.contains(key) || (key == 0 && size == 8) else { return nil }
        return size
    }

    /// The length of the GPMF item at `p`: a key of four letters or digits,
    /// a type that is a letter, `?` or 0 (nested), the value within `end`.
    private static func gpmfItem(_ r: BigEndianReader<UnsafeRawBufferPointer>, at p: Int, end: Int) -> Int? {
        guard p + 8 <= end, let key = r.u32(at: p), let type = r.u8(at: p + 4), let size = r.u8(at: p + 5),
              let repeats = r.u16(at: p + 6) else { return nil }
        func keyByte(_ c: UInt32) -> Bool { (0x41...0x5A).contains(c) || (0x30...0x39).contains(c) || (0x61...0x7A).contains(c) }
        guard keyByte(key >> 24), keyByte((key >> 16) & 0xff), keyByte((key >> 8) & 0xff), keyByte(key & 0xff),
              type == 0 || type == 0x3F || (0x41...0x5A).contains(type) || (0x61...0x7A).contains(type) else { return nil }
        let value = (Int(size) * Int(repeats) + 3) & ~3
        guard p + 8 + value <= end else { return nil }
        // A nested item holds items itself, exactly.
        if type == 0 {
            var q = p + 8
            while q < p + 8 + value {
                guard let n = gpmfItem(r, at: q, end: p + 8 + value) else { return nil }
                q += n
            }
        }
        return 8 + value
    }

    /// The length of the SMPTE KLV item at `p`: a universal label, a BER length.
    private static func smpteItem(_ r: BigEndianReader<UnsafeRawBufferPointer>, at p: Int, end: Int) -> Int? {
        guard p + 17 <= end, r.u32(at: p) == 0x060E_2B34, let first = r.u8(at: p + 16) else { return nil }
        var length = Int(first), header = 17
        if first & 0x80 != 0 {
            let bytes = Int(first & 0x7f)
            guard bytes >= 1, bytes <= 4, let n = r.length(at: p + 17, size: bytes) else { return nil }
            length = n
            header += bytes
        }
        guard p + header + length <= end else { return nil }
        return header + length
    }
}
