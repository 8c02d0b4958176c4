/// Settings of the waveform sync estimator: a coarse search of the whole
/// overlap on a band-limited, downsampled signal, then a refinement at full
/// rate in windows across the recording, fitted to a line (offset + drift).
public struct WaveformSyncSettings: Hashable, Sendable {
    /// Rate of the coarse search (Hz); its band must lie below half of it.
    public var coarseRate: Int32 = 4000
    public var coarseBand: ClosedRange<Double> = 150...1800
    /// Length of each coarse template (s): long enough to hold several
    /// events, short enough that 300 ppm of drift smears its peak by less
    /// than 2.5 ms.
    public var templateSeconds = 8.0
    public var templatesAtMost = 12
    /// Refinement windows (s), and how many at most over the overlap.
    public var windowSeconds = 1.5
    public var windowsAtMost = 64
    /// Refinement band (Hz), capped at 95 % of half the refinement rate.
    public var refineBand: ClosedRange<Double> = 200...6000
    /// The refinement runs at the higher of the two recordings' rates, at most this.
    public var refineRateAtMost: Int32 = 48_000
    /// Clock drift beyond this (parts per million) is not searched for.
    public var maxDriftPPM = 300.0
    /// Less overlap than this (s) cannot give a trustworthy estimate.
    public var minimumOverlap = 3.0
    /// A coarse template match counts when its peak is this many times the
    /// next one (peak-to-sidelobe ratio); a lone match needs `strongRatio`.
    public var templateRatio = 2.0
    public var strongRatio = 3.0
    /// A refinement window counts when its peak ratio reaches this.
    public var windowRatio = 1.5
    /// Windows must agree with the fitted line within this (s) to count.
    public var agreement = 0.0005
    /// At least this many windows must agree, and this share of all windows.
    public var minimumAgreeing = 3
    public var minimumAgreeingShare = 0.3

    public init() {}

    public var maxDrift: Double { maxDriftPPM * 1e-6 }
}

/// Where the coarse templates are cut from a recording of `duration` seconds:
/// evenly spread, `length` seconds each (the whole recording if shorter).
public struct TemplatePlan: Hashable, Sendable {
    public let length: Double
    /// Start of each template (s from the recording's first sample).
    public let starts: [Double]

    public init(duration: Double, settings: WaveformSyncSettings) {
        let length = min(settings.templateSeconds, max(duration, 0))
        self.length = length
        let count = length > 0 ? min(max(Int(duration / length), 1), settings.templatesAtMost) : 0
        if count <= 1 {
            starts = count == 1 ? [max(0, (duration - length) / 2)] : []
        } else {
            let span = duration - length
            starts = (0..<count).map { span * Double($0) / Double(count - 1) }
        }
    }
}

/// The measured relation of two recordings of one scene: the same sound is
/// at time `u` of the reference and `u − lag(u)` of the other, with
/// `lag(u) = intercept + slope · u`, both in seconds from each recording's
/// first sample. A slope comes from clock drift: the other recording counts
/// `1 − slope` of its seconds per reference second.
public struct ClockRelation: Hashable, Sendable, Codable {
    public var intercept: Double
    public var slope: Double

    public init(intercept: Double, slope: Double) {
        self.intercept = intercept
        self.slope = slope
    }

    /// The other clock's rate relative to the reference's, minus 1
    /// (+20e-6: it runs 20 ppm fast, so its file is 20 ppm longer).
    public var drift: Double { -slope }

    public func lag(at u: Double) -> Double { intercept + slope * u }
    public func otherTime(atReference u: Double) -> Double { u - lag(at: u) }
    public func referenceTime(atOther v: Double) -> Double { (v + intercept) / (1 - slope) }

    /// The constant lag that best stands for the line over other-time
    /// `span` (zero error at its middle, ± half the drift over it at its ends).
    public func constantLag(over span: ClosedRange<Double>) -> Double {
        let mid = (span.lowerBound + span.upperBound) / 2
        return referenceTime(atOther: mid) - mid
    }
}

/// When drift is worth a resampling pass: stream copy with the best constant
/// offset is off by up to half the accumulated drift at the ends of the
/// overlap; resample when that would use more than half the sync tolerance
/// (the other half is left to the estimate itself).
public enum DriftPolicy {
    /// Largest error (s) of the best constant offset over `span` seconds of
    /// reference time (the other clock covers `span · (1 + drift)` of its
    /// own seconds, each `drift` off).
    public static func copyError(drift: Double, span: Double) -> Double {
        abs(drift) * span / 2
    }

    public static func needsResampling(drift: Double, span: Double, tolerance: Double) -> Bool {
        copyError(drift: drift, span: span) > tolerance / 2
    }
}

