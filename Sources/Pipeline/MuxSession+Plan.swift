import Media
import Sync

/// What a session knows of each track for the output's post-condition
/// (`OutputCheck`), and where tracks' edits end (data tracks at the
/// content's end, a track at the input's own edit end).
extension MuxSession {
    /// What `track` starts with for its post-condition: the muxer's stream's
    /// codec and tag, or a carried track's.
    func plan(track j: Int) -> PlannedTrack {
        guard let m = tracks[j].muxerIndex else {
            var p = PlannedTrack(type: .data, codec: tracks[j].input?.reportedCodec ?? "data", timeBase: timeBase(j))
            p.carried = true
            return p
        }
        let facts = output.facts(ofStream: m)
        var p = PlannedTrack(type: facts.type, codec: facts.codec, tag: facts.tag, timeBase: timeBase(j))
        // (Muxers write Annex B as lengths, merge E-AC-3 frames, filter AV1's OBUs.)
        p.bytesKept = (facts.recordHeader ?? true) && !["eac3", "av1"].contains(facts.codec)
        p.coverArt = tracks[j].input?.isAttachedPicture == true
        return p
    }

    /// What each track was handed, which the written file must hold.
    public var plans: [PlannedTrack] { tracks.map(\.plan) }

    /// The tracks nothing was written to, each named by the stream it is
    /// made from (and its file, where the tracks come from several). An
    /// attachment (a Matroska font) has no packets: the muxer writes it whole
    /// from its parameters.
    var emptyTracks: [String] {
        let files = Set(tracks.compactMap { $0.input?.file.path })
        return tracks.indices.filter { j in
            tracks[j].packets == 0 && tracks[j].plan.type != .attachment && tracks[j].input?.mediaType != .attachment
        }.map { j in
            guard let s = tracks[j].input else { return "track #\(j) (\(tracks[j].plan.type.rawValue) \(tracks[j].plan.codec))" }
            return "stream #\(s.index)" + (files.count > 1 ? " of '\(s.file.path)'" : "") + " (\(s.mediaType.rawValue) \(s.reportedCodec))"
        }
    }

    /// Where the output's video, audio and subtitles end (shown frames), in
    /// microseconds; nil without any.
    var contentEnd: Int64? {
        tracks.indices.filter { [.video, .audio, .subtitle].contains(tracks[$0].plan.type) && !tracks[$0].plan.coverArt }
            .compactMap { j -> Int64? in
                let t = tracks[j]
                // Where its edit ends when frames are hidden after the shown ones
                // (exact where packets carry no duration), else where they end.
                let end = t.editEnd ?? (t.shownEnd > .min ? t.shownEnd : t.end)
                return end > .min ? rescale(end, from: timeBase(j), to: .microseconds) : nil
            }.max()
    }

    /// `track`'s frames are shown until `end` (ticks of the source's time
    /// base, as packets are written): where the input's own edit list ends,
    /// inside its last shown frame. In an MP4/MOV output whose track ends
    /// with frames kept but not shown, its edit list ends there too, not
    /// where that frame ends or the first hidden one starts: it shows as
    /// long as the input did. Nil: the frames that follow end where they end.
    public func showUntil(track: Int, _ end: Int64?) {
        tracks[track].showUntil = end
    }

    /// Notes where the track's `showUntil` lies in output ticks, from its
    /// last shown frame so far (presented at `at`; `source`: its timing as
    /// read). Packets of reordered video may carry no duration: the place
    /// is found from the frame's start, not its end.
    func noteShownUntil(_ source: PacketTiming, at: Int64, track: Int) {
        guard let until = tracks[track].showUntil, at == tracks[track].lastShown, let pts = source.pts, pts < until,
              let timeline = tracks[track].timeline,
              let into = rescale(until - pts, from: timeline.source, to: timeline.target, rounding: .down) else { return }
        tracks[track].shownUntil = at + into
    }
}

extension MuxSession {
    /// Packets written to `track` so far: the number the next one's sample gets (from 0).
    public func packetCount(track: Int) -> Int { tracks[track].packets }

    /// `track`'s samples `samples` (numbered as `packetCount` numbers them)
    /// use a sample description of their own, the track's first with its
    /// codec record (`hvcC`) replaced by `record`; one description per
    /// record, added after the muxer's trailer. MP4/MOV files only.
    public func describe(track: Int, samples: Range<Int>, record: [UInt8]) throws(MediaError) {
        guard container.isISOBMFF, staged != nil, let m = tracks[track].muxerIndex else {
            throw MediaError.invalid("could not write", path: name, stream: track,
                                     message: "only an MP4/MOV file takes a second sample description")
        }
        descriptions[track, default: IndexCompletion.Descriptions(track: m)].add(samples, record: record)
    }
}
