#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One second-order section, `y[n] = b0 x[n] + b1 x[n-1] + b2 x[n-2] - a1 y[n-1] - a2 y[n-2]`.
public struct Biquad: Sendable, Equatable {
    public var b0, b1, b2, a1, a2: Double

    public init(b0: Double, b1: Double, b2: Double, a1: Double, a2: Double) {
        (self.b0, self.b1, self.b2, self.a1, self.a2) = (b0, b1, b2, a1, a2)
    }
}

/// ITU-R BS.1770's K-weighting at a sample rate: the pre-filter (a high
/// shelf, +4 dB above about 1.7 kHz) then the RLB high-pass (about 38 Hz),
/// their coefficients derived for the rate the way FFmpeg's `ebur128`
/// derives them (the 48 kHz table's analogue parameters), so 44.1 kHz
/// weighs as FFmpeg weighs it.
public struct KWeighting: Sendable, Equatable {
    public let pre: Biquad
    public let rlb: Biquad

    public init(sampleRate: Int) {
        let rate = Double(sampleRate)
        var k = tan(Double.pi * 1681.974450955533 / rate)
        var q = 0.7071752369554196
        let vh = pow(10, 3.999843853973347 / 20)
        let vb = pow(vh, 0.4996667741545416)
        var a0 = 1 + k / q + k * k
        pre = Biquad(b0: (vh + vb * k / q + k * k) / a0, b1: 2 * (k * k - vh) / a0,
                     b2: (vh - vb * k / q + k * k) / a0, a1: 2 * (k * k - 1) / a0, a2: (1 - k / q + k * k) / a0)
        k = tan(Double.pi * 38.13547087602444 / rate)
        q = 0.5003270373238773
        a0 = 1 + k / q + k * k
        rlb = Biquad(b0: 1, b1: -2, b2: 1, a1: 2 * (k * k - 1) / a0, a2: (1 - k / q + k * k) / a0)
    }
}

/// One channel's K-weighting filter state (direct form I, as FFmpeg's;
/// the previous output's term subtracted last, so each sample waits on one
/// multiply and one subtraction), and what it adds to each sample's power.
public struct KWeightingFilter: Sendable {
    public let weighting: KWeighting
    /// The channel's weight in the sum (BS.1770: 1, surround 1.41, LFE 0).
    public let channelWeight: Double
    private var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0, z1 = 0.0, z2 = 0.0

    public init(weighting: KWeighting, channelWeight: Double) {
        self.weighting = weighting
        self.channelWeight = channelWeight
    }

    /// Filters `count` samples of `input`, adding each one's weighted
    /// square to `power`.
    public mutating func run(_ input: UnsafePointer<Float>, count: Int, addingTo power: UnsafeMutablePointer<Double>) {
        let p = weighting.pre, r = weighting.rlb, w = channelWeight
        var x1 = self.x1, x2 = self.x2, y1 = self.y1, y2 = self.y2, z1 = self.z1, z2 = self.z2
        for n in 0..<count {
            let x0 = Double(input[n])
            let y0 = (x0 * p.b0 + x1 * p.b1 + x2 * p.b2 - y2 * p.a2) - y1 * p.a1
            let z0 = (y0 * r.b0 + y1 * r.b1 + y2 * r.b2 - z2 * r.a2) - z1 * r.a1
            x2 = x1; x1 = x0; y2 = y1; y1 = y0; z2 = z1; z1 = z0
            power[n] += w * (z0 * z0)
        }
        (self.x1, self.x2, self.y1, self.y2, self.z1, self.z2) = (x1, x2, y1, y2, z1, z2)
    }

    /// `run` for two channels at once (the same arithmetic, two lanes).
    public static func run(_ a: inout KWeightingFilter, _ b: inout KWeightingFilter, _ u: UnsafePointer<Float>,
                           _ v: UnsafePointer<Float>, count: Int, addingTo power: UnsafeMutablePointer<Double>) {
        let p = a.weighting.pre, r = a.weighting.rlb, w = SIMD2(a.channelWeight, b.channelWeight)
        var x1 = SIMD2(a.x1, b.x1), x2 = SIMD2(a.x2, b.x2), y1 = SIMD2(a.y1, b.y1)
        var y2 = SIMD2(a.y2, b.y2), z1 = SIMD2(a.z1, b.z1), z2 = SIMD2(a.z2, b.z2)
        for n in 0..<count {
            let x0 = SIMD2(Double(u[n]), Double(v[n]))
            let y0 = (x0 * p.b0 + x1 * p.b1 + x2 * p.b2 - y2 * p.a2) - y1 * p.a1
            let z0 = (y0 * r.b0 + y1 * r.b1 + y2 * r.b2 - z2 * r.a2) - z1 * r.a1
            x2 = x1; x1 = x0; y2 = y1; y1 = y0; z2 = z1; z1 = z0
            let e = w * (z0 * z0)
            power[n] += e[0] + e[1]
        }
        (a.x1, a.x2, a.y1, a.y2, a.z1, a.z2) = (x1[0], x2[0], y1[0], y2[0], z1[0], z2[0])
        (b.x1, b.x2, b.y1, b.y2, b.z1, b.z2) = (x1[1], x2[1], y1[1], y2[1], z1[1], z2[1])
    }
}

/// BS.1770's channel weights as FFmpeg's `ebur128` gives them, by
/// libavutil's channel ids (`AVChannel`): the low-frequency channels count
/// for nothing, the back, side, top-back and surround-direct ones 1.41, any
/// other (or unknown) 1.
public enum LoudnessChannelWeight {
    private static let lowFrequency: Set<Int> = [3, 35]
    /// BL, BR, BC, SL, SR, TBL, TBC, TBR, SDL, SDR.
    private static let surround: Set<Int> = [4, 5, 8, 9, 10, 15, 16, 17, 33, 34]

    public static func weight(channel id: Int) -> Double {
        if lowFrequency.contains(id) { return 0 }
        return surround.contains(id) ? 1.41 : 1
    }
}
