/// What to do with the next decoded audio frame so that the samples written
/// stay exactly where the input's timestamps put them.
public struct AudioPlacement: Hashable, Sendable {
    /// Samples of silence to write before the frame (a gap in the input).
    public var silence: Int64 = 0
    /// Samples to drop from the start of the frame (an overlap in the input).
    public var trim: Int64 = 0

    public init(silence: Int64 = 0, trim: Int64 = 0) {
        self.silence = silence
        self.trim = trim
    }
}

/// Timestamps for re-encoded audio, from a sample counter.
///
/// The first frame with a timestamp fixes the origin; after that every output
/// sample's time is origin + samples written, in 1/sample-rate ticks, so
/// rounding never accumulates. A frame whose timestamp is more than the
/// tolerance away from where the count says it should start is a gap (filled
/// with exactly the missing samples of silence) or an overlap (its doubled
/// samples trimmed). Within the tolerance the count wins: timestamps rounded
/// to a coarse time base do not move the audio.
public struct AudioSampleClock: Sendable {
    public let timeBase: Rational
    public let sampleRate: Int32
    /// One sample, as a time base (1/sampleRate).
    public let sampleTimeBase: Rational
    public let toleranceSamples: Int64
    /// The first sample's time in `sampleTimeBase`; `nil` until a frame has a timestamp.
    public private(set) var origin: Int64?
    /// Samples handed out so far, silence included.
    public private(set) var written: Int64 = 0
    public private(set) var silenceInserted: Int64 = 0
    public private(set) var samplesTrimmed: Int64 = 0
    /// Gaps (> 0) and overlaps (< 0) found, in samples, with the sample position.
    public private(set) var discontinuities: [AudioDiscontinuity] = []
    public let keepAtMost: Int
    private var samplesBeforeOrigin: Int64 = 0

    /// `nil` for an invalid time base or sample rate.
    public init?(timeBase: Rational, sampleRate: Int32, toleranceSamples: Int64? = nil, keepAtMost: Int = 1000) {
        guard timeBase.isValidTimeBase, sampleRate > 0, let st = Rational.perSecond(sampleRate) else { return nil }
        self.timeBase = timeBase
        self.sampleRate = sampleRate
        self.sampleTimeBase = st
        self.keepAtMost = keepAtMost
        self.toleranceSamples = toleranceSamples
            ?? AudioGapScanner.defaultTolerance(timeBase: timeBase, sampleRate: sampleRate)
    }

    /// Where the next sample goes, in `sampleTimeBase` (0-based until a timestamp is seen).
    public var nextTimestamp: Int64 { (origin ?? 0) &+ written }

    /// Places a decoded frame of `samples` samples whose first sample the
    /// input puts at `pts` (in `timeBase`; `nil` continues the count), and
    /// counts what the caller will write: silence first, then the frame less
    /// its trimmed start.
    public mutating func place(pts: Int64?, samples: Int64) -> AudioPlacement {
        let samples = max(samples, 0)
        var placement = AudioPlacement()
        defer { written &+= placement.silence &+ samples &- placement.trim }
        guard let pts, let at = rescale(pts, from: timeBase, to: sampleTimeBase) else { return placement }
        guard let o = origin else {
            // Samples that came before the first timestamp end where this frame starts.
            origin = at &- written
            return placement
        }
        let diff = at &- (o &+ written)
        guard abs(diff) > toleranceSamples else { return placement }
        if diff > 0 {
            placement.silence = diff
            silenceInserted &+= diff
        } else {
            placement.trim = min(-diff, samples)
            samplesTrimmed &+= placement.trim
        }
        if discontinuities.count < keepAtMost {
            discontinuities.append(AudioDiscontinuity(
                expected: o &+ written, actual: at, samplePosition: written, samples: diff))
        }
        return placement
    }
}
