import ISOBMFF

/// Changes to an MP4/MOV index (`moov`) made in its own boxes, for the bulk
/// remux: the file's tags, the tracks' languages and handler names, the
/// creation time and the video tracks' display matrices, each written
/// where libavformat's MP4/MOV demuxer reads it. Every other box stays as
/// it was, byte for byte. What cannot be placed is refused (the remux then
/// takes the muxer's way); what was placed is checked by reading the new
/// index back, from its boxes (`MovieLayout.holdsEdits`) or by libavformat
/// (the bulk remux does).
public struct IndexEdits: Sendable {
    /// Where a file tag goes that the file does not hold yet: a MOV's
    /// QuickTime user data strings (`udta/©nam`), an MP4's or M4A's iTunes
    /// items (`udta/meta/ilst`); a key neither set names, as a QuickTime
    /// metadata key (`mdta`, as phones write them), in both.
    public enum Family: Sendable { case quickTime, iso }

    public var family: Family
    /// The file's tags, set (a value) or removed (`nil`), in order.
    public var fileTags: [(key: String, value: String?)] = []
    /// Tags of tracks (by their place among the index's `trak` boxes):
    /// `language` and `handler_name` only.
    public var trackTags: [Int: [(key: String, value: String?)]] = [:]
    /// Seconds since 1970 (UTC), for the movie and every track.
    public var creationTime: Int64?
    /// The same as text, for a file that also keeps it as a tag (a metadata
    /// key `creation_time`, as the muxer writes it with keys): that is
    /// rewritten, none is added.
    public var creationTimeText: String?
    /// Display matrices (nine values as `tkhd` holds them) by track.
    public var matrices: [Int: [Int32]] = [:]

    public init(family: Family) { self.family = family }

    public var isEmpty: Bool { fileTags.isEmpty && trackTags.isEmpty && creationTime == nil && matrices.isEmpty }
}

extension Box {
    /// `edits` made in this `moov` box.
    mutating func apply(_ edits: IndexEdits) throws(MovieLayout.Refusal) {
        guard var kids = children else { return }
        let tracks = kids.indices.filter { kids[$0].type == "trak" }
        if let t = edits.creationTime {
            // MP4 times count from 1904.
            let since1904 = t + 2_082_844_800
            guard since1904 >= 0 else { throw MovieLayout.Refusal(description: "the creation time is before 1904") }
            for k in kids.indices where kids[k].type == "mvhd" { try kids[k].setTimes(UInt64(since1904)) }
            for k in tracks {
                try kids[k].editChild("tkhd") { (b: inout Box) throws(MovieLayout.Refusal) in try b.setTimes(UInt64(since1904)) }
                try kids[k].editChild("mdia", "mdhd") { (b: inout Box) throws(MovieLayout.Refusal) in try b.setTimes(UInt64(since1904)) }
            }
        }
        for (t, matrix) in edits.matrices {
            guard t < tracks.count, matrix.count == 9 else { throw MovieLayout.Refusal(description: "no track \(t) to turn") }
            try kids[tracks[t]].editChild("tkhd") { (b: inout Box) throws(MovieLayout.Refusal) in
                guard var tkhd = b.value(TrackHeader.self) else { throw MovieLayout.Refusal(description: "a track header is cut short") }
                tkhd.matrix = matrix.map { UInt32(bitPattern: $0) }
                b.set(tkhd)
            }
        }
        for (t, tags) in edits.trackTags {
            guard t < tracks.count else { throw MovieLayout.Refusal(description: "no track \(t) to tag") }
            for (key, value) in tags {
                switch key.lowercased() {
                case "language":
                    guard let code = value.flatMap(Self.packedLanguage) else {
                        throw MovieLayout.Refusal(description: "a language must be three letters (ISO 639-2)")
                    }
                    try kids[tracks[t]].editChild("mdia", "mdhd") { (b: inout Box) throws(MovieLayout.Refusal) in
                        guard var mdhd = b.value(MediaHeader.self) else { throw MovieLayout.Refusal(description: "a media header is cut short") }
                        mdhd.language = code
                        b.set(mdhd)
                    }
                case "handler_name":
                    let name = Array((value ?? "").utf8)
                    // QuickTime's is counted (a Pascal string), an MP4's ends with a zero.
                    let field: [UInt8] = edits.family == .quickTime ? [UInt8(min(name.count, 255))] + name.prefix(255) : name + [0]
                    try kids[tracks[t]].editChild("mdia", "hdlr") { (b: inout Box) throws(MovieLayout.Refusal) in
                        guard var hdlr = b.value(HandlerReference.self), hdlr.reserved.count == 12 else {
                            throw MovieLayout.Refusal(description: "a handler box is cut short")
                        }
                        hdlr.name = field
                        b.set(hdlr)
                    }
                default:
                    throw MovieLayout.Refusal(description: "the track tag '\(key)' has no box of its own")
                }
            }
        }
        children = kids
        if let text = edits.creationTimeText { try setFileTag("creation_time", text, family: edits.family, adding: false) }
        for (key, value) in edits.fileTags { try setFileTag(key, value, family: edits.family) }
    }

