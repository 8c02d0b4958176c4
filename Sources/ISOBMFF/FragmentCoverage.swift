/// The movie fragments of a fragmented MP4 in memory (a mapping), read
/// from their boxes before any demuxer reads them: the tracks' `trex`
/// defaults from the `moov`, then each `moof` in file order.
public enum Fragments {
    /// What a walk over the fragments read.
    public struct Walk: Sendable, Equatable {
        /// Whole `moof` boxes read.
        public var fragments = 0
        /// Where the first whole `moof` that is not boxes and fields this
        /// module reads starts; the walk stops there.
        public var unreadableAt: Int?
        /// For a `moof` cut short by the end of the file: the samples the
        /// `trun`s it still holds the counts of declare, by track id (none
        /// of them is in the file: a fragment's data follows its `moof`).
        public var declaredInCutFragment: [UInt32: Int] = [:]
        /// Why that `moof` could not be read.
        public var unreadable: BoxError?
        /// What the `moov`'s own sample tables list, by track id (a file
        /// whose first samples are in its index, the fragments after).
        public var movieSamples: [UInt32: TrackSamples] = [:]
        /// The track ids the `moov`'s tracks declare (their `tkhd`s), in
        /// order; none without a `moov` that parses.
        public var movieTracks: [UInt32] = []
        /// The file's whole top-level boxes, in order.
        public var boxes: [BoxHeader] = []
        /// The top-level box the file ends inside (as its header declares it), if any.
        public var endsInside: BoxHeader?
    }

    /// One whole `moof` as the walk reads it.
    public struct Fragment: Sendable {
        /// Its place among the file's `moof` boxes, from 1.
        public var number: Int
        /// Its box in the file.
        public var box: BoxHeader
        /// Each track fragment's samples (`MovieFragment.samples`), in order.
        public var tracks: [(trackID: UInt32, samples: [FragmentSample])]
    }

    /// Calls `visit` with each track fragment's samples (`MovieFragment.samples`),
    /// in file order; nil when the bytes hold no `moof` (a file not
    /// fragmented, or not MP4).
    public static func walk(_ b: UnsafeRawBufferPointer,
                            _ visit: (_ trackID: UInt32, _ samples: [FragmentSample]) -> Void) -> Walk? {
        walk(b, fragments: { fragment in
            for track in fragment.tracks { visit(track.trackID, track.samples) }
        })
    }

    /// The same, a whole `moof` at a time (`Fragment`).
    public static func walk(_ b: UnsafeRawBufferPointer, fragments visit: (Fragment) -> Void) -> Walk? {
        let reader = BigEndianReader(b)
        var walker = BoxWalker(reader)
        var moofs: [BoxHeader] = [], moov: BoxHeader?, boxes: [BoxHeader] = []
        while let box = walker.next() {
            boxes.append(box)
            if box.type == "moof" { moofs.append(box) }
            if box.type == "moov", moov == nil { moov = box }
        }
        var walk = Walk()
        walk.boxes = boxes
        if case .cutShort(let box)? = walker.stop {
            walk.endsInside = box
            if box.type == "moof" { walk.declaredInCutFragment = declaredSamples(reader, cutMoof: box.payload) }
        }
        if moofs.isEmpty && walk.endsInside?.type != "moof" { return nil }
        // The moov of a fragmented file is small: parsed whole.
        let movie = moov.flatMap { try? BoxNode.parse(Array(reader.bytes(in: $0.payload))[...]).boxes } ?? []
        var defaults: [UInt32: TrackExtends] = [:]
        for mvex in movie where mvex.type == "mvex" {
            for trex in (try? MovieExtends(mvex))?.trackDefaults ?? [] where defaults[trex.trackID] == nil { defaults[trex.trackID] = trex }
        }
        for trak in movie where trak.type == "trak" {
            guard let id = trak.child("tkhd").flatMap({ try? TrackHeader($0) })?.trackID else { continue }
            walk.movieTracks.append(id)
            if let samples = TrackSamples(trak: trak) { walk.movieSamples[id] = samples }
        }
        var decodeTimes: [UInt32: UInt64] = [:]
        for box in moofs {
            let moof: MovieFragment
            do throws(BoxError) {
                moof = try MovieFragment(parsing: Array(reader.bytes(in: box.payload))[...], type: box.type)
            } catch {
                (walk.unreadableAt, walk.unreadable) = (box.start, error)
                break
            }
            walk.fragments += 1
            visit(Fragment(number: walk.fragments, box: box,
                           tracks: moof.samples(at: Int64(box.start), defaults: defaults, decodeTimes: &decodeTimes)))
        }
        return walk
    }

