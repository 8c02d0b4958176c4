/// `stts`: the samples' durations, run-length coded (ISO/IEC 14496-12 8.6.1.2).
public struct TimeToSample: BoxPayload {
    public static let types: Set<FourCC> = ["stts"]
    public var type: FourCC { "stts" }
    public struct Entry: Sendable, Equatable {
        public var sampleCount: UInt32
        public var sampleDelta: UInt32
        public init(sampleCount: UInt32, sampleDelta: UInt32) { (self.sampleCount, self.sampleDelta) = (sampleCount, sampleDelta) }
    }
    private var table: UInt32Table

    public var entries: [Entry] {
        get { stride(from: 0, to: table.values.count, by: 2).map { Entry(sampleCount: table.values[$0], sampleDelta: table.values[$0 + 1]) } }
        set { table.values = newValue.flatMap { [$0.sampleCount, $0.sampleDelta] } }
    }

    public init(entries: [Entry]) { table = UInt32Table(values: entries.flatMap { [$0.sampleCount, $0.sampleDelta] }) }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        table = try UInt32Table(parsing: payload, type: type, fields: 2)
    }

    public func encode() -> [UInt8] { table.encode(fields: 2) }
}
