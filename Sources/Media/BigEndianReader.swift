/// Big-endian numbers and four-character codes read from bytes in memory:
/// an index's boxes, a codec record, a packet's NAL unit lengths, mapped
/// media data. Offsets count from the bytes' start (a slice's too). Every
/// read is checked against the end: a field that is not all there reads as
/// nil, never a trap, for these bytes come from files anyone may have
/// written (the fuzz target feeds them garbage). `Bytes` is an array, a
/// slice of one or a buffer: indices one apart.
///
/// The reads are `@inlinable`, so a walk over 150,000 chunk offsets in
/// another module costs what indexing the bytes by hand costs.
package struct BigEndianReader<Bytes: RandomAccessCollection<UInt8>> where Bytes.Index == Int {
    package let bytes: Bytes

    @inlinable
    package init(_ bytes: Bytes) { self.bytes = bytes }

    @inlinable
    package var count: Int { bytes.count }

    /// The unsigned integer of `size` bytes (0 to 8) at `offset`.
    @inlinable
    package func uint(at offset: Int, size: Int) -> UInt64? {
        guard offset >= 0, size >= 0, size <= 8, offset <= bytes.count - size else { return nil }
        let start = bytes.startIndex + offset
        var value: UInt64 = 0
        for k in 0..<size { value = value << 8 | UInt64(bytes[start + k]) }
        return value
    }

    /// A length (a NAL unit's, a box's) of `size` bytes at `offset`; nil
    /// also when it does not fit an `Int`.
    @inlinable
    package func length(at offset: Int, size: Int) -> Int? {
        guard let v = uint(at: offset, size: size), v <= UInt64(Int.max) else { return nil }
        return Int(v)
    }

    @inlinable
    package func u8(at offset: Int) -> UInt8? { uint(at: offset, size: 1).map { UInt8(truncatingIfNeeded: $0) } }

    @inlinable
    package func u16(at offset: Int) -> UInt16? { uint(at: offset, size: 2).map { UInt16(truncatingIfNeeded: $0) } }

    @inlinable
    package func u24(at offset: Int) -> UInt32? { uint(at: offset, size: 3).map { UInt32(truncatingIfNeeded: $0) } }

    @inlinable
    package func u32(at offset: Int) -> UInt32? { uint(at: offset, size: 4).map { UInt32(truncatingIfNeeded: $0) } }

    @inlinable
    package func u64(at offset: Int) -> UInt64? { uint(at: offset, size: 8) }

    @inlinable
    package func fourCC(at offset: Int) -> FourCC? { u32(at: offset).map(FourCC.init(rawValue:)) }

    /// The bytes of `range` (offsets from the start), clamped to those there are.
    @inlinable
    package func bytes(in range: Range<Int>) -> Bytes.SubSequence {
        let lower = min(max(range.lowerBound, 0), bytes.count), upper = min(max(range.upperBound, lower), bytes.count)
        let start = bytes.startIndex
        return bytes[(start + lower)..<(start + upper)]
    }
}

/// A box's type: four bytes, most often four ASCII letters
/// (`FourCC("moov")`). QuickTime's user data strings start with 0xA9,
/// written `"©nam"` (each character one byte, as in ISO 8859-1); an item
/// of a keyed metadata list is numbered, not named (`FourCC(rawValue: 1)`).
/// Compared as the number, never as text.
public struct FourCC: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public var rawValue: UInt32

    @inlinable
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The code of four characters, each U+0000 to U+00FF (any other is
    /// taken as `?`). From the literal's UTF-8 bytes, without making a
    /// `String`: a type compared in a loop (`box.type == "trak"`) costs
    /// what comparing two numbers costs.
    @inlinable
    public init(stringLiteral text: StaticString) {
        rawValue = text.withUTF8Buffer { utf8 in
            var raw: UInt32 = 0, i = 0, n = 0
            while i < utf8.count && n < 4 {
                let lead = utf8[i]
                var scalar = UInt32(lead)
                i += 1
                if lead >= 0x80 {
                    // Two bytes for U+0080 to U+07FF (only up to U+00FF is kept), more for the rest.
                    scalar = lead & 0xe0 == 0xc0 && i < utf8.count ? UInt32(lead & 0x1f) << 6 | UInt32(utf8[i] & 0x3f) : 0x3f
                    while i < utf8.count && utf8[i] & 0xc0 == 0x80 { i += 1 }
                }
                raw = raw << 8 | (scalar <= 0xff ? scalar : 0x3f)
                n += 1
            }
            return raw
        }
    }

    /// The four bytes, first first.
    public var bytes: [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (24 - 8 * UInt32($0))) } }

    /// The code as text for messages: bytes outside printable ASCII shown as `?`.
    public var description: String {
        String(decoding: bytes.map { $0 >= 32 && $0 < 127 ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}

/// `v`'s low `n` bytes appended to `out`, most significant first.
func put(_ v: UInt64, _ n: Int, _ out: inout [UInt8]) {
    for k in (0..<n).reversed() { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(k)))) }
}
