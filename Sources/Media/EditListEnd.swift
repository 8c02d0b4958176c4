import ISOBMFF
import Sync

/// Ends a written MP4/MOV track's edit list where its shown frames end.
///
/// libavformat's MP4 muxer ends a track's edit where its last frame in
/// presentation ends, whether or not the input showed that frame: frames an
/// input's edit list hid at its end (flagged discard by the demuxer, and
/// needed as references by frames shown before them) would be shown by the
/// output. This shortens the last entry of the track's `elst` in the
/// written index (in the one pass that edits it, `IndexCompletion.complete`),
/// before the file takes its name, so the output shows what the input showed.
public struct EditListEnd: Sendable, Equatable {
    /// The track, 0-based in `trak` order.
    public var track: Int
    /// A presentation time in the track's media time scale on the muxer's
    /// timeline, whose first sample was decoded at `firstDTS`.
    public var shownEnd: Int64
    public var firstDTS: Int64

    public init(track: Int, shownEnd: Int64, firstDTS: Int64) {
        (self.track, self.shownEnd, self.firstDTS) = (track, shownEnd, firstDTS)
    }

    /// The last edit of the track in `moov` (the index, parsed) ended at
    /// `shownEnd`. Returns whether it was shortened; false where the index
    /// has no such edit, it already ends there, or ending it would change
    /// the index's size (a field moved to version 1: the index is edited in
    /// place when nothing else changes it).
    @discardableResult
    public func apply(to moov: inout BoxNode) -> Bool {
        guard var edit = LastEdit(moov, track: track), edit.mediaTime >= 0 else { return false }
        // The shown end on the media timeline (samples from the first decoded one), in movie ticks, rounded
        // down: a frame that starts at the end is not shown.
        let shown = shownEnd - firstDTS - edit.mediaTime
        guard shown > 0, edit.mediaScale <= UInt32(Int32.max), edit.movieScale <= UInt32(Int32.max),
              let ticks = rescale(shown, from: Rational(unchecked: 1, Int32(edit.mediaScale)),
                                  to: Rational(unchecked: 1, Int32(edit.movieScale)), rounding: .down),
              ticks > 0, ticks < edit.duration else { return false }
        edit.shorten(to: UInt64(ticks))
        guard edit.moov.encodedSize == moov.encodedSize else { return false }
        moov = edit.moov
        return true
    }
}

/// The last entry of a track's edit list (`elst`) in an index (`moov`),
/// with the time scales it counts in and the headers whose durations follow it.
private struct LastEdit {
    /// The index, parsed (`BoxNode.index`: encoded, the bytes it was read from).
    var moov: BoxNode
    /// The track's place among the `trak` boxes.
    let track: Int
    var list: EditList
    var movie: MovieHeader
    /// Every track's header, in `trak` order.
    var tracks: [TrackHeader]
    let mediaScale: UInt32

    var movieScale: UInt32 { movie.timescale }
    /// In the movie's time scale.
    var duration: Int64 { Int64(bitPattern: list.entries[list.entries.count - 1].segmentDuration) }
    /// Where the edit starts on the media timeline, in the media's time scale.
    var mediaTime: Int64 { list.entries[list.entries.count - 1].mediaTime }

    /// The last edit of track `track` (0-based, in `trak` order) of the index `moov`.
    init?(_ moov: BoxNode, track: Int) {
        guard moov.type == "moov", let movie = moov.child("mvhd").flatMap({ try? MovieHeader($0) }), movie.timescale > 0
        else { return nil }
        let traks = (moov.children ?? []).filter { $0.type == "trak" }
        let headers = traks.compactMap { $0.child("tkhd").flatMap { try? TrackHeader($0) } }
        guard track < traks.count, headers.count == traks.count,
              let list = traks[track].descendant(["edts", "elst"]).flatMap({ try? EditList($0) }), !list.entries.isEmpty,
              let media = traks[track].descendant(["mdia", "mdhd"]).flatMap({ try? MediaHeader($0) }), media.timescale > 0
        else { return nil }
        (self.moov, self.track, self.list, self.movie, tracks, mediaScale) = (moov, track, list, movie, headers, media.timescale)
    }

    /// The edit ended after `ticks`, then the track's duration (its edits'
    /// sum) and the movie's (its longest track's) by as much, so players and
    /// probes that read the headers see the same length as those that read the edits.
    mutating func shorten(to ticks: UInt64) {
        let shortened = list.entries[list.entries.count - 1].segmentDuration - ticks
        list.entries[list.entries.count - 1].segmentDuration = ticks
        tracks[track].duration -= min(tracks[track].duration, shortened)
        moov.modify(["trak", "edts", "elst"], nth: track) { $0.set(list) }
        moov.modify(["trak", "tkhd"], nth: track) { $0.set(tracks[track]) }
        if let longest = tracks.map(\.duration).max(), longest < movie.duration {
            movie.duration = longest
            moov.modify(["mvhd"]) { $0.set(movie) }
        }
    }
}
