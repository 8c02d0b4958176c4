import ISOBMFF
import Sync

/// H.264 or HEVC as MP4, MOV and Matroska store it: length-prefixed NAL
/// units, parameter sets in an `avcC`/`hvcC` record. What an exact-mode cut
/// needs of the bitstream: what kind of picture a packet holds, the
/// parameter sets and their ids, and packets made from an encoder's Annex B
/// output.
public struct NALStream: Sendable, Equatable {
    public enum Codec: Sendable { case h264, hevc }

    public let codec: Codec
    /// Bytes in each NAL unit's length prefix (1, 2 or 4).
    public let lengthSize: Int
    /// The `avcC`/`hvcC` record.
    public let record: [UInt8]
    /// The record's parameter sets (NAL units, header included), in order:
    /// SPS then PPS (H.264); VPS, SPS, PPS and SEI arrays (HEVC).
    public let parameterSets: [[UInt8]]

    /// The stream's record from its extradata; nil for other codecs or for
    /// Annex B extradata (MPEG-TS).
    public init?(codecName: String, extradata e: [UInt8]) {
        switch codecName {
        case "h264":
            guard e.count >= 7, e[0] == 1 else { return nil }
            codec = .h264
            lengthSize = Int(e[4] & 3) + 1
            var i = 6
            guard let sps = Self.sets(e, at: &i, count: Int(e[5] & 0x1f)), i < e.count else { return nil }
            let ppsCount = Int(e[i])
            i += 1
            guard let pps = Self.sets(e, at: &i, count: ppsCount) else { return nil }
            parameterSets = sps + pps
        case "hevc":
            guard e.count >= 23, e[0] == 1 else { return nil }
            codec = .hevc
            lengthSize = Int(e[21] & 3) + 1
            var sets: [[UInt8]] = []
            let r = BigEndianReader(e)
            var i = 23
            for _ in 0..<Int(e[22]) {
                guard let n = r.u16(at: i + 1) else { return nil }
                i += 3
                guard let array = Self.sets(e, at: &i, count: Int(n)) else { return nil }
                sets += array
            }
            parameterSets = sets
        default:
            return nil
        }
        guard lengthSize != 3 else { return nil }
        record = e
    }

    /// `count` NAL units each after a 16-bit length, from `e[i]` on (as
    /// `avcC` and `hvcC` list them); `i` ends after the last. Nil when
    /// they run past the record.
    private static func sets(_ e: [UInt8], at i: inout Int, count: Int) -> [[UInt8]]? {
        var out: [[UInt8]] = []
        let r = BigEndianReader(e)
        for _ in 0..<count {
            guard let len = r.length(at: i, size: 2), i + 2 + len <= e.count else { return nil }
            out.append(Array(e[(i + 2)..<(i + 2 + len)]))
            i += 2 + len
        }
        return out
    }

    /// The NAL unit type of a unit (header first).
    public func type(_ unit: UnsafeRawBufferPointer) -> Int {
        guard let h = unit.first else { return -1 }
        return codec == .h264 ? Int(h & 0x1f) : Int((h >> 1) & 0x3f)
    }

    /// The NAL units of a length-prefixed packet; nil when the lengths do
    /// not add up to the packet.
    public func units(_ b: UnsafeRawBufferPointer) -> [Range<Int>]? {
        var out: [Range<Int>] = []
        let r = BigEndianReader(b)
        var i = 0
        while i < b.count {
            guard let len = r.length(at: i, size: lengthSize) else { return nil }
            i += lengthSize
            guard len > 0, i + len <= b.count else { return nil }
            out.append(i..<(i + len))
            i += len
        }
        return out
    }

    /// What the packet's picture is to a cut, from its first slice's type.
    public func pictureKind(_ b: UnsafeRawBufferPointer) -> PictureKind {
        guard let units = units(b) else { return .other }
        for u in units {
            let t = type(UnsafeRawBufferPointer(rebasing: b[u]))
            switch codec {
            case .h264:
                if t == 5 { return .cleanStart }
                if t == 1 { return .other }
            case .hevc:
                switch t {
                case 16...21: return .cleanStart
                case 6, 7: return .decodableLeading
                case 8, 9: return .skippableLeading
                case 0...31: return .other
                default: continue
                }
            }
        }
        return .other
    }

