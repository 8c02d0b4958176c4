/// A payload that is boxes one after another, after `prefix` bytes (a full
/// box's version and flags), with the zero bytes after the last (a
/// QuickTime list may end with four): user data, a `meta`, an item list,
/// an item. None of the boxes is descended into; each is kept byte for byte.
public struct BoxList: Sendable, Equatable {
    public var prefix: [UInt8]
    public var boxes: [BoxNode]
    public var tail: ArraySlice<UInt8>

    public init(prefix: [UInt8] = [], boxes: [BoxNode] = []) {
        self.prefix = prefix
        self.boxes = boxes
        tail = []
    }

    /// The boxes of `payload` after its first `prefix` bytes (of a box of `type`).
    public init(parsing payload: ArraySlice<UInt8>, prefix count: Int, type: FourCC) throws(BoxError) {
        guard payload.count >= count else { throw .fieldsCutShort(type, needs: count, has: payload.count) }
        prefix = Array(payload.prefix(count))
        (boxes, tail) = try BoxNode.parse(payload.dropFirst(count), descending: [], lenient: [])
    }

    public func encode() -> [UInt8] {
        var out = prefix
        BoxNode.append(boxes, to: &out)
        return out + tail
    }

    /// The index of the first box of `type`.
    public func index(of type: FourCC) -> Int? { boxes.firstIndex { $0.type == type } }

    /// The first box of `type`.
    public func first(_ type: FourCC) -> BoxNode? { index(of: type).map { boxes[$0] } }
}

/// `udta`: user data, a list of boxes (QuickTime's `©nam` strings, a `meta`,
/// a 3GPP `loci`…), ISO/IEC 14496-12 8.10.1.
public struct UserData: BoxPayload {
    public static let types: Set<FourCC> = ["udta"]
    public var type: FourCC { "udta" }
    public var list: BoxList

    public init(_ list: BoxList = BoxList()) { self.list = list }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        list = try BoxList(parsing: payload, prefix: 0, type: type)
    }

    public func encode() -> [UInt8] { list.encode() }
}

/// `ilst`: iTunes items (`©nam`, `covr`…) or numbered items named by a
/// `keys` list, each a box of `data` boxes (Apple's QuickTime metadata).
public struct ItemList: BoxPayload {
    public static let types: Set<FourCC> = ["ilst"]
    public var type: FourCC { "ilst" }
    public var list: BoxList

    public init(_ list: BoxList = BoxList()) { self.list = list }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        list = try BoxList(parsing: payload, prefix: 0, type: type)
    }

    public func encode() -> [UInt8] { list.encode() }
}

extension BoxList {
    /// The values of the boxes of `type`, in order.
    func values<V: BoxPayload>(_ type: FourCC, as _: V.Type) throws(BoxError) -> [V] {
        try boxes.filter { $0.type == type }.map { (box: BoxNode) throws(BoxError) -> V in try V(box) }
    }

    /// The value of the first box of `type`, nil without one.
    func value<V: BoxPayload>(_ type: FourCC, as _: V.Type) throws(BoxError) -> V? {
        guard let box = first(type) else { return nil }
        return try V(box)
    }

    /// This list with the boxes of `type` written from `values`, in order:
    /// as many as there are values stay where they were (each its header's
    /// form), those beyond them go, and values beyond them follow the last
    /// box of `type` (else of `anchor`, else the list's start). With `onlyFirst`,
    /// only the first box of `type` is the value's and any other stays as it is.
    func setting<V: BoxPayload>(_ type: FourCC, to values: [V], after anchor: FourCC? = nil, onlyFirst: Bool = false) -> BoxList {
        var copy = self
        copy.boxes = []
        var seen = 0
        var lastOfType: Int?, lastAnchor: Int?
        for box in boxes {
            if box.type == type && !(onlyFirst && seen > 0) {
                seen += 1
                guard seen <= values.count else { continue }
                var node = box
                node.set(values[seen - 1])
                copy.boxes.append(node)
                lastOfType = copy.boxes.count
                continue
            }
            copy.boxes.append(box)
            if box.type == anchor { lastAnchor = copy.boxes.count }
        }
        copy.boxes.insert(contentsOf: values.dropFirst(seen).map(\.box), at: lastOfType ?? lastAnchor ?? 0)
        return copy
    }
}