    /// The child at `path` (types, one level each) changed by `change`.
    mutating func editChild(_ path: FourCC..., change: (inout Box) throws(MovieLayout.Refusal) -> Void) throws(MovieLayout.Refusal) {
        try editChild(path[...], change: change)
    }

    private mutating func editChild(_ path: ArraySlice<FourCC>, change: (inout Box) throws(MovieLayout.Refusal) -> Void) throws(MovieLayout.Refusal) {
        guard let first = path.first else { return try change(&self) }
        guard var kids = children, let k = kids.firstIndex(where: { $0.type == first }) else {
            throw MovieLayout.Refusal(description: "the index has no '\(first)' box in '\(type)'")
        }
        try kids[k].editChild(path.dropFirst(), change: change)
        children = kids
    }

    /// A `mvhd`, `tkhd` or `mdhd` with its creation and modification times set (version 1 when a time needs 64 bits).
    mutating func setTimes(_ since1904: UInt64) throws(MovieLayout.Refusal) {
        let cutShort = MovieLayout.Refusal(description: "a '\(type)' box is cut short")
        switch type {
        case "mvhd":
            guard var h = value(MovieHeader.self) else { throw cutShort }
            (h.creationTime, h.modificationTime) = (since1904, since1904)
            set(h)
        case "tkhd":
            guard var h = value(TrackHeader.self) else { throw cutShort }
            (h.creationTime, h.modificationTime) = (since1904, since1904)
            set(h)
        case "mdhd":
            guard var h = value(MediaHeader.self) else { throw cutShort }
            (h.creationTime, h.modificationTime) = (since1904, since1904)
            set(h)
        default:
            throw MovieLayout.Refusal(description: "a '\(type)' box has no creation time")
        }
    }

    /// An ISO 639-2 code packed as `mdhd` holds it (three letters, five bits each).
    static func packedLanguage(_ text: String) -> UInt16? {
        let b = Array(text.utf8)
        guard b.count == 3, b.allSatisfy({ $0 >= 0x61 && $0 <= 0x7a }) else { return nil }
        return UInt16(b[0] - 0x60) << 10 | UInt16(b[1] - 0x60) << 5 | UInt16(b[2] - 0x60)
    }
}

// MARK: the file's tags

/// How the demuxer reads a user data string or an iTunes item: as text,
/// as a number or flag it prints (`trkn`, `gnre`, `stik`, …), or as the
/// box's bytes whole.
enum ItemKind { case text, parsed, raw }

