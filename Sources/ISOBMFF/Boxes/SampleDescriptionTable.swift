/// `stsd`: a track's sample descriptions, one sample entry box each (ISO/IEC
/// 14496-12 8.5.2). The entries are kept as boxes, byte for byte; read one
/// into its fields and child boxes with `SampleEntry`.
public struct SampleDescriptionTable: BoxPayload {
    public static let types: Set<FourCC> = ["stsd"]
    public var type: FourCC { "stsd" }
    public var version: UInt8
    public var flags: UInt32
    /// The entries, as many as the count declares (the first is description 1).
    public var entries: [BoxNode]
    /// Bytes after the last entry the count declares.
    public var trailing: [UInt8]

    public init(entries: [BoxNode]) { (version, flags, self.entries, trailing) = (0, 0, entries, []) }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        (version, flags) = try r.versionAndFlags()
        let count = Int(try r.u32())
        let rest = r.rest()
        var walker = BoxWalker(rest)
        entries = []
        while entries.count < count, let header = walker.next() {
            let form: BoxNode.SizeField = header.extendsToEnd ? .toEnd : header.headerSize == 16 ? .large : .compact
            entries.append(BoxNode(header.type, sizeField: form, payload: walker.reader.bytes(in: header.payload)))
        }
        guard entries.count == count else { throw .fieldsCutShort(type, needs: 8 + 8 * count, has: payload.count) }
        trailing = Array(rest[(rest.startIndex + walker.position)...])
    }

    public func encode() -> [UInt8] {
        var w = FieldWriter()
        w.versionAndFlags(version, flags)
        w.u32(UInt32(entries.count))
        var out = w.bytes
        BoxNode.append(entries, to: &out)
        return out + trailing
    }
}

/// One sample entry of an `stsd` (ISO/IEC 14496-12 8.5.2.2; QuickTime's
/// sound description versions 1 and 2): its fields, which differ by the
/// track's kind, then child boxes (a video entry's `avcC`, `hvcC`, `colr`,
/// `pasp`; a `mebx` entry's `keys`), all kept byte for byte.
public struct SampleEntry: Sendable, Equatable {
    /// The coding (`avc1`, `hvc1`, `mp4a`, `mebx`…).
    public var type: FourCC
    /// The fields before the child boxes: six reserved bytes, the data
    /// reference index, then the kind's own.
    public var fields: [UInt8]
    public var boxes: [BoxNode]
    /// Zero bytes after the last child box (fewer than a box header).
    public var tail: ArraySlice<UInt8>

    /// The size of the fields of an entry in a track of `handler`
    /// (`vide`, `soun`, `meta`…), nil for a kind whose entries are read as
    /// bytes only (their child boxes, if any, not found).
    public static func fieldsSize(of entry: BoxNode, handler: FourCC?) -> Int? {
        if handler == "vide" { return 78 }
        if entry.type == "mebx" { return 8 }
        guard handler == "soun", let version = BigEndianReader(entry.payload).u16(at: 8) else { return nil }
        // QuickTime's sound description: version 1 adds 16 bytes, version 2 36 (ISO's is version 0).
        switch version {
        case 0: return 28
        case 1: return 44
        case 2: return 64
        default: return nil
        }
    }

    /// The entry `box` in a track of `handler`; throws when its fields are
    /// cut short or what follows them is not boxes.
    public init(_ box: BoxNode, handler: FourCC?) throws(BoxError) {
        type = box.type
        guard let size = Self.fieldsSize(of: box, handler: handler) else {
            (fields, boxes, tail) = (Array(box.payload), [], [])
            return
        }
        guard box.payload.count >= size else { throw .fieldsCutShort(box.type, needs: size, has: box.payload.count) }
        fields = Array(box.payload.prefix(size))
        (boxes, tail) = try BoxNode.parse(box.payload.dropFirst(size), descending: [], lenient: [])
    }

    /// The entry as a box.
    public var box: BoxNode {
        var out = fields
        BoxNode.append(boxes, to: &out)
        return BoxNode(type, payload: (out + tail)[...])
    }

    /// The first child box of `type`.
    public func child(_ type: FourCC) -> BoxNode? { boxes.first { $0.type == type } }

    /// For a sound entry: the bytes of so many audio frames it declares
    /// (QuickTime's version 1 and 2; version 0: channels × bits per sample),
    /// for sample tables that count frames. Read from the entry's bytes, as
    /// far as they go (its child boxes need not parse).
    public static func soundFrameBytes(_ entry: BoxNode) -> (bytes: Int64, per: Int64)? {
        let r = BigEndianReader(entry.payload)
        guard let version = r.u16(at: 8) else { return nil }
        switch version {
        case 1:
            // Samples per packet at 28, bytes per frame at 36.
            guard let frames = r.u32(at: 28), let bytes = r.u32(at: 36), frames > 0, bytes > 0 else { return nil }
            return (Int64(bytes), Int64(frames))
        case 2:
            // Constant bytes per audio packet at 56, LPCM frames per packet at 60.
            guard let bytes = r.u32(at: 56), let frames = r.u32(at: 60), frames > 0, bytes > 0 else { return nil }
            return (Int64(bytes), Int64(frames))
        default:
            guard let channels = r.u16(at: 16), let bits = r.u16(at: 18), channels > 0, bits >= 8 else { return nil }
            return (Int64(channels) * Int64(bits / 8), 1)
        }
    }
}
