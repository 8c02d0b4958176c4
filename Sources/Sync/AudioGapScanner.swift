/// A place where an audio track's timestamps disagree with its sample count.
public struct AudioDiscontinuity: Hashable, Sendable, Codable {
    /// Where the audio should have continued (the expected timestamp), in the track's time base.
    public let expected: Int64
    /// Where it did continue.
    public let actual: Int64
    /// Samples from the first sample of the track to the discontinuity.
    public let samplePosition: Int64
    /// Missing samples (> 0, a gap) or doubled samples (< 0, an overlap).
    public let samples: Int64

    public init(expected: Int64, actual: Int64, samplePosition: Int64, samples: Int64) {
        self.expected = expected
        self.actual = actual
        self.samplePosition = samplePosition
        self.samples = samples
    }
}

/// Finds gaps and overlaps in an audio track from packet timestamps and the
/// number of samples each packet holds.
///
/// The expected timestamp is the last real timestamp plus the samples since
/// then (re-anchored at each discontinuity), so rounding never accumulates.
public struct AudioGapScanner: Sendable {
    public let timeBase: Rational
    public let sampleRate: Int32
    /// Differences up to this many samples are treated as rounding, not gaps.
    public let toleranceSamples: Int64
    /// At most this many discontinuities are kept; the rest are only counted.
    public let keepAtMost: Int

    private let sampleTimeBase: Rational
    private var anchor: Int64?
    private var samplesSinceAnchor: Int64 = 0
    public private(set) var totalSamples: Int64 = 0
    public private(set) var discontinuities: [AudioDiscontinuity] = []
    public private(set) var discontinuityCount = 0
    public private(set) var gapSamples: Int64 = 0
    public private(set) var overlapSamples: Int64 = 0

    /// `nil` for a non-positive time base or sample rate.
    public init?(timeBase: Rational, sampleRate: Int32, toleranceSamples: Int64? = nil, keepAtMost: Int = 1000) {
        guard timeBase.isValidTimeBase, sampleRate > 0, let st = Rational.perSecond(sampleRate) else { return nil }
        self.timeBase = timeBase
        self.sampleRate = sampleRate
        self.sampleTimeBase = st
        self.keepAtMost = keepAtMost
        self.toleranceSamples = toleranceSamples
            ?? Self.defaultTolerance(timeBase: timeBase, sampleRate: sampleRate)
    }

    /// The larger of one time-base tick (timestamps are rounded to ticks) and
    /// 1 ms, in samples, rounded up (`ToleranceDefault.rounding`).
    /// Zero for a non-positive sample rate.
    public static func defaultTolerance(timeBase: Rational, sampleRate: Int32) -> Int64 {
        ToleranceDefault.rounding.samples(timeBase: timeBase, sampleRate: sampleRate)
    }

    /// Adds the next packet: its timestamp (unknown ones continue the count)
    /// and the number of samples it decodes to.
    public mutating func add(pts: Int64?, samples: Int64) {
        defer {
            samplesSinceAnchor &+= samples
            totalSamples &+= samples
        }
        guard let pts else { return }
        guard let a = anchor else {
            // Samples before the first timestamp have no position: count from here.
            anchor = pts
            samplesSinceAnchor = 0
            return
        }
        guard let elapsed = rescale(samplesSinceAnchor, from: sampleTimeBase, to: timeBase),
              case let (expected, false) = a.addingReportingOverflow(elapsed),
              case let (diff, false) = pts.subtractingReportingOverflow(expected),
              let diffSamples = rescale(diff, from: timeBase, to: sampleTimeBase)
        else {
            anchor = pts
            samplesSinceAnchor = 0
            return
        }
        if diffSamples.absolute > toleranceSamples {
            discontinuityCount += 1
            if diffSamples > 0 {
                gapSamples = gapSamples.plus(diffSamples)
            } else {
                overlapSamples = overlapSamples.plus(diffSamples.negated)
            }
            if discontinuities.count < keepAtMost {
                discontinuities.append(AudioDiscontinuity(
                    expected: expected, actual: pts, samplePosition: totalSamples, samples: diffSamples))
            }
            anchor = pts
            samplesSinceAnchor = 0
        }
    }
}
