/// Why an assembly's timings cannot be placed.
public enum AssemblyPlanError: Error, Hashable, Sendable {
    /// A shift or position does not fit in 64 bits.
    case overflow
    /// The offset leaves the audio entirely before or after the video.
    case audioOutsideVideo
}

/// What an assembly needs of one segment's video, from the stream and its
/// first packet, in the segment's own time base.
public struct SegmentVideoTiming: Hashable, Sendable {
    public var timeBase: Rational
    /// The stream's start time, if the container gives one.
    public var startTime: Timestamp?
    /// The first packet's timing.
    public var first: PacketTiming
    /// Frames the decoder holds back (B-frames), for a first DTS the demuxer
    /// does not give (Matroska).
    public var reorderDelay: Int
    public var duration: Timestamp?
    /// Where its edit list ends (an MP4/MOV input's), which may cut its
    /// last shown frame short; nil where the frames' ends are the segment's.
    public var editEnd: Int64?
    /// Its last group is re-encoded up to `editEnd` (a trim's end inside a
    /// group of B-frames, `Splicer`).
    public var reencodedTail: Bool

    public init(timeBase: Rational, startTime: Timestamp?, first: PacketTiming, reorderDelay: Int = 0,
                duration: Timestamp? = nil, editEnd: Int64? = nil, reencodedTail: Bool = false) {
        self.timeBase = timeBase
        self.startTime = startTime
        self.first = first
        self.reorderDelay = reorderDelay
        self.duration = duration
        self.editEnd = editEnd
        self.reencodedTail = reencodedTail
    }
}

/// What an assembly needs of one segment's audio, in its own time base.
public struct SegmentAudioTiming: Hashable, Sendable {
    public var timeBase: Rational
    public var startTime: Timestamp?
    /// The first packet's PTS (`nil` if it has none, or no packet).
    public var firstPTS: Int64?
    public var duration: Timestamp?
    /// Where its edit list ends (an MP4/MOV input's): the samples after it,
    /// in its last packet, the input does not play.
    public var editEnd: Int64?

    public init(timeBase: Rational, startTime: Timestamp?, firstPTS: Int64?, duration: Timestamp? = nil,
                editEnd: Int64? = nil) {
        self.timeBase = timeBase
        self.startTime = startTime
        self.firstPTS = firstPTS
        self.duration = duration
        self.editEnd = editEnd
    }
}

/// Where one segment lands on the output timeline: the shifts that put its
/// video and audio there, and the mappings of its packets' times. Video
/// times are in the output's video time base (the first segment's), audio
/// positions in samples.
public struct SegmentPlacement: Hashable, Sendable {
    /// The segment's own video time base.
    public let timeBase: Rational
    /// The output's video time base.
    public let videoTimeBase: Rational
    public let sampleTimeBase: Rational
    /// Added to the segment's video times (on `videoTimeBase`).
    public let videoShift: Int64
    /// Where the segment's first frame lands (on `videoTimeBase`).
    public let joint: Int64
    /// The joint in samples.
    public let jointSamples: Int64
    /// Added to the segment's audio positions (samples).
    public let audioShift: Int64
    /// The audio's first sample in its own timeline (samples): the point a
    /// clock-drift correction keeps in place.
    public let audioAnchor: Int64
    /// The audio's first audible sample minus the video's first frame on
    /// the output timeline (samples).
    public let offsetSamples: Int64
    /// Where the segment's edit list ends (on `videoTimeBase`), nil without one.
    public let shownEnd: Int64?
    /// The segment's last group is re-encoded (`SegmentVideoTiming.reencodedTail`).
    public let reencodedTail: Bool
    /// Where the segment's audio edit list ends (output samples), nil without one.
    public let audioShownEnd: Int64?

