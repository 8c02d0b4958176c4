/// The header of one MP4/MOV box (ISO/IEC 14496-12 4.2) and where the box
/// lies: offsets count from the start of the bytes walked (or the file).
public struct BoxHeader: Sendable, Equatable {
    public var type: FourCC
    public var start: Int
    /// 8, or 16 with a 64-bit size (size field 1).
    public var headerSize: Int
    /// The box's size, header included: as its header declares it, which
    /// for a box cut short is more than there is; for size field 0, up to
    /// the end of what holds it.
    public var size: Int
    /// The size field was 0: the box runs to the end of what holds it (the
    /// file, for the media data of a recording that was never finished).
    public var extendsToEnd: Bool

    @inlinable
    public init(type: FourCC, start: Int, headerSize: Int, size: Int, extendsToEnd: Bool = false) {
        self.type = type
        self.start = start
        self.headerSize = headerSize
        self.size = size
        self.extendsToEnd = extendsToEnd
    }

    @inlinable
    public var end: Int { start + size }

    /// Everything after the header (for a box cut short, as declared).
    @inlinable
    public var payload: Range<Int> { (start + headerSize)..<end }

    /// The header at `offset` of `reader`, for a box that may take `room`
    /// bytes (to the end of its parent, or of the file); throws why there
    /// is no whole box there.
    @inlinable
    public static func read<B>(_ reader: BigEndianReader<B>, at offset: Int, room: Int) throws(BoxWalkStop) -> BoxHeader {
        let available = min(room, reader.count - offset)
        guard available >= 8, let field = reader.u32(at: offset), let type = reader.fourCC(at: offset + 4) else {
            throw .tail(at: offset)
        }
        var size = UInt64(field), headerSize = 8
        if field == 1 {
            guard available >= 16, let large = reader.u64(at: offset + 8) else { throw .headerCutShort(type, at: offset) }
            size = large
            headerSize = 16
        } else if field == 0 {
            size = UInt64(room)
        }
        guard size >= UInt64(headerSize), size <= UInt64(Int.max) else {
            throw .malformed(type, at: offset, headerSize: headerSize, declared: size)
        }
        let header = BoxHeader(type: type, start: offset, headerSize: headerSize, size: Int(size), extendsToEnd: field == 0)
        guard header.size <= room else { throw .cutShort(header) }
        return header
    }
}

/// Why a walk over boxes stopped before the end of its range.
public enum BoxWalkStop: Error, Sendable, Equatable {
    /// Fewer bytes than a box header are left (a QuickTime list may end
    /// with four zero bytes).
    case tail(at: Int)
    /// A box's 64-bit size is cut off.
    case headerCutShort(FourCC, at: Int)
    /// A box runs past the end: its header, with the size it declares (a
    /// file cut off while it was written).
    case cutShort(BoxHeader)
    /// A size smaller than the box's header, or beyond any offset.
    case malformed(FourCC, at: Int, headerSize: Int, declared: UInt64)

    /// A box begun but not whole within the range.
    @inlinable
    public var isCutShort: Bool {
        switch self {
        case .headerCutShort, .cutShort: true
        case .tail, .malformed: false
        }
    }
}

/// The boxes in a range of bytes, one after another: each whole box's
/// header in turn (descend by walking a box's `payload`). The walk stops
/// at the range's end or at the first place no whole box starts, and says
/// why in `stop`, so a caller can tell a file cut short from one that ends
/// cleanly. Reads nothing but the headers.
public struct BoxWalker<Bytes: RandomAccessCollection<UInt8>>: IteratorProtocol, Sequence where Bytes.Index == Int {
    public let reader: BigEndianReader<Bytes>
    /// Where the next box starts.
    public var position: Int { nextStart }
    public let end: Int
    /// Why the walk stopped before `end`, once `next()` has returned nil;
    /// nil when every byte of the range was in a box.
    public var stop: BoxWalkStop? { stopped }
    // Stored apart from the read-only views above so that the inlinable
    // walk (specialised in every module that walks boxes) may set them.
    @usableFromInline var nextStart: Int
    @usableFromInline var stopped: BoxWalkStop?

    /// The boxes in `range` of `reader`'s bytes (all of them by default).
    @inlinable
    public init(_ reader: BigEndianReader<Bytes>, in range: Range<Int>? = nil) {
        self.reader = reader
        end = Swift.min(range?.upperBound ?? reader.count, reader.count)
        nextStart = Swift.min(Swift.max(range?.lowerBound ?? 0, 0), end)
    }

    /// The boxes of `bytes`.
    @inlinable
    public init(_ bytes: Bytes) { self.init(BigEndianReader(bytes)) }

    @inlinable
    public mutating func next() -> BoxHeader? {
        guard stop == nil, position < end else { return nil }
        do throws(BoxWalkStop) {
            let box = try BoxHeader.read(reader, at: position, room: end - position)
            nextStart = box.end
            return box
        } catch {
            stopped = error
            return nil
        }
    }

    /// The next box of `type`, the others passed over.
    @inlinable
    public mutating func next(_ type: FourCC) -> BoxHeader? {
        while let box = next() { if box.type == type { return box } }
        return nil
    }
}
