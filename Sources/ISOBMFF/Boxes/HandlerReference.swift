/// `hdlr`: what a track's media is (`vide`, `soun`, `meta`, `tmcd`…) and the
/// handler's name (ISO/IEC 14496-12 8.4.3; QuickTime's component type in
/// the pre-defined field, its name a Pascal string, the ISO name a C string).
public struct HandlerReference: BoxPayload {
    public static let types: Set<FourCC> = ["hdlr"]
    public var type: FourCC { "hdlr" }
    public var version: UInt8
    public var flags: UInt32
    /// QuickTime's component type (`mhlr`, `dhlr`); 0 in ISO files.
    public var componentType: FourCC
    public var handlerType: FourCC
    /// Up to 12 reserved bytes (QuickTime's manufacturer and flags), as there are.
    public var reserved: [UInt8]
    /// The name's bytes as written (terminator or length byte included).
    public var name: [UInt8]

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        (version, flags) = try r.versionAndFlags()
        componentType = try r.fourCC()
        handlerType = try r.fourCC()
        reserved = try r.bytes(min(12, r.remaining))
        name = r.rest()
    }

    public func encode() -> [UInt8] {
        var w = FieldWriter(capacity: 24 + name.count)
        w.versionAndFlags(version, flags)
        w.fourCC(componentType)
        w.fourCC(handlerType)
        w.append(reserved)
        w.append(name)
        return w.bytes
    }
}
