/// `mfhd`: a movie fragment's sequence number (ISO/IEC 14496-12 8.8.5).
public struct MovieFragmentHeader: BoxPayload {
    public static let types: Set<FourCC> = ["mfhd"]
    public var type: FourCC { "mfhd" }
    public var version: UInt8
    public var flags: UInt32
    public var sequenceNumber: UInt32
    public var trailing: [UInt8]

    public init(sequenceNumber: UInt32) { (version, flags, self.sequenceNumber, trailing) = (0, 0, sequenceNumber, []) }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        (version, flags) = try r.versionAndFlags()
        sequenceNumber = try r.u32()
        trailing = r.rest()
    }

    public func encode() -> [UInt8] {
        var w = FieldWriter(capacity: 8 + trailing.count)
        w.versionAndFlags(version, flags)
        w.u32(sequenceNumber)
        w.append(trailing)
        return w.bytes
    }
}
