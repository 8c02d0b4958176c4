/// `stco` and `co64`: where each chunk starts in the file (ISO/IEC 14496-12
/// 8.7.5). One value for both: written `co64` when it was read so or when an
/// offset needs 64 bits (`stco` widened, as a layout that moves chunks
/// past 4 GiB needs).
public struct ChunkOffsets: BoxPayload {
    public static let types: Set<FourCC> = ["stco", "co64"]
    public var version: UInt8
    public var flags: UInt32
    /// Read from a `co64`.
    public var wide: Bool
    public var offsets: [UInt64]
    public var trailing: [UInt8]

    public init(offsets: [UInt64]) { (version, flags, wide, self.offsets, trailing) = (0, 0, false, offsets, []) }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        (version, flags) = try r.versionAndFlags()
        wide = type == "co64"
        let width = wide ? 8 : 4
        offsets = try r.offsets(try r.entryCount(of: width), width: width)
        trailing = r.rest()
    }

    /// `co64` when read so or when an offset does not fit 32 bits.
    public var type: FourCC { wide || offsets.contains(where: { $0 > UInt64(UInt32.max) }) ? "co64" : "stco" }

    public func encode() -> [UInt8] {
        let wideOut = type == "co64", width = wideOut ? 8 : 4
        var w = FieldWriter(capacity: 8)
        w.versionAndFlags(version, flags)
        w.u32(UInt32(offsets.count))
        var out = w.bytes + [UInt8](repeating: 0, count: width * offsets.count)
        // Stored big-endian in place: a table of 100,000 offsets is written a byte at a time no more.
        out.withUnsafeMutableBytes { raw in
            for (k, o) in offsets.enumerated() {
                if wideOut {
                    raw.storeBytes(of: o.bigEndian, toByteOffset: 8 + 8 * k, as: UInt64.self)
                } else {
                    raw.storeBytes(of: UInt32(truncatingIfNeeded: o).bigEndian, toByteOffset: 8 + 4 * k, as: UInt32.self)
                }
            }
        }
        return out + trailing
    }
}
