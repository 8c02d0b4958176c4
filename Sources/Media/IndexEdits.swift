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

extension BoxNode {
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
                try kids[k].editChild("tkhd") { (b: inout BoxNode) throws(MovieLayout.Refusal) in try b.setTimes(UInt64(since1904)) }
                try kids[k].editChild("mdia", "mdhd") { (b: inout BoxNode) throws(MovieLayout.Refusal) in try b.setTimes(UInt64(since1904)) }
            }
        }
        for (t, matrix) in edits.matrices {
            guard t < tracks.count, matrix.count == 9 else { throw MovieLayout.Refusal(description: "no track \(t) to turn") }
            try kids[tracks[t]].editChild("tkhd") { (b: inout BoxNode) throws(MovieLayout.Refusal) in
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
                    guard let code = value.flatMap(MediaHeader.packedLanguage) else {
                        throw MovieLayout.Refusal(description: "a language must be three letters (ISO 639-2)")
                    }
                    try kids[tracks[t]].editChild("mdia", "mdhd") { (b: inout BoxNode) throws(MovieLayout.Refusal) in
                        guard var mdhd = b.value(MediaHeader.self) else { throw MovieLayout.Refusal(description: "a media header is cut short") }
                        mdhd.language = code
                        b.set(mdhd)
                    }
                case "handler_name":
                    let name = Array((value ?? "").utf8)
                    // QuickTime's is counted (a Pascal string), an MP4's ends with a zero.
                    let field: [UInt8] = edits.family == .quickTime ? [UInt8(min(name.count, 255))] + name.prefix(255) : name + [0]
                    try kids[tracks[t]].editChild("mdia", "hdlr") { (b: inout BoxNode) throws(MovieLayout.Refusal) in
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
    mutating func editChild(_ path: FourCC..., change: (inout BoxNode) throws(MovieLayout.Refusal) -> Void) throws(MovieLayout.Refusal) {
        try editChild(path[...], change: change)
    }

    private mutating func editChild(_ path: ArraySlice<FourCC>, change: (inout BoxNode) throws(MovieLayout.Refusal) -> Void) throws(MovieLayout.Refusal) {
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

/// A `meta` list with a handler of `handler` (`mdir`, `mdta`, as the muxer
/// writes them), an empty key list for `mdta`, an empty item list.
private func newMeta(_ handler: FourCC) -> Metadata {
    var meta = Metadata(handler: handler)
    if handler == "mdta" { meta.list.boxes.append(MetadataKeys(keys: []).box) }
    meta.list.boxes.append(ItemList().box)
    return meta
}

extension BoxNode {
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
        func editItems(_ box: inout BoxNode) throws(MovieLayout.Refusal) {
            var meta = try box.read(Metadata.self)
            guard let i = meta.list.index(of: "ilst") else { return }
            let name: (BoxNode) -> String?
            switch meta.handler {
            case "mdta":
                guard let keys = meta.list.first("keys") else { return }
                let names = try keys.read(MetadataKeys.self).keys.map { $0.name?.lowercased() }
                name = { item in
                    let n = Int(item.type.rawValue)
                    return n >= 1 && n <= names.count ? names[n - 1] : nil
                }
            case "mdir":
                name = { textItemKeys[$0.type] }
            default:
                return
            }
            var items = try meta.list.boxes[i].read(ItemList.self)
            var changed = false
            items.list.boxes = try items.list.boxes.keeping { (item: BoxNode) throws(MovieLayout.Refusal) -> BoxNode? in
                guard name(item) == wanted else { return item }
                found = true
                changed = true
                guard let value else { return nil }
                return try Self.replacingText(of: item, with: value)
            }
            if changed {
                meta.list.boxes[i].set(items)
                box.set(meta)
            }
        }
        for k in kids.indices where kids[k].type == "meta" { try editItems(&kids[k]) }

        let u = kids.firstIndex { $0.type == "udta" }
        var udta = try u.map { (k: Int) throws(MovieLayout.Refusal) -> UserData in try kids[k].read(UserData.self) }
        if var user = udta {
            // QuickTime user data strings.
            user.list.boxes = try user.list.boxes.keeping { (b: BoxNode) throws(MovieLayout.Refusal) -> BoxNode? in
                guard textItemKeys[b.type] == wanted else { return b }
                found = true
                guard let value else { return nil }
                // (A string without one is taken as undetermined, 0x55c4.)
                let language = (try? UserDataText(parsing: b.payload, type: b.type))?.language ?? 0x55c4
                // Below 0x400 a Macintosh language code: the text is read as Mac Roman.
                guard language >= 0x400 && language != 0x7fff || value.utf8.allSatisfy({ $0 < 0x80 }) else {
                    throw MovieLayout.Refusal(description: "a user data string in a Macintosh encoding")
                }
                return BoxNode(b.type, payload: UserDataText(value, language: language).encode()[...])
            }
            for k in user.list.boxes.indices where user.list.boxes[k].type == "meta" { try editItems(&user.list.boxes[k]) }
            udta = user
        }
        if !found, adding, let value {
            var user = udta ?? UserData()
            try Self.add(key, value, family: family, movie: &kids, udta: &user.list)
            udta = user
        }
        if let udta {
            // (Found again: a box added to the movie may have moved it.)
            if let u = kids.firstIndex(where: { $0.type == "udta" }) {
                kids[u].set(udta)
            } else if !udta.list.boxes.isEmpty {
                // A new user data box goes after the tracks, where the muxer puts it.
                let at = (kids.lastIndex { $0.type == "trak" }).map { $0 + 1 } ?? kids.count
                kids.insert(udta.box, at: at)
            }
        }
        children = kids
    }

    /// `key` (not held anywhere yet) added with `value`.
    private static func add(_ key: String, _ value: String, family: IndexEdits.Family, movie kids: inout [BoxNode],
                            udta: inout BoxList) throws(MovieLayout.Refusal) {
        let wanted = key.lowercased()
        let metaAt = udta.index(of: "meta")
        let userMeta = try metaAt.map { (k: Int) throws(MovieLayout.Refusal) -> Metadata in try udta.boxes[k].read(Metadata.self) }
        if family == .quickTime, let code = quickTimeStringForKey[wanted] {
            udta.boxes.append(BoxNode(code, payload: UserDataText(value, language: 0x55c4).encode()[...]))
            return
        }
        if family == .iso, let code = isoItemForKey[wanted], userMeta == nil || userMeta?.handler == "mdir" {
            var meta = userMeta ?? newMeta("mdir")
            guard let i = meta.list.index(of: "ilst") else {
                throw MovieLayout.Refusal(description: "the iTunes metadata has no item list")
            }
            var items = try meta.list.boxes[i].read(ItemList.self)
            items.list.boxes.append(BoxNode(code, payload: ItemData(text: value).box.encoded()[...]))
            meta.list.boxes[i].set(items)
            if let metaAt { udta.boxes[metaAt].set(meta) } else { udta.boxes.append(meta.box) }
            return
        }
        // A metadata key: in the keyed list the file has, else in a new one
        // (in the user data, as the muxer writes it, unless that holds iTunes items).
        func addKey(_ meta: inout Metadata) throws(MovieLayout.Refusal) {
            guard let k = meta.list.index(of: "keys"), let i = meta.list.index(of: "ilst") else {
                throw MovieLayout.Refusal(description: "the metadata keys have no item list")
            }
            // The keys as they were, the new one last: its item is numbered after them.
            var keys = try meta.list.boxes[k].read(MetadataKeys.self)
            keys.keys.append(MetadataKeys.Key(name: key))
            meta.list.boxes[k].set(keys)
            var items = try meta.list.boxes[i].read(ItemList.self)
            items.list.boxes.append(BoxNode(FourCC(rawValue: UInt32(keys.keys.count)), payload: ItemData(text: value).box.encoded()[...]))
            meta.list.boxes[i].set(items)
        }
        if let m = kids.firstIndex(where: { $0.type == "meta" }) {
            var meta = try kids[m].read(Metadata.self)
            if meta.handler == "mdta" {
                try addKey(&meta)
                kids[m].set(meta)
                return
            }
        }
        if let metaAt, var meta = userMeta, meta.handler == "mdta" {
            try addKey(&meta)
            udta.boxes[metaAt].set(meta)
            return
        }
        var meta = newMeta("mdta")
        try addKey(&meta)
        if metaAt == nil {
            udta.boxes.append(meta.box)
        } else {
            guard !kids.contains(where: { $0.type == "meta" }) else {
                throw MovieLayout.Refusal(description: "the movie's metadata box is neither keys nor iTunes items")
            }
            let at = (kids.lastIndex { $0.type == "trak" }).map { $0 + 1 } ?? kids.count
            kids.insert(meta.box, at: at)
        }
    }

    /// An item whose `data` box holds text, with `value` in its place (the locale kept).
    static func replacingText(of item: BoxNode, with value: String) throws(MovieLayout.Refusal) -> BoxNode {
        var inner: BoxList
        do throws(BoxError) { inner = try BoxList(parsing: item.payload, prefix: 0, type: item.type) } catch {
            throw MovieLayout.Refusal(error)
        }
        guard let d = inner.index(of: "data"), let data = try? ItemData(inner.boxes[d]) else {
            throw MovieLayout.Refusal(description: "a metadata item has no value")
        }
        // Type 1 is UTF-8 text; numbers, pictures and the rest are not rewritten as text.
        guard data.valueType == 1 else { throw MovieLayout.Refusal(description: "a metadata item holds no text") }
        inner.boxes[d] = ItemData(text: value, locale: data.locale).box
        var out = item
        out.payload = inner.encode()[...]
        return out
    }
}

extension Array where Element == BoxNode {
    /// Each box as `change` returns it; those it returns nil for left out.
    fileprivate func keeping(_ change: (BoxNode) throws(MovieLayout.Refusal) -> BoxNode?) throws(MovieLayout.Refusal) -> [BoxNode] {
        var out: [BoxNode] = []
        for b in self { if let kept = try change(b) { out.append(kept) } }
        return out
    }
}
