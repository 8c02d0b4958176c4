/// A box whose payload this module reads into typed fields and writes back:
/// `encode()` of a parsed value gives the payload it was parsed from, byte
/// for byte (bytes after the fields are kept as they are).
public protocol BoxPayload: Sendable, Equatable {
    /// The box types it reads (`stco` and `co64` are one value).
    static var types: Set<FourCC> { get }
    /// The value of a payload (everything after the box header) of a box of one of `types`.
    init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError)
    /// The box's type as this value is written (`co64` when an offset needs 64 bits).
    var type: FourCC { get }
    /// The payload, everything after the box header.
    func encode() -> [UInt8]
}

extension BoxPayload {
    /// The value of `box`'s payload.
    public init(_ box: BoxNode) throws(BoxError) {
        self = try Self(parsing: box.content, type: box.type)
    }

    /// This value as a box (a compact header).
    public var box: BoxNode { BoxNode(type, payload: encode()[...]) }
}

/// Every box type this module reads into fields, for a caller (the round
/// trip test, the fuzz entry) that handles each box of a tree it knows.
public enum KnownBoxes {
    public static let all: [any BoxPayload.Type] = [
        FileType.self, MovieHeader.self, TrackHeader.self, MediaHeader.self, HandlerReference.self, EditList.self,
        TimeToSample.self, CompositionOffsets.self, SyncSamples.self, SampleToChunk.self, SampleSizes.self,
        ChunkOffsets.self, SampleDescriptionTable.self, TrackReferences.self, UserData.self, Metadata.self,
        ItemList.self, MetadataKeys.self, ItemData.self, LocationInformation.self,
        MovieExtends.self, MovieExtendsHeader.self, TrackExtends.self, MovieFragment.self, MovieFragmentHeader.self,
        TrackFragment.self, TrackFragmentHeader.self, TrackFragmentDecodeTime.self, TrackRun.self, SegmentIndex.self,
    ]

    /// The reader of boxes of `type`, nil for a type read as bytes only.
    public static func payloadType(for type: FourCC) -> (any BoxPayload.Type)? {
        all.first { $0.types.contains(type) }
    }

    /// `box`'s payload (`content`: its children's bytes too) read into its
    /// typed value and written back (with the type it is written as); nil
    /// for a box read as bytes only.
    public static func reencoded(_ box: BoxNode) throws(BoxError) -> (type: FourCC, payload: [UInt8])? {
        guard let reader = payloadType(for: box.type) else { return nil }
        let value = try reader.init(parsing: box.content, type: box.type)
        return (value.type, value.encode())
    }
}