    /// Audio alone (`AssemblyPlan.begin(audioOnly:)`) followed by another
    /// segment: the sample its audio is cut at, where its edit list ends
    /// before its last packet does (a memo trimmed at its end), so the
    /// samples the edit hides are not heard before the next segment's
    /// first. The last segment's stay in the output, hidden by its edit
    /// list; nil there and without an edit list.
    public func audioAloneLimit(followed: Bool) -> Int64? { followed ? audioShownEnd : nil }

    /// Audio alone: where the segment ends and the next one joins, its
    /// audio having ended at `audioEnd` (`audioAloneLimit`).
    public func audioAloneEnd(audioEnd: Int64, followed: Bool) -> Int64 {
        audioAloneLimit(followed: followed).map { min(audioEnd, $0) } ?? audioEnd
    }

    /// The video shift as a timestamp, for the track's timeline.
    public var videoShiftTimestamp: Timestamp { Timestamp(videoShift, videoTimeBase) }

    /// A video packet's timing on the output timeline (`videoTimeBase`).
    public func video(_ t: PacketTiming) -> PacketTiming {
        PacketTiming(pts: t.pts.flatMap(toOutput), dts: t.dts.flatMap(toOutput),
                     duration: rescale(t.duration, from: timeBase, to: videoTimeBase) ?? t.duration)
    }

    /// Where a frame (output timing, as `video` gives it) stops being shown
    /// on the output timeline: its end, or the segment's shown end where the
    /// input's edit list ends inside it (an iPhone's, 6.7 ms into its last
    /// frame): the next segment's first frame is shown from there.
    public func shownEnd(of t: PacketTiming) -> Int64? {
        guard let end = t.end else { return nil }
        return shownEnd.map { min(end, $0) } ?? end
    }

    /// The decode time the next joint must follow, for a frame (output
    /// timing) the segment writes; nil for none. Where the segment's last
    /// group is re-encoded, the stretch decodes its frames in the order they
    /// are shown, none later than shown and all after the frames copied
    /// before it (`ReencodedStretch.decodeTimes`): the presentation times
    /// of the frames shown bound every decode time written, and a hidden
    /// frame is not written.
    public func decodeTime(of t: PacketTiming, hidden: Bool) -> Int64? {
        guard reencodedTail else { return t.dts }
        return hidden ? nil : t.pts ?? t.dts
    }

    /// When a video packet is written: its output DTS (else PTS).
    public func videoTime(_ t: PacketTiming) -> Timestamp? {
        (t.dts ?? t.pts).flatMap(toOutput).map { Timestamp($0, videoTimeBase) }
    }

    /// An audio packet's duration (in `timeBase` of the audio) in output samples.
    public func audioSamples(duration: Int64, timeBase audio: Rational) -> Int64? {
        rescale(duration, from: audio, to: sampleTimeBase)
    }

    /// An audio PTS (in `timeBase` of the audio) as an output sample position.
    public func audioPosition(pts: Int64?, timeBase audio: Rational) -> Int64? {
        pts.flatMap { rescale($0, from: audio, to: sampleTimeBase) }.map { $0.plus(audioShift) }
    }

    /// A packet of another track that keeps its place against this
    /// segment's video (the camera's own audio): its output time.
    public func companionTime(_ t: PacketTiming, timeBase other: Rational) -> Timestamp? {
        (t.dts ?? t.pts).flatMap { rescale($0, from: other, to: videoTimeBase) }
            .map { Timestamp($0.plus(videoShift), videoTimeBase) }
    }

    /// The video shift in another track's time base (the companion's timeline).
    public func videoShift(in other: Rational) -> Timestamp {
        Timestamp(rescale(videoShift, from: videoTimeBase, to: other) ?? 0, other)
    }

    private func toOutput(_ v: Int64) -> Int64? {
        rescale(v, from: timeBase, to: videoTimeBase).map { $0.plus(videoShift) }
    }
}

