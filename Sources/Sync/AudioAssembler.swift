/// What to write for one incoming audio packet or frame.
public struct AudioStep: Hashable, Sendable {
    /// Samples of silence to write first (a gap).
    public var silence: Int64 = 0
    /// Samples to leave out at the start (an overlap with what was written).
    public var trimStart: Int64 = 0
    /// Samples to write after the trim (the rest is cut at the end limit).
    public var keep: Int64 = 0
    /// Where the first written sample (after any silence) lands, in samples.
    public var position: Int64 = 0
    /// In whole-packet mode: how far the packet lands from where its
    /// timestamp puts it (samples; positive means later), when that is more
    /// than the tolerance. Such audio needs re-encoding to stay in sync.
    public var residual: Int64 = 0

    public init(silence: Int64 = 0, trimStart: Int64 = 0, keep: Int64 = 0, position: Int64 = 0, residual: Int64 = 0) {
        self.silence = silence
        self.trimStart = trimStart
        self.keep = keep
        self.position = position
        self.residual = residual
    }

    /// Whether the packet is written at all.
    public var writes: Bool { keep > 0 }

    /// `keep` when it cuts the end of a packet of `samples` samples, else
    /// `nil` (keep everything after the trim). A resampler's output for one
    /// frame is only about the counted number of samples: a count must not
    /// cut off what the running total owes.
    public func cut(from samples: Int64) -> Int64? {
        keep < samples - trimStart ? keep : nil
    }
}

/// A discontinuity the assembler repaired.
public struct AudioRepair: Hashable, Sendable, Codable {
    /// Output sample position where it happened.
    public let position: Int64
    /// Silence inserted (> 0) or samples removed (< 0).
    public let samples: Int64

    public init(position: Int64, samples: Int64) {
        self.position = position
        self.samples = samples
    }
}

/// Lays audio onto an output timeline counted in samples (1/rate), so that
/// every sample lands where the input's timestamps put it, with no drift:
/// each packet's intended position is compared with the running sample
/// count, gaps are filled with silence, overlaps trimmed, and an end limit
/// cuts the tail. Two modes:
///
/// - exact (`frameSize == nil`, for decoded PCM going to an encoder): silence
///   and trims are any number of samples;
/// - whole packets (`frameSize` set, for stream copy): only whole packets can
///   be written or dropped and silence comes in whole frames; when that
///   cannot land a packet within the tolerance the step says so
///   (`residual`), and the caller re-encodes instead.
public struct AudioAssembler: Sendable {
    /// The longest silence (or repetition of a frame) a pipeline makes in
    /// one place. A recording does not pause for half a day: a longer jump
    /// is a broken timestamp, and filling it would run for hours and fill
    /// the disk, so pipelines refuse it (`fillLimitExceeded`).
    public static let longestFillSeconds: Int64 = 12 * 3600

    /// Whether `samples` at `sampleRate` is more than `seconds`.
    public static func exceedsFillLimit(_ samples: Int64, sampleRate: Int32, seconds: Int64 = longestFillSeconds) -> Bool {
        let (limit, overflow) = max(seconds, 0).multipliedReportingOverflow(by: Int64(max(sampleRate, 1)))
        return !overflow && samples > limit
    }

    public let sampleRate: Int32
    public let frameSize: Int64?
    public let toleranceSamples: Int64
    /// The next sample's output position; `nil` before the first packet.
    public private(set) var cursor: Int64?
    /// The first written sample's position.
    public private(set) var origin: Int64?
    public private(set) var silenceInserted: Int64 = 0
    public private(set) var samplesTrimmed: Int64 = 0
    public private(set) var repairs: [AudioRepair] = []
    /// The largest distance (samples) a packet landed from its place
    /// (whole-packet mode), within the tolerance or not; 0 if none.
    public private(set) var worstResidual: Int64 = 0
    /// The largest distance (samples) a written packet landed from where
    /// its timestamp put it: timestamp jitter absorbed within the
    /// tolerance, and in whole-packet mode what whole silent frames leave.
    public private(set) var largestShift: Int64 = 0
    public let keepAtMost: Int

    public init(sampleRate: Int32, frameSize: Int64? = nil, toleranceSamples: Int64, keepAtMost: Int = 1000) {
        self.sampleRate = sampleRate
        self.frameSize = frameSize.map { max($0, 1) }
        self.toleranceSamples = max(toleranceSamples, 0)
        self.keepAtMost = keepAtMost
    }

