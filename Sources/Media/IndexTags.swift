import Glibc
import ISOBMFF

/// The tags and display matrices libavformat's MP4/MOV demuxer (FFmpeg
/// 5.1) reads from an index (`moov`), read here from its parsed boxes
/// without loading libavformat: the creation time (`mvhd`, `mdhd`), each
/// track's language (`mdhd`) and handler name (the first `hdlr` of the
/// track that names one), the QuickTime user data strings (`udta/©nam`),
/// the iTunes items and the metadata keys (`meta/keys` and `meta/ilst`),
/// keyed as the demuxer keys them. A value it does not decode (a number,
/// text in a Macintosh encoding) stands as the item's bytes: the same
/// bytes read the same, and such a value can be compared but is never
/// taken for text. Nil where the index holds anything read otherwise or
/// not read with certainty (cover art, `----` items, a box the demuxer
/// would read tags or state from that is not modelled here).
struct IndexTags {
    typealias Tags = [(key: String, value: String)]

    /// The file's tags and each track's (`trak` boxes, in order).
    private(set) var format: Tags = []
    private(set) var streams: [Tags] = []
    /// Each track's display matrix as its `tkhd` holds it.
    private(set) var matrices: [[Int32]?] = []
    /// Whether the movie's own matrix (`mvhd`), which the demuxer applies
    /// after each track's, is the identity.
    private(set) var movieMatrixIsIdentity = false

    /// The file's keys the demuxer takes from elsewhere than the index (`ftyp`).
    static let unreadFileKeys: Set<String> = ["major_brand", "minor_version", "compatible_brands"]

    /// Whether the file's major brand is not QuickTime's (the demuxer then reads handler names as plain C strings).
    private let isom: Bool
    /// The demuxer's state across boxes: a `meta` outside the tracks whose
    /// handler is `mdta` (from then on, numbered items are named by the last key list).
    private var keyedItems = false
    private var keys: [String?]?

    struct Uncertain: Error {}

    /// Boxes from which, wherever they stand, the demuxer may read tags or state that is not modelled here.
    private static let unmodelled: Set<FourCC> = [
        "ftyp", "moov", "trak", "mdat", "mvhd", "tkhd", "mdia", "minf", "mdhd", "hdlr", "stsd", "udta", "meta",
        "keys", "ilst", "----", "covr", "cmov", "uuid", "loci", "elng", "tmcd", "XMP_",
    ]

    init?(moov: BoxNode, isom: Bool) {
        self.isom = isom
        do { try readMovie(moov) } catch { return nil }
    }

    private mutating func readMovie(_ moov: BoxNode) throws(Uncertain) {
        for box in moov.children ?? [] {
            switch box.type {
            case "mvhd":
                guard let mvhd = box.value(MovieHeader.self) else { throw Uncertain() }
                movieMatrixIsIdentity = mvhd.matrix.map { Int32(bitPattern: $0) } == Self.identity
                if let time = try Self.creationTime(mvhd.creationTime, version: mvhd.version) { Self.set(&format, "creation_time", time) }
            case "trak": try readTrack(box)
            case "udta": try readUserData(box.payload, track: nil)
            case "meta": try readMeta(box.payload, track: nil)
            default: guard !Self.unmodelled.contains(box.type) else { throw Uncertain() }
            }
        }
        if !(moov.children ?? []).contains(where: { $0.type == "mvhd" }) { movieMatrixIsIdentity = false }
    }

