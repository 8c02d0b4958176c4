import FileNames
import Glibc
import ISOBMFF
import Sync

/// Ends a written MP4/MOV track's edit list where its shown frames end.
///
/// libavformat's MP4 muxer ends a track's edit where its last frame in
/// presentation ends, whether or not the input showed that frame: frames an
/// input's edit list hid at its end (flagged discard by the demuxer, and
/// needed as references by frames shown before them) would be shown by the
/// output. This shortens the last entry of the track's `elst` in place, in
/// the written file before it takes its name, so the output shows what the
/// input showed.
public enum EditListEnd {
    /// In the file at `path`, track `track` (0-based, in `trak` order):
    /// the last edit ends at `shownEnd`, a presentation time in the track's
    /// media time scale on the muxer's timeline, whose first sample was
    /// decoded at `firstDTS`. Returns whether the edit was shortened; false
    /// where the file has no such edit or it already ends there.
    @discardableResult
    public static func end(path: String, track: Int, shownEnd: Int64, firstDTS: Int64) -> Bool {
        let fd = FileSystem.open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0,
              let top = try? MovieLayout.topLevelBoxes(fileSize: Int64(st.st_size), read: { FileBytes.read(fd, $0, $1) }),
              let moov = top.first(where: { $0.type == "moov" }), moov.size < 1 << 30,
              let bytes = FileBytes.read(fd, moov.start, Int(moov.size)),
              let edit = LastEdit(BigEndianReader(bytes), track: track), edit.mediaTime >= 0 else { return false }
        // The shown end on the media timeline (samples from the first decoded one), in movie ticks, rounded
        // down: a frame that starts at the end is not shown.
        let shown = shownEnd - firstDTS - edit.mediaTime
        guard shown > 0, edit.mediaScale <= UInt32(Int32.max), edit.movieScale <= UInt32(Int32.max),
              let ticks = rescale(shown, from: Rational(unchecked: 1, Int32(edit.mediaScale)),
                                  to: Rational(unchecked: 1, Int32(edit.movieScale)), rounding: .down),
              ticks > 0, ticks < edit.duration else { return false }
        // The edit, then the track's duration (its edits' sum) and the
        // movie's (its longest track's) by as much, so players and probes
        // that read the headers see the same length as those that read the edits.
        let shortened = edit.duration - ticks
        var writes = [(edit.durationOffset, edit.fieldSize, UInt64(ticks))]
        var trackDurations = edit.trackDurations
        if let t = edit.trackDuration {
            trackDurations[track] = max(trackDurations[track] - shortened, 0)
            writes.append((t.offset, t.size, UInt64(trackDurations[track])))
            if let m = edit.movieDuration, let longest = trackDurations.max(), longest < m.value {
                writes.append((m.offset, m.size, UInt64(longest)))
            }
        }
        for (offset, size, value) in writes {
            var field: [UInt8] = []
            put(value, size, &field)
            guard pwrite(fd, field, field.count, off_t(moov.start) + off_t(offset)) == field.count else { return false }
        }
        return true
    }
}

/// A duration field in an index: where it is, its size (4 or 8) and value.
private struct DurationField {
    var offset: Int
    var size: Int
    var value: Int64

    /// The duration of an `mvhd` (after its time scale) or a `tkhd` (after its track id and a reserved word).
    init?(_ box: BoxHeader, afterVersion0 v0: Int, version1 v1: Int, in moov: BigEndianReader<[UInt8]>) {
        guard let version = moov.u8(at: box.payload.lowerBound) else { return nil }
        size = version == 1 ? 8 : 4
        offset = box.payload.lowerBound + 4 + (version == 1 ? v1 : v0)
        guard let v = moov.uint(at: offset, size: size) else { return nil }
        value = Int64(bitPattern: v)
    }
}

/// The last entry of a track's edit list (`elst`) in an index (`moov`),
/// with the time scales it counts in.
private struct LastEdit {
    /// Where the entry's duration lies in the index, and its size (4 or 8).
    var durationOffset: Int
    var fieldSize: Int
    /// In the movie's time scale.
    var duration: Int64
    /// Where the edit starts on the media timeline, in the media's time scale.
    var mediaTime: Int64
    var movieScale: UInt32
    var mediaScale: UInt32
    /// The track's duration in its `tkhd`, the movie's in `mvhd`, and every track's (movie time scale).
    var trackDuration: DurationField?
    var movieDuration: DurationField?
    var trackDurations: [Int64] = []

    /// The last edit of track `track` (0-based, in `trak` order) of the index `moov` (its bytes, header included).
    init?(_ moov: BigEndianReader<[UInt8]>, track: Int) {
        var top = BoxWalker(moov)
        guard let movie = top.next("moov"),
              let mvhd = Self.child("mvhd", of: movie, in: moov),
              let movieScale = Self.timescale(of: mvhd, in: moov),
              let trak = Self.child("trak", track, of: movie, in: moov),
              let edts = Self.child("edts", of: trak, in: moov),
              let elst = Self.child("elst", of: edts, in: moov),
              let mdia = Self.child("mdia", of: trak, in: moov),
              let mdhd = Self.child("mdhd", of: mdia, in: moov),
              let mediaScale = Self.timescale(of: mdhd, in: moov),
              let version = moov.u8(at: elst.payload.lowerBound),
              let count = moov.length(at: elst.payload.lowerBound + 4, size: 4) else { return nil }
        let entrySize = version == 1 ? 20 : 12
        let entries = elst.payload.lowerBound + 8
        guard count >= 1, entries + count * entrySize <= moov.count else { return nil }
        durationOffset = entries + (count - 1) * entrySize
        fieldSize = version == 1 ? 8 : 4
        guard let duration = moov.uint(at: durationOffset, size: fieldSize),
              let time = moov.uint(at: durationOffset + fieldSize, size: fieldSize) else { return nil }
        self.duration = Int64(bitPattern: duration)
        mediaTime = fieldSize == 8 ? Int64(bitPattern: time) : Int64(Int32(truncatingIfNeeded: time))
        self.movieScale = movieScale
        self.mediaScale = mediaScale
        movieDuration = DurationField(mvhd, afterVersion0: 12, version1: 20, in: moov)
        var n = 0
        while let t = Self.child("trak", n, of: movie, in: moov) {
            let d = Self.child("tkhd", of: t, in: moov).flatMap { DurationField($0, afterVersion0: 16, version1: 24, in: moov) }
            if n == track { trackDuration = d }
            trackDurations.append(d?.value ?? 0)
            n += 1
        }
    }

    /// The `n`th (0-based) `type` box among the children of `box`.
    private static func child(_ type: FourCC, _ n: Int = 0, of box: BoxHeader, in moov: BigEndianReader<[UInt8]>) -> BoxHeader? {
        var walker = BoxWalker(moov, in: box.payload)
        for _ in 0..<n { guard walker.next(type) != nil else { return nil } }
        return walker.next(type)
    }

    /// The time scale of an `mvhd` or `mdhd` box.
    private static func timescale(of box: BoxHeader, in moov: BigEndianReader<[UInt8]>) -> UInt32? {
        guard let version = moov.u8(at: box.payload.lowerBound),
              let scale = moov.u32(at: box.payload.lowerBound + (version == 1 ? 20 : 12)), scale > 0 else { return nil }
        return scale
    }
}