/// The timing of merge, concat and fill-silence, decided from integer
/// timings: segments end to end (`SplicePlan`), each segment's audio placed
/// against its video (`SyncPlan`), the first DTS a demuxer does not give
/// inferred as `TrackTimeline` does, and the end policy (`SyncPlan.ends`):
/// where the audio is cut, where the video is cut, where silence pads.
public struct AssemblyPlan: Hashable, Sendable {
    /// The output's video time base (the first segment's).
    public let videoTimeBase: Rational
    public let sampleRate: Int32
    public let sampleTimeBase: Rational
    /// Where the output ends; `nil` leaves both tracks' ends as they are.
    /// Several segments always end at each segment's video.
    public let end: EndPolicy?
    private var splice: SplicePlan
    /// The first segment's joint and the latest video end so far (output).
    public private(set) var videoStart: Int64?
    public private(set) var videoEnd: Int64 = 0
    /// The first segment's offset (audio against video, samples).
    public private(set) var offsetSamples: Int64?
    /// The first segment's audio start against its video's by their own
    /// timestamps (an edit list's delay, a recorder's late start), in
    /// samples, when `--align start` set it aside; nil when it was kept or 0.
    public private(set) var startSetAsideSamples: Int64?

    /// `sampleRate` 0 (or less) when there is no audio.
    public init(videoTimeBase: Rational, sampleRate: Int32, end: EndPolicy?, segments: Int) {
        self.videoTimeBase = videoTimeBase
        self.sampleRate = max(sampleRate, 1)
        sampleTimeBase = Rational.perSecond(max(sampleRate, 1))!
        self.end = segments > 1 ? .video : end
        splice = SplicePlan(timeBase: videoTimeBase)
    }

    /// A plan for audio alone (fill-silence on an .m4a, concat of voice
    /// memos): times in samples on both time bases, both ends left as they
    /// are (each segment ends where its audio does).
    public init(audioOnlySampleRate sampleRate: Int32) {
        let tb = Rational.perSecond(max(sampleRate, 1))!
        self.init(videoTimeBase: tb, sampleRate: sampleRate, end: nil, segments: 1)
    }

    /// From the first joint to the latest video end; `nil` before any segment.
    public var duration: Timestamp? {
        videoStart.map { Timestamp(videoEnd.minus($0), videoTimeBase) }
    }

    /// Every segment's joint so far, on `videoTimeBase`.
    public var joints: [Int64] { splice.joints }

