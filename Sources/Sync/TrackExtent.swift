/// The presentation span of a track: earliest PTS to latest PTS + duration.
public struct TrackExtent: Hashable, Sendable {
    public let start: Timestamp
    public let end: Timestamp

    public init(start: Timestamp, end: Timestamp) {
        self.start = start
        self.end = end
    }

    public var duration: Timestamp? {
        guard let d = end.ticks(since: start) else { return nil }
        return Timestamp(d, end.timeBase)
    }
}

/// Accumulates a track's extent from its packets, in one time base.
public struct ExtentTracker: Sendable {
    public let timeBase: Rational
    /// Samples the decoder drops at the start (AAC priming): the first audible
    /// sample is this many samples after the earliest PTS.
    public var primingSamples: Int64 = 0
    public var sampleRate: Int32 = 0
    private var minPTS: Int64?
    private var maxEnd: Int64?

    public init(timeBase: Rational) { self.timeBase = timeBase }

    public mutating func add(pts: Int64?, duration: Int64) {
        guard let pts else { return }
        minPTS = min(minPTS ?? pts, pts)
        let (end, overflow) = pts.addingReportingOverflow(max(duration, 0))
        if !overflow { maxEnd = max(maxEnd ?? end, end) }
    }

    /// `nil` until a packet with a PTS was added.
    public var extent: TrackExtent? {
        guard let s = minPTS, let e = maxEnd else { return nil }
        var start = s
        if primingSamples > 0, sampleRate > 0,
           let p = rescale(primingSamples, from: Rational.perSecond(sampleRate)!, to: timeBase) {
            start = min(s &+ p, e)
        }
        return TrackExtent(start: Timestamp(start, timeBase), end: Timestamp(e, timeBase))
    }
}

/// How far audio is from video at the start and at the end.
public struct AVSkew: Hashable, Sendable, Codable {
    /// Audio start − video start, in microseconds (positive: audio starts later).
    public let startMicroseconds: Int64
    /// Audio end − video end, in microseconds (negative: audio ends first).
    public let endMicroseconds: Int64
    /// The start skew in audio samples, when the sample rate is known.
    public let startSamples: Int64?
    /// The end difference in audio samples, when the sample rate is known.
    public let endSamples: Int64?

    /// `nil` when a difference does not fit in 64 bits.
    public init?(video: TrackExtent, audio: TrackExtent, sampleRate: Int32?) {
        func difference(_ a: Timestamp, _ b: Timestamp, in tb: Rational) -> Int64? {
            guard let x = a.rescaled(to: tb), let y = b.rescaled(to: tb) else { return nil }
            let (d, o) = x.value.subtractingReportingOverflow(y.value)
            return o ? nil : d
        }
        // Microseconds are for display; compute each from the exact instants.
        guard let s = difference(audio.start, video.start, in: .microseconds),
              let e = difference(audio.end, video.end, in: .microseconds) else { return nil }
        startMicroseconds = s
        endMicroseconds = e
        if let rate = sampleRate, let tb = Rational.perSecond(rate), rate > 0 {
            startSamples = difference(audio.start, video.start, in: tb)
            endSamples = difference(audio.end, video.end, in: tb)
        } else {
            startSamples = nil
            endSamples = nil
        }
    }
}
