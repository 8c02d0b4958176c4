#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The polyphase filter FFmpeg's `ebur128` measures true peaks through:
/// libswresample's default resampler from the stream's rate to 192 kHz
/// (resample.c: 32 taps at the cutoff 0.97, a Kaiser window of beta 9, the
/// phases the exact ratio needs — 4 from 48 kHz, 640 from 44.1 kHz — or
/// 1024), designed the same way in doubles, with the same stepping from one
/// output to the next (an index in phases, a fraction in `sourceIncrement`ths).
public struct TruePeakFilterBank: Sendable {
    public static let outputRate = 192_000
    static let filterSize = 32, phaseShift = 10, cutoff = 0.97, kaiserBeta = 9.0

    /// Taps per phase.
    public let length: Int
    public let phaseCount: Int
    /// `phaseCount` rows of `length` taps.
    public let coefficients: [Double]
    /// Per output: `stepPhases` phases on, and `stepRemainder / sourceIncrement` of one.
    public let sourceIncrement: Int
    public let stepPhases: Int
    public let stepRemainder: Int
    /// The first output's window starts this many samples into the mirrored
    /// head (`length` samples reflected before the first); its phase is 0.
    public let firstWindow: Int
    /// The most any phase can gain: max over phases of the sum of |taps|.
    /// No output exceeds its window's largest sample times this.
    public let gainBound: Double
    /// Phase 0 passes the sample under its centre through unchanged (upsampling).
    public let phaseZeroIsSample: Bool

    public init(sampleRate: Int) {
        let outRate = Self.outputRate
        let factor = min(Double(outRate) * Self.cutoff / Double(sampleRate), 1)
        var length = max(Int((Double(Self.filterSize) / factor).rounded(.up)), 1)
        if length > 1 { length += length & 1 }
        var phases = 1 << Self.phaseShift
        let exact = reduced(outRate, sampleRate)
        if exact.numerator <= phases { phases = exact.numerator }
        self.length = length
        phaseCount = phases
        coefficients = Self.design(factor: factor, length: length, phases: phases)
        let ratio = reduced(outRate, sampleRate * phases)
        var src = ratio.numerator, dst = ratio.denominator
        while dst < 1 << 20 && src < 1 << 20 {
            dst *= 2
            src *= 2
        }
        sourceIncrement = src
        stepPhases = dst / src
        stepRemainder = dst % src
        firstWindow = length - (length - 1) / 2
        var bound = 0.0
        for ph in 0..<phases {
            bound = max(bound, coefficients[ph * length..<(ph + 1) * length].reduce(0) { $0 + abs($1) })
        }
        gainBound = bound
        let center = (length - 1) / 2, bank = coefficients
        phaseZeroIsSample = (0..<length).allSatisfy { bank[$0] == ($0 == center ? 1 : 0) }
    }

    /// resample.c's `build_filter` for the Kaiser window: a windowed sinc
    /// per phase, every phase divided by the sum of phase 0's taps; with an
    /// even count, the phases past the middle mirror the ones before it.
    static func design(factor: Double, length: Int, phases: Int) -> [Double] {
        var bank = [Double](repeating: 0, count: phases * length)
        let center = (length - 1) / 2
        let computed = phases % 2 == 1 ? phases : phases / 2 + 1
        var norm = 0.0
        for ph in 0..<computed {
            var s = sin(Double.pi * Double(ph) / Double(phases)) * (center & 1 == 1 ? 1 : -1)
            var row = [Double](repeating: 0, count: length)
            for i in 0..<length {
                let x = Double.pi * (Double(i - center) - Double(ph) / Double(phases)) * factor
                var y = x == 0 ? 1 : factor == 1 ? s / x : sin(x) / x
                let w = 2 * x / (factor * Double(length) * Double.pi)
                y *= besselI0(kaiserBeta * max(1 - w * w, 0).squareRoot())
                row[i] = y
                s = -s
                if ph == 0 { norm += y }
            }
            for i in 0..<length where ph < phases { bank[ph * length + i] = row[i] / norm }
            // In place, as resample.c does (the middle phase copies onto itself).
            guard phases % 2 == 0, ph > 0 else { continue }
            for i in 0..<length { bank[(phases - ph) * length + length - 1 - i] = bank[ph * length + i] }
        }
        return bank
    }

    /// The modified Bessel function of the first kind, order 0, by its series.
    static func besselI0(_ x: Double) -> Double {
        let q = x * x / 4
        var term = 1.0, sum = 1.0, k = 1.0
        while true {
            term *= q / (k * k)
            if sum + term == sum { return sum }
            sum += term
            k += 1
        }
    }
}

/// `a/b` in lowest terms (positive integers).
private func reduced(_ a: Int, _ b: Int) -> (numerator: Int, denominator: Int) {
    var x = a, y = b
    while y != 0 { (x, y) = (y, x % y) }
    return (a / x, b / x)
}
