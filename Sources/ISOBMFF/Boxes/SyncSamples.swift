/// `stss`: the numbers (from 1) of the samples that are sync samples (key
/// frames); without it every sample is one (ISO/IEC 14496-12 8.6.2).
public struct SyncSamples: BoxPayload {
    public static let types: Set<FourCC> = ["stss"]
    public var type: FourCC { "stss" }
    private var table: UInt32Table

    public var sampleNumbers: [UInt32] {
        get { table.values }
        set { table.values = newValue }
    }

    public init(sampleNumbers: [UInt32]) { table = UInt32Table(values: sampleNumbers) }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        table = try UInt32Table(parsing: payload, type: type, fields: 1)
    }

    public func encode() -> [UInt8] { table.encode(fields: 1) }
}
