/// The top-level boxes of an MP4/MOV file, as far as the file holds them:
/// whether it has an index (`moov`) and where its media data (`mdat`) lies.
public struct TopLevelBoxes: Sendable {
    /// Each `mdat` payload, clamped to the file.
    public var mediaData: [Range<Int>] = []
    /// The last box runs past the end of the file (or to it, size 0).
    public var cutShort = false
    public var hasIndex = false
    public var hasFragments = false
    /// Where the movie fragment (`moof`) the file ends inside starts: a
    /// fragmented recording cut off in a fragment's header.
    public var cutFragmentAt: Int?
    /// The file starts with a box an MP4/MOV starts with.
    public var isISOBMFF = false

    /// Types an MP4/MOV file starts with.
    private static let firstTypes: Set<FourCC> = ["ftyp", "wide", "free", "skip", "mdat", "moov"]

    public init(_ b: UnsafeRawBufferPointer) {
        let bytes = BigEndianReader(b)
        guard let first = bytes.fourCC(at: 4) else { return }
        isISOBMFF = Self.firstTypes.contains(first)
        guard isISOBMFF else { return }
        var walker = BoxWalker(bytes)
        while let box = walker.next() {
            note(box, fileSize: b.count)
            // Size 0, to the end of the file: how an unfinished recording's media data is left.
            if box.extendsToEnd { cutShort = true }
        }
        switch walker.stop {
        case .headerCutShort?:
            cutShort = true
        case .cutShort(let box)?:
            note(box, fileSize: b.count)
            cutShort = true
            if box.type == "moof" { cutFragmentAt = box.start }
        case .malformed(let type, let at, 16, 0)?:
            // A 64-bit size of 0 is taken as size 0 too (a recorder may leave it so, to fill in at the end).
            note(BoxHeader(type: type, start: at, headerSize: 16, size: b.count - at, extendsToEnd: true), fileSize: b.count)
            cutShort = true
        case nil, .tail?, .malformed?:
            break
        }
    }

    /// What a box, whole or cut short, says of the file.
    private mutating func note(_ box: BoxHeader, fileSize: Int) {
        switch box.type {
        case "moov": hasIndex = true
        case "moof": hasFragments = true
        case "mdat": mediaData.append(box.payload.lowerBound..<min(box.end, fileSize))
        default: break
        }
    }
}

extension TopLevelBoxes {
    /// An MP4/MOV whose media data was written but whose index was not, or
    /// not whole (a recording that stopped before it was finished); for a
    /// file libavformat could not open.
    public var lacksIndex: Bool { isISOBMFF && !mediaData.isEmpty && !hasFragments && (!hasIndex || cutShort) }
}