    /// Length-prefixed NAL units, each with this stream's prefix size.
    public func lengthPrefixed(_ units: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for u in units {
            for k in (0..<lengthSize).reversed() { out.append(UInt8(truncatingIfNeeded: u.count >> (8 * k))) }
            out += u
        }
        return out
    }

    /// The ids in use: SPS and PPS (H.264), for a new set beside them.
    public var h264IDs: (sps: Set<Int>, pps: Set<Int>) {
        var sps = Set<Int>(), pps = Set<Int>()
        for s in parameterSets {
            guard let h = s.first else { continue }
            var r = BitReader(Self.unescaped(s.dropFirst()))
            switch h & 0x1f {
            case 7:
                _ = r.bits(24)
                if let id = r.ue() { sps.insert(id) }
            case 8:
                if let id = r.ue() { pps.insert(id) }
            default: break
            }
        }
        return (sps, pps)
    }

    /// The `avcC` record with `added` (SPS and PPS NAL units) beside the
    /// record's own sets; everything else (profile, level, length size, the
    /// high-profile trailer) as it was.
    public func h264Record(adding added: [[UInt8]]) -> [UInt8]? {
        guard codec == .h264 else { return nil }
        let e = record
        let ownSPS = parameterSets.filter { $0.first.map { $0 & 0x1f == 7 } ?? false }
        let ownPPS = parameterSets.filter { $0.first.map { $0 & 0x1f == 8 } ?? false }
        let sps = ownSPS + added.filter { $0.first.map { $0 & 0x1f == 7 } ?? false }
        let pps = ownPPS + added.filter { $0.first.map { $0 & 0x1f == 8 } ?? false }
        guard sps.count <= 31, pps.count <= 255 else { return nil }
        // Where the record's parameter sets end (the trailer follows).
        var end = 6
        for s in ownSPS { end += 2 + s.count }
        end += 1
        for p in ownPPS { end += 2 + p.count }
        guard end <= e.count else { return nil }
        var out = Array(e[0..<5])
        out.append(0xe0 | UInt8(sps.count))
        for s in sps { out += [UInt8(s.count >> 8), UInt8(s.count & 0xff)] + s }
        out.append(UInt8(pps.count))
        for p in pps { out += [UInt8(p.count >> 8), UInt8(p.count & 0xff)] + p }
        out += e[end...]
        return out
    }

    /// An `hvcC` record holding `sets` (VPS, SPS and PPS NAL units, another
    /// encoder's) in place of the record's own, each array complete (as
    /// `hvc1` wants): the profile, tier, level and temporal layers from the
    /// new SPS, chroma format, bit depths and length size as the record's.
    public func hevcRecord(with sets: [[UInt8]]) -> [UInt8]? {
        guard codec == .hevc, record.count >= 23 else { return nil }
        func type(_ u: [UInt8]) -> UInt8? { u.first.map { ($0 >> 1) & 0x3f } }
        guard let sps = sets.first(where: { type($0) == 33 }) else { return nil }
        // sps_video_parameter_set_id, max_sub_layers_minus1, temporal_id_nesting; then the general profile_tier_level (12 bytes).
        let rbsp = Self.unescaped(sps.dropFirst(2))
        guard rbsp.count >= 13 else { return nil }
        var out = Array(record[0..<23])
        out.replaceSubrange(1..<13, with: rbsp[1..<13])
        out[13] = 0xf0; out[14] = 0x00  // min_spatial_segmentation_idc unknown
        out[15] = 0xfc  // parallelismType unknown
        let layers = (rbsp[0] >> 1) & 0x07 + 1, nested = rbsp[0] & 1
        out[21] = (record[21] & 0xc3) | (layers << 3) | (nested << 2)
        let arrays = [32, 33, 34].map { t in sets.filter { type($0) == UInt8(t) } }.enumerated().filter { !$0.element.isEmpty }
        out[22] = UInt8(arrays.count)
        for (k, units) in arrays {
            out.append(0x80 | UInt8(32 + k))
            out += [UInt8(units.count >> 8), UInt8(units.count & 0xff)]
            for u in units { out += [UInt8(u.count >> 8), UInt8(u.count & 0xff)] + u }
        }
        return out
    }

