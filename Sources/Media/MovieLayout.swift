import ISOBMFF

/// An MP4/MOV file's layout rearranged without touching its media data, the
/// way `qt-faststart` does it: the index (`moov`) moved in front of the
/// media, every chunk offset in it (`stco`, `co64`) moved with the bytes it
/// points at, `stco` widened to `co64` where an offset no longer fits in 32
/// bits. Pure byte work on the index; the media data is copied as it is.
public struct MovieLayout: Sendable {
    /// A top-level box of the input: its type, where it starts and its size (header included).
    public typealias TopBox = TopLevelBox

    /// The input's top-level boxes, in file order.
    public let boxes: [TopBox]
    /// The new index, ready to write after `ftyp` (with the `free` box that
    /// aligns the media data, when asked).
    public let index: [UInt8]
    /// What is written, in order: ranges of the input (`ftyp`, then every
    /// box but `ftyp` and `moov`, as they were) around the new index.
    public let pieces: [Piece]
    /// `stco` boxes widened to `co64`.
    public let widened: Int
    /// The page size the media data is aligned to (`init`).
    let alignment: Int64
    /// Each track's samples (`trak` boxes, in order) as its sample tables
    /// list them; nil when a track's tables are missing or do not agree.
    public let tracks: [TrackSamples]?
    /// The input's index and the new one, parsed (for `hollowIndex` and `holdsEdits`).
    let original: BoxNode
    let rewritten: BoxNode

    public enum Piece: Sendable, Equatable {
        /// Bytes of the input, copied as they are.
        case input(start: Int64, count: Int64)
        /// The new index.
        case index
    }

    /// Why a file cannot be laid out this way (it then takes the muxer's way).
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Plans the layout of a file of `fileSize` bytes whose top-level boxes
    /// are read by `read(offset, count)`; refuses what it does not handle: no
    /// `moov` or `mdat`, fragments, a box cut short, offsets that point
    /// outside every box kept, boxes whose offsets it would not move
    /// (`iloc`, `saio`), an index over 256 MiB. With `alignment` (a page's
    /// size), a `free` box after the new index puts the media data at the
    /// same place within a page as in the input, so the kernel copies it
    /// page onto page (a copy shifted within the pages took 1.5× as long).
    /// `edits` are made in the index's boxes (`IndexEdits`).
    public init(fileSize: Int64, alignment: Int64 = 1, edits: IndexEdits? = nil,
                read: (Int64, Int) -> [UInt8]?) throws(Refusal) {
        self = try Self.parsed(fileSize: fileSize, alignment: alignment, read: read).laidOut(edits)
    }

    /// The input's index read and parsed, refused as `init` refuses a file
    /// it cannot read, but not laid out yet (`index` and `pieces` empty):
    /// for a caller that lays it out once, with or without edits, when it
    /// knows which (`laidOut`).
    public static func parsed(fileSize: Int64, alignment: Int64 = 1,
                              read: (Int64, Int) -> [UInt8]?) throws(Refusal) -> MovieLayout {
        let boxes = try Self.topLevelBoxes(fileSize: fileSize, read: read)
        if let f = boxes.first(where: { ["moof", "mfra", "sidx"].contains($0.type) }) {
            throw Refusal(description: "it is fragmented ('\(f.type)')")
        }
        let movies = boxes.filter { $0.type == "moov" }
        guard movies.count == 1, let moov = movies.first else { throw Refusal(description: "it has \(movies.count) index boxes") }
        guard boxes.contains(where: { $0.type == "mdat" }) else { throw Refusal(description: "it has no media data box") }
        guard moov.size <= 256 << 20, let bytes = read(moov.start, Int(moov.size)), bytes.count == Int(moov.size) else {
            throw Refusal(description: "its index cannot be read whole")
        }
        if let damage = bytes.withUnsafeBytes({ IndexDamage.find(in: $0) }) { throw Refusal(description: damage) }
        let tree = try BoxNode.index(bytes[...])
        guard tree.count == 1, let original = tree.first else { throw Refusal(description: "its index does not parse") }
        let traks = (original.children ?? []).filter { $0.type == "trak" }
        let samples = traks.compactMap { TrackSamples(trak: $0) }
        return MovieLayout(boxes: boxes, alignment: alignment, tracks: samples.count == traks.count ? samples : nil,
                           original: original, rewritten: original, index: [], pieces: [], widened: 0)
    }

    private init(boxes: [TopBox], alignment: Int64, tracks: [TrackSamples]?, original: BoxNode, rewritten: BoxNode,
                 index: [UInt8], pieces: [Piece], widened: Int) {
        (self.boxes, self.alignment, self.tracks, self.original, self.rewritten) = (boxes, alignment, tracks, original, rewritten)
        (self.index, self.pieces, self.widened) = (index, pieces, widened)
    }

