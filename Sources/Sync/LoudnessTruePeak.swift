/// The true peak of a stream, as FFmpeg's `ebur128=peak=true` finds it:
/// the largest magnitude libswresample's resampler to 192 kHz puts out
/// (`TruePeakFilterBank`, run in 32-bit floats — the decoders' own
/// precision — on a mirrored head, as libswresample starts; the last
/// half-window is never put out, as the filter never flushes it).
///
/// A stretch whose largest sample times the bank's `gainBound` cannot
/// reach the peak so far (or a floor the caller knows the result will be
/// raised to anyway, the sample peak) is stepped over without filtering:
/// exact, since no output can exceed that bound.
public struct TruePeakMeter: Sendable {
    public let bank: TruePeakFilterBank
    /// Taps per phase as floats, each phase padded with zeros to `stride`.
    private let taps: [Float]
    private let stride: Int
    private let gain: Float
    private var channels: [Channel]
    /// For 4 phases of 32 taps, one output per phase at every position
    /// (48 kHz): phases 1–3's taps each as 8 equal lanes, so 8 positions are
    /// filtered at once. Empty otherwise.
    private let splats: [SIMD8<Float>]
    /// For other exact ratios whose cycle of outputs is whole groups of 8
    /// (44.1 kHz: 640 outputs a cycle, 147 phases a step). nil otherwise.
    private let groups: OutputGroups?
    /// The largest output so far, linear, over every channel.
    public private(set) var peak: Float = 0
    /// The largest sample so far (what the caller raises the true peak to).
    public private(set) var samplePeak: Float = 0
    /// Outputs filtered and outputs stepped over (for tests and tuning).
    public private(set) var filtered = 0, skipped = 0

    /// Input positions per stretch the bound is taken over (192 for the
    /// meter; a limiter takes shorter ones, each stretch's peak its envelope).
    let stretch: Int

    public init(sampleRate: Int, channels: Int, stretch: Int = 192) {
        self.stretch = stretch
        bank = TruePeakFilterBank(sampleRate: sampleRate)
        stride = (bank.length + 7) / 8 * 8
        var t = [Float](repeating: 0, count: bank.phaseCount * stride)
        for ph in 0..<bank.phaseCount {
            for i in 0..<bank.length { t[ph * stride + i] = Float(bank.coefficients[ph * bank.length + i]) }
        }
        taps = t
        let byPositions = bank.phaseCount == 4 && bank.length == 32 && bank.stepPhases == 1
            && bank.stepRemainder == 0 && bank.phaseZeroIsSample
        splats = byPositions ? (1..<4).flatMap { ph in (0..<32).map { SIMD8(repeating: t[ph * 32 + $0]) } } : []
        groups = byPositions ? nil : OutputGroups(bank)
        // Rounded up a little, so float rounding cannot make a skip inexact.
        gain = Float(bank.gainBound) * 1.0001
        self.channels = Array(repeating: Channel(length: bank.length, pad: stride), count: channels)
    }

    /// Adds `count` samples of every channel (`channels[c]` is channel c's),
    /// stepping over what cannot reach the larger of the peak and the
    /// sample peak so far.
    public mutating func add(_ channels: UnsafeBufferPointer<UnsafePointer<Float>>, count: Int) {
        for c in channels.indices { samplePeak = max(samplePeak, maxMagnitude(channels[c], count: count)) }
        for c in channels.indices { add(channel: c, channels[c], count: count, floor: samplePeak) }
    }

    /// Adds `count` samples of channel `c`. `floor`: a level the caller
    /// will raise the result to anyway (outputs under it need not be known).
    public mutating func add(channel c: Int, _ samples: UnsafePointer<Float>, count: Int, floor: Float = 0) {
        channels[c].append(samples, count: count, length: bank.length)
        guard channels[c].started else { return }
        let last = channels[c].count - bank.length
        while channels[c].window <= last {
            let end = min(channels[c].window + stretch, last + 1)
            _ = run(channel: c, until: end, floor: max(peak, floor))
        }
    }