    /// Places the next segment: its first frame at the joint (later if its
    /// decode lead would reach back past the previous segment's last DTS),
    /// its audio by `alignment` and `offset` (positive: later).
    public mutating func begin(video: SegmentVideoTiming, audio: SegmentAudioTiming?, alignment: MergeAlignment,
                               offset: Timestamp = .zero(.microseconds)) throws(AssemblyPlanError) -> SegmentPlacement {
        let tb = video.timeBase
        // (A start that does not fit counts from 0: the track timeline then
        // refuses what cannot be written.)
        let firstShown = video.startTime?.rescaled(to: tb)?.value ?? video.first.pts ?? 0
        let start = rescale(firstShown, from: tb, to: videoTimeBase) ?? 0
        let firstDTS = (video.first.dts ?? TrackTimeline.inferredFirstDTS(
            pts: video.first.pts, duration: video.first.duration, reorderDelay: video.reorderDelay))
            .flatMap { rescale($0, from: tb, to: videoTimeBase) }
        let shift = splice.begin(videoStart: start, firstDTS: firstDTS)
        let joint = start.plus(shift)
        let jointInSamples = rescale(joint, from: videoTimeBase, to: sampleTimeBase)
        guard let jointSamples = jointInSamples ?? (audio == nil ? 0 : nil) else { throw .overflow }
        videoStart = videoStart ?? joint
        var audioShift: Int64 = 0, anchor: Int64 = 0, offsetSamples: Int64 = 0
        if let audio {
            let first = audio.firstPTS.flatMap { rescale($0, from: audio.timeBase, to: sampleTimeBase) }
            anchor = audio.startTime?.rescaled(to: sampleTimeBase)?.value ?? first ?? 0
            let videoLocal = video.startTime?.rescaled(to: sampleTimeBase)?.value
                ?? rescale(start, from: videoTimeBase, to: sampleTimeBase) ?? 0
            guard let sync = SyncPlan(videoStart: Timestamp(videoLocal, sampleTimeBase),
                                      audioStart: Timestamp(anchor, sampleTimeBase),
                                      alignment: alignment, offset: offset) else { throw .overflow }
            audioShift = sync.audioShift.value.plus(jointSamples)
            offsetSamples = sync.offset.value
            if alignment == .start, self.offsetSamples == nil, anchor != videoLocal {
                startSetAsideSamples = anchor.minus(videoLocal)
            }
            // An offset that leaves the audio entirely outside the video is a mistake.
            if let d = audio.duration?.rescaled(to: sampleTimeBase)?.value,
               let vd = video.duration?.rescaled(to: sampleTimeBase)?.value {
                let first = anchor.plus(audioShift)
                if first.plus(d) <= jointSamples || first >= jointSamples.plus(vd) { throw .audioOutsideVideo }
            }
        }
        self.offsetSamples = self.offsetSamples ?? (audio == nil ? nil : offsetSamples)
        let shownEnd = video.editEnd.flatMap { rescale($0, from: tb, to: videoTimeBase) }.map { $0.plus(shift) }
        let audioShownEnd = audio.flatMap { a in a.editEnd.flatMap { rescale($0, from: a.timeBase, to: sampleTimeBase) } }
            .map { $0.plus(audioShift) }
        return SegmentPlacement(timeBase: tb, videoTimeBase: videoTimeBase, sampleTimeBase: sampleTimeBase,
                                videoShift: shift, joint: joint, jointSamples: jointSamples, audioShift: audioShift,
                                audioAnchor: anchor, offsetSamples: offsetSamples, shownEnd: shownEnd,
                                reencodedTail: video.reencodedTail, audioShownEnd: audioShownEnd)
    }

    /// Places audio that has no video (a plan made by
    /// `init(audioOnlySampleRate:)`): its first sample (the stream's start,
    /// else its first PTS) lands at the joint, and every later packet keeps
    /// its distance from it. The first segment's joint is 0, as a first
    /// segment's video's is; a later segment's is where the one before
    /// ended (`end(_:videoEnd:)` with its audio's end), so a joint is
    /// sample-exact and no packet moves against its own segment. There is
    /// no offset (`offsetSamples` stays `nil`).
    public mutating func begin(audioOnly audio: SegmentAudioTiming) throws(AssemblyPlanError) -> SegmentPlacement {
        let first = audio.firstPTS.flatMap { rescale($0, from: audio.timeBase, to: sampleTimeBase) }
        let anchor = audio.startTime?.rescaled(to: sampleTimeBase)?.value ?? first ?? 0
        guard anchor != .min else { throw .overflow }
        let joint = videoStart == nil ? 0 : videoEnd
        let (shift, overflow) = joint.subtractingReportingOverflow(anchor)
        guard !overflow else { throw .overflow }
        videoStart = videoStart ?? 0
        let shownEnd = audio.editEnd.flatMap { rescale($0, from: audio.timeBase, to: sampleTimeBase) }.map { $0.plus(shift) }
        return SegmentPlacement(timeBase: videoTimeBase, videoTimeBase: videoTimeBase, sampleTimeBase: sampleTimeBase,
                                videoShift: 0, joint: joint, jointSamples: joint, audioShift: shift,
                                audioAnchor: anchor, offsetSamples: 0, shownEnd: nil, reencodedTail: false,
                                audioShownEnd: shownEnd)
    }

    /// Records a video packet's DTS on the output timeline (`videoTimeBase`,
    /// as `SegmentPlacement.video` gives it), so the next joint keeps DTS
    /// increasing.
    public mutating func wroteVideo(dts: Int64) { splice.wrote(dts: dts) }