    /// The NAL units of Annex B data (start codes), headers first, trailing
    /// zero bytes left out.
    public static func annexBUnits(_ b: UnsafeRawBufferPointer) -> [[UInt8]] {
        var starts: [(code: Int, data: Int)] = []
        var i = 0
        while i + 2 < b.count {
            if b[i] == 0, b[i + 1] == 0, b[i + 2] == 1 {
                starts.append((i, i + 3))
                i += 3
            } else {
                i += 1
            }
        }
        var units: [[UInt8]] = []
        for (k, s) in starts.enumerated() {
            var end = k + 1 < starts.count ? starts[k + 1].code : b.count
            while end > s.data, b[end - 1] == 0 { end -= 1 }
            if end > s.data { units.append(Array(b[s.data..<end])) }
        }
        return units
    }

    /// RBSP bytes of a NAL unit's payload (emulation prevention removed).
    static func unescaped<C: Collection<UInt8>>(_ bytes: C) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var zeros = 0
        for b in bytes {
            if zeros >= 2, b == 3 {
                zeros = 0
                continue
            }
            zeros = b == 0 ? zeros + 1 : 0
            out.append(b)
        }
        return out
    }
}

/// Reads bits most significant first, and Exp-Golomb codes.
struct BitReader {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func bit() -> Int? {
        guard position < bytes.count * 8 else { return nil }
        defer { position += 1 }
        return Int(bytes[position >> 3] >> (7 - UInt8(position & 7))) & 1
    }

    mutating func bits(_ n: Int) -> Int? {
        var v = 0
        for _ in 0..<n {
            guard let b = bit() else { return nil }
            v = v << 1 | b
        }
        return v
    }

    mutating func ue() -> Int? {
        var zeros = 0
        while true {
            guard let b = bit() else { return nil }
            if b == 1 { break }
            zeros += 1
            if zeros > 31 { return nil }
        }
        guard let rest = bits(zeros) else { return nil }
        return (1 << zeros) - 1 + rest
    }
}

/// Writes bits most significant first, and Exp-Golomb codes.
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var count = 0

    mutating func bit(_ b: Int) {
        if count % 8 == 0 { bytes.append(0) }
        if b != 0 { bytes[bytes.count - 1] |= 0x80 >> UInt8(count % 8) }
        count += 1
    }

    mutating func bits(_ v: Int, _ n: Int) {
        for i in stride(from: n - 1, through: 0, by: -1) { bit((v >> i) & 1) }
    }

    mutating func ue(_ v: Int) {
        let x = v + 1
        let length = Int.bitWidth - x.leadingZeroBitCount
        bits(0, length - 1)
        bits(x, length)
    }

    /// Zeros to the byte's end.
    mutating func padToByte() {
        while count % 8 != 0 { bit(0) }
    }

    /// rbsp_trailing_bits: a 1, then zeros to the byte's end.
    mutating func trailing() {
        bit(1)
        while count % 8 != 0 { bit(0) }
    }
}