    /// Adds `count` samples of channel `c` and hands `over` every stretch of
    /// outputs that reaches above `level`: the input positions the outputs
    /// lie between (`from..<to`, counted from the channel's first sample)
    /// and their largest magnitude. A stretch whose samples cannot reach
    /// `level` is stepped over (a limiter's envelope: what is not handed
    /// over stays under `level`).
    public mutating func add(channel c: Int, _ samples: UnsafePointer<Float>, count: Int, level: Float,
                             over: (_ from: Int, _ to: Int, _ top: Float) -> Void) {
        channels[c].append(samples, count: count, length: bank.length)
        guard channels[c].started else { return }
        let last = channels[c].count - bank.length
        while channels[c].window <= last {
            let from = scanned(channel: c), window = channels[c].window
            let end = min(window + stretch, last + 1)
            // The samples themselves too: the fast path leaves them to the sample peak.
            let samples = channels[c].buffer.withUnsafeBufferPointer { b in
                maxMagnitude(b.baseAddress! + window + (bank.length - 1) / 2, count: end - window)
            }
            let top = max(run(channel: c, until: end, floor: level) ?? 0, samples)
            if top > level { over(from, scanned(channel: c), top) }
        }
    }

    /// The input position (from the channel's first sample) up to which
    /// every output has been filtered or stepped over.
    public func scanned(channel c: Int) -> Int {
        let ch = channels[c]
        return ch.started ? ch.window + (bank.length - 1) / 2 - bank.length + ch.dropped : 0
    }

    /// Every output whose window starts before `end`: filtered (their
    /// largest magnitude), or stepped over when none can exceed `floor` (nil).
    private mutating func run(channel c: Int, until end: Int, floor: Float) -> Float? {
        var ch = channels[c]
        defer { channels[c] = ch }
        let n = outputs(from: ch, until: end)
        let reach = end - 1 + bank.length - ch.window
        let top = ch.buffer.withUnsafeBufferPointer { b in maxMagnitude(b.baseAddress! + ch.window, count: reach) }
        if top * gain <= floor {
            advance(&ch, by: n)
            skipped += n
            return nil
        }
        let filteredTop = !splats.isEmpty ? filterByPositions(&ch, outputs: n)
            : groups.map { filterByGroups(&ch, outputs: n, $0) } ?? filter(&ch, outputs: n)
        peak = max(peak, filteredTop)
        filtered += n
        return filteredTop
    }

    /// How many outputs start their window before `end` (resample.c's `delta_n`).
    private func outputs(from ch: Channel, until end: Int) -> Int {
        let phases = (end - ch.window) * bank.phaseCount - ch.phase
        let fraction = phases * bank.sourceIncrement - ch.fraction
        let increment = bank.stepPhases * bank.sourceIncrement + bank.stepRemainder
        return max((fraction + increment - 1) / increment, 0)
    }

    private func advance(_ ch: inout Channel, by n: Int) {
        let fraction = ch.fraction + n * bank.stepRemainder
        let phase = ch.phase + n * bank.stepPhases + fraction / bank.sourceIncrement
        ch.fraction = fraction % bank.sourceIncrement
        ch.window += phase / bank.phaseCount
        ch.phase = phase % bank.phaseCount
    }

    /// `n` outputs from the channel's position on; their largest magnitude.
    private func filter(_ ch: inout Channel, outputs n: Int) -> Float {
        let pc = bank.phaseCount, src = bank.sourceIncrement, div = bank.stepPhases, mod = bank.stepRemainder
        let passThrough = bank.phaseZeroIsSample, center = (bank.length - 1) / 2, stride = self.stride
        var window = ch.window, phase = ch.phase, fraction = ch.fraction
        var top: Float = 0
        ch.buffer.withUnsafeBufferPointer { b in
            taps.withUnsafeBufferPointer { t in
                let x = b.baseAddress!, h = t.baseAddress!
                for _ in 0..<n {
                    if passThrough && phase == 0 {
                        top = max(top, abs(x[window + center]))
                    } else {
                        top = max(top, abs(dot(x + window, h + phase * stride, count: stride)))
                    }
                    fraction += mod
                    phase += div
                    if fraction >= src {
                        fraction -= src
                        phase += 1
                    }
                    while phase >= pc {
                        phase -= pc
                        window += 1
                    }
                }
            }
        }
        (ch.window, ch.phase, ch.fraction) = (window, phase, fraction)
        return top
    }