/// The keys libavformat's MP4/MOV demuxer gives the user data strings and
/// iTunes items it reads (`mov_read_udta_string`), and how it reads each.
let demuxerItemKeys: [FourCC: (key: String, kind: ItemKind)] = [
    "@PRM": ("premiere_version", .raw), "@PRQ": ("quicktime_version", .raw), "FIRM": ("firmware", .raw),
    "aART": ("album_artist", .text), "akID": ("account_type", .parsed), "apID": ("account_id", .text),
    "catg": ("category", .text), "cpil": ("compilation", .parsed), "cprt": ("copyright", .text),
    "desc": ("description", .text), "disk": ("disc", .parsed), "egid": ("episode_uid", .parsed),
    "gnre": ("genre", .parsed), "hdvd": ("hd_video", .parsed), "keyw": ("keywords", .text), "ldes": ("synopsis", .text),
    "manu": ("make", .text), "modl": ("model", .text), "pcst": ("podcast", .parsed), "pgap": ("gapless_playback", .parsed),
    "purd": ("purchase_date", .text), "rtng": ("rating", .parsed), "soaa": ("sort_album_artist", .text),
    "soal": ("sort_album", .text), "soar": ("sort_artist", .text), "soco": ("sort_composer", .text),
    "sonm": ("sort_name", .text), "sosn": ("sort_show", .text), "stik": ("media_type", .parsed), "trkn": ("track", .parsed),
    "tven": ("episode_id", .text), "tves": ("episode_sort", .parsed), "tvnn": ("network", .text), "tvsh": ("show", .text),
    "tvsn": ("season_number", .parsed), "©ART": ("artist", .text), "©PRD": ("producer", .text), "©alb": ("album", .text),
    "©aut": ("artist", .text), "©chp": ("chapter", .text), "©cmt": ("comment", .text), "©com": ("composer", .text),
    "©cpy": ("copyright", .text), "©day": ("date", .text), "©dir": ("director", .text), "©dis": ("disclaimer", .text),
    "©ed1": ("edit_date", .text), "©enc": ("encoder", .text), "©fmt": ("original_format", .text), "©gen": ("genre", .text),
    "©grp": ("grouping", .text), "©hst": ("host_computer", .text), "©inf": ("comment", .text), "©lyr": ("lyrics", .text),
    "©mak": ("make", .text), "©mod": ("model", .text), "©nam": ("title", .text), "©ope": ("original_artist", .text),
    "©prd": ("producer", .text), "©prf": ("performers", .text), "©req": ("playback_requirements", .text),
    "©src": ("original_source", .text), "©st3": ("subtitle", .text), "©swr": ("encoder", .text), "©too": ("encoder", .text),
    "©trk": ("track", .text), "©url": ("URL", .text), "©wrn": ("warning", .text), "©wrt": ("composer", .text),
    "©xyz": ("location", .text),
]

/// The keys of those read as plain text (in lower case): the boxes a file tag's edit rewrites.
let textItemKeys: [FourCC: String] = demuxerItemKeys.filter { $0.value.kind == .text }.mapValues { $0.key.lowercased() }

/// The item written for a key an MP4/M4A does not hold yet (as libavformat's MP4 muxer writes it).
private let isoItemForKey: [String: FourCC] = [
    "title": "©nam", "artist": "©ART", "album_artist": "aART", "composer": "©wrt", "album": "©alb",
    "date": "©day", "comment": "©cmt", "genre": "©gen", "copyright": "cprt", "grouping": "©grp",
    "lyrics": "©lyr", "description": "desc", "synopsis": "ldes", "show": "tvsh",
    "episode_id": "tven", "network": "tvnn", "encoder": "©too", "keywords": "keyw",
]

/// The user data string written for a key a MOV does not hold yet (as libavformat's MOV muxer writes it).
private let quickTimeStringForKey: [String: FourCC] = [
    "title": "©nam", "artist": "©ART", "composer": "©wrt", "album": "©alb", "date": "©day",
    "comment": "©cmt", "genre": "©gen", "copyright": "©cpy", "encoder": "©swr", "location": "©xyz",
    "make": "©mak", "model": "©mod",
]

/// The boxes in a box's payload after `prefix` bytes (a full box's version
/// and flags), with what follows the last of them.
struct BoxList {
    var prefix: [UInt8]
    var boxes: [Box]
    var tail: ArraySlice<UInt8>

    init(_ payload: ArraySlice<UInt8>, prefix count: Int) throws(MovieLayout.Refusal) {
        guard payload.count >= count else { throw MovieLayout.Refusal(description: "a metadata box is cut short") }
        prefix = Array(payload.prefix(count))
        (boxes, tail) = try Box.parse(payload.dropFirst(count), descending: [], zeroTail: true)
    }