    /// This input laid out, `edits` made in its index's boxes (refused as `init` refuses them).
    /// With `phase`, the boxes after the index move by a multiple of the
    /// alignment plus `phase` (for media data whose bytes come from another
    /// file, where they lie `phase` further within a page).
    public func laidOut(_ edits: IndexEdits? = nil, phase: Int64 = 0) throws(Refusal) -> MovieLayout {
        var parsed = original
        if let edits, !edits.isEmpty { try parsed.apply(edits) }
        if let bad = parsed.find(["iloc", "saio"]) { throw Refusal(description: "its index holds '\(bad)' offsets") }

        let ftyp = boxes.first { $0.type == "ftyp" }
        let rest = boxes.filter { $0.type != "ftyp" && $0.type != "moov" }
        // Offsets move by the distance their box moves, which the new
        // index's size decides; widening a table grows the index, so the
        // plan is made again with it widened until nothing more widens.
        var base = parsed
        var result: BoxNode?
        var padding: Int64 = 0
        for _ in 0..<8 {
            let indexEnd = (ftyp?.size ?? 0) + Int64(base.encodedSize)
            padding = Self.padding(from: indexEnd, to: (rest.first?.start ?? indexEnd) + phase, alignment: alignment)
            var position = indexEnd + padding
            var moves: [(range: Range<Int64>, by: Int64)] = []
            for b in rest {
                moves.append((b.start..<(b.start + b.size), position - b.start))
                position += b.size
            }
            var moved = base
            var widenedAny = false
            try moved.moveChunkOffsets(from: base, { (offset: Int64) throws(Refusal) -> Int64 in
                guard let m = moves.first(where: { $0.range.contains(offset) }) else {
                    throw Refusal(description: "a chunk offset (\(offset)) points outside the media data")
                }
                return offset + m.by
            }, widened: { widenedAny = true })
            if !widenedAny {
                result = moved
                break
            }
            base = base.widenedLike(moved)
        }
        guard let result else { throw Refusal(description: "its chunk offsets do not settle") }
        var index = result.encoded()
        if padding > 0 {
            put(UInt64(padding), 4, &index)
            index += Array("free".utf8) + [UInt8](repeating: 0, count: Int(padding) - 8)
        }
        let pieces = Self.pieces(ftyp: ftyp, rest: rest)
        return MovieLayout(boxes: boxes, alignment: alignment, tracks: tracks, original: original, rewritten: result,
                           index: index, pieces: pieces, widened: parsed.count("stco") - result.count("stco"))
    }

    /// What `laidOut` gives a file of these top-level `boxes` whose new
    /// index is as large as its old one (nothing edited, nothing widened):
    /// the index's size with its padding, and the pieces. nil without one
    /// `moov`. Where the media data goes is known before the index is parsed.
    public static func foretold(boxes: [TopBox], alignment: Int64) -> (indexSize: Int64, pieces: [Piece])? {
        let movies = boxes.filter { $0.type == "moov" }
        guard movies.count == 1, let moov = movies.first else { return nil }
        let ftyp = boxes.first { $0.type == "ftyp" }
        let rest = boxes.filter { $0.type != "ftyp" && $0.type != "moov" }
        let indexEnd = (ftyp?.size ?? 0) + moov.size
        let padding = padding(from: indexEnd, to: rest.first?.start ?? indexEnd, alignment: alignment)
        return (moov.size + padding, Self.pieces(ftyp: ftyp, rest: rest))
    }

    /// `ftyp`, the index, then every other box, neighbours copied as one range.
    private static func pieces(ftyp: TopBox?, rest: [TopBox]) -> [Piece] {
        var pieces: [Piece] = []
        if let ftyp { pieces.append(.input(start: ftyp.start, count: ftyp.size)) }
        pieces.append(.index)
        for b in rest {
            if case .input(let s, let c)? = pieces.last, s + c == b.start {
                pieces[pieces.count - 1] = .input(start: s, count: c + b.size)
            } else {
                pieces.append(.input(start: b.start, count: b.size))
            }
        }
        return pieces
    }

    /// The top-level boxes of a file of `fileSize` bytes read by
    /// `read(offset, count)`, a header at a time (`FileLayout`).
    public static func topLevelBoxes(fileSize: Int64, read: (Int64, Int) -> [UInt8]?) throws(Refusal) -> [TopBox] {
        do throws(BoxError) { return try FileLayout.topLevelBoxes(fileSize: fileSize, read: read) } catch {
            throw Refusal(description: error.said(of: .file))
        }
    }

