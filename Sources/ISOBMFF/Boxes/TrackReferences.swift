/// `tref`: the tracks a track refers to, by kind of reference (ISO/IEC
/// 14496-12 8.3.3): a `mebx` track's `cdsc` names the video it describes,
/// a chapter list's `chap`, a timecode's `tmcd`.
public struct TrackReferences: BoxPayload {
    public static let types: Set<FourCC> = ["tref"]
    public var type: FourCC { "tref" }

    public struct Reference: Sendable, Equatable {
        /// The kind (`cdsc`, `chap`, `tmcd`, `hint`…).
        public var type: FourCC
        /// The track ids (`tkhd`) referred to.
        public var trackIDs: [UInt32]
        /// Bytes after the last whole id, and the header's form, kept as read.
        var rest: [UInt8] = []
        var sizeField: BoxNode.SizeField = .compact

        public init(type: FourCC, trackIDs: [UInt32]) { (self.type, self.trackIDs) = (type, trackIDs) }
    }

    public var references: [Reference]
    /// Zero bytes after the last reference (fewer than a box header).
    public var tail: [UInt8]

    public init(references: [Reference]) { (self.references, tail) = (references, []) }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        let (boxes, tail) = try BoxNode.parse(payload, descending: [], lenient: [])
        self.tail = Array(tail)
        references = try boxes.map { (box: BoxNode) throws(BoxError) -> Reference in
            var r = FieldReader(box.type, box.payload)
            var ref = Reference(type: box.type, trackIDs: try r.u32s(box.payload.count / 4))
            (ref.rest, ref.sizeField) = (r.rest(), box.sizeField)
            return ref
        }
    }

    public func encode() -> [UInt8] {
        let boxes = references.map { ref in
            var w = FieldWriter(capacity: 4 * ref.trackIDs.count + ref.rest.count)
            for id in ref.trackIDs { w.u32(id) }
            w.append(ref.rest)
            return BoxNode(ref.type, sizeField: ref.sizeField, payload: w.bytes[...])
        }
        var out: [UInt8] = []
        BoxNode.append(boxes, to: &out)
        return out + tail
    }
}