    init(prefix: [UInt8], boxes: [Box]) {
        self.prefix = prefix
        self.boxes = boxes
        tail = []
    }

    var payload: ArraySlice<UInt8> {
        var out = prefix
        for b in boxes { b.append(to: &out) }
        out += tail
        return out[...]
    }

    /// A `meta` box's list: a QuickTime one may lack the full box's four bytes.
    static func meta(_ payload: ArraySlice<UInt8>) throws(MovieLayout.Refusal) -> BoxList {
        let bare = BigEndianReader(payload).fourCC(at: 4) == "hdlr"
        return try BoxList(payload, prefix: bare ? 0 : 4)
    }

    /// The handler type of a `meta` list (`mdir`: iTunes items, `mdta`: keys).
    var handler: FourCC? {
        boxes.first { $0.type == "hdlr" }?.value(HandlerReference.self)?.handlerType
    }
}

/// An item's value as iTunes and QuickTime metadata keep it: a `data` box of UTF-8 text.
private func dataBox(_ text: String, locale: [UInt8] = [0, 0, 0, 0]) -> Box {
    Box("data", payload: ([0, 0, 0, 1] + locale + Array(text.utf8))[...])
}

/// A `meta` list with a handler of `type` (`mdir` with Apple's
/// manufacturer code, as the MP4 muxer writes it; `mdta`).
private func newMeta(_ type: FourCC) -> BoxList {
    let manufacturer: [UInt8] = type == "mdir" ? FourCC("appl").bytes : [0, 0, 0, 0]
    let hdlr = Box("hdlr", payload: ([0, 0, 0, 0, 0, 0, 0, 0] + type.bytes + manufacturer + [UInt8](repeating: 0, count: 9))[...])
    var boxes = [hdlr]
    if type == "mdta" { boxes.append(Box("keys", payload: [0, 0, 0, 0, 0, 0, 0, 0])) }
    boxes.append(Box("ilst"))
    return BoxList(prefix: [0, 0, 0, 0], boxes: boxes)
}

extension Box {
    /// The file tag `key` set to `value` (or removed) in this `moov`: every
    /// box the demuxer reads it from rewritten (or removed); where there is
    /// none, one added where the file's kind keeps it (unless not `adding`).
    mutating func setFileTag(_ key: String, _ value: String?, family: IndexEdits.Family,
                             adding: Bool = true) throws(MovieLayout.Refusal) {
        let wanted = key.lowercased()
        guard var kids = children else { return }
        var found = false

        // The items of a `meta` list, in the movie or its user data: named by
        // its key list (handler `mdta`) or, iTunes items (`mdir`), by their type.
        func editItems(_ meta: inout Box) throws(MovieLayout.Refusal) {
            var list = try BoxList.meta(meta.payload)
            guard let i = list.boxes.firstIndex(where: { $0.type == "ilst" }) else { return }
            let name: (Box) -> String?
            switch list.handler {
            case "mdta":
                guard let k = list.boxes.firstIndex(where: { $0.type == "keys" }) else { return }
                let names = try Self.keyNames(list.boxes[k]).names.map { $0?.lowercased() }
                name = { item in
                    let n = Int(item.type.rawValue)
                    return n >= 1 && n <= names.count ? names[n - 1] : nil
                }
            case "mdir":
                name = { textItemKeys[$0.type] }
            default:
                return
            }
            var items = try BoxList(list.boxes[i].payload, prefix: 0)
            var changed = false
            items.boxes = try items.boxes.keeping { (item: Box) throws(MovieLayout.Refusal) -> Box? in
                guard name(item) == wanted else { return item }
                found = true
                changed = true
                guard let value else { return nil }
                return try Self.replacingText(of: item, with: value)
            }
            if changed {
                list.boxes[i].payload = items.payload
                meta.payload = list.payload
            }
        }
        for k in kids.indices where kids[k].type == "meta" { try editItems(&kids[k]) }

        let u = kids.firstIndex { $0.type == "udta" }
        var udta = try u.map { (k: Int) throws(MovieLayout.Refusal) -> BoxList in try BoxList(kids[k].payload, prefix: 0) }
        if var list = udta {
            // QuickTime user data strings.
            list.boxes = try list.boxes.keeping { (b: Box) throws(MovieLayout.Refusal) -> Box? in
                guard textItemKeys[b.type] == wanted else { return b }
                found = true
                guard let value else { return nil }
                // (A string without one is taken as undetermined, 0x55c4.)
                let language = BigEndianReader(b.payload).u16(at: 2) ?? 0x55c4
                // Below 0x400 a Macintosh language code: the text is read as Mac Roman.
                guard language >= 0x400 && language != 0x7fff || value.utf8.allSatisfy({ $0 < 0x80 }) else {
                    throw MovieLayout.Refusal(description: "a user data string in a Macintosh encoding")
                }
                return Box(b.type, payload: Self.userDataString(value, language: language))
            }
            for k in list.boxes.indices where list.boxes[k].type == "meta" { try editItems(&list.boxes[k]) }
            udta = list
        }
        if !found, adding, let value {
            var user = udta ?? BoxList(prefix: [], boxes: [])
            try Self.add(key, value, family: family, movie: &kids, udta: &user)
            udta = user
        }
        if let udta {
            // (Found again: a box added to the movie may have moved it.)
            if let u = kids.firstIndex(where: { $0.type == "udta" }) {
                kids[u].payload = udta.payload
            } else if !udta.boxes.isEmpty {
                // A new user data box goes after the tracks, where the muxer puts it.
                let at = (kids.lastIndex { $0.type == "trak" }).map { $0 + 1 } ?? kids.count
                kids.insert(Box("udta", payload: udta.payload), at: at)
            }
        }
        children = kids
    }

