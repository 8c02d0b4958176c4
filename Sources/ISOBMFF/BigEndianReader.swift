/// Big-endian numbers and four-character codes read from bytes in memory:
/// an index's boxes, a codec record, a packet's NAL unit lengths, mapped
/// media data. Offsets count from the bytes' start (a slice's too). Every
/// read is checked against the end: a field that is not all there reads as
/// nil, never a trap, for these bytes come from files anyone may have
/// written (the fuzz target feeds them garbage). `Bytes` is an array, a
/// slice of one or a buffer: indices one apart.
///
/// The reads are `@inlinable`, so a walk over 150,000 chunk offsets in
/// another module costs what indexing the bytes by hand costs. They must be
/// `public`: a `package` declaration's inlinable body is not given to other
/// modules, and each read was then a generic call that allocated (the hour
/// recording's bulk remux took 0.43 s for 0.15 s).
public struct BigEndianReader<Bytes: RandomAccessCollection<UInt8>> where Bytes.Index == Int {
    public let bytes: Bytes

    @inlinable
    public init(_ bytes: Bytes) { self.bytes = bytes }

    @inlinable
    public var count: Int { bytes.count }

    /// The unsigned integer of `size` bytes (0 to 8) at `offset`.
    @inlinable
    public func uint(at offset: Int, size: Int) -> UInt64? {
        guard offset >= 0, size >= 0, size <= 8, offset <= bytes.count - size else { return nil }
        let start = bytes.startIndex + offset
        var value: UInt64 = 0
        for k in 0..<size { value = value << 8 | UInt64(bytes[start + k]) }
        return value
    }

    /// A length (a NAL unit's, a box's) of `size` bytes at `offset`; nil
    /// also when it does not fit an `Int`.
    @inlinable
    public func length(at offset: Int, size: Int) -> Int? {
        guard let v = uint(at: offset, size: size), v <= UInt64(Int.max) else { return nil }
        return Int(v)
    }

    @inlinable
    public func u8(at offset: Int) -> UInt8? { uint(at: offset, size: 1).map { UInt8(truncatingIfNeeded: $0) } }

    @inlinable
    public func u16(at offset: Int) -> UInt16? { uint(at: offset, size: 2).map { UInt16(truncatingIfNeeded: $0) } }

    @inlinable
    public func u24(at offset: Int) -> UInt32? { uint(at: offset, size: 3).map { UInt32(truncatingIfNeeded: $0) } }

    @inlinable
    public func u32(at offset: Int) -> UInt32? { uint(at: offset, size: 4).map { UInt32(truncatingIfNeeded: $0) } }

    @inlinable
    public func u64(at offset: Int) -> UInt64? { uint(at: offset, size: 8) }

    @inlinable
    public func fourCC(at offset: Int) -> FourCC? { u32(at: offset).map(FourCC.init(rawValue:)) }

    /// The bytes of `range` (offsets from the start), clamped to those there are.
    @inlinable
    public func bytes(in range: Range<Int>) -> Bytes.SubSequence {
        let lower = min(max(range.lowerBound, 0), bytes.count), upper = min(max(range.upperBound, lower), bytes.count)
        let start = bytes.startIndex
        return bytes[(start + lower)..<(start + upper)]
    }
}
