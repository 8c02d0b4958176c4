import FileAccess
import Glibc
import ISOBMFF
import Sync

/// What a written MP4/MOV output's index lacks of its sources, added after
/// the muxer's trailer and before the file takes its name: boxes of a copied
/// video's sample entry the muxer does not write (Dolby Vision's `dvcC`/
/// `dvvC`, spatial video's `lhvC`/`vexu`/`hfov`, Apple's `amve`, `clli`,
/// `mdcv`…) with the entry's type (`dvh1`), and whole tracks it cannot write
/// (`CarriedTrack`), whose samples go into a media data box of their own,
/// and sample descriptions after a track's first (`Descriptions`).
/// The index is then moved in front of the media data when asked
/// (faststart, done here since the muxer's would come before the additions).
public enum IndexCompletion {
    /// Boxes for the first sample entry of the output's track `track`
    /// (0-based, in `trak` order): added where the entry has none of their
    /// type; `type`, when given, replaces the entry's type.
    public struct EntryAdditions: Sendable {
        public var track: Int
        public var type: FourCC?
        public var boxes: [[UInt8]]
        public init(track: Int, type: FourCC?, boxes: [[UInt8]]) {
            self.track = track
            self.type = type
            self.boxes = boxes
        }
    }

    /// Box types the muxer writes into a video sample entry itself, where they apply.
    static let written: Set<FourCC> = ["avcC", "hvcC", "av1C", "vpcC", "esds", "glbl", "btrt", "pasp", "colr",
                                       "fiel", "gama", "clap", "SA3D", "st3d", "sv3d"]
    /// Sample entry types of Dolby Vision streams without a compatible base (profile 5): kept as they are.
    static let dolbyVisionTypes: Set<FourCC> = ["dvh1", "dvhe", "dva1", "dvav", "dav1"]

    /// What a copy of `input`, written as the output's track `track`, needs
    /// added to its sample entry: the source entry's boxes the muxer does not
    /// write, and a Dolby Vision entry type; nil when nothing.
    /// From another container (Matroska), the Dolby Vision record the
    /// demuxer passes on, as its box; a stream without a compatible base
    /// layer (profile 5) as a `dvh1` entry.
    public static func entryAdditions(for input: InputStream, track: Int) -> EntryAdditions? {
        guard input.mediaType == .video, !input.isAttachedPicture else { return nil }
        guard let source = input.file.sourceIndex?.track(id: input.id) else {
            guard let dv = input.dolbyVision, input.codecName == "hevc" || input.codecName == "h264" else { return nil }
            let type: FourCC? = dv.compatibilityID == 0 ? (input.codecName == "hevc" ? "dvh1" : "dva1") : nil
            return EntryAdditions(track: track, type: type, boxes: [dv.box])
        }
        let boxes = source.sampleEntryBoxes.filter { !written.contains($0.type) }.map(\.bytes)
        let type = source.sampleEntryType.flatMap { dolbyVisionTypes.contains($0) ? $0 : nil }
        guard !boxes.isEmpty || type != nil else { return nil }
        return EntryAdditions(track: track, type: type, boxes: boxes)
    }

    /// A track another track refers to: one the muxer wrote (`trak` order) or a carried one.
    public enum TrackReference: Sendable, Equatable {
        case written(Int)
        case carried(Int)
    }

    /// An encoder's priming at the start of the output's track `track`
    /// (0-based, in `trak` order): `samples` at `sampleRate`, the first of
    /// its media. The muxer hides priming only before the track's zero (a
    /// negative first timestamp becomes the edit's media time); where the
    /// encoded audio starts later (a decoder dropped the input's own delay
    /// — libavcodec drops libfaac's 1024 samples —, or the audio starts after
    /// the video), what of it lies after zero would be played and decoded.
    public struct Priming: Sendable, Equatable {
        public var track: Int
        public var samples: Int64
        public var sampleRate: Int32
        public init(track: Int, samples: Int64, sampleRate: Int32) {
            (self.track, self.samples, self.sampleRate) = (track, samples, sampleRate)
        }
    }

    /// A carried track and what its `tref` refers to.
    public struct Carried {
        public var track: CarriedTrack
        public var references: [(type: FourCC, tracks: [TrackReference])]
        public init(_ track: CarriedTrack, references: [(type: FourCC, tracks: [TrackReference])]) {
            self.track = track
            self.references = references
        }
    }

    public struct Failure: Error, Sendable {
        public var description: String
        /// The file call that failed, where one did (its code kept: a full disk is `no-space`).
        public var file: FileError? = nil
    }

