/// `loci`: a 3GPP place (3GPP TS 26.244 8.2.7): its language, then its
/// name, role, longitude, latitude, altitude, body and notes, kept as bytes.
public struct LocationInformation: BoxPayload {
    public static let types: Set<FourCC> = ["loci"]
    public var type: FourCC { "loci" }
    public var version: UInt8
    public var flags: UInt32
    /// ISO 639-2 packed (`MediaHeader.packedLanguage`).
    public var language: UInt16
    /// The fields after the language, as they are.
    public var rest: [UInt8]

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        (version, flags) = try r.versionAndFlags()
        language = try r.u16()
        rest = r.rest()
    }

    public func encode() -> [UInt8] {
        var w = FieldWriter(capacity: 6 + rest.count)
        w.versionAndFlags(version, flags)
        w.u16(language)
        w.append(rest)
        return w.bytes
    }
}
