/// `meta`: a handler (`mdir`: iTunes items, `mdta`: metadata keys) and the
/// boxes it describes (ISO/IEC 14496-12 8.11.1). A full box in ISO files;
/// QuickTime's has no version and flags (its `hdlr` comes first).
public struct Metadata: BoxPayload {
    public static let types: Set<FourCC> = ["meta"]
    public var type: FourCC { "meta" }
    /// The boxes, after the version and flags where there are some (`prefix`).
    public var list: BoxList

    /// An empty list with a handler of `handler`, as libavformat's muxer
    /// writes it: a full box; `mdir` with Apple's manufacturer code.
    public init(handler: FourCC) {
        let manufacturer: [UInt8] = handler == "mdir" ? FourCC("appl").bytes : [0, 0, 0, 0]
        let fields = [0, 0, 0, 0, 0, 0, 0, 0] + handler.bytes + manufacturer + [UInt8](repeating: 0, count: 9)
        let hdlr = BoxNode("hdlr", payload: fields[...])
        list = BoxList(prefix: [0, 0, 0, 0], boxes: [hdlr])
    }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        let bare = BigEndianReader(payload).fourCC(at: 4) == "hdlr"
        list = try BoxList(parsing: payload, prefix: bare ? 0 : 4, type: type)
    }

    public func encode() -> [UInt8] { list.encode() }

    /// The handler type (`mdir`, `mdta`), from its `hdlr`.
    public var handler: FourCC? { list.first("hdlr").flatMap { try? HandlerReference($0) }?.handlerType }
}

/// `keys` of a `meta` of handler `mdta`: the names of the numbered items
/// of its `ilst` (item N named by the Nth), each a namespace (`mdta`: a
/// reverse-DNS name such as `com.apple.quicktime.make`) and its bytes.
public struct MetadataKeys: BoxPayload {
    public static let types: Set<FourCC> = ["keys"]
    public var type: FourCC { "keys" }

    public struct Key: Sendable, Equatable {
        public var namespace: FourCC
        public var value: [UInt8]
        public init(namespace: FourCC, value: [UInt8]) { (self.namespace, self.value) = (namespace, value) }
        /// A key named by its text (namespace `mdta`).
        public init(name: String) { self.init(namespace: "mdta", value: Array(name.utf8)) }
        /// Its name, for the `mdta` kind; nil for a key that names nothing.
        public var name: String? { namespace == "mdta" ? String(decoding: value, as: UTF8.self) : nil }
    }

    public var version: UInt8
    public var flags: UInt32
    public var keys: [Key]
    /// Bytes after the last key the count declares.
    public var trailing: [UInt8]

    public init(keys: [Key]) { (version, flags, self.keys, trailing) = (0, 0, keys, []) }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        (version, flags) = try r.versionAndFlags()
        let count = try r.u32()
        keys = []
        for _ in 0..<count {
            let size = Int(try r.u32())
            guard size >= 8 else { throw .runsPastParent(type, at: r.offset - 4) }
            keys.append(Key(namespace: try r.fourCC(), value: try r.bytes(size - 8)))
        }
        trailing = r.rest()
    }

    public func encode() -> [UInt8] {
        var w = FieldWriter()
        w.versionAndFlags(version, flags)
        w.u32(UInt32(keys.count))
        for k in keys {
            w.u32(UInt32(8 + k.value.count))
            w.fourCC(k.namespace)
            w.append(k.value)
        }
        w.append(trailing)
        return w.bytes
    }
}

/// `data`: one value of a metadata item: its type (1: UTF-8 text, 0:
/// implicit, 13/14: a JPEG/PNG picture, 21–23: numbers…), its locale, its bytes.
public struct ItemData: BoxPayload {
    public static let types: Set<FourCC> = ["data"]
    public var type: FourCC { "data" }
    /// The well-known type (after a zero byte: the type set).
    public var valueType: UInt32
    public var locale: [UInt8]
    public var value: [UInt8]

    /// UTF-8 text in `locale` (0 by default: any).
    public init(text: String, locale: [UInt8] = [0, 0, 0, 0]) { (valueType, self.locale, value) = (1, locale, Array(text.utf8)) }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        valueType = try r.u32()
        locale = try r.bytes(4)
        value = r.rest()
    }

    public func encode() -> [UInt8] {
        var w = FieldWriter(capacity: 8 + value.count)
        w.u32(valueType)
        w.append(locale)
        w.append(value)
        return w.bytes
    }
}
