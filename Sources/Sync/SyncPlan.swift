/// How a separately recorded audio track is placed against the video.
public enum MergeAlignment: String, Sendable, Codable, CaseIterable {
    /// Each file's first frame / first audible sample is t = 0, as two
    /// recordings started together.
    case start
    /// The files share a clock (e.g. the recorder stamped both from one
    /// base): their own timestamps are kept, relative to the video's start.
    case timestamps
}

/// Where the output ends.
public enum EndPolicy: String, Sendable, Codable, CaseIterable {
    /// As long as the video: short audio is padded with silence to the
    /// video's end, long audio is cut there.
    case video
    /// At the earlier end: the longer track is cut.
    case shortest
    /// At the later end: short audio is padded to the video's end; long
    /// audio is kept whole.
    case longest
}

/// The shifts that put a video track and an audio track on one output
/// timeline whose zero is the video's first frame.
public struct SyncPlan: Hashable, Sendable {
    /// Added to every video timestamp.
    public let videoShift: Timestamp
    /// Added to every audio timestamp.
    public let audioShift: Timestamp
    /// The audio's first audible sample minus the video's first frame, on
    /// the output timeline (positive: audio starts later).
    public let offset: Timestamp

    /// - Parameters:
    ///   - videoStart: the first frame's presentation time.
    ///   - audioStart: the first audible sample's time (after any priming).
    ///   - offset: moves the audio later (positive) or earlier (negative).
    /// `nil` when a shift does not fit in 64 bits.
    public init?(videoStart: Timestamp, audioStart: Timestamp, alignment: MergeAlignment,
                 offset: Timestamp = .zero(.microseconds)) {
        let videoTB = videoStart.timeBase, audioTB = audioStart.timeBase
        // Video's first frame is zero in every mode.
        guard case let (videoShift, false) = Int64(0).subtractingReportingOverflow(videoStart.value) else { return nil }
        self.videoShift = Timestamp(videoShift, videoTB)
        let base: Int64
        switch alignment {
        case .start:
            guard case let (b, false) = Int64(0).subtractingReportingOverflow(audioStart.value) else { return nil }
            base = b
        case .timestamps:
            guard let v = videoStart.rescaled(to: audioTB),
                  case let (b, false) = Int64(0).subtractingReportingOverflow(v.value) else { return nil }
            base = b
        }
        guard let o = offset.rescaled(to: audioTB),
              case let (shift, false) = base.addingReportingOverflow(o.value),
              case let (start, false) = audioStart.value.addingReportingOverflow(shift) else { return nil }
        audioShift = Timestamp(shift, audioTB)
        self.offset = Timestamp(start, audioTB)
    }

    /// Where the audio must end and where the video is cut, on the output
    /// timeline, given both tracks' ends there.
    public static func ends(video: Timestamp, audio: Timestamp, policy: EndPolicy) -> (audio: Timestamp?, video: Timestamp?) {
        switch policy {
        case .video: return (video, nil)
        case .shortest: return audio < video ? (nil, audio) : (video, nil)
        case .longest: return audio < video ? (video, nil) : (nil, nil)
        }
    }
}

/// Segments end to end: each segment's video starts where the previous
/// one's video ended (its last frame's end), so no frame overlaps and no gap
/// opens; audio follows its segment's video shift, so A/V sync restarts at
/// every joint and cannot drift across them.
public struct SplicePlan: Hashable, Sendable {
    public let timeBase: Rational
    /// Where the next segment starts on the output timeline.
    public private(set) var joint: Int64 = 0
    /// Output time of every joint so far (the first is 0).
    public private(set) var joints: [Int64] = []
    /// The last output DTS of the video so far, to keep DTS increasing
    /// across a joint when a segment's first DTS precedes its first PTS.
    private var lastDTS: Int64?
    private var currentShift: Int64 = 0

    public init(timeBase: Rational) { self.timeBase = timeBase }

    /// Starts a segment whose first frame is at `videoStart` and whose first
    /// DTS is `firstDTS` (both in `timeBase`, the segment's own timeline);
    /// returns the shift to add to its timestamps. Normally the segment's
    /// first frame lands on the joint; if its decode lead would put a DTS at
    /// or before the previous segment's last, the joint moves later by the
    /// difference (and that is reported as the new joint).
    public mutating func begin(videoStart: Int64, firstDTS: Int64?) -> Int64 {
        var shift = joint &- videoStart
        if let last = lastDTS, let d = firstDTS, d &+ shift <= last {
            shift = last &+ 1 &- d
        }
        currentShift = shift
        joints.append(videoStart &+ shift)
        return shift
    }

    /// Records an output video DTS of the current segment.
    public mutating func wrote(dts: Int64) { lastDTS = max(lastDTS ?? dts, dts) }

    /// Ends the current segment at `videoEnd` (its last frame's end, in the
    /// segment's own timeline); the next segment starts there.
    public mutating func end(videoEnd: Int64) {
        joint = max(joint, videoEnd &+ currentShift)
    }
}
