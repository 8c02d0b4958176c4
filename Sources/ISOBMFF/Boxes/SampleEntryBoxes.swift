/// Boxes inside sample entries that this program reads: a `mebx` entry's
/// key table, an MV-HEVC entry's `vexu` (Apple's video extended usage).

/// `keys` of a `mebx` sample entry (QuickTime timed metadata): one box per
/// key, its type the key's local id, declaring the key in a `keyd`
/// (namespace, then the key) and its data type in a `dtyp`.
public struct TimedMetadataKeys: Sendable, Equatable {
    public var list: BoxList

    public init(parsing payload: ArraySlice<UInt8>) throws(BoxError) {
        list = try BoxList(parsing: payload, prefix: 0, type: "keys")
    }

    /// The table's payload: its key boxes, as read.
    public func encode() -> [UInt8] { list.encode() }

    /// Each key's local id (its box's type, as a number), in order: what a
    /// sample's items name their key by.
    public var localIDs: [UInt32] { list.boxes.map(\.type.rawValue) }

    /// Each key box's declaration (`keyd`), in order; nil for one without
    /// a whole one (or whose boxes do not parse).
    public var declarations: [MetadataKeys.Key?] {
        list.boxes.map { key in
            guard let inner = try? BoxList(parsing: key.payload, prefix: 0, type: key.type), let keyd = inner.first("keyd"),
                  let namespace = BigEndianReader(keyd.payload).fourCC(at: 0) else { return nil }
            return MetadataKeys.Key(namespace: namespace, value: Array(keyd.payload.dropFirst(4)))
        }
    }
}

/// `vexu`: the views of a stereo (MV-HEVC) video entry: its `eyes` box's
/// `stri` (which eyes there are) and `hero` (the eye shown in 2D), full
/// boxes whose one field follows version and flags.
public struct VideoExtendedUsage: Sendable, Equatable {
    /// `stri`'s flags: 1 left eye, 2 right eye, 4 additional views, 8 eye views reversed.
    public var stereoFlags: UInt8?
    /// `hero`'s eye: 1 left, 2 right.
    public var heroEye: UInt8?

    /// The fields of a `vexu` payload, as far as its boxes parse.
    public init(parsing payload: ArraySlice<UInt8>) {
        let eyes = (try? BoxList(parsing: payload, prefix: 0, type: "vexu"))?.first("eyes")
        let inner = eyes.flatMap { try? BoxList(parsing: $0.payload, prefix: 0, type: "eyes") }
        func field(_ type: FourCC) -> UInt8? {
            guard let box = inner?.first(type) else { return nil }
            var r = FieldReader(type, box.payload)
            guard (try? r.versionAndFlags()) != nil else { return nil }
            return try? r.u8()
        }
        stereoFlags = field("stri")
        heroEye = field("hero")
    }
}