    /// The size of the `free` box that takes `from` to `to`'s place within
    /// an `alignment` (0, or at least a box header's 8 bytes).
    static func padding(from: Int64, to: Int64, alignment: Int64) -> Int64 {
        guard alignment > 1 else { return 0 }
        var p = ((to - from) % alignment + alignment) % alignment
        if p > 0 && p < 8 { p += alignment }
        return p
    }

    /// The input's index (`rewritten` false) or the new one, edits made,
    /// with every sample table emptied (`BoxNode.hollowed`): for a demuxer to
    /// read the tracks, their descriptions and tags without an entry per
    /// sample. `head` (the `ftyp`) is put in front.
    public func hollowIndex(rewritten new: Bool, head: [UInt8]) -> [UInt8] {
        var out = head
        (new ? rewritten : original).hollowed().append(to: &out)
        return out
    }

    /// The movie's duration in seconds (`mvhd`: duration over time scale),
    /// which libavformat gives as the file's; nil without one.
    public var movieDuration: Double? {
        guard let mvhd = original.children?.first(where: { $0.type == "mvhd" })?.value(MovieHeader.self), mvhd.timescale > 0,
              mvhd.duration != UInt64(UInt32.max) && mvhd.duration != UInt64.max else { return nil }
        return Double(mvhd.duration) / Double(mvhd.timescale)
    }

    /// Whether the index's user data may hold cover art (an iTunes `covr`
    /// item, which libavformat makes a stream of): `covr` anywhere in the
    /// `udta` or `meta` boxes of the movie.
    public var mayHoldCoverArt: Bool {
        let covr = Array("covr".utf8)
        return (original.children ?? []).contains { box in
            guard box.type == "udta" || box.type == "meta", box.payload.count >= 4 else { return false }
            let p = Array(box.payload)
            return (0...(p.count - 4)).contains { p[$0] == covr[0] && p[$0 + 1] == covr[1] && p[$0 + 2] == covr[2] && p[$0 + 3] == covr[3] }
        }
    }

    /// The input's tracks as its index describes them (`SourceIndex`).
    public var sourceIndex: SourceIndex { SourceIndex(moov: original) }

    /// Whether the input already has its index before its media data.
    public var indexAlreadyInFront: Bool {
        guard let m = boxes.firstIndex(where: { $0.type == "moov" }),
              let d = boxes.firstIndex(where: { $0.type == "mdat" }) else { return false }
        return m < d
    }
}

extension BoxNode {
    /// How many boxes of `type` there are, this one included.
    func count(_ type: FourCC) -> Int {
        (self.type == type ? 1 : 0) + (children ?? []).reduce(0) { $0 + $1.count(type) }
    }

    /// The first box of one of `types` below this one.
    func find(_ types: Set<FourCC>) -> FourCC? {
        if types.contains(type) { return type }
        for c in children ?? [] { if let t = c.find(types) { return t } }
        return nil
    }

    /// Every `stco`/`co64` below this one rewritten from the same box in
    /// `original` (same tree shape) with `move`; an `stco` whose offsets no
    /// longer fit becomes a `co64` (`widened` is called).
    mutating func moveChunkOffsets(from original: BoxNode, _ move: (Int64) throws(MovieLayout.Refusal) -> Int64,
                                   widened: () -> Void) throws(MovieLayout.Refusal) {
        if var kids = children, let originalKids = original.children {
            for k in kids.indices {
                try kids[k].moveChunkOffsets(from: originalKids[k], move, widened: widened)
            }
            children = kids
            return
        }
        guard type == "stco" || type == "co64" else { return }
        guard var table = original.value(ChunkOffsets.self) else {
            throw MovieLayout.Refusal(description: "a chunk offset table is cut short")
        }
        table.offsets = try table.offsets.map { (o: UInt64) throws(MovieLayout.Refusal) -> UInt64 in
            UInt64(bitPattern: try move(Int64(bitPattern: o)))
        }
        // (Widened in an earlier plan, it stays wide.)
        table.wide = table.wide || type == "co64"
        if table.type == "co64" && type == "stco" { widened() }
        set(table)
    }

    /// This (original) tree with every `stco` that `widenedTree` made a
    /// `co64` widened, its offsets as they were.
    func widenedLike(_ widenedTree: BoxNode) -> BoxNode {
        var copy = self
        if var kids = children, let other = widenedTree.children {
            for k in kids.indices { kids[k] = kids[k].widenedLike(other[k]) }
            copy.children = kids
            return copy
        }
        guard type == "stco", widenedTree.type == "co64", var table = value(ChunkOffsets.self) else { return copy }
        table.wide = true
        copy.set(table)
        return copy
    }
}