    private mutating func readTrack(_ trak: BoxNode) throws(Uncertain) {
        streams.append([])
        matrices.append(nil)
        let s = streams.count - 1
        for box in trak.children ?? [] {
            switch box.type {
            case "tkhd":
                guard let tkhd = box.value(TrackHeader.self) else { throw Uncertain() }
                matrices[s] = tkhd.matrix.map { Int32(bitPattern: $0) }
            case "mdia":
                for m in box.children ?? [] {
                    switch m.type {
                    case "mdhd": try readMediaHeader(m, track: s)
                    case "hdlr": try readHandler(m, track: s)
                    case "minf":
                        // (The sample tables' tags, the codec's, are never edited.)
                        for h in m.children ?? [] where h.type != "stbl" {
                            if h.type == "hdlr" {
                                try readHandler(h, track: s)
                            } else if Self.unmodelled.contains(h.type) {
                                throw Uncertain()
                            }
                        }
                    default: guard !Self.unmodelled.contains(m.type) else { throw Uncertain() }
                    }
                }
            case "udta": try readUserData(box.payload, track: s)
            case "meta": try readMeta(box.payload, track: s)
            default: guard !Self.unmodelled.contains(box.type) else { throw Uncertain() }
            }
        }
    }

    /// `mdhd`: the track's creation time and language.
    private mutating func readMediaHeader(_ box: BoxNode, track s: Int) throws(Uncertain) {
        guard let mdhd = box.value(MediaHeader.self) else { throw Uncertain() }
        if let time = try Self.creationTime(mdhd.creationTime, version: mdhd.version) { Self.set(&streams[s], "creation_time", time) }
        // (An old Macintosh code not read here stands as itself.)
        let code = mdhd.language
        let language = Self.language(code) ?? Self.opaque([UInt8(code >> 8), UInt8(code & 0xff)][...])
        if !language.isEmpty { Self.set(&streams[s], "language", language) }
    }

    /// A handler's name, kept by the track only if it has none yet.
    private mutating func readHandler(_ box: BoxNode, track s: Int) throws(Uncertain) {
        // (The demuxer reads a name after the 12 reserved bytes only.)
        guard let hdlr = box.value(HandlerReference.self), hdlr.reserved.count == 12 else { return }
        let title = hdlr.name
        guard !title.isEmpty, title[0] != 0 else { return }
        // A QuickTime name is counted (a Pascal string); the count is a C `char`.
        guard title[0] < 0x80 || Int(title[0]) != title.count - 1 else { throw Uncertain() }
        let counted = !isom && Int(title[0]) == title.count - 1
        Self.set(&streams[s], "handler_name", Self.cString(title[(counted ? 1 : 0)...]), overwrite: false)
    }

    /// The boxes of a user data list: strings, items and `meta` lists.
    private mutating func readUserData(_ payload: ArraySlice<UInt8>, track: Int?) throws(Uncertain) {
        guard let udta = try? UserData(parsing: payload, type: "udta") else { throw Uncertain() }
        for box in udta.list.boxes {
            if let item = demuxerItemKeys[box.type] {
                try readUserDataString(box.payload, key: item.key, kind: item.kind)
            } else if box.type == "meta" {
                try readMeta(box.payload, track: track)
            } else if box.type == "loci" {
                try readPlace(box.payload)
            } else if Self.unmodelled.contains(box.type) {
                throw Uncertain()
            }
        }
    }

    /// A QuickTime user data string: its length, its language, the text;
    /// the key is set, and also `key-language` for a language other than "und".
    private mutating func readUserDataString(_ p: ArraySlice<UInt8>, key: String, kind: ItemKind) throws(Uncertain) {
        if kind == .raw { return Self.set(&format, key, Self.cString(p)) }
        guard p.count > 4, let string = try? UserDataText(parsing: p, type: "udta") else { throw Uncertain() }
        let size = Int(string.length), code = string.language
        // A length past the string's box: the demuxer takes the whole box as the text.
        guard size <= p.count else { return Self.set(&format, key, kind == .text ? Self.cString(p) : Self.opaque(p)) }
        guard kind == .text else { return Self.set(&format, key, Self.opaque(p)) }
        guard size <= p.count - 4, let language = Self.language(code) else { throw Uncertain() }
        let text = string.bytes.prefix(size)
        let value = code < 0x400 || code == 0x7fff ? Self.macText(text) : Self.cString(text)
        Self.set(&format, key, value)
        if !language.isEmpty && language != "und" { Self.set(&format, "\(key)-\(language)", value) }
    }