    /// Completes the file at `path`: `userData` are boxes for the movie's
    /// `udta`, each added where none of its type is there (`LocationUserData`).
    /// Nothing to add leaves it as it is (unopened).
    /// An index in front with room after it (`free` boxes: the space a
    /// one-pass write reserved) is rewritten there, the carried samples
    /// appended to the file; otherwise the index goes to the end after them
    /// and, with `faststart`, is moved in front of the media.
    /// The file is opened once and its index parsed once: `ends` (edit
    /// lists ended where the shown frames end) are made in it with the rest.
    /// With only `ends`, the index is rewritten in place where they change
    /// it (a file whose index cannot be read is left as the muxer wrote it).
    /// `priming`: each track's edit list hides its encoder's priming where
    /// it shows some (`hidingPriming`); asked alone, a file whose edits
    /// already hide it is left as it is.
    public static func complete(path: String, ends: [EditListEnd] = [], entries: [EntryAdditions], carried: [Carried],
                                userData: [BoxNode] = [], descriptions: [Descriptions] = [], priming: [Priming] = [],
                                faststart: Bool) throws(Failure) {
        let adds = !entries.isEmpty || !carried.isEmpty || !userData.isEmpty || !descriptions.isEmpty || !priming.isEmpty
            || faststart
        guard adds || !ends.isEmpty else { return }
        let fd: OpenFile
        do throws(FileError) { fd = try OpenFile(path: path, O_RDWR) } catch {
            if adds { throw Failure(error) }
            return
        }
        let size: Int64, top: [MovieLayout.TopBox], m: Int, bytes: [UInt8]
        var moov: BoxNode
        do throws(Failure) { (size, top, m, bytes, moov) = try readIndex(fd) } catch {
            if adds { throw error }
            return
        }
        var ended = false
        for e in ends { ended = e.apply(to: &moov) || ended }
        guard adds else {
            // The index is as long as it was: only the bytes that differ are written.
            let out = moov.encoded()
            guard ended, let first = out.indices.first(where: { out[$0] != bytes[$0] }),
                  let last = out.indices.last(where: { out[$0] != bytes[$0] }) else { return }
            do throws(FileError) { try fd.write(Array(out[first...last]), at: top[m].start + Int64(first)) } catch {
                throw Failure(error)
            }
            return
        }
        let moovBox = top[m]
        // Only the priming asked for, and every track already hides it: the file stays as it is.
        if entries.isEmpty, carried.isEmpty, userData.isEmpty, descriptions.isEmpty, !priming.isEmpty,
           try completed(moov, entries: [], carried: [], userData: [], descriptions: [], priming: priming, dataAt: size) == bytes {
            return
        }
        let payload = carried.reduce(0) { $0 + Int64($1.track.byteCount) }
        let header = carried.isEmpty ? [] : BoxNode.header("mdat", contentSize: payload)
        let dataHeader = Int64(header.count)
        /// The media data box of the carried samples at `at`.
        func writeData(at: Int64) throws(FileError) {
            try fd.write(header, at: at)
            var next = at + Int64(header.count)
            for c in carried {
                try c.track.writeSamples(to: fd, at: next)
                next += Int64(c.track.byteCount)
            }
        }
        // In place: the index and the free boxes after it, when the media data follows.
        let room = top[(m + 1)...].prefix { $0.type == "free" }.reduce(moovBox.size) { $0 + $1.size }
        if top[(m + 1)...].contains(where: { $0.type == "mdat" }) {
            let index = try completed(moov, entries: entries, carried: carried, userData: userData, descriptions: descriptions,
                                      priming: priming, dataAt: size + dataHeader)
            let rest = room - Int64(index.count)
            if rest == 0 || rest >= 8 {
                let free = rest > 0 ? BoxNode.header("free", contentSize: rest - 8) : []
                do throws(FileError) {
                    try writeData(at: size)
                    try fd.write(index + free, at: moovBox.start)
                } catch {
                    throw Failure(error)
                }
                return
            }
        }
        // At the end: where the index was when it ends the file (else it becomes a `free` box).
        let last = moovBox.start + moovBox.size == size
        let dataStart = last ? moovBox.start : size
        let index = try completed(moov, entries: entries, carried: carried, userData: userData, descriptions: descriptions,
                                  priming: priming, dataAt: dataStart + dataHeader)
        let indexAt = dataStart + (carried.isEmpty ? 0 : dataHeader + payload)
        do throws(FileError) {
            // (The old index's type made `free`: its size stays.)
            if !last { try fd.write(FourCC("free").bytes, at: moovBox.start + 4) }
            try writeData(at: dataStart)
            try fd.write(index, at: indexAt)
            try fd.truncate(to: indexAt + Int64(index.count))
        } catch {
            throw Failure(error)
        }
        if faststart { try moveIndexToFront(fd) }
    }

