/// A box and what it holds, kept so that encoding it gives back the bytes it
/// was parsed from: its header's form (a 64-bit size written where 32 bits
/// would do stays 64-bit), its children for the containers descended into,
/// and every other payload byte for byte, known or not (Bento4's
/// `AP4_UnknownAtom`: a box a newer device wrote survives a rewrite).
public struct BoxNode: Sendable, Equatable {
    /// How the header gives the box's size (ISO/IEC 14496-12 4.2).
    public enum SizeField: Sendable, Equatable {
        /// 32 bits (written 64-bit anyway when the box outgrows them).
        case compact
        /// Size field 1 and a 64-bit size after the type.
        case large
        /// Size field 0: the box runs to the end of what holds it.
        case toEnd
    }

    /// The type's four bytes as they are (a `©nam`'s first byte is not
    /// ASCII; an item of a keyed list is numbered, not named).
    public var type: FourCC
    public var sizeField: SizeField
    /// Everything after the header, for a box not descended into; after the
    /// children, the bytes that follow the last of them (a QuickTime list
    /// may end with four zero bytes).
    public var payload: ArraySlice<UInt8>
    /// The boxes inside, for a container descended into.
    public var children: [BoxNode]?

    public init(_ type: FourCC, sizeField: SizeField = .compact, payload: ArraySlice<UInt8> = [], children: [BoxNode]? = nil) {
        self.type = type
        self.sizeField = sizeField
        self.payload = payload
        self.children = children
    }

    /// Containers whose children are boxes: a parse descends into them, and
    /// refuses one whose children do not parse.
    public static let containers: Set<FourCC> = [
        "moov", "trak", "mdia", "minf", "stbl", "edts", "dinf", "mvex", "moof", "traf", "mfra",
    ]
    /// The containers that hold a track's sample tables, down to `stbl`.
    public static let sampleTableContainers: Set<FourCC> = ["moov", "trak", "mdia", "minf", "stbl"]
    /// Containers descended into when their payload parses as boxes, kept as
    /// bytes otherwise (QuickTime's user data may hold other things).
    public static let lenientContainers: Set<FourCC> = ["udta", "tref"]

    /// How deep boxes may nest, and how many a parse may read: far beyond a
    /// real file's (the sample tables lie 5 levels down; an index holds some
    /// hundreds of boxes), far below what would exhaust the stack (the parse
    /// recurses) or the memory. A crafted file past either is refused.
    public static let depthLimit = 32
    public static let countLimit = 100_000

    /// The boxes of `bytes`, one after another, and the tail after the last
    /// (fewer bytes than a header, all zeros; any other tail is refused).
    public static func parse(_ bytes: ArraySlice<UInt8>, descending: Set<FourCC> = containers,
                             lenient: Set<FourCC> = lenientContainers) throws(BoxError) -> (boxes: [BoxNode], tail: ArraySlice<UInt8>) {
        var count = 0
        return try parse(bytes, descending: descending, lenient: lenient, depth: 1, count: &count)
    }

    /// One level of the parse, `depth` levels down, `count` boxes read so far.
    private static func parse(_ bytes: ArraySlice<UInt8>, descending: Set<FourCC>, lenient: Set<FourCC>, depth: Int,
                              count: inout Int) throws(BoxError) -> (boxes: [BoxNode], tail: ArraySlice<UInt8>) {
        var out: [BoxNode] = []
        var walker = BoxWalker(bytes)
        while let header = walker.next() {
            count += 1
            guard count <= countLimit else { throw .tooMany(limit: countLimit) }
            let form: SizeField = header.extendsToEnd ? .toEnd : header.headerSize == 16 ? .large : .compact
            let payload = walker.reader.bytes(in: header.payload)
            let descend = descending.contains(header.type), maybe = lenient.contains(header.type)
            guard descend || maybe else {
                out.append(BoxNode(header.type, sizeField: form, payload: payload))
                continue
            }
            guard depth < depthLimit else { throw .tooDeep(limit: depthLimit) }
            do throws(BoxError) {
                let inner = try parse(payload, descending: descending, lenient: lenient, depth: depth + 1, count: &count)
                out.append(BoxNode(header.type, sizeField: form, payload: inner.tail, children: inner.boxes))
            } catch {
                guard maybe, !error.isLimit else { throw error }
                out.append(BoxNode(header.type, sizeField: form, payload: payload))
            }
        }
        guard let stop = walker.stop else { return (out, bytes[bytes.endIndex...]) }
        if case .tail(let at) = stop {
            let tail = walker.reader.bytes(in: at..<bytes.count)
            if tail.allSatisfy({ $0 == 0 }) { return (out, tail) }
        }
        throw BoxError(stop)
    }

