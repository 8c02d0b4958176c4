/// Why bytes are not the box, or the boxes, they were read as: the one error
/// of this module, each case a condition a caller can tell apart (a file cut
/// short is not a box this module does not know). Offsets count from the
/// start of the bytes parsed.
public enum BoxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes end inside a box header (a file cut off while it was written).
    case endsInsideHeader(at: Int)
    /// A box runs past the end of what holds it, or declares a size smaller than its header.
    case runsPastParent(FourCC, at: Int)
    /// A box declares a size beyond any offset.
    case tooLarge(FourCC, at: Int)
    /// Boxes nest deeper than `BoxNode.depthLimit`.
    case tooDeep(limit: Int)
    /// More boxes than `BoxNode.countLimit`.
    case tooMany(limit: Int)
    /// A box's payload ends before its fields do (or its entries, as its count declares them).
    case fieldsCutShort(FourCC, needs: Int, has: Int)
    /// A version of a box this module does not read (mvhd, tkhd, mdhd, elst: 0 or 1).
    case unknownVersion(FourCC, UInt8)
    /// A box lacks a child it cannot be read without (a `traf` without its `tfhd`).
    case lacksChild(FourCC, in: FourCC)
    /// A box declares more entries than this module takes of a kind no bytes
    /// back (a `trun` whose samples all take the defaults).
    case tooManyEntries(FourCC, declared: Int, limit: Int)

    /// The error a box walk's stop is, where `at` is the offset of the bytes walked.
    package init(_ stop: BoxWalkStop) {
        switch stop {
        case .tail(let at): self = .endsInsideHeader(at: at)
        case .headerCutShort(_, let at): self = .endsInsideHeader(at: at)
        case .cutShort(let header): self = .runsPastParent(header.type, at: header.start)
        case .malformed(let type, let at, _, let declared):
            self = declared > UInt64(Int.max) ? .tooLarge(type, at: at) : .runsPastParent(type, at: at)
        }
    }

    public var description: String {
        switch self {
        case .endsInsideHeader(let at): "the boxes end inside a box header at \(at)"
        case .runsPastParent(let type, let at): "the '\(type)' box at \(at) runs past its parent"
        case .tooLarge(let type, let at): "the '\(type)' box at \(at) is too large"
        case .tooDeep(let limit): "boxes nest more than \(limit) deep"
        case .tooMany(let limit): "more than \(limit) boxes"
        case .fieldsCutShort(let type, let needs, let has): "the '\(type)' box holds \(has) bytes, its fields \(needs)"
        case .unknownVersion(let type, let version): "the '\(type)' box has version \(version), not 0 or 1"
        case .lacksChild(let child, let type): "the '\(type)' box holds no '\(child)'"
        case .tooManyEntries(let type, let declared, let limit): "the '\(type)' box declares \(declared) entries, more than \(limit)"
        }
    }
}