    /// The size of the file open at `fd`, its top-level boxes, which is its
    /// index (`moov`), the index's bytes and the index parsed.
    private static func readIndex(_ fd: OpenFile) throws(Failure) -> (Int64, [MovieLayout.TopBox], Int, [UInt8], BoxNode) {
        let size: Int64
        do throws(FileError) { size = try fd.size() } catch { throw Failure(error) }
        let top: [MovieLayout.TopBox]
        do { top = try MovieLayout.topLevelBoxes(fileSize: size, read: { try? fd.read($1, at: $0) }) } catch {
            throw Failure(description: error.description)
        }
        guard let m = top.firstIndex(where: { $0.type == "moov" }), top[m].size <= 256 << 20,
              let bytes = try? fd.read(Int(top[m].size), at: top[m].start), bytes.count == Int(top[m].size),
              let moov = (try? BoxNode.index(bytes[...]))?.first else { throw Failure(description: "its index cannot be read") }
        return (size, top, m, bytes, moov)
    }

    /// The index `moov` with the entry additions and the carried tracks,
    /// whose samples lie one track after another from `dataAt`, encoded.
    private static func completed(_ moov: BoxNode, entries: [EntryAdditions], carried: [Carried], userData: [BoxNode],
                                  descriptions: [Descriptions], priming: [Priming], dataAt: Int64) throws(Failure) -> [UInt8] {
        var moov = moov
        var kids = moov.children ?? []
        if !userData.isEmpty { kids = try withUserData(userData, kids) }
        let traks = kids.indices.filter { kids[$0].type == "trak" }
        for e in entries where e.track < traks.count {
            kids[traks[e.track]] = addToEntry(kids[traks[e.track]], e)
        }
        if let movieScale = kids.first(where: { $0.type == "mvhd" })?.value(MovieHeader.self)?.timescale {
            for p in priming where p.track < traks.count {
                kids[traks[p.track]] = hidingPriming(kids[traks[p.track]], p, movieScale: movieScale)
            }
        }
        // After the additions: a described stretch's entry is a copy of the first, boxes added included.
        for d in descriptions where d.track < traks.count {
            kids[traks[d.track]] = try described(kids[traks[d.track]], d)
        }
        if !carried.isEmpty {
            guard let mvhdAt = kids.firstIndex(where: { $0.type == "mvhd" }) else { throw Failure(description: "its index has no movie header") }
            guard var mvhd = kids[mvhdAt].value(MovieHeader.self), mvhd.timescale > 0 else {
                throw Failure(description: "its movie header is cut short")
            }
            let writtenIDs = try traks.map { k throws(Failure) -> UInt32 in
                guard let tkhd = kids[k].children?.first(where: { $0.type == "tkhd" })?.value(TrackHeader.self) else {
                    throw Failure(description: "the header of its track \(k) is cut short")
                }
                return tkhd.trackID
            }
            let firstID = max(mvhd.nextTrackID, (writtenIDs.max() ?? 0) + 1)
            func id(_ r: TrackReference) -> UInt32? {
                switch r {
                case .written(let k): k < writtenIDs.count ? writtenIDs[k] : nil
                case .carried(let k): k < carried.count ? firstID + UInt32(k) : nil
                }
            }
            var at = dataAt
            var longest: UInt64 = 0
            for (k, c) in carried.enumerated() {
                let offsets = c.track.runByteStarts.map { $0 + at }
                at += Int64(c.track.byteCount)
                let trak = c.track.trak(id: firstID + UInt32(k), movieScale: mvhd.timescale, runOffsets: offsets,
                                        references: c.references.map { ($0.type, $0.tracks.compactMap(id)) })
                kids.insert(trak, at: (kids.lastIndex { $0.type == "trak" } ?? kids.count - 1) + 1)
                guard let tkhd = trak.children?.first(where: { $0.type == "tkhd" })?.value(TrackHeader.self) else {
                    throw Failure(description: "the header of its carried track \(k) is cut short")
                }
                longest = max(longest, tkhd.duration)
            }
            mvhd.nextTrackID = firstID + UInt32(carried.count)
            mvhd.duration = max(mvhd.duration, longest)
            kids[mvhdAt].set(mvhd)
        }
        moov.children = kids
        return moov.encoded()
    }

    /// The movie's boxes `kids` with `boxes` in its `udta` (made after the
    /// last track, where the muxer puts it, when there is none), each where
    /// none of its type is there.
    private static func withUserData(_ boxes: [BoxNode], _ kids: [BoxNode]) throws(Failure) -> [BoxNode] {
        var kids = kids
        let u: Int
        if let at = kids.firstIndex(where: { $0.type == "udta" }) { u = at } else {
            u = (kids.lastIndex { $0.type == "trak" }).map { $0 + 1 } ?? kids.count
            kids.insert(BoxNode("udta"), at: u)
        }
        // (A QuickTime list may end with four zero bytes: the boxes go before them.)
        var udta: UserData
        do throws(BoxError) { udta = try UserData(kids[u]) } catch {
            throw Failure(description: "its user data cannot be read (\(MovieLayout.Refusal(error)))")
        }
        for b in boxes where udta.list.index(of: b.type) == nil { udta.list.boxes.append(b) }
        kids[u].set(udta)
        return kids
    }

