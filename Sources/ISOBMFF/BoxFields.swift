/// A box payload's fields read in order, each read checked against the end:
/// a field that is not all there throws `fieldsCutShort`, naming the box.
package struct FieldReader {
    package let type: FourCC
    package let reader: BigEndianReader<ArraySlice<UInt8>>
    /// Where the next field starts.
    package private(set) var offset = 0

    package init(_ type: FourCC, _ payload: ArraySlice<UInt8>) {
        self.type = type
        reader = BigEndianReader(payload)
    }

    package var remaining: Int { reader.count - offset }

    private func cutShort(_ size: Int) -> BoxError {
        .fieldsCutShort(type, needs: offset + size, has: reader.count)
    }

    /// The unsigned integer of `size` bytes (0 to 8) next.
    package mutating func uint(_ size: Int) throws(BoxError) -> UInt64 {
        guard let v = reader.uint(at: offset, size: size) else { throw cutShort(size) }
        offset += size
        return v
    }

    package mutating func u8() throws(BoxError) -> UInt8 { UInt8(truncatingIfNeeded: try uint(1)) }
    package mutating func u16() throws(BoxError) -> UInt16 { UInt16(truncatingIfNeeded: try uint(2)) }
    package mutating func u24() throws(BoxError) -> UInt32 { UInt32(truncatingIfNeeded: try uint(3)) }
    package mutating func u32() throws(BoxError) -> UInt32 { UInt32(truncatingIfNeeded: try uint(4)) }
    package mutating func u64() throws(BoxError) -> UInt64 { try uint(8) }
    package mutating func fourCC() throws(BoxError) -> FourCC { FourCC(rawValue: try u32()) }

    /// The next `count` bytes.
    package mutating func bytes(_ count: Int) throws(BoxError) -> [UInt8] { Array(try slice(count)) }

    private mutating func slice(_ count: Int) throws(BoxError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw cutShort(count) }
        defer { offset += count }
        return reader.bytes(in: offset..<(offset + count))
    }

    /// The next `count` numbers of 4 bytes each (a table's entries, read at memory speed).
    package mutating func u32s(_ count: Int) throws(BoxError) -> [UInt32] {
        try slice(4 * count).withUnsafeBytes { raw in
            (0..<count).map { UInt32(bigEndian: raw.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self)) }
        }
    }

    /// The next `count` numbers of `width` (4 or 8) bytes each, widened.
    package mutating func offsets(_ count: Int, width: Int) throws(BoxError) -> [UInt64] {
        guard width == 8 else { return try u32s(count).map(UInt64.init) }
        return try slice(8 * count).withUnsafeBytes { raw in
            (0..<count).map { UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8 * $0, as: UInt64.self)) }
        }
    }

    /// Everything left (kept byte for byte by the box that reads no further).
    package mutating func rest() -> [UInt8] {
        defer { offset = reader.count }
        return Array(reader.bytes(in: offset..<reader.count))
    }

    /// A full box's version and flags (ISO/IEC 14496-12 4.2).
    package mutating func versionAndFlags() throws(BoxError) -> (version: UInt8, flags: UInt32) {
        (try u8(), try u24())
    }

    /// Version and flags, refusing a version other than 0 or 1.
    package mutating func versionZeroOrOne() throws(BoxError) -> (version: UInt8, flags: UInt32) {
        let v = try versionAndFlags()
        guard v.version <= 1 else { throw .unknownVersion(type, v.version) }
        return v
    }

    /// A count of entries of `entrySize` bytes each that must all be there
    /// (so a hostile count reserves no memory the payload does not back).
    package mutating func entryCount(of entrySize: Int) throws(BoxError) -> Int {
        let count = Int(try u32())
        guard count <= remaining / entrySize else { throw cutShort(count * entrySize) }
        return count
    }

    /// A field of 8 bytes in version 1, 4 in version 0.
    package mutating func versioned(_ version: UInt8) throws(BoxError) -> UInt64 { try uint(version == 1 ? 8 : 4) }
}

/// A box payload's fields written in order, big-endian.
package struct FieldWriter {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    package mutating func uint(_ v: UInt64, _ size: Int) { put(v, size, &bytes) }
    package mutating func u8(_ v: UInt8) { bytes.append(v) }
    package mutating func u16(_ v: UInt16) { uint(UInt64(v), 2) }
    package mutating func u32(_ v: UInt32) { uint(UInt64(v), 4) }
    package mutating func u64(_ v: UInt64) { uint(v, 8) }
    package mutating func fourCC(_ v: FourCC) { u32(v.rawValue) }
    package mutating func append(_ b: [UInt8]) { bytes += b }
    package mutating func versionAndFlags(_ version: UInt8, _ flags: UInt32) {
        u8(version)
        uint(UInt64(flags), 3)
    }
    /// A field of 8 bytes in version 1, 4 in version 0.
    package mutating func versioned(_ v: UInt64, _ version: UInt8) { uint(v, version == 1 ? 8 : 4) }

    /// The version a box of versioned fields is written in: the one it was
    /// read in, or 1 when one of `values` does not fit 32 bits.
    package static func version(_ read: UInt8, holding values: UInt64...) -> UInt8 {
        max(read, values.contains { $0 > UInt64(UInt32.max) } ? 1 : 0)
    }
}