    /// A 3GPP place (`loci`): printed by the demuxer from its numbers as
    /// `location` (and `location-language`), here kept as its bytes.
    private mutating func readPlace(_ p: ArraySlice<UInt8>) throws(Uncertain) {
        // Version and flags, language, an empty name, role, three numbers, body, notes.
        guard p.count >= 22, let loci = try? LocationInformation(parsing: p, type: "loci"), let language = Self.language(loci.language)
        else { throw Uncertain() }
        if !language.isEmpty && language != "und" { Self.set(&format, "location-\(language)", Self.opaque(p)) }
        Self.set(&format, "location", Self.opaque(p))
    }

    /// A `meta` list: its handler (first), key list and items.
    private mutating func readMeta(_ payload: ArraySlice<UInt8>, track: Int?) throws(Uncertain) {
        guard let meta = try? Metadata(parsing: payload, type: "meta"), meta.list.boxes.first?.type == "hdlr" else { throw Uncertain() }
        for box in meta.list.boxes {
            switch box.type {
            case "hdlr":
                if let track { try readHandler(box, track: track) } else if meta.handler == "mdta" { keyedItems = true }
            case "keys":
                guard keys == nil, let names = box.value(MetadataKeys.self)?.keys.map(\.name),
                      !names.contains(where: { $0 == nil || $0!.utf8.contains(0) }) else { throw Uncertain() }
                keys = [nil] + names
            case "ilst": try readItems(box.payload)
            default: guard !Self.unmodelled.contains(box.type) else { throw Uncertain() }
            }
        }
    }

    /// iTunes items and numbered (keyed) items: the first `data` box of each.
    private mutating func readItems(_ payload: ArraySlice<UInt8>) throws(Uncertain) {
        guard let items = try? ItemList(parsing: payload, type: "ilst") else { throw Uncertain() }
        for item in items.list.boxes {
            guard !Self.unmodelled.contains(item.type) else { throw Uncertain() }
            let known = demuxerItemKeys[item.type]
            var key = known?.key
            if key == nil, keyedItems, let keys, Int(item.type.rawValue) > 0, Int(item.type.rawValue) < keys.count {
                key = keys[Int(item.type.rawValue)]
            }
            guard let key else { continue }
            guard key != "com.apple.quicktime.artwork", item.payload.count > 8 else { throw Uncertain() }
            // The item's first box, a whole `data` of 8 bytes or more, as the demuxer reads it.
            guard let first = BoxNode.first(of: item.payload), first.type == "data", first.sizeField == .compact,
                  let data = first.value(ItemData.self) else { continue }
            let type = data.valueType, bytes = data.value[...]
            if known?.kind == .parsed || known?.kind == .raw {
                // Numbers, flags and genres as the demuxer prints them.
                Self.set(&format, key, Self.opaque(item.payload))
            } else if [21, 22, 23].contains(type) {
                // Numbers by their type (a float of under four bytes is skipped).
                if type != 23 || bytes.count >= 4 { Self.set(&format, key, Self.opaque(item.payload)) }
            } else if type == 0 || type == 3 {
                Self.set(&format, key, Self.macText(bytes))
            } else if type == 1 || type == 4 {
                Self.set(&format, key, Self.cString(bytes))
            }
        }
    }
}

extension IndexTags {
    /// A matrix of nine values as `tkhd` and `mvhd` hold them.
    static let identity: [Int32] = [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x4000_0000]

    /// av_dict_set: keys matched without regard to case; a value set again
    /// goes last (unless not `overwrite`, which keeps the first).
    static func set(_ tags: inout Tags, _ key: String, _ value: String, overwrite: Bool = true) {
        let k = key.lowercased()
        if let at = tags.firstIndex(where: { $0.key.lowercased() == k }) {
            guard overwrite else { return }
            tags.remove(at: at)
        }
        tags.append((key, value))
    }

