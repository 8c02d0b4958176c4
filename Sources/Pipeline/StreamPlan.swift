import Media
import Sync

public struct DroppedStream: Sendable, Codable {
    public let index: Int
    public let type: MediaType
    public let codec: String
    public let reason: String
}

/// Muxer options every verb uses: faststart for MP4/MOV/M4A when asked, and
/// for MP4/MOV with audio a movie timescale of the audio's sample rate. Edit
/// lists (a track starting late, AAC priming) are written in the movie
/// timescale; movenc's default of 1/1000 s would move audio by up to a
/// millisecond (48 samples), the sample rate keeps it on the sample.
/// `metadataKeys` writes the file's tags as QuickTime metadata keys (`mdta`:
/// any key, as phones write them) instead of the fixed `udta`/iTunes set.
/// `reservedIndex`: bytes kept free after the header for the index (movenc's
/// `moov_size`), which is then written there at the end, in one pass,
/// instead of faststart's second pass over the whole file.
package func muxerOptions(_ container: Container, faststart: Bool, audioSampleRate: Int32? = nil,
                          metadataKeys: Bool = false, reservedIndex: Int? = nil) -> [(String, String)] {
    var options: [(String, String)] = []
    guard container.isISOBMFF else { return options }
    if let reservedIndex { options.append(("moov_size", String(reservedIndex))) }
    let flags = (faststart && reservedIndex == nil ? "+faststart" : "") + (metadataKeys ? "+use_metadata_tags" : "")
    if !flags.isEmpty { options.append(("movflags", flags)) }
    if let rate = audioSampleRate, rate >= 1000 { options.append(("movie_timescale", String(rate))) }
    return options
}

extension MuxSession {
    /// One timeline per kept stream (track j reads `kept[j]`), all with the
    /// same start shift. A stream in `retimed` (input index → time base)
    /// gets its packets from an encoder, see `beginTimeline`.
    public func beginTimelines(_ kept: [InputStream], start: StartPolicy, repair: TimestampRepair,
                               retimed: [Int: Rational] = [:]) throws(MediaError) {
        let shift = start.shift(earliestStart: kept.compactMap(\.startTime).min())
        for (j, stream) in kept.enumerated() {
            try beginTimeline(track: j, stream: stream, retimedIn: retimed[stream.index], shift: shift, repair: repair)
        }
    }
}

package func resolveContainer(_ explicit: Container?, output: String) throws(MediaError) -> Container {
    if let explicit {
        if let w = explicit.extensionMismatch(output) { Container.misnamedReporter.withLock { $0 }?(w) }
        return explicit
    }
    guard let c = Container(path: output) else {
        if let other = Container.otherFormat(of: output) {
            throw MediaError.invalid("could not choose a container for", path: output,
                                     message: "avtool does not write \(other) files (it writes \(Container.knownNames))",
                                     remedy: .nameContainer)
        }
        throw MediaError.invalid("could not choose a container for", path: output,
                         message: "unknown or missing extension (known: \(Container.knownNames))",
                         remedy: .nameContainer)
    }
    return c
}

/// What becomes of a data track (telemetry, timed metadata, a timecode) in
/// an output, for every verb: kept where the container holds it (into MP4/MOV
/// carried by this program when the muxer cannot write it: `CarriedTrack`);
/// a QuickTime timecode track written again from the video's `timecode`
/// tag, a chapter track from the file's chapters; where the container
/// cannot hold it, left out with a warning that names it — the job goes ahead.
package enum DataTrackFate: Equatable {
    case kept(carried: Bool)
    /// Not copied: the output's muxer writes it again from what libavformat
    /// read it as (`codec`: what the report calls the stream).
    case writtenAgain(codec: String, reason: String)
    case notHeld(reason: String, warning: String)

    /// `videoKept`: whether the output keeps a video stream of the input (whose tag may hold the timecode).
    package init(_ s: InputStream, container: Container, videoKept: (InputStream) -> Bool) {
        // libavformat reads a QuickTime timecode track's start as the video
        // stream's `timecode` tag, from which the MP4/MOV muxer writes a
        // timecode track again; elsewhere the tag is what holds it.
        if s.isTimecodeTrack, let tc = s.tag("timecode"),
           s.file.streams.contains(where: { videoKept($0) && $0.tag("timecode") == tc }) {
            self = .writtenAgain(codec: "tmcd", reason: container.isISOBMFF ? "timecode \(tc): written again from the video's timecode tag"
                                                                           : "timecode \(tc): kept as the video's timecode tag")
        } else if s.isChapterTrack, container.isISOBMFF || ["matroska", "webm"].contains(container.muxer) {
            // Its samples are the file's chapters, never packets: the MP4/MOV
            // muxer writes a chapter track again from them (a cut's clipped to
            // its range), Matroska its chapters. Kept as a track, it would be empty.
            let chapters = "chapters: \(s.file.chapterCount) chapter(s)"
            self = .writtenAgain(codec: s.codecTag ?? s.codecName,
                                 reason: container.isISOBMFF ? "\(chapters) written again as a chapter track" : "\(chapters) kept as the file's chapters")
        } else if container.isISOBMFF && CarriedTrack.carries(s) {
            self = .kept(carried: true)
        } else if container.canHold(s) != false {
            self = .kept(carried: false)
        } else {
            self = .notHeld(reason: "\(container.name) cannot hold it",
                            warning: "stream #\(s.index): \(s.mediaType == .subtitle ? "subtitle" : "data") track \(s.dataKind) is not kept (\(container.name) cannot hold it\(container.isISOBMFF ? "" : "; mp4 and mov can"))")
        }
    }
}