/// Resampling that undoes clock drift: audio recorded at a nominal
/// `inputRate` whose clock ran `1 + drift` times the reference's is
/// resampled from `inputRate · (1 + drift)` to `outputRate`. libswresample
/// takes integer rates and needs `inputRate × phases` and `outputRate`
/// (reduced) below 2^30 to keep the ratio exact, so both rates are scaled by
/// one integer up to 3·10⁷ (with 32 filter phases, linearly interpolated):
/// the ratio is exact to about 3·10⁻⁸ (0.03 ppm, 0.1 ms an hour), and
/// positions are mapped with the very same ratio, so timestamps and sample
/// counts agree.
public struct DriftCorrection: Hashable, Sendable {
    public let drift: Double
    public let inputRate: Int32
    public let outputRate: Int32
    public let scale: Int64
    /// `inputRate · scale · (1 + drift)`, rounded.
    public let scaledInputRate: Int32
    /// `outputRate · scale`.
    public let scaledOutputRate: Int32
    /// The resampler's filter phases (`phase_shift` = log2 of it) that keep
    /// `scaledInputRate × phases` within what it can reduce exactly.
    public static let phaseShift: Int64 = 5
    public static let largestScaledRate: Int64 = 30_000_000

    /// `nil` for non-positive rates or |drift| ≥ 1 %.
    public init?(drift: Double, inputRate: Int32, outputRate: Int32) {
        guard inputRate > 0, outputRate > 0, abs(drift) < 0.01, drift.isFinite else { return nil }
        self.drift = drift
        self.inputRate = inputRate
        self.outputRate = outputRate
        scale = max(1, Self.largestScaledRate / Int64(max(inputRate, outputRate)))
        scaledInputRate = Int32((Double(Int64(inputRate) * scale) * (1 + drift)).rounded())
        scaledOutputRate = Int32(Int64(outputRate) * scale)
    }

    /// Output samples that `count` input samples become.
    public func outputCount(ofInput count: Int64) -> Int64 {
        rescale(count, multiplier: Int64(scaledOutputRate), divisor: Int64(scaledInputRate), rounding: .nearest) ?? count
    }

    /// Where a position given at nominal speed in output samples (the input's
    /// timestamp rescaled to the output rate) lands after the correction,
    /// measured from `anchor`, which stays where it is.
    public func map(_ position: Int64, anchor: Int64) -> Int64 {
        let d = position &- anchor
        let mapped = rescale(d, multiplier: Int64(inputRate) * scale, divisor: Int64(scaledInputRate), rounding: .nearest) ?? d
        return anchor &+ mapped
    }
}

/// Refinement windows across the overlap, each at reference time `center`
/// (s), where the other recording is searched within `radius` of the lag the
/// coarse result predicts.
public struct SyncWindow: Hashable, Sendable {
    public var center: Double
    public var predictedLag: Double
    public var radius: Double
}

public enum WindowPlan {
    /// Windows of `length` seconds spread evenly over reference times
    /// `overlap`, at most `settings.windowsAtMost`, every 0.5 s or more apart
    /// (overlapping in short recordings: more lags for the drift fit).
    /// The search radius grows from `base` at `anchor` by `slopeUncertainty`
    /// per second away from it.
    public static func windows(overlap: ClosedRange<Double>, length: Double, relation: ClockRelation,
                               anchor: Double, base: Double, slopeUncertainty: Double,
                               settings: WaveformSyncSettings) -> [SyncWindow] {
        let first = overlap.lowerBound + length / 2, last = overlap.upperBound - length / 2
        guard last >= first else { return [] }
        let count = min(max(Int((last - first) / 0.5) + 1, 1), settings.windowsAtMost)
        return (0..<count).map { i in
            let c = count == 1 ? (first + last) / 2 : first + (last - first) * Double(i) / Double(count - 1)
            let r = min(base + slopeUncertainty * abs(c - anchor), 1.0)
            return SyncWindow(center: c, predictedLag: relation.lag(at: c), radius: r)
        }
    }
}

/// One measured lag: at reference time `time` (s) the other recording lags
/// by `lag` (s), with peak-to-sidelobe ratio `ratio`. A coarse template's
/// best match and a refinement window's peak alike.
public struct LagMeasurement: Hashable, Sendable, Codable {
    public var time: Double
    public var lag: Double
    public var ratio: Double

    public init(time: Double, lag: Double, ratio: Double) {
        self.time = time
        self.lag = lag
        self.ratio = ratio
    }

    /// A point for `LineFit.robust`, weighted by its peak (capped at 10).
    var fitPoint: (x: Double, y: Double, weight: Double) { (time, lag, min(ratio, 10)) }
}

