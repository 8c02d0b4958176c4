/// `mehd`: the whole movie's duration, fragments included, in the movie's
/// time scale (ISO/IEC 14496-12 8.8.2). Version 1 when the duration needs
/// 64 bits or the box was read so.
public struct MovieExtendsHeader: BoxPayload {
    public static let types: Set<FourCC> = ["mehd"]
    public var type: FourCC { "mehd" }
    public var version: UInt8
    public var flags: UInt32
    public var fragmentDuration: UInt64
    public var trailing: [UInt8]

    public init(fragmentDuration: UInt64) { (version, flags, self.fragmentDuration, trailing) = (0, 0, fragmentDuration, []) }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        (version, flags) = try r.versionZeroOrOne()
        fragmentDuration = try r.versioned(version)
        trailing = r.rest()
    }

    public var encodedVersion: UInt8 { FieldWriter.version(version, holding: fragmentDuration) }

    public func encode() -> [UInt8] {
        let v = encodedVersion
        var w = FieldWriter(capacity: 12 + trailing.count)
        w.versionAndFlags(v, flags)
        w.versioned(fragmentDuration, v)
        w.append(trailing)
        return w.bytes
    }
}
