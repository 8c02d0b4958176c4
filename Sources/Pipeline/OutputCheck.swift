import FileAccess
import Glibc
import ISOBMFF
import Media
import Sync

/// What one output track must hold: what its writer handed over.
public struct PlannedTrack: Sendable {
    public var type: MediaType
    public var codec: String
    /// The sample entry the muxer was told to write (`hvc1`), if one was set.
    public var tag: String?
    public var packets = 0
    public var bytes: Int64 = 0
    /// Whether the container writes the payloads as given (not Annex B
    /// made length-prefixed, not ADTS headers taken off, not E-AC-3 frames
    /// merged), so the written bytes must add up to `bytes`.
    public var bytesKept = true
    public var timeBase: Rational
    /// The first packet's DTS and the last one's, in `timeBase`.
    public var firstDTS: Int64?
    public var lastDTS: Int64?
    /// The first packet's PTS, and where the frames end (the latest PTS
    /// plus duration): the media's span as MP4/MOV muxers measure it.
    public var firstPTS: Int64?
    public var end: Int64?
    /// The earliest and latest PTS: the frames' span as Matroska stores it (no DTS).
    public var minPTS: Int64?
    public var maxPTS: Int64?
    /// The longest packet (ticks): how far a written duration may differ.
    public var longest: Int64 = 0
    /// Gathered past the muxer and added to the index after it (`CarriedTrack`).
    public var carried = false
    public var coverArt = false

    /// Notes a packet of `size` bytes handed to the muxer with output timing `t`.
    mutating func count(size: Int, timing t: PacketTiming) {
        // A packet of no bytes (an encoder's last, with only new extradata
        // for the header: FLAC's STREAMINFO) is taken by the muxer and not stored.
        guard size > 0 else { return }
        packets += 1
        bytes += Int64(size)
        guard let d = t.dts ?? t.pts, let p = t.pts ?? t.dts else { return }
        if firstDTS == nil { (firstDTS, firstPTS) = (d, p) }
        let duration = max(t.duration, 0)
        // A packet without a duration is given one by the muxer (from the
        // frame rate or the next packet): the step from the one before stands for it.
        if duration == 0, let lastDTS { longest = max(longest, d - lastDTS) }
        lastDTS = max(lastDTS ?? d, d)
        (minPTS, maxPTS) = (min(minPTS ?? p, p), max(maxPTS ?? p, p))
        end = max(end ?? .min, p &+ duration)
        longest = max(longest, duration)
    }

    /// The planned span from the first packet's presentation to the frames' end, in seconds.
    var seconds: Double? {
        guard let firstPTS, let end else { return nil }
        return Timestamp(end - firstPTS, timeBase).seconds
    }

    /// One packet's time, and a tick, in seconds: what a muxer's rounding may move an end by.
    var tolerance: Double { Timestamp(longest + 1, timeBase).seconds + 1e-6 }
}

/// The post-condition of every output: before it gets its name, the written
/// file is read back — its index from the boxes for MP4/MOV (no payload is
/// read), libavformat's demuxer for the others — and compared, track by
/// track, with what was handed to the muxer. A difference is a fault of
/// this program's; the output is refused (`MediaError.mismatchCode`) and
/// nothing is named.
public enum OutputCheck {
    /// Checks the file at `path` (called `name` in errors) against `plan`.
    public static func verify(path: String, name: String, container: Container, plan: [PlannedTrack],
                              cancellation: Cancellation) throws(MediaError) {
        let problem: (track: Int?, what: String)?
        if container.isISOBMFF {
            guard let index = SourceIndex(path: path) else { throw mismatch(name, nil, "its index could not be read back") }
            problem = difference(index, plan)
        } else {
            problem = try difference(readingPackets: path, container: container, plan: plan, cancellation: cancellation)
        }
        if let problem { throw mismatch(name, problem.track, problem.what) }
    }

