/// Damage in the movie fragments of a fragmented MP4, read by the walk every
/// other reader of them uses (`Fragments.walk`, `MovieFragment.samples`):
/// libavformat would read such a fragment's samples from wherever its
/// boxes point, or drop them without a word.
extension IndexDamage {
    /// A run of one track fragment's samples whose bytes follow each other in the file.
    private struct Extent {
        var trackID: UInt32
        var start: Int64
        var end: Int64
    }

    /// What one fragment lists: its track ids and where its samples' bytes
    /// lie (not the samples: a long file's would all be held at once).
    private struct Listed {
        var number: Int
        var box: BoxHeader
        var tracks: [UInt32]
        var extents: [Extent]
        /// A sample whose place no offset can say (a base past 2^63), by track id.
        var unplaced: UInt32?
    }

    /// The first fragment, in file order, that holds boxes whose values
    /// cannot be read (a `trun` declaring more samples than it holds, more
    /// samples than a fragment may list, a `traf` without its `tfhd`), has
    /// a `traf` for a track the `moov` does not declare, or lists samples
    /// whose bytes run past the `mdat` they start in, lie outside every
    /// `mdat` or past the end of the file; said with its number and its
    /// `moof`'s place. Nil where none is, or the bytes hold no fragment. A
    /// file cut inside its last fragment is not damaged (its data runs into
    /// an `mdat` cut short, or the file ends with the `moof`):
    /// `FragmentCoverage` says what it lacks.
    static func fragments(in b: UnsafeRawBufferPointer) -> String? {
        var listed: [Listed] = []
        let walked = Fragments.walk(b, fragments: { fragment in
            var entry = Listed(number: fragment.number, box: fragment.box, tracks: fragment.tracks.map(\.trackID), extents: [], unplaced: nil)
            for (id, samples) in fragment.tracks {
                for sample in samples {
                    guard let offset = sample.offset, case let (end, false) = offset.addingReportingOverflow(Int64(sample.size)) else {
                        entry.unplaced = entry.unplaced ?? id
                        continue
                    }
                    if let last = entry.extents.last, last.trackID == id, last.end == offset {
                        entry.extents[entry.extents.count - 1].end = end
                    } else {
                        entry.extents.append(Extent(trackID: id, start: offset, end: end))
                    }
                }
            }
            listed.append(entry)
        })
        guard let walk = walked else { return nil }
        for entry in listed {
            if let damage = damage(entry, walk, fileSize: Int64(b.count)) { return damage }
        }
        if let at = walk.unreadableAt, let error = walk.unreadable {
            // A version this module does not read is no damage: libavformat reads what it can of it.
            if case .unknownVersion = error { return nil }
            return "its fragment \(walk.fragments + 1) ('moof' at byte \(at)) cannot be read: \(error)"
        }
        return nil
    }

    private static func damage(_ entry: Listed, _ walk: Fragments.Walk, fileSize: Int64) -> String? {
        let box = entry.box
        let fragment = "its fragment \(entry.number) ('moof' at byte \(box.start))"
        if !walk.movieTracks.isEmpty, let id = entry.tracks.first(where: { !walk.movieTracks.contains($0) }) {
            let declared = walk.movieTracks.map(String.init).joined(separator: ", ")
            return "\(fragment) has a 'traf' for track \(id), which the 'moov' does not declare (it declares \(declared))"
        }
        if let id = entry.unplaced {
            return "\(fragment): the 'trun' of track \(id) lists data past any offset of the file"
        }
        let media = (walk.boxes + (walk.endsInside.map { [$0] } ?? [])).filter { $0.type == "mdat" }
        // The file ends with this fragment's moof: cut before its media data (`FragmentCoverage`).
        let cutAfter = walk.endsInside == nil && walk.boxes.last == box
        for extent in entry.extents {
            let (s, e) = (extent.start, extent.end)
            let run = "\(fragment): the 'trun' of track \(extent.trackID) lists data at bytes \(s)–\(e)"
            // An mdat of size 0 runs to the end of the file, however far a recording got.
            let held = media.first { mdat in
                Int64(mdat.payload.lowerBound) <= s && (mdat.extendsToEnd || s <= Int64(mdat.end))
            }
            if let mdat = held {
                if mdat.extendsToEnd || e <= Int64(mdat.end) { continue }
                return "\(run), past the end of its 'mdat' (bytes \(mdat.payload.lowerBound)–\(mdat.end))"
            }
            if cutAfter && s >= Int64(box.end) { continue }
            if e > fileSize { return "\(run), past the end of the file (\(fileSize) bytes)" }
            return "\(run), outside every 'mdat'"
        }
        return nil
    }
}