/// The verdict on a set of window measurements: the fitted line, the
/// windows that agree with it, and a confidence in 0…1.
public struct SyncFit: Hashable, Sendable {
    public var relation: ClockRelation
    public var agreeing: Int
    public var windows: Int
    /// Windows whose peak was clear enough to measure.
    public var measured: Int
    public var rms: Double
    public var driftError: Double
    public var medianRatio: Double
    /// Share of all windows that agree, scaled down when their peaks are
    /// weak (median ratio below 3).
    public var confidence: Double

    /// Fits `measurements` (from `windows` windows in all). `nil` when no
    /// window had a clear peak.
    public init?(_ measurements: [LagMeasurement], windows: Int, settings: WaveformSyncSettings) {
        let clear = measurements.filter { $0.ratio >= settings.windowRatio }
        guard !clear.isEmpty,
              let fit = LineFit.robust(clear.map(\.fitPoint),
                                       tolerance: settings.agreement, maxSlope: settings.maxDrift,
                                       floor: settings.agreement / 5) else { return nil }
        relation = ClockRelation(intercept: fit.intercept, slope: fit.slope)
        agreeing = fit.inliers.count
        self.windows = windows
        measured = clear.count
        rms = fit.rms
        driftError = fit.slopeError
        medianRatio = LineFit.median(fit.inliers.map { clear[$0].ratio })
        let share = Double(agreeing) / Double(max(windows, 1))
        confidence = min(1, share * min(1, (medianRatio - 1) / 2))
    }

    /// Whether the fit is trustworthy enough to act on.
    public func accepted(by settings: WaveformSyncSettings) -> Bool {
        agreeing >= min(settings.minimumAgreeing, windows)
            && Double(agreeing) >= settings.minimumAgreeingShare * Double(windows)
    }
}

/// The coarse verdict: which template matches agree on one line (an offset
/// and a drift within the searched range), and how well that predicts the
/// lag elsewhere. A template's best peak over the whole recording lands on
/// the line by chance only about once in (searched lags / tolerance), so
/// three agreeing templates are decisive even when each peak alone is weak;
/// two need clear peaks; a single one needs a strong peak.
public struct CoarseConsensus: Hashable, Sendable {
    public var relation: ClockRelation
    /// Mean reference time of the agreeing matches: the prediction is best there.
    public var anchor: Double
    /// Search radius (s) at the anchor, and its growth per second away.
    public var baseRadius: Double
    public var slopeUncertainty: Double
    public var agreeing: Int

    /// Agreement tolerance (s): coarse peaks are a quarter millisecond
    /// apart and a template smears over its own drift.
    public static let tolerance = 0.004

    public enum Refusal: Error, Hashable, Sendable {
        /// Nothing agrees and no peak is strong enough: the best ratio seen.
        case noClearPeak(bestRatio: Double)
    }

    public static func decide(_ matches: [LagMeasurement], templateLength: Double,
                              settings: WaveformSyncSettings) -> Result<CoarseConsensus, Refusal> {
        let bestRatio = matches.map(\.ratio).max() ?? 0
        guard let fit = LineFit.robust(matches.map(\.fitPoint), tolerance: tolerance,
                                       maxSlope: settings.maxDrift, floor: tolerance / 2) else {
            return .failure(.noClearPeak(bestRatio: bestRatio))
        }
        let agreeing = fit.inliers.map { matches[$0] }
        let ratios = agreeing.map(\.ratio)
        let accepted = agreeing.count >= 3
            || (agreeing.count == 2 && ratios.allSatisfy { $0 >= settings.templateRatio * 0.75 })
            || ratios.contains { $0 >= settings.strongRatio }
        guard accepted else { return .failure(.noClearPeak(bestRatio: bestRatio)) }
        let us = agreeing.map(\.time)
        let span = (us.max() ?? 0) - (us.min() ?? 0)
        let anchor = us.reduce(0, +) / Double(us.count)
        if agreeing.count >= 2 && span >= 2 * templateLength {
            // Matches far apart pin the slope down to a few ms over their span.
            return .success(CoarseConsensus(relation: ClockRelation(intercept: fit.intercept, slope: fit.slope),
                                            anchor: anchor, baseRadius: 2 * tolerance,
                                            slopeUncertainty: min(settings.maxDrift, 2 * tolerance / span),
                                            agreeing: agreeing.count))
        }
        // Otherwise only the lag near the anchor is known; the drift could be anything searched.
        return .success(CoarseConsensus(relation: ClockRelation(intercept: fit.value(at: anchor), slope: 0),
                                        anchor: anchor,
                                        baseRadius: 2 * tolerance + settings.maxDrift * templateLength / 2,
                                        slopeUncertainty: settings.maxDrift, agreeing: agreeing.count))
    }
}
