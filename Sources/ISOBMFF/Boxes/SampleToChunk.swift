/// `stsc`: how many samples each chunk holds and with which sample
/// description, run-length coded by first chunk (ISO/IEC 14496-12 8.7.4).
public struct SampleToChunk: BoxPayload {
    public static let types: Set<FourCC> = ["stsc"]
    public var type: FourCC { "stsc" }
    public struct Entry: Sendable, Equatable {
        /// From 1.
        public var firstChunk: UInt32
        public var samplesPerChunk: UInt32
        /// From 1.
        public var sampleDescriptionIndex: UInt32
        public init(firstChunk: UInt32, samplesPerChunk: UInt32, sampleDescriptionIndex: UInt32) {
            (self.firstChunk, self.samplesPerChunk, self.sampleDescriptionIndex) = (firstChunk, samplesPerChunk, sampleDescriptionIndex)
        }
    }
    private var table: UInt32Table

    public var entries: [Entry] {
        get {
            stride(from: 0, to: table.values.count, by: 3).map {
                Entry(firstChunk: table.values[$0], samplesPerChunk: table.values[$0 + 1], sampleDescriptionIndex: table.values[$0 + 2])
            }
        }
        set { table.values = newValue.flatMap { [$0.firstChunk, $0.samplesPerChunk, $0.sampleDescriptionIndex] } }
    }

    public init(entries: [Entry]) {
        table = UInt32Table(values: entries.flatMap { [$0.firstChunk, $0.samplesPerChunk, $0.sampleDescriptionIndex] })
    }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        table = try UInt32Table(parsing: payload, type: type, fields: 3)
    }

    public func encode() -> [UInt8] { table.encode(fields: 3) }
}