    /// The text before the first zero byte, as libavformat's C strings end there.
    static func cString(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// Text in the Macintosh encoding: ASCII reads as itself; the rest stands as its bytes.
    static func macText(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.allSatisfy({ $0 < 0x80 }) ? cString(bytes) : opaque(bytes)
    }

    /// A value not decoded here: its bytes, after a zero no C string holds.
    static func opaque(_ bytes: ArraySlice<UInt8>) -> String {
        "\u{0}" + bytes.map { String($0, radix: 16) }.joined(separator: ".")
    }

    /// The language of an `mdhd` or a user data string: three letters
    /// packed five bits each, or the old Macintosh code 0 (English); no
    /// language (empty) for 0x7fff; nil for any other Macintosh code (not read here).
    static func language(_ code: UInt16) -> String? {
        if code >= 0x400 && code != 0x7fff {
            return String(decoding: [UInt16(10), 5, 0].map { UInt8(0x60 + (code >> $0) & 0x1f) }, as: UTF8.self)
        }
        return code == 0x7fff ? "" : code == 0 ? "eng" : nil
    }

    /// The creation time of an `mvhd`, `tkhd` or `mdhd` (of `version`) as
    /// the demuxer prints it (seconds since 1904; a version 0 time before
    /// 1970 is taken as seconds since 1970); nil for none (zero).
    static func creationTime(_ raw: UInt64, version: UInt8) throws(Uncertain) -> String? {
        var time: Int64
        if version == 1 {
            time = Int64(bitPattern: raw)
            if time < 0 { return nil }
        } else {
            time = Int64(raw)
            if time > 0 && time < 2_082_844_800 { time += 2_082_844_800 }
        }
        guard time != 0 else { return nil }
        time -= 2_082_844_800
        guard time.multipliedReportingOverflow(by: 1_000_000).overflow == false else { return nil }
        var seconds = time_t(time), parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { throw Uncertain() }
        var buffer = [CChar](repeating: 0, count: 32)
        guard strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S", &parts) > 0 else { throw Uncertain() }
        return String(cString: buffer) + ".000000Z"
    }
}

extension MovieLayout {
    /// Whether the new index holds exactly the tags and display matrices
    /// that the input's would be given by `edits` (`MetadataEdits.applied`,
    /// what the muxer's way is given), read from both indexes' boxes the way
    /// libavformat's demuxer reads them (`IndexTags`), without loading it.
    /// `streams` are the tracks' kinds, in order; `head` is the file's
    /// `ftyp`. False where the boxes cannot tell: libavformat must then read
    /// the new index back.
    public func holdsEdits(_ edits: MetadataEdits, streams kinds: [EditedStream], head: [UInt8]) -> Bool {
        let isom = head.count >= 12 && Array(head[8..<12]) != Array("qt  ".utf8)
        guard let before = IndexTags(moov: original, isom: isom), let after = IndexTags(moov: rewritten, isom: isom),
              before.streams.count == kinds.count, after.streams.count == kinds.count else { return false }
        // A key the file takes from outside the index (its brands) is not edited there.
        guard !edits.tags.contains(where: { $0.streams == nil && IndexTags.unreadFileKeys.contains($0.key.lowercased()) }),
              let wanted = try? edits.applied(to: IntendedTags(format: before.format, streams: before.streams), streams: kinds),
              TagCheck.sameTags(after.format, wanted.format),
              zip(after.streams, wanted.streams).allSatisfy({ TagCheck.sameTags($0, $1) }) else { return false }
        // A turn replaces the matrix of video; the rest keep theirs. The
        // demuxer applies the movie's matrix after a track's: only the
        // identity leaves a new one as it is.
        guard let degrees = edits.rotation else { return after.matrices == before.matrices }
        let turned = MetadataEdits.displayMatrix(degrees)
        return after.movieMatrixIsIdentity && kinds.indices.allSatisfy { j in
            after.matrices[j] == (kinds[j] == .video ? turned : before.matrices[j])
        }
    }
}
