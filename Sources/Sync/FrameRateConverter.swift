/// Constant-frame-rate output from timestamped input frames (`--fps`), by
/// sample-and-hold: output frame n (shown at n × period) repeats the last
/// input frame that started at or before it. Frames that start and end
/// between two output instants are dropped; frames that last several periods
/// are repeated.
///
/// Output timestamps are frame indices in `outputTimeBase` (one tick per
/// frame), counted from the first input frame's slot, so they never drift.
public struct FrameRateConverter: Sendable {
    public let inputTimeBase: Rational
    /// 1/fps: one tick per output frame.
    public let outputTimeBase: Rational
    private var held: (slot: Int64, end: Int64)?
    /// The next output frame index to fill.
    public private(set) var next: Int64?
    public private(set) var framesIn = 0
    public private(set) var framesOut: Int64 = 0
    public private(set) var dropped = 0
    public private(set) var duplicated: Int64 = 0

    /// `nil` for a non-positive rate or an invalid time base.
    public init?(frameRate: Rational, inputTimeBase: Rational) {
        guard frameRate.numerator > 0, frameRate.denominator > 0, inputTimeBase.isValidTimeBase,
              let period = Rational(frameRate.denominator, frameRate.numerator) else { return nil }
        self.inputTimeBase = inputTimeBase
        self.outputTimeBase = period
    }

    /// Adds the next input frame (presentation order) starting at `pts` and
    /// lasting `duration` (input ticks). Returns the output frames, as
    /// `start..<end` indices, that the *previously added* frame fills; the
    /// new frame is held until the next call or `finish()`.
    public mutating func add(pts: Int64, duration: Int64) -> Range<Int64> {
        framesIn += 1
        let slot = self.slot(pts) ?? 0
        let endTicks = pts.addingReportingOverflow(max(duration, 0))
        let end = endTicks.overflow ? slot : (self.slot(endTicks.partialValue) ?? slot)
        let range = release(upTo: slot)
        // A frame never starts before the one already shown.
        let start = max(slot, next ?? slot)
        if next == nil { next = start }
        held = (start, max(end, start))
        return range
    }

    /// The output frames the last frame fills: to its end, and at least its
    /// own slot, so the output ends on the input's last picture.
    public mutating func finish() -> Range<Int64> {
        guard let h = held else { return 0..<0 }
        let range = release(upTo: max(h.end, h.slot.plus(1)))
        held = nil
        return range
    }

    /// The output frame index nearest to `pts`, halves going to the earlier
    /// frame: x.5 periods → x, so 60 → 30 fps keeps frames 1, 3, 5 … and a
    /// millisecond-rounded timestamp still lands in its own slot.
    func slot(_ pts: Int64) -> Int64? {
        // m = ⌈2x⌉ (x in periods); round-half-down(x) = ⌈(m − 1) / 2⌉.
        guard outputTimeBase.denominator < Int32.max / 2,
              let half = Rational(outputTimeBase.numerator, outputTimeBase.denominator * 2),
              let m = rescale(pts, from: inputTimeBase, to: half, rounding: .up) else {
            return rescale(pts, from: inputTimeBase, to: outputTimeBase)
        }
        let n = m.minus(1)
        return n >= 0 ? n.plus(1) / 2 : n / 2
    }

    private mutating func release(upTo limit: Int64) -> Range<Int64> {
        guard held != nil, let n = next else { return 0..<0 }
        let end = max(limit, n)
        let range = n..<end
        // Saturating: a broken timestamp may ask for more frames than Int64
        // counts; the caller refuses such a range before making any frame.
        let count = end.minus(n)
        if count == 0 { dropped += 1 } else { duplicated = duplicated.plus(count - 1) }
        framesOut = framesOut.plus(count)
        next = end
        return range
    }
}
