/// `ftyp` (and QuickTime's `styp`-less equivalent): the brands a file claims
/// (ISO/IEC 14496-12 4.3).
public struct FileType: BoxPayload {
    public static let types: Set<FourCC> = ["ftyp", "styp"]
    public var type: FourCC
    public var majorBrand: FourCC
    public var minorVersion: UInt32
    public var compatibleBrands: [FourCC]
    /// Bytes after the last whole brand, kept.
    public var trailing: [UInt8]

    public init(majorBrand: FourCC, minorVersion: UInt32, compatibleBrands: [FourCC]) {
        (type, self.majorBrand, self.minorVersion, self.compatibleBrands, trailing) = ("ftyp", majorBrand, minorVersion, compatibleBrands, [])
    }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        self.type = type
        majorBrand = try r.fourCC()
        minorVersion = try r.u32()
        compatibleBrands = []
        while r.remaining >= 4 { compatibleBrands.append(try r.fourCC()) }
        trailing = r.rest()
    }

    public func encode() -> [UInt8] {
        var w = FieldWriter(capacity: 8 + 4 * compatibleBrands.count + trailing.count)
        w.fourCC(majorBrand)
        w.u32(minorVersion)
        for b in compatibleBrands { w.fourCC(b) }
        w.append(trailing)
        return w.bytes
    }
}
