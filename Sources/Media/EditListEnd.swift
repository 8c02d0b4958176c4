import Glibc
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
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0,
              let top = try? MovieLayout.topLevelBoxes(fileSize: Int64(st.st_size), read: { FileBytes.read(fd, $0, $1) }),
              let moov = top.first(where: { $0.type == "moov" }), moov.size < 1 << 30,
              let bytes = FileBytes.read(fd, moov.start, Int(moov.size)) else { return false }
        guard let (mvhd, _) = child("mvhd", in: bytes, from: 8, to: bytes.count),
              let movieScale = timescale(of: bytes, fullBox: mvhd),
              let (trak, trakEnd) = nth("trak", track, in: bytes, from: 8, to: bytes.count),
              let (edts, edtsEnd) = child("edts", in: bytes, from: trak + 8, to: trakEnd),
              let (elst, _) = child("elst", in: bytes, from: edts + 8, to: edtsEnd),
              let (mdia, mdiaEnd) = child("mdia", in: bytes, from: trak + 8, to: trakEnd),
              let (mdhd, _) = child("mdhd", in: bytes, from: mdia + 8, to: mdiaEnd),
              let mediaScale = timescale(of: bytes, fullBox: mdhd) else { return false }
        let version = bytes[elst + 8]
        let count = Int(be(bytes, elst + 12, 4))
        let entrySize = version == 1 ? 20 : 12
        guard count >= 1, elst + 16 + count * entrySize <= bytes.count else { return false }
        let last = elst + 16 + (count - 1) * entrySize
        let fieldSize = version == 1 ? 8 : 4
        let duration = Int64(bitPattern: be(bytes, last, fieldSize))
        let mediaTime = fieldSize == 8 ? Int64(bitPattern: be(bytes, last + 8, 8)) : Int64(Int32(truncatingIfNeeded: be(bytes, last + 4, 4)))
        guard mediaTime >= 0 else { return false }
        // The shown end on the media timeline (samples from the first decoded one), in movie ticks, rounded
        // down: a frame that starts at the end is not shown.
        let shown = shownEnd - firstDTS - mediaTime
        guard shown > 0, mediaScale <= UInt32(Int32.max), movieScale <= UInt32(Int32.max),
              let ticks = rescale(shown, from: Rational(unchecked: 1, Int32(mediaScale)),
                                  to: Rational(unchecked: 1, Int32(movieScale)), rounding: .down),
              ticks > 0, ticks < duration else { return false }
        var field: [UInt8] = []
        put(UInt64(ticks), fieldSize, &field)
        return pwrite(fd, field, field.count, off_t(moov.start) + off_t(last)) == field.count
    }

    /// The first `type` box among the boxes in `bytes[from..<to]`: its start and end.
    private static func child(_ type: String, in bytes: [UInt8], from: Int, to: Int) -> (Int, Int)? {
        nth(type, 0, in: bytes, from: from, to: to)
    }

    /// The `n`th (0-based) `type` box among the boxes in `bytes[from..<to]`.
    private static func nth(_ type: String, _ n: Int, in bytes: [UInt8], from: Int, to: Int) -> (Int, Int)? {
        var at = from, seen = 0
        while at + 8 <= to {
            let size = Int(be(bytes, at, 4))
            guard size >= 8, at + size <= to else { return nil }
            if fourCC(bytes, at + 4) == type {
                if seen == n { return (at, at + size) }
                seen += 1
            }
            at += size
        }
        return nil
    }

    /// The time scale of an `mvhd` or `mdhd` box starting at `box`.
    private static func timescale(of bytes: [UInt8], fullBox box: Int) -> UInt32? {
        let at = box + 8 + (bytes[box + 8] == 1 ? 20 : 12)
        guard at + 4 <= bytes.count else { return nil }
        let scale = UInt32(be(bytes, at, 4))
        return scale > 0 ? scale : nil
    }
}