    /// The first box of `bytes`, whole and not descended into, what follows
    /// it unread (a reader that takes only the first, as libavformat takes
    /// an item's first `data`); nil when no whole box starts there.
    public static func first(of bytes: ArraySlice<UInt8>) -> BoxNode? {
        var walker = BoxWalker(bytes)
        guard let header = walker.next() else { return nil }
        let form: SizeField = header.extendsToEnd ? .toEnd : header.headerSize == 16 ? .large : .compact
        return BoxNode(header.type, sizeField: form, payload: walker.reader.bytes(in: header.payload))
    }

    /// The payload's size, children included.
    public var contentSize: Int { (children.map { $0.reduce(0) { $0 + $1.encodedSize } } ?? 0) + payload.count }

    /// The box's size, header included.
    public var encodedSize: Int { let c = contentSize; return c + (writesLargeSize(content: c) ? 16 : 8) }

    private func writesLargeSize(content: Int) -> Bool { sizeField == .large || content + 8 > Int(UInt32.max) }

    /// Everything after the header: the children's bytes, then `payload`
    /// (for a box not descended into, `payload` itself).
    public var content: ArraySlice<UInt8> {
        guard let children else { return payload }
        var out: [UInt8] = []
        out.reserveCapacity(contentSize)
        Self.append(children, to: &out)
        return (out + payload)[...]
    }

    /// The header of a box of `type` whose payload of `contentSize` bytes is
    /// written apart (media data, the padding of a `free` box): 64-bit only
    /// when the size needs it.
    public static func header(_ type: FourCC, contentSize: Int64) -> [UInt8] {
        var out: [UInt8] = []
        if contentSize + 8 > Int64(UInt32.max) {
            put(1, 4, &out)
            put(UInt64(type.rawValue), 4, &out)
            put(UInt64(contentSize + 16), 8, &out)
        } else {
            put(UInt64(contentSize + 8), 4, &out)
            put(UInt64(type.rawValue), 4, &out)
        }
        return out
    }

    /// The box, header included.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(encodedSize)
        append(to: &out)
        return out
    }

    public func append(to out: inout [UInt8]) { append(to: &out, last: true) }

    /// The box appended, its size written as 0 (to the end) only where it
    /// is `last` of what holds it (an edit may have put a box after it).
    private func append(to out: inout [UInt8], last: Bool) {
        let content = contentSize
        if writesLargeSize(content: content) {
            put(1, 4, &out)
            put(UInt64(type.rawValue), 4, &out)
            put(UInt64(content + 16), 8, &out)
        } else {
            put(sizeField == .toEnd && last ? 0 : UInt64(content + 8), 4, &out)
            put(UInt64(type.rawValue), 4, &out)
        }
        Self.append(children ?? [], to: &out)
        out += payload
    }

    /// `boxes`, one after another (only the last may keep a size of 0).
    public static func append(_ boxes: [BoxNode], to out: inout [UInt8]) {
        for (k, b) in boxes.enumerated() { b.append(to: &out, last: k == boxes.count - 1) }
    }

    /// The first child of `type`.
    public func child(_ type: FourCC) -> BoxNode? { children?.first { $0.type == type } }

    /// The box down a path of child types (`["mdia", "minf", "stbl"]`).
    public func descendant(_ path: [FourCC]) -> BoxNode? {
        var box = self
        for t in path {
            guard let c = box.child(t) else { return nil }
            box = c
        }
        return box
    }

    /// The box down `path` changed by `change`; false when there is none
    /// there (each step the first child of its type, `nth` for the first step).
    @discardableResult
    public mutating func modify(_ path: [FourCC], nth: Int = 0, _ change: (inout BoxNode) -> Void) -> Bool {
        guard let first = path.first else {
            change(&self)
            return true
        }
        guard var kids = children else { return false }
        let matching = kids.indices.filter { kids[$0].type == first }
        guard nth >= 0, nth < matching.count, kids[matching[nth]].modify(Array(path.dropFirst()), change) else { return false }
        children = kids
        return true
    }

    /// The payload made `value`'s, the type with it (`stco` widened to `co64`).
    public mutating func set(_ value: some BoxPayload) {
        type = value.type
        payload = value.encode()[...]
    }

    /// This box and every box below it, parents first.
    public var all: [BoxNode] { [self] + (children ?? []).flatMap(\.all) }
}

extension BoxError {
    /// A limit every parse enforces (not a box this level may keep as bytes).
    var isLimit: Bool {
        switch self {
        case .tooDeep, .tooMany: true
        default: false
        }
    }
}
