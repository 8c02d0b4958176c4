import Media
import Sync

/// What a copying verb (remux, cut, split) did, per output stream.
public struct RemuxStreamReport: Sendable, Codable {
    public let inputIndex: Int
    public let outputIndex: Int
    public let type: MediaType
    public let codec: String
    /// The input's codec where the stream was encoded (`remux --audio aac`).
    public var encodedFrom: String?
    public var packets: Int = 0
    public var bytes: Int64 = 0
    public var corrections = TimelineCorrections()

    public init(inputIndex: Int, outputIndex: Int, type: MediaType, codec: String, packets: Int = 0, bytes: Int64 = 0,
                corrections: TimelineCorrections = TimelineCorrections()) {
        self.inputIndex = inputIndex
        self.outputIndex = outputIndex
        self.type = type
        self.codec = codec
        self.packets = packets
        self.bytes = bytes
        self.corrections = corrections
    }
}