    /// Checks that the MP4/MOV file at `path` (called `name` in errors)
    /// holds the tracks of `source` as they were: an index copied with its
    /// offsets moved, its tags edited, or its media data placed anew.
    public static func verify(path: String, name: String, sameTracksAs source: SourceIndex) throws(MediaError) {
        OutputFault.chosen?.spoilIndex(path)
        guard let index = SourceIndex(path: path) else { throw mismatch(name, nil, "its index could not be read back") }
        guard index.tracks.count == source.tracks.count else {
            throw mismatch(name, nil, "it holds \(index.tracks.count) track(s) where \(source.tracks.count) were copied")
        }
        for (j, (written, copied)) in zip(index.tracks, source.tracks).enumerated() {
            let entry = copied.sampleEntryType?.description ?? "?"
            guard written.handlerType == copied.handlerType, written.sampleEntryType == copied.sampleEntryType else {
                throw mismatch(name, j, "its '\(entry)' track became '\(written.sampleEntryType?.description ?? "none")'")
            }
            guard let w = written.samples, let c = copied.samples, w.samples == c.samples, w.bytes == c.bytes else {
                throw mismatch(name, j, "its '\(entry)' track holds \(written.samples?.samples ?? 0) sample(s) of \(written.samples?.bytes ?? 0) bytes where \(copied.samples?.samples ?? 0) of \(copied.samples?.bytes ?? 0) were copied")
            }
            guard written.mediaDuration == copied.mediaDuration, written.duration == copied.duration else {
                throw mismatch(name, j, "its '\(entry)' track's duration changed")
            }
        }
        guard index.movieSeconds == source.movieSeconds else { throw mismatch(name, nil, "its duration changed") }
    }

    static func mismatch(_ name: String, _ track: Int?, _ what: String) -> MediaError {
        MediaError(code: MediaError.mismatchCode, operation: "could not write", path: name, stream: track,
                   message: "the written file is not what was planned: \(what); it was not kept",
                   hint: "this is a fault of avtool's; please report it with the input")
    }

    /// The first way `index` differs from `plan`: muxed tracks come first in
    /// the plan's order, the muxer's own (a chapter or timecode track) may
    /// follow, carried tracks come last.
    static func difference(_ index: SourceIndex, _ plan: [PlannedTrack]) -> (track: Int?, what: String)? {
        // A track no packet was written to has no `trak`: libavformat's muxer
        // leaves out every track without samples (`mov_write_moov_tag`).
        let inIndex = plan.indices.filter { !(plan[$0].coverArt || plan[$0].packets == 0) }
        let muxed = inIndex.filter { !plan[$0].carried }, carried = inIndex.filter { plan[$0].carried }
        let tracks = index.tracks
        guard tracks.count >= inIndex.count else {
            return (nil, "it holds \(tracks.count) track(s) where \(inIndex.count) were written")
        }
        var pairs = Array(zip(muxed, tracks.prefix(muxed.count)))
        pairs += zip(carried, tracks.suffix(carried.count))
        for extra in tracks[muxed.count..<(tracks.count - carried.count)] {
            guard let h = extra.handlerType, ["tmcd", "text", "sbtl"].contains(h.description) else {
                return (nil, "it holds a track (\(extra.handlerType?.description ?? "no handler")) nothing was written to")
            }
        }
        for (j, track) in pairs {
            if let what = difference(track, plan[j]) { return (j, what) }
        }
        return coverArtDifference(index, plan: plan) ?? outlasting(index, plan: plan)
    }

    /// Cover art goes into the index (`covr`), not into a track: each
    /// picture written must be there, whole.
    static func coverArtDifference(_ index: SourceIndex, plan: [PlannedTrack]) -> (track: Int?, what: String)? {
        let pictures = plan.indices.filter { plan[$0].coverArt && plan[$0].packets > 0 }
        let found = index.coverArtSizes
        for j in pictures where !found.contains(Int(plan[j].bytes)) {
            return (j, "its cover art (\(plan[j].bytes) bytes of \(plan[j].codec)) is not in the index (\(found.count) picture(s) there)")
        }
        return nil
    }