    /// `n` outputs as `filter` gives them, the whole positions among them 8
    /// at a time; phase 0's outputs (samples) left to the sample peak.
    private func filterByPositions(_ ch: inout Channel, outputs n: Int) -> Float {
        let head = min((4 - ch.phase) % 4, n)
        var top = filter(&ch, outputs: head)
        let blocks = (n - head) / 32
        var window = ch.window
        ch.buffer.withUnsafeBufferPointer { b in
            splats.withUnsafeBufferPointer { h in
                for _ in 0..<blocks {
                    top = max(top, eightPositions(UnsafeRawPointer(b.baseAddress! + window), h.baseAddress!))
                    window += 8
                }
            }
        }
        ch.window = window
        return max(top, filter(&ch, outputs: n - head - blocks * 32))
    }

    /// `n` outputs as `filter` gives them, 8 at a time from a group's start.
    private func filterByGroups(_ ch: inout Channel, outputs n: Int, _ g: OutputGroups) -> Float {
        let head = min((8 - g.outputOfPhase[ch.phase] % 8) % 8, n)
        var top = filter(&ch, outputs: head)
        let count = (n - head) / 8
        var window = ch.window, k = g.outputOfPhase[ch.phase]
        ch.buffer.withUnsafeBufferPointer { b in
            g.table.withUnsafeBufferPointer { t in
                for _ in 0..<count {
                    let group = k / 8
                    top = max(top, eightOutputs(b.baseAddress! + window, t.baseAddress! + group * g.span, span: g.span))
                    window += g.advance[group]
                    k = (k + 8) % g.cycle
                }
            }
        }
        (ch.window, ch.phase) = (window, g.phaseOfOutput[k])
        return max(top, filter(&ch, outputs: n - head - count * 8))
    }

    /// One channel's input: `length` mirrored samples, then the samples;
    /// `window` is where the next output's taps start.
    struct Channel: Sendable {
        var buffer: [Float]
        var count: Int
        var started = false
        var window = 0, phase = 0, fraction = 0
        /// Samples moved out of the buffer's front so far.
        var dropped = 0
        /// Zeros past the end the padded taps may read (times zero taps).
        let pad: Int

        init(length: Int, pad: Int) {
            buffer = [Float](repeating: 0, count: 16384 + 4 * length + pad)
            count = length
            self.pad = pad
        }

        mutating func append(_ samples: UnsafePointer<Float>, count n: Int, length: Int) {
            // What lies past `count` is read only times zero taps: old samples do.
            if started && window > 0 && count + n + pad > buffer.count {
                let keep = count - window, from = window
                buffer.withUnsafeMutableBufferPointer { b in b.baseAddress!.update(from: b.baseAddress! + from, count: keep) }
                count = keep
                dropped += from
                window = 0
            }
            if count + n + pad > buffer.count {
                buffer.append(contentsOf: repeatElement(0, count: count + n + pad - buffer.count + buffer.count / 2))
            }
            let at = count
            buffer.withUnsafeMutableBufferPointer { b in (b.baseAddress! + at).update(from: samples, count: n) }
            count += n
            // libswresample waits for one sample more than a window, then
            // reflects the first `length` about the first sample.
            if !started && count - length >= length + 1 {
                for j in 0..<length { buffer[j] = buffer[length + length - j] }
                started = true
                window = length - (length - 1) / 2
            }
        }
    }
}

/// The largest |output| of phases 1–3 at the 8 positions from `x`: lane j
/// of each sum is position j's output, tap i times the sample i after it.
@inline(__always)
private func eightPositions(_ x: UnsafeRawPointer, _ h: UnsafePointer<SIMD8<Float>>) -> Float {
    var a1 = SIMD8<Float>(), a2 = SIMD8<Float>(), a3 = SIMD8<Float>()
    for i in 0..<32 {
        let v = x.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        a1 += h[i] * v
        a2 += h[32 + i] * v
        a3 += h[64 + i] * v
    }
    var top: Float = 0
    for j in 0..<8 { top = max(top, abs(a1[j]), abs(a2[j]), abs(a3[j])) }
    return top
}