    /// `key` (not held anywhere yet) added with `value`.
    private static func add(_ key: String, _ value: String, family: IndexEdits.Family, movie kids: inout [Box],
                            udta: inout BoxList) throws(MovieLayout.Refusal) {
        let wanted = key.lowercased()
        let metaAt = udta.boxes.firstIndex { $0.type == "meta" }
        let userMeta = try metaAt.map { (k: Int) throws(MovieLayout.Refusal) -> BoxList in try BoxList.meta(udta.boxes[k].payload) }
        if family == .quickTime, let code = quickTimeStringForKey[wanted] {
            udta.boxes.append(Box(code, payload: userDataString(value, language: 0x55c4)))
            return
        }
        if family == .iso, let code = isoItemForKey[wanted], userMeta == nil || userMeta?.handler == "mdir" {
            var meta = userMeta ?? newMeta("mdir")
            guard let i = meta.boxes.firstIndex(where: { $0.type == "ilst" }) else {
                throw MovieLayout.Refusal(description: "the iTunes metadata has no item list")
            }
            var items = try BoxList(meta.boxes[i].payload, prefix: 0)
            items.boxes.append(Box(code, payload: dataBox(value).encoded()[...]))
            meta.boxes[i].payload = items.payload
            if let metaAt { udta.boxes[metaAt].payload = meta.payload } else { udta.boxes.append(Box("meta", payload: meta.payload)) }
            return
        }
        // A metadata key: in the keyed list the file has, else in a new one
        // (in the user data, as the muxer writes it, unless that holds iTunes items).
        func addKey(_ meta: inout BoxList) throws(MovieLayout.Refusal) {
            guard let k = meta.boxes.firstIndex(where: { $0.type == "keys" }),
                  let i = meta.boxes.firstIndex(where: { $0.type == "ilst" }) else {
                throw MovieLayout.Refusal(description: "the metadata keys have no item list")
            }
            // The entries as they were (after version, flags and count), the new one last.
            let list = try keyNames(meta.boxes[k])
            let count = list.names.count + 1
            let old = Array(meta.boxes[k].payload)
            var keys: [UInt8] = Array(old.prefix(4))
            put(UInt64(count), 4, &keys)
            keys += old[8..<list.end]
            put(UInt64(8 + key.utf8.count), 4, &keys)
            keys += Array("mdta".utf8) + Array(key.utf8)
            meta.boxes[k].payload = keys[...]
            var items = try BoxList(meta.boxes[i].payload, prefix: 0)
            items.boxes.append(Box(FourCC(rawValue: UInt32(count)), payload: dataBox(value).encoded()[...]))
            meta.boxes[i].payload = items.payload
        }
        if let m = kids.firstIndex(where: { $0.type == "meta" }) {
            var meta = try BoxList.meta(kids[m].payload)
            if meta.handler == "mdta" {
                try addKey(&meta)
                kids[m].payload = meta.payload
                return
            }
        }
        if let metaAt, var meta = userMeta, meta.handler == "mdta" {
            try addKey(&meta)
            udta.boxes[metaAt].payload = meta.payload
            return
        }
        var meta = newMeta("mdta")
        try addKey(&meta)
        if metaAt == nil {
            udta.boxes.append(Box("meta", payload: meta.payload))
        } else {
            guard !kids.contains(where: { $0.type == "meta" }) else {
                throw MovieLayout.Refusal(description: "the movie's metadata box is neither keys nor iTunes items")
            }
            let at = (kids.lastIndex { $0.type == "trak" }).map { $0 + 1 } ?? kids.count
            kids.insert(Box("meta", payload: meta.payload), at: at)
        }
    }