    /// How `track` differs from what was written to it, if it does.
    static func difference(_ track: SourceTrack, _ p: PlannedTrack) -> String? {
        let handler = track.handlerType?.description ?? "none"
        let kind: MediaType = switch handler {
        case "vide": .video
        case "soun": .audio
        case "text", "sbtl", "subt", "clcp": .subtitle
        default: .data
        }
        guard kind == p.type || p.type == .data || p.type == .unknown else {
            return "a \(p.type.rawValue) track (\(p.codec)) was written as a '\(handler)' track"
        }
        if let tag = p.tag, let what = entryMismatch(track, tag: tag, codec: p.codec) { return what }
        guard let samples = track.samples else { return "its sample tables do not agree" }
        let pcm = p.codec.hasPrefix("pcm_")
        // The muxer merges E-AC-3 frames, and fills the time between subtitles with empty samples of its own.
        let counted = switch p.codec {
        case "eac3": samples.samples <= p.packets && (samples.samples > 0) == (p.packets > 0)
        case "mov_text": samples.samples >= p.packets && samples.bytes >= p.bytes
        default: pcm || samples.samples == p.packets
        }
        if !counted {
            return "it holds \(samples.samples) packet(s) of \(p.codec) where \(p.packets) were written"
        }
        if (p.bytesKept || pcm), p.codec != "mov_text", samples.bytes != p.bytes {
            return "it holds \(samples.bytes) bytes of \(p.codec) where \(p.bytes) were written"
        }
        if let planned = p.seconds, let scale = track.timescale, let d = track.mediaDuration {
            let written = Double(d) / Double(scale)
            if abs(written - planned) > p.tolerance {
                return "its \(p.codec) media lasts \(fixed(written, 3) + " s") where \(fixed(planned, 3) + " s") were written"
            }
        }
        return nil
    }

    /// How `track`'s sample descriptions differ from the entry `tag` the
    /// muxer was told to write, if they do: every description, as an exact
    /// cut's re-encoded HEVC has one of its own that must be the same kind
    /// (`hvc1`; `dvh1` with Dolby Vision).
    static func entryMismatch(_ track: SourceTrack, tag: String, codec: String) -> String? {
        let entries = track.sampleEntries.map(\.type.description)
        guard let entry = entries.first(where: { e in e != tag && ![("hvc1", "dvh1"), ("hev1", "dvhe")].contains { $0 == (tag, e) } })
        else { return nil }
        return "its \(codec) sample entry is '\(entry)' where '\(tag)' was set"
    }

    /// The file's duration against its content's: players show the movie's
    /// duration, which no data track may stretch past the video, audio and
    /// subtitles by more than a frame.
    static func outlasting(_ index: SourceIndex, plan: [PlannedTrack]) -> (track: Int?, what: String)? {
        guard let movie = index.movieSeconds, let scale = index.movieTimescale else { return nil }
        let content = index.tracks.filter { ["vide", "soun", "text", "sbtl", "subt"].contains($0.handlerType?.description ?? "") }
        guard let longest = content.compactMap({ $0.duration }).max() else { return nil }
        let frame = plan.filter { $0.type == .video || $0.type == .audio }.map(\.tolerance).max() ?? 0
        let contentSeconds = Double(longest) / Double(scale)
        guard movie > contentSeconds + frame + 1 / Double(scale) else { return nil }
        return (nil, "it lasts \(fixed(movie, 3) + " s") where its video, audio and text last \(fixed(contentSeconds, 3) + " s")")
    }

    /// For containers without a sample index: every packet read back.
    static func difference(readingPackets path: String, container: Container, plan: [PlannedTrack],
                           cancellation: Cancellation) throws(MediaError) -> (track: Int?, what: String)? {
        let file: InputFile
        do {
            file = try InputFile(path: path, cancellation: cancellation, packetsOnly: true, format: container.demuxer)
        } catch {
            return (nil, "it could not be read back (\(error.message))")
        }
        let streams = file.streams
        guard streams.count >= plan.count else {
            return (nil, "it holds \(streams.count) stream(s) where \(plan.count) were written")
        }
        var read = plan.indices.map { j in
            PlannedTrack(type: plan[j].type, codec: plan[j].codec, timeBase: streams[j].timeBase ?? plan[j].timeBase)
        }
        let packet = try Packet()
        while try file.read(into: packet) {
            defer { packet.unref() }
            let j = packet.streamIndex
            guard j < read.count else { continue }
            read[j].count(size: packet.size, timing: packet.timing)
        }
        for j in plan.indices where !plan[j].coverArt {
            if let what = difference(read: read[j], planned: plan[j], in: container) { return (j, what) }
        }
        return nil
    }

