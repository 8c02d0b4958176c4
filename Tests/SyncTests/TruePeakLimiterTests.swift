import Foundation
import PropertyBased
import Testing
@testable import Sync

/// The look-ahead true-peak limiter, checked by the project's meter
/// (`LoudnessMeasurement`, which reads ebur128's true peak).
@Suite("true-peak limiter")
struct TruePeakLimiterTests {
    /// `x` (one array per channel) through a limiter in frames of `frame`
    /// samples, taking what is ready after each; the output per channel.
    static func limit(_ x: [[Float]], rate: Int, gainDB: Double, ceilingDBTP: Double,
                      frame: Int) -> (out: [[Float]], limiter: TruePeakLimiter) {
        var l = TruePeakLimiter(sampleRate: rate, channels: x.count, gainDB: gainDB, ceilingDBTP: ceilingDBTP)
        var out = x.map { _ in [Float]() }
        func drain() {
            let n = l.available
            guard n > 0 else { return }
            let pointers = x.map { _ in UnsafeMutablePointer<Float>.allocate(capacity: n) }
            defer { pointers.forEach { $0.deallocate() } }
            pointers.withUnsafeBufferPointer { l.take(n, into: $0) }
            for c in x.indices { out[c] += UnsafeBufferPointer(start: pointers[c], count: n) }
        }
        var at = 0
        while at < x[0].count {
            let k = min(frame, x[0].count - at)
            let copies = x.map { Array($0[at..<at + k]) }
            withPlanes(copies) { l.add($0, count: k) }
            drain()
            at += k
        }
        l.finish()
        drain()
        return (out, l)
    }

    static func withPlanes(_ channels: [[Float]], _ body: (UnsafeBufferPointer<UnsafePointer<Float>>) -> Void) {
        let pointers = channels.map { c -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: max(c.count, 1))
            p.initialize(from: c, count: c.count)
            return p
        }
        defer { pointers.forEach { $0.deallocate() } }
        pointers.map { UnsafePointer($0) }.withUnsafeBufferPointer(body)
    }

    static func truePeak(_ channels: [[Float]], rate: Int) -> Double {
        LoudnessMeterTests.measure(channels, rate: rate).figures.truePeakDBTP
    }

    /// A loud signal: tones, a bright burst and clipped square edges (the
    /// inter-sample peaks), from a seed.
    static func loud(seed: UInt64, channels: Int, rate: Int, seconds: Double) -> [[Float]] {
        var g = SeededGenerator(seed: seed)
        let n = Int(seconds * Double(rate))
        return (0..<channels).map { _ in
            let f1 = Double.random(in: 50...8000, using: &g), f2 = Double.random(in: 2000...Double(rate) / 2.1, using: &g)
            let a1 = Double.random(in: 0.05...1.5, using: &g), a2 = Double.random(in: 0.05...1.5, using: &g)
            let burst = Int.random(in: 0..<max(n - rate / 10, 1), using: &g)
            return (0..<n).map { i in
                let t = Double(i) / Double(rate)
                var v = a1 * sin(2 * .pi * f1 * t) + a2 * sin(2 * .pi * f2 * t)
                if i >= burst && i < burst + rate / 20 { v += Double.random(in: -2...2, using: &g) }
                if i % 997 < 3 { v = v > 0 ? 1 : -1 }
                return Float(v)
            }
        }
    }

    /// Random loud signals at 48, 44.1 and 22.05 kHz, one to six channels,
    /// any gain and ceiling, in frames of any size: the output's true peak
    /// is at or under the ceiling, and it is exactly as long as the input.
    @Test func loudSignalsStayUnderTheCeiling() async {
        await propertyCheck(
            count: 10,
            input: Gen.uint64(in: 0...UInt64.max),
            zip(Gen.int(in: 0...2), Gen.int(in: 1...3), Gen.int(in: 1...3000)),
            zip(Gen.double(in: -6...18), Gen.double(in: -9...0))
        ) { seed, shape, levels in
            let rate = [48000, 44100, 22050][shape.0], channels = shape.1 == 3 ? 6 : shape.1
            let x = Self.loud(seed: seed, channels: channels, rate: rate, seconds: 0.25)
            let (y, l) = Self.limit(x, rate: rate, gainDB: levels.0, ceilingDBTP: levels.1, frame: shape.2)
            #expect(y.map(\.count) == x.map(\.count))
            let peak = Self.truePeak(y, rate: rate)
            #expect(peak <= levels.1 + 1e-3, "true peak \(peak) over \(levels.1) (rate \(rate), gain \(levels.0))")
            #expect(l.largestReductionDB >= 0)
        }
    }

    /// A signal whose true peak after the gain stays under the ceiling
    /// comes out as the input times the gain, bit for bit, at its place.
    @Test(arguments: [(48000, 1024), (44100, 1152), (48000, 7)])
    func underTheCeilingIsTheGainAlone(_ rate: Int, _ frame: Int) {
        let x = [LoudnessMeterTests.sine(997, amplitude: 0.2, seconds: 0.5, rate: rate),
                 LoudnessMeterTests.sine(440, amplitude: 0.3, seconds: 0.5, rate: rate, phase: 1)]
        let gainDB = 6.0, gain = pow(10, gainDB / 20)
        #expect(Self.truePeak(x, rate: rate) + gainDB < -1)
        let (y, l) = Self.limit(x, rate: rate, gainDB: gainDB, ceilingDBTP: -1, frame: frame)
        #expect(y == x.map { $0.map { Float(Double($0) * gain) } })
        #expect(l.limitedSamples == 0 && l.largestReductionDB == 0)
    }

    /// A 1 kHz tone 6 dB over the ceiling: held at the ceiling (within
    /// 0.1 dB) by taking 6 dB off, with the limiter's figures saying so.
    @Test func toneOverTheCeilingIsHeldAtIt() {
        let rate = 48000
        let x = [LoudnessMeterTests.sine(1000, amplitude: 0.5, seconds: 1, rate: rate)]
        let (y, l) = Self.limit(x, rate: rate, gainDB: 5, ceilingDBTP: -7, frame: 1024)
        let peak = Self.truePeak(y, rate: rate)
        #expect(peak <= -7 + 1e-3 && peak >= -7.1, "\(peak)")
        #expect(abs(l.largestReductionDB - 6) < 0.05, "\(l.largestReductionDB)")
        #expect(l.limitedSamples > rate * 9 / 10)
    }
}

/// SplitMix64: the same numbers from the same seed on every machine.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