    /// Ends the segment placed by `placement`, whose video ends (last
    /// frame's end) at `videoEnd` on the output timeline.
    public mutating func end(_ placement: SegmentPlacement, videoEnd end: Int64) {
        splice.end(videoEnd: end.minus(placement.videoShift))
        videoEnd = max(videoEnd, end)
    }

    // MARK: The end policy, through `SyncPlan.ends`

    /// When the video has ended at `videoEnd` (output, `videoTimeBase`) and
    /// audio goes on: the sample position where the audio is cut, if any.
    public func audioLimit(videoEnd: Int64) -> Int64? {
        guard let end, let at = ends(video: videoEnd, audioSamples: .max, policy: end).audio else { return nil }
        return at.rescaled(to: sampleTimeBase)?.value
    }

    /// `audioLimit(videoEnd:)` for the segment `placement` places: no later
    /// than where its audio's edit list ends. The samples an input's edit
    /// hides after its shown ones (in its last packet) stay hidden; the
    /// audio is padded from there to the video's end (`padEnd`).
    public func audioLimit(videoEnd: Int64, placement: SegmentPlacement) -> Int64? {
        guard let limit = audioLimit(videoEnd: videoEnd) else { return nil }
        return placement.audioShownEnd.map { min(limit, $0) } ?? limit
    }

    /// When the audio has ended at sample `audioEnd` and video goes on: the
    /// output time from which video packets are left out, if any.
    public func videoCut(audioEnd: Int64) -> Int64? {
        guard let end, let at = ends(video: .max, audioSamples: audioEnd, policy: end).video else { return nil }
        return at.rescaled(to: videoTimeBase)?.value
    }

    /// At a segment's end (video ended at `videoEnd`, audio at sample
    /// `audioEnd`): the sample position the audio ends at, padded with
    /// silence as far as it falls short; `nil` where the policy leaves it.
    public func padEnd(videoEnd: Int64, audioEnd: Int64) -> Int64? {
        guard let end, let at = ends(video: videoEnd, audioSamples: audioEnd, policy: end).audio else { return nil }
        return at.rescaled(to: sampleTimeBase)?.value
    }

    /// The samples `padEnd` adds after the audio's end; `nil` where the
    /// policy pads none.
    public func padLength(videoEnd: Int64, audioEnd: Int64) -> Int64? {
        guard let target = padEnd(videoEnd: videoEnd, audioEnd: audioEnd), target > audioEnd else { return nil }
        return target.minus(audioEnd)
    }

    /// A video time (output) in samples.
    public func samples(atVideoTime t: Int64) -> Int64? { rescale(t, from: videoTimeBase, to: sampleTimeBase) }

    private func ends(video: Int64, audioSamples: Int64, policy: EndPolicy) -> (audio: Timestamp?, video: Timestamp?) {
        SyncPlan.ends(video: Timestamp(video, videoTimeBase), audio: Timestamp(audioSamples, sampleTimeBase), policy: policy)
    }
}

extension Duration {
    /// Whole samples at `rate` (nearest; saturating, a rate below 1 read as 1).
    public func samples(rate: Int32) -> Int64 {
        Timestamp(self).rescaled(to: Rational(unchecked: 1, max(rate, 1)))?.value ?? (self < .zero ? .min : .max)
    }
}

extension Timestamp {
    /// A duration in whole microseconds (rounded to nearest, saturating).
    public init(_ duration: Duration) {
        let (s, atto) = duration.components
        let micro = (atto + (atto >= 0 ? 500_000_000_000 : -500_000_000_000)) / 1_000_000_000_000
        let (m, o1) = s.multipliedReportingOverflow(by: 1_000_000)
        self.init(o1 ? (s < 0 ? .min : .max) : m.plus(micro), .microseconds)
    }
}