    /// Positions count samples: 1/`sampleRate`.
    public var timeBase: Rational { Rational.perSecond(max(sampleRate, 1)) ?? .microseconds }

    /// Samples written so far, silence included.
    public var written: Int64 { cursor.map { $0 &- (origin ?? $0) } ?? 0 }

    /// Places `samples` samples that belong at `at` (output samples; `nil`
    /// continues from the cursor). Samples at or after `limit` are cut
    /// (whole-packet mode: a packet starting before it is kept whole).
    public mutating func place(at: Int64?, samples: Int64, limit: Int64? = nil) -> AudioStep {
        // Positions come from file timestamps and may be anywhere in Int64:
        // arithmetic saturates (see Saturating.swift) so the cursor never
        // wraps around; the track timeline refuses what cannot be written.
        let samples = max(samples, 0)
        guard let c = cursor else {
            let start = at ?? 0
            var step = AudioStep(position: start)
            step.keep = keepCount(from: start, samples: samples, limit: limit)
            if step.keep > 0 {
                origin = start
                cursor = start.plus(step.keep)
            } else if limit == nil || samples == 0 {
                origin = start
                cursor = start
            }
            return step
        }
        let target = at ?? c
        let diff = target.minus(c)
        var step = AudioStep(position: c)
        if diff.absolute > toleranceSamples {
            if let q = frameSize {
                if diff > 0 {
                    let frames = diff.plus(q / 2) / q
                    step.silence = frames * q
                    step.residual = diff - step.silence
                } else if target.plus(samples) <= c.plus(toleranceSamples) {
                    // Entirely inside what was written: drop it.
                    step.trimStart = samples
                } else {
                    // Keep it late by the overlap, or drop it early by the rest: the smaller error.
                    let late = diff.negated, early = target.plus(samples).minus(c)
                    if early < late { step.trimStart = samples; step.residual = early.negated } else { step.residual = late }
                }
                worstResidual = max(worstResidual, step.residual.absolute)
                if step.residual.absolute <= toleranceSamples { step.residual = 0 }
            } else if diff > 0 {
                step.silence = diff
            } else {
                step.trimStart = min(diff.negated, samples)
            }
        }
        if step.silence > 0 {
            // Silence only up to the limit.
            if let limit { step.silence = max(0, min(step.silence, limit.minus(c))) }
            silenceInserted = silenceInserted.plus(step.silence)
            record(AudioRepair(position: c, samples: step.silence))
        }
        if step.trimStart > 0 {
            samplesTrimmed = samplesTrimmed.plus(step.trimStart)
            record(AudioRepair(position: c, samples: -step.trimStart))
        }
        let start = c.plus(step.silence)
        step.position = start
        step.keep = keepCount(from: start, samples: samples - step.trimStart, limit: limit)
        if at != nil, step.trimStart == 0, step.keep > 0 {
            largestShift = max(largestShift, start.minus(target).absolute)
        }
        let cut = samples - step.trimStart - step.keep
        if cut > 0 { samplesTrimmed = samplesTrimmed.plus(cut) }
        cursor = start.plus(step.keep)
        return step
    }

    /// Silence to reach `end` from the cursor (whole-packet mode: whole
    /// frames, rounded up, so the audio ends at most one frame after `end`).
    public mutating func pad(to end: Int64) -> Int64 {
        guard let c = cursor, end > c else { return 0 }
        var n = end.minus(c)
        if let q = frameSize { n = n.plus(q - 1) / q * q }
        silenceInserted = silenceInserted.plus(n)
        record(AudioRepair(position: c, samples: n))
        cursor = c.plus(n)
        return n
    }

    /// Continues from `position` as if samples had been laid up to it
    /// (frames written by someone else: a run re-encoded onto the grid), or
    /// starts there; no silence or trim is counted.
    public mutating func rebase(at position: Int64) {
        if origin == nil { origin = position }
        cursor = position
    }

    /// Starts the timeline at `position` when nothing has been written yet
    /// (a track that is all padding).
    public mutating func start(at position: Int64) {
        if cursor == nil {
            cursor = position
            origin = position
        }
    }

    private func keepCount(from start: Int64, samples: Int64, limit: Int64?) -> Int64 {
        guard let limit else { return samples }
        if start >= limit { return 0 }
        if frameSize != nil { return samples }
        return min(samples, limit.minus(start))
    }

    private mutating func record(_ r: AudioRepair) {
        if repairs.count < keepAtMost { repairs.append(r) }
    }
}
