/// `ctts`: each sample's composition offset (PTS − DTS), run-length coded
/// (ISO/IEC 14496-12 8.6.1.3). Version 1 offsets are signed; version 0's are
/// read as signed too, as libavformat reads them (the bits are the same).
public struct CompositionOffsets: BoxPayload {
    public static let types: Set<FourCC> = ["ctts"]
    public var type: FourCC { "ctts" }
    public struct Entry: Sendable, Equatable {
        public var sampleCount: UInt32
        public var sampleOffset: Int32
        public init(sampleCount: UInt32, sampleOffset: Int32) { (self.sampleCount, self.sampleOffset) = (sampleCount, sampleOffset) }
    }
    private var table: UInt32Table

    public var version: UInt8 { table.version }

    public var entries: [Entry] {
        get {
            stride(from: 0, to: table.values.count, by: 2).map {
                Entry(sampleCount: table.values[$0], sampleOffset: Int32(bitPattern: table.values[$0 + 1]))
            }
        }
        set {
            table.values = newValue.flatMap { [$0.sampleCount, UInt32(bitPattern: $0.sampleOffset)] }
            if newValue.contains(where: { $0.sampleOffset < 0 }) { table.version = 1 }
        }
    }

    /// Version 1 when an offset is negative.
    public init(entries: [Entry]) {
        table = UInt32Table(version: entries.contains { $0.sampleOffset < 0 } ? 1 : 0,
                            values: entries.flatMap { [$0.sampleCount, UInt32(bitPattern: $0.sampleOffset)] })
    }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        table = try UInt32Table(parsing: payload, type: type, fields: 2)
    }

    public func encode() -> [UInt8] { table.encode(fields: 2) }
}