    /// The names of a `keys` box, in order (item N is named by the Nth; nil
    /// for a key not of the `mdta` kind, which names nothing), and where in
    /// its payload the last entry ends.
    static func keyNames(_ keys: Box) throws(MovieLayout.Refusal) -> (names: [String?], end: Int) {
        let p = BigEndianReader(keys.payload)
        guard let count = p.u32(at: 4) else { throw MovieLayout.Refusal(description: "a metadata key list is cut short") }
        var names: [String?] = []
        var at = 8
        for _ in 0..<count {
            guard at + 8 <= p.count, let size = p.length(at: at, size: 4) else {
                throw MovieLayout.Refusal(description: "a metadata key list is cut short")
            }
            guard size >= 8, at + size <= p.count else { throw MovieLayout.Refusal(description: "a metadata key runs past its list") }
            names.append(p.fourCC(at: at + 4) == "mdta" ? String(decoding: p.bytes(in: (at + 8)..<(at + size)), as: UTF8.self) : nil)
            at += size
        }
        return (names, at)
    }

    /// An item whose `data` box holds text, with `value` in its place (the locale kept).
    static func replacingText(of item: Box, with value: String) throws(MovieLayout.Refusal) -> Box {
        var inner = try BoxList(item.payload, prefix: 0)
        guard let d = inner.boxes.firstIndex(where: { $0.type == "data" }), inner.boxes[d].payload.count >= 8 else {
            throw MovieLayout.Refusal(description: "a metadata item has no value")
        }
        let p = BigEndianReader(inner.boxes[d].payload)
        // Type 1 is UTF-8 text; numbers, pictures and the rest are not rewritten as text.
        guard p.u32(at: 0) == 1 else { throw MovieLayout.Refusal(description: "a metadata item holds no text") }
        inner.boxes[d] = dataBox(value, locale: Array(p.bytes(in: 4..<8)))
        return Box(item.type, payload: inner.payload)
    }

    /// A QuickTime user data string: its length, its language, the text.
    static func userDataString(_ text: String, language: UInt16) -> ArraySlice<UInt8> {
        let bytes = Array(text.utf8.prefix(0xffff))
        var out: [UInt8] = []
        put(UInt64(bytes.count), 2, &out)
        put(UInt64(language), 2, &out)
        return (out + bytes)[...]
    }
}

extension Array where Element == Box {
    /// Each box as `change` returns it; those it returns nil for left out.
    fileprivate func keeping(_ change: (Box) throws(MovieLayout.Refusal) -> Box?) throws(MovieLayout.Refusal) -> [Box] {
        var out: [Box] = []
        for b in self { if let kept = try change(b) { out.append(kept) } }
        return out
    }
}