    /// How a stream read back differs from what was written to it.
    static func difference(read r: PlannedTrack, planned p: PlannedTrack, in container: Container) -> String? {
        // MPEG-TS keeps no packet boundaries (audio frames are gathered into
        // PES packets, a picture's layers may be read as two), rewrites
        // H.264, HEVC and AAC payloads and delays DTS: only what each stream holds is checked.
        if container.muxer == "mpegts" {
            guard (r.packets > 0) == (p.packets > 0) else {
                return "it holds \(r.packets) packet(s) of \(p.codec) where \(p.packets) were written"
            }
            return nil
        } else if r.packets != p.packets {
            return "it holds \(r.packets) packet(s) of \(p.codec) where \(p.packets) were written"
        } else if p.bytesKept, r.bytes != p.bytes {
            return "it holds \(r.bytes) bytes of \(p.codec) where \(p.bytes) were written"
        }
        // Durations of the last packet are not always stored, nor DTS: the span between the earliest and latest PTS.
        guard let pf = p.minPTS, let pl = p.maxPTS, let rf = r.minPTS, let rl = r.maxPTS else { return nil }
        let planned = Timestamp(pl - pf, p.timeBase).seconds, written = Timestamp(rl - rf, r.timeBase).seconds
        let slack = p.tolerance + Timestamp(1, r.timeBase).seconds
        if abs(written - planned) > slack {
            return "its \(p.codec) packets span \(fixed(written, 3) + " s") where \(fixed(planned, 3) + " s") were written"
        }
        return nil
    }
}

/// A wrong output made on purpose, for the tests of the post-condition
/// (`AVTOOL_TEST_FAULT`): the first track loses its third packet
/// (`drop-packet`) or every packet (`drop-track`), or is written from its
/// third packet on later than planned (`stretch`); or the cover art is
/// not written (`drop-cover-art`); or repair writes its first rebuilt PCM
/// chunk from one sample frame later in the input than it was found
/// (`shift-pcm`: as many bytes, not those it came from). What was planned
/// is counted as ever.
public enum OutputFault: String, Sendable {
    case dropPacket = "drop-packet", dropTrack = "drop-track", stretch, dropCoverArt = "drop-cover-art"
    case shiftPCM = "shift-pcm"

    /// Whether the fault falls on the `number`th track (from 0), planned as `plan`.
    func falls(on number: Int, _ plan: PlannedTrack) -> Bool {
        switch self {
        case .dropCoverArt: plan.coverArt
        case .shiftPCM: false  // (repair's own)
        default: number == 0
        }
    }

    public static let chosen: OutputFault? = getenv("AVTOOL_TEST_FAULT").flatMap { OutputFault(rawValue: String(cString: $0)) }

    /// Spoils an MP4/MOV file written without a muxer (a copied index): its
    /// first track is made a `free` box, whichever the fault (but repair's own).
    func spoilIndex(_ path: String) {
        guard self != .shiftPCM else { return }
        guard let file = try? OpenFile(path: path, O_RDWR), let head = try? file.read(1 << 20, at: 0), head.count > 8,
              let at = (4..<(head.count - 4)).first(where: { head[$0..<($0 + 4)] == Array("trak".utf8)[...] }) else { return }
        try? file.write(Array("free".utf8), at: Int64(at))
    }

    /// Spoils the `number`th packet (from 1) of a track whose longest packet
    /// so far lasts `longest`: true when it is not to be written at all.
    func spoils(_ timing: inout PacketTiming, number: Int, longest: Int64) -> Bool {
        switch self {
        case .dropPacket: return number == 3
        case .dropTrack, .dropCoverArt: return true
        case .shiftPCM: return false
        case .stretch:
            guard number >= 3 else { return false }
            let shift = 10 * max(longest, 1)
            timing.dts = timing.dts.map { $0 &+ shift }
            timing.pts = timing.pts.map { $0 &+ shift }
            return false
        }
    }
}