/// 8 outputs of a group: sample m of the span times the group's vector m
/// (each lane's taps, shifted by its window's offset in the group).
@inline(__always)
private func eightOutputs(_ x: UnsafePointer<Float>, _ t: UnsafePointer<SIMD8<Float>>, span: Int) -> Float {
    var acc = SIMD8<Float>()
    for m in 0..<span { acc += t[m] * SIMD8(repeating: x[m]) }
    var top: Float = 0
    for j in 0..<8 { top = max(top, abs(acc[j])) }
    return top
}

/// The sum of `count` products (`count` a multiple of 8), in 8-wide vectors.
@inline(__always)
private func dot(_ x: UnsafePointer<Float>, _ h: UnsafePointer<Float>, count: Int) -> Float {
    let rx = UnsafeRawPointer(x), rh = UnsafeRawPointer(h)
    var acc = SIMD8<Float>()
    var i = 0
    while i < count {
        acc += rx.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
            * rh.loadUnaligned(fromByteOffset: i * 4, as: SIMD8<Float>.self)
        i += 8
    }
    return acc.sum()
}

/// The largest |sample| of `count` samples (as bit patterns with the sign
/// cleared: their order as integers is the magnitudes' order).
public func maxMagnitude(_ x: UnsafePointer<Float>, count: Int) -> Float {
    let bits = UnsafeRawPointer(x).assumingMemoryBound(to: Int32.self)
    var m0: Int32 = 0, m1: Int32 = 0, m2: Int32 = 0, m3: Int32 = 0
    var i = 0
    while i + 4 <= count {
        m0 = max(m0, bits[i] & 0x7fff_ffff)
        m1 = max(m1, bits[i + 1] & 0x7fff_ffff)
        m2 = max(m2, bits[i + 2] & 0x7fff_ffff)
        m3 = max(m3, bits[i + 3] & 0x7fff_ffff)
        i += 4
    }
    while i < count {
        m0 = max(m0, bits[i] & 0x7fff_ffff)
        i += 1
    }
    return Float(bitPattern: UInt32(max(max(m0, m1), max(m2, m3))))
}

/// A cycle of an exact ratio's outputs (from phase 0, window 0) in groups
/// of 8: each group's taps as `span` vectors of 8 lanes, lane j holding
/// output j's tap for the sample m of the group's span.
struct OutputGroups: Sendable {
    let cycle: Int
    let span: Int
    let table: [SIMD8<Float>]
    /// Samples from a group's first window to the next group's.
    let advance: [Int]
    let outputOfPhase: [Int]
    let phaseOfOutput: [Int]

    init?(_ bank: TruePeakFilterBank) {
        guard bank.stepRemainder == 0 else { return nil }
        var a = bank.phaseCount, b = bank.stepPhases
        while b != 0 { (a, b) = (b, a % b) }
        cycle = bank.phaseCount / a
        guard cycle % 8 == 0 else { return nil }
        let position = (0...cycle).map { $0 * bank.stepPhases }
        let window = position.map { $0 / bank.phaseCount }
        phaseOfOutput = (0..<cycle).map { position[$0] % bank.phaseCount }
        var ofPhase = [Int](repeating: 0, count: bank.phaseCount)
        for k in 0..<cycle { ofPhase[phaseOfOutput[k]] = k }
        outputOfPhase = ofPhase
        advance = stride(from: 0, to: cycle, by: 8).map { window[$0 + 8] - window[$0] }
        span = bank.length + (stride(from: 0, to: cycle, by: 8).map { window[$0 + 7] - window[$0] }.max() ?? 0)
        var table = [SIMD8<Float>](repeating: SIMD8(), count: cycle / 8 * span)
        for k in 0..<cycle {
            let g = k / 8, d = window[k] - window[g * 8], ph = phaseOfOutput[k]
            for i in 0..<bank.length {
                table[g * span + d + i][k % 8] = Float(bank.coefficients[ph * bank.length + i])
            }
        }
        self.table = table
    }
}