/// What of a copied video's properties `container` cannot hold, said:
/// spatial video's second view (its `lhvC` layer configuration, MP4/MOV
/// only) and the Dolby Vision record (MP4/MOV and Matroska).
package func videoPropertyWarnings(_ s: InputStream, container: Container) -> [String] {
    guard s.mediaType == .video, !s.isAttachedPicture, !container.isISOBMFF else { return [] }
    var warnings: [String] = []
    if let views = s.file.sourceIndex?.track(id: s.id)?.views, views.layers != nil {
        warnings.append("stream #\(s.index): spatial video's second view is not kept (\(container.name) cannot hold its layer configuration): it plays as flat video; use mp4 or mov to keep it")
    }
    if let dv = s.dolbyVision, container.muxer != "matroska" {
        warnings.append("stream #\(s.index): Dolby Vision (profile \(dv.profile)) is not kept (\(container.name) cannot hold its configuration); use mp4, mov or mkv to keep it")
    }
    return warnings
}

package struct StreamPlan {
    package var kept: [InputStream] = []
    package var dropped: [DroppedStream] = []
    package var warnings: [String] = []
}

/// Keeps the selected streams; a selected stream the container cannot hold,
/// or one without a valid time base, is an error naming it. Streams for
/// which `reencoded` is true are checked by their encoder instead.
/// `audioRemedy`: what the refusal of audio the container cannot hold
/// suggests, where the verb has its own way (remux's `--audio aac`).
/// `operation` begins each error ("could not transcode"): the verb the user ran.
package func planStreams(_ input: InputFile, container: Container, selection: StreamSelection,
                         operation: String = "could not remux", audioRemedy: Remedy? = nil,
                         reencoded: (InputStream) -> Bool = { _ in false }) throws(MediaError) -> StreamPlan {
    var plan = StreamPlan()
    for s in input.streams {
        guard selection.keeps(s) else {
            plan.dropped.append(DroppedStream(index: s.index, type: s.mediaType, codec: s.codecName,
                                              reason: "not selected"))
            continue
        }
        // An attachment is a file, not media: it goes where it can, and
        // where it cannot it is left out with a warning that names it.
        if s.mediaType == .attachment, container.canHold(s) != true {
            let name = s.attachmentName
            plan.dropped.append(DroppedStream(index: s.index, type: s.mediaType, codec: s.codecName,
                                              reason: "\(container.name) cannot hold attachments"))
            plan.warnings.append("stream #\(s.index): attachment \(name) is not kept (\(container.name) cannot hold attachments; mkv can)")
            continue
        }
        if StreamSelection.kind(of: s) == .data {
            switch DataTrackFate(s, container: container, videoKept: { $0.mediaType == .video && selection.keeps($0) }) {
            case .writtenAgain(let codec, let reason):
                plan.dropped.append(DroppedStream(index: s.index, type: s.mediaType, codec: codec, reason: reason))
                continue
            case .notHeld(let reason, let warning):
                plan.dropped.append(DroppedStream(index: s.index, type: s.mediaType, codec: s.codecTag ?? s.codecName,
                                                  reason: reason))
                plan.warnings.append(warning)
                continue
            case .kept(carried: true):
                plan.kept.append(s)
                continue
            case .kept(carried: false):
                break
            }
        }
        guard s.timeBase != nil else {
            throw MediaError.invalid(operation, path: input.path, stream: s.index,
                             message: "the stream has no valid time base")
        }
        if !reencoded(s), container.canHold(s) == false {
            let kind = StreamSelection.kind(of: s)
            let what = s.isAttachedPicture ? "cover art" : "\(s.mediaType.rawValue) codec '\(s.codecName)'"
            // WebM holds VP8, VP9, AV1, Vorbis and Opus, none of which avtool encodes: no transcode leads there.
            let remedy: Remedy = kind != .audio && kind != .video ? .drop(kind)
                : container.muxer == "webm" ? .otherContainerOrDrop(kind)
                : container.muxer == "ipod" && kind == .video ? .mp4HoldsIt(kind)
                : kind == .audio ? audioRemedy ?? .convertOrDrop(kind) : .convertOrDrop(kind)
            throw MediaError.invalid(operation, path: input.path, stream: s.index,
                                     message: container.muxer == "webm"
                                        ? "webm cannot hold \(what) (WebM holds VP8, VP9 and AV1 video, Vorbis and Opus audio)"
                                        : "\(container.name) cannot hold \(what)",
                                     remedy: remedy)
        }
        // libavformat 5.1 writes the display matrix only in MP4/MOV.
        if let r = s.rotation, r != 0, !container.isISOBMFF {
            plan.warnings.append("stream #\(s.index): rotation \(Int(r))° is not kept (\(container.name) cannot store it); use mp4 or mov to keep it")
        }
        if !reencoded(s) { plan.warnings += videoPropertyWarnings(s, container: container) }
        plan.kept.append(s)
    }
    guard !plan.kept.isEmpty else {
        throw MediaError.invalid(operation, path: input.path,
                         message: "no streams left to write")
    }
    return plan
}

package func timestampError(_ error: TimelineError, input: String, stream: Int) -> MediaError {
    MediaError.invalid("bad timestamps in", path: input, stream: stream,
               message: error.description, remedy: .repairTimestamps)
}