    /// The sample counts of the `trun`s in what there is of a `moof`
    /// payload (`range`, past the end of `reader`'s bytes), by the track id
    /// of the `tfhd` before them.
    private static func declaredSamples<B>(_ reader: BigEndianReader<B>, cutMoof range: Range<Int>) -> [UInt32: Int] {
        var out: [UInt32: Int] = [:]
        for traf in boxes(reader, in: range) where traf.type == "traf" {
            var track: UInt32?
            for child in boxes(reader, in: traf.payload) {
                // Each after version and flags: a tfhd's track id, a trun's sample count.
                let field = reader.u32(at: child.payload.lowerBound + 4)
                if child.type == "tfhd" { track = field }
                if child.type == "trun", let track, let field { out[track, default: 0] += Int(field) }
            }
        }
        return out
    }

    /// The boxes in `range` of `reader`'s bytes, with the one the bytes end inside.
    private static func boxes<B>(_ reader: BigEndianReader<B>, in range: Range<Int>) -> [BoxHeader] {
        var walker = BoxWalker(reader, in: range)
        var out: [BoxHeader] = []
        while let box = walker.next() { out.append(box) }
        if case .cutShort(let last)? = walker.stop { out.append(last) }
        return out
    }
}

/// Per track of a fragmented MP4, the samples its fragments list and how
/// many of them lie whole in the file: a file cut inside its last fragment
/// (the `trun` sizes run past its end, its `mdat` is short, or the `moof`
/// itself is cut) is seen from the fragments' boxes before any packet is read.
public struct FragmentCoverage: Sendable, Equatable {
    public struct Track: Sendable, Equatable {
        public var trackID: UInt32
        public var listed: Int
        /// Of those, the samples whose bytes all lie within the file.
        public var inFile: Int

        public init(trackID: UInt32, listed: Int, inFile: Int) { (self.trackID, self.listed, self.inFile) = (trackID, listed, inFile) }
    }

    /// By track id: the fragments' samples, with those the `moov`'s tables list.
    public var tracks: [Track]
    /// Where the first whole `moof` this module cannot read starts
    /// (`Fragments.Walk.unreadableAt`): the counts stop before it.
    public var unreadableAt: Int?

    /// The coverage of a whole file's bytes; nil when they hold no movie fragment.
    public init?(_ b: UnsafeRawBufferPointer) {
        let size = Int64(b.count)
        var tracks: [Track] = []
        func add(_ id: UInt32, listed: Int, inFile: Int) {
            if let i = tracks.firstIndex(where: { $0.trackID == id }) {
                tracks[i].listed += listed
                tracks[i].inFile += inFile
            } else {
                tracks.append(Track(trackID: id, listed: listed, inFile: inFile))
            }
        }
        guard let walk = Fragments.walk(b, { id, samples in
            add(id, listed: samples.count, inFile: samples.reduce(0) { $0 + ($1.lies(within: size) ? 1 : 0) })
        }) else { return nil }
        for (id, count) in walk.declaredInCutFragment { add(id, listed: count, inFile: 0) }
        // The index's samples lie before the first fragment; a file cut in them has none.
        for (id, t) in walk.movieSamples where t.samples > 0 { add(id, listed: t.samples, inFile: t.lies(within: size) ? t.samples : 0) }
        self.tracks = tracks.sorted { $0.trackID < $1.trackID }
        unreadableAt = walk.unreadableAt
    }
}