extension NALStream {
    /// An H.264 SPS NAL unit with its VUI's `max_num_reorder_frames` raised
    /// to `reorder` (and `max_dec_frame_buffering` to at least that): a
    /// stretch coded without B-frames then announces the reorder depth of
    /// the source it sits in, so a decoder that sizes its output queue by
    /// the active SPS does not drop the frames it holds where the stretch
    /// begins. Nil when the SPS has no bitstream restriction to change, or
    /// cannot be read.
    public static func h264SPS(_ nal: [UInt8], reorder: Int) -> [UInt8]? {
        guard let header = nal.first, header & 0x1f == 7 else { return nil }
        var r = BitReader(unescaped(nal.dropFirst()))
        func ue() -> Int? { r.ue() }
        func se() -> Int? { r.ue().map { $0 % 2 == 0 ? -($0 / 2) : ($0 + 1) / 2 } }
        guard let profile = r.bits(8), r.bits(16) != nil, ue() != nil else { return nil }
        if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profile) {
            guard let chroma = ue() else { return nil }
            if chroma == 3 { guard r.bit() != nil else { return nil } }
            guard ue() != nil, ue() != nil, r.bit() != nil, let scaling = r.bit() else { return nil }
            if scaling == 1 {
                for i in 0..<(chroma == 3 ? 12 : 8) {
                    guard let present = r.bit() else { return nil }
                    guard present == 1 else { continue }
                    var last = 8, next = 8
                    for _ in 0..<(i < 6 ? 16 : 64) where next != 0 {
                        guard let delta = se() else { return nil }
                        next = (last + delta + 256) % 256
                        last = next == 0 ? last : next
                    }
                }
            }
        }
        guard ue() != nil, let pocType = ue() else { return nil }
        if pocType == 0 {
            guard ue() != nil else { return nil }
        } else if pocType == 1 {
            guard r.bit() != nil, se() != nil, se() != nil, let n = ue() else { return nil }
            for _ in 0..<n { guard se() != nil else { return nil } }
        }
        guard ue() != nil, r.bit() != nil, ue() != nil, ue() != nil, let frameMbsOnly = r.bit() else { return nil }
        if frameMbsOnly == 0 { guard r.bit() != nil else { return nil } }
        guard r.bit() != nil, let cropping = r.bit() else { return nil }
        if cropping == 1 { for _ in 0..<4 { guard ue() != nil else { return nil } } }
        guard r.bit() == 1 else { return nil }  // VUI
        if r.bit() == 1, let idc = r.bits(8), idc == 255 { guard r.bits(32) != nil else { return nil } }
        if r.bit() == 1 { guard r.bit() != nil else { return nil } }
        if r.bit() == 1 {
            guard r.bits(4) != nil, let colour = r.bit() else { return nil }
            if colour == 1 { guard r.bits(24) != nil else { return nil } }
        }
        if r.bit() == 1 { guard ue() != nil, ue() != nil else { return nil } }
        if r.bit() == 1 { guard r.bits(32) != nil, r.bits(32) != nil, r.bit() != nil else { return nil } }
        var hrd = false
        for _ in 0..<2 {
            guard let present = r.bit() else { return nil }
            guard present == 1 else { continue }
            hrd = true
            guard let cpb = ue(), r.bits(8) != nil else { return nil }
            for _ in 0...cpb { guard ue() != nil, ue() != nil, r.bit() != nil else { return nil } }
            guard r.bits(20) != nil else { return nil }
        }
        if hrd { guard r.bit() != nil else { return nil } }
        guard r.bit() != nil, r.bit() == 1 else { return nil }  // pic_struct, bitstream_restriction
        guard r.bit() != nil, ue() != nil, ue() != nil, ue() != nil, ue() != nil else { return nil }
        let at = r.position
        guard let oldReorder = ue(), let oldBuffering = ue() else { return nil }
        guard reorder > oldReorder else { return nal }
        // Everything before the two fields as it was, then the new values and the trailing bits.
        var w = BitWriter()
        var copy = BitReader(r.bytes)
        for _ in 0..<at { w.bit(copy.bit() ?? 0) }
        w.ue(reorder)
        w.ue(max(oldBuffering, reorder))
        w.trailing()
        return [header] + escaped(w.bytes)
    }

    /// RBSP bytes with emulation prevention added (a 3 after two zeros
    /// before any byte up to 3).
    static func escaped(_ rbsp: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(rbsp.count + 4)
        var zeros = 0
        for b in rbsp {
            if zeros >= 2, b <= 3 {
                out.append(3)
                zeros = 0
            }
            out.append(b)
            zeros = b == 0 ? zeros + 1 : 0
        }
        return out
    }
}