    /// `trak` with its first sample entry given `e`'s boxes (those of a type
    /// it lacks, after its own) and type; as it was when the entry does not parse.
    private static func addToEntry(_ trak: BoxNode, _ e: EntryAdditions) -> BoxNode {
        let handler = trak.descendant(["mdia", "hdlr"])?.value(HandlerReference.self)?.handlerType
        let added = e.boxes.compactMap { BoxNode.first(of: $0[...]) }
        var out = trak
        out.modify(["mdia", "minf", "stbl", "stsd"]) { stsd in
            guard var table = stsd.value(SampleDescriptionTable.self), let first = table.entries.first,
                  var entry = try? SampleEntry(first, handler: handler) else { return }
            let present = Set(entry.boxes.map(\.type))
            entry.boxes += added.filter { !present.contains($0.type) }
            entry.type = e.type ?? entry.type
            table.entries[0] = entry.box
            stsd.set(table)
        }
        return out
    }

    /// `trak` with an edit list that shows none of `p`'s priming: where its
    /// last edit starts inside it (media time under the priming), that edit
    /// starts after it and the empty edit before it grows by as much, so
    /// every other sample is shown when it was and the track ends where it
    /// did. Unchanged where the edit already starts after the priming.
    private static func hidingPriming(_ trak: BoxNode, _ p: Priming, movieScale: UInt32) -> BoxNode {
        guard p.sampleRate > 0, movieScale > 0, movieScale <= UInt32(Int32.max),
              let mdhd = trak.descendant(["mdia", "mdhd"])?.value(MediaHeader.self), mdhd.timescale > 0,
              mdhd.timescale <= UInt32(Int32.max),
              var list = trak.descendant(["edts", "elst"])?.value(EditList.self), let last = list.entries.last,
              let priming = rescale(p.samples, from: Rational(unchecked: 1, p.sampleRate),
                                    to: Rational(unchecked: 1, Int32(mdhd.timescale))),
              last.mediaTime >= 0, last.mediaTime < priming,
              let ticks = rescale(priming - last.mediaTime, from: Rational(unchecked: 1, Int32(mdhd.timescale)),
                                  to: Rational(unchecked: 1, Int32(movieScale))),
              ticks > 0, UInt64(ticks) < last.segmentDuration else { return trak }
        var entries = Array(list.entries.dropLast())
        if let before = entries.last, before.mediaTime == -1 {
            entries[entries.count - 1].segmentDuration += UInt64(ticks)
        } else {
            entries.append(EditList.Entry(segmentDuration: UInt64(ticks), mediaTime: -1))
        }
        entries.append(EditList.Entry(segmentDuration: last.segmentDuration - UInt64(ticks), mediaTime: priming,
                                      rateInteger: last.rateInteger, rateFraction: last.rateFraction))
        list.entries = entries
        var out = trak
        _ = out.modify(["edts", "elst"]) { $0.set(list) }
        return out
    }

    /// The file's index (its last box) moved in front of its media data,
    /// in place: the boxes between `ftyp` and the index moved up by the
    /// index's size, every chunk offset with them (`MovieLayout`).
    private static func moveIndexToFront(_ fd: OpenFile) throws(Failure) {
        let size: Int64
        do throws(FileError) { size = try fd.size() } catch { throw Failure(error) }
        let layout: MovieLayout
        do { layout = try MovieLayout(fileSize: size, read: { try? fd.read($1, at: $0) }) } catch {
            throw Failure(description: error.description)
        }
        guard !layout.indexAlreadyInFront else { return }
        // Only the layout the muxer leaves: `ftyp` (or nothing) first, the index last.
        guard let moov = layout.boxes.last, moov.type == "moov" else { return }
        let restStart = layout.boxes.first?.type == "ftyp" ? layout.boxes[0].size : 0
        let restCount = moov.start - restStart
        let target = restStart + Int64(layout.index.count)
        let chunk: Int64 = 4 << 20
        var end = restCount
        do throws(FileError) {
            while end > 0 {
                let n = min(chunk, end)
                let from = restStart + end - n
                let piece = try fd.read(Int(n), at: from)
                guard piece.count == Int(n) else { throw FileError(code: EIO, call: "pread", path: fd.path) }
                try fd.write(piece, at: from - restStart + target)
                end -= n
            }
            try fd.write(layout.index, at: restStart)
            try fd.truncate(to: target + restCount)
        } catch {
            throw Failure(error)
        }
    }
}

extension IndexCompletion.Failure {
    /// A file call's failure, in the system's words.
    init(_ error: FileError) { self.init(description: error.message, file: error) }
}
