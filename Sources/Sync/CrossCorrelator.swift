/// One complex value; laid out as FFmpeg's `AVComplexFloat` (re, im).
public struct ComplexFloat: Hashable, Sendable {
    public var re: Float
    public var im: Float

    public init(_ re: Float, _ im: Float) {
        self.re = re
        self.im = im
    }
}

/// A real-input discrete Fourier transform of one size, supplied from
/// outside the core (libavutil's `av_tx` in the bridge, a plain DFT in
/// tests). Unnormalized both ways: `inverse(forward(x)) == size · x`.
public protocol RealFourierTransform: AnyObject {
    /// Samples per transform (even).
    var size: Int { get }
    /// `size` real samples → `size / 2 + 1` complex bins.
    func forward(_ input: inout [Float], into output: inout [ComplexFloat])
    /// `size / 2 + 1` complex bins → `size` real samples. May overwrite `input`.
    func inverse(_ input: inout [ComplexFloat], into output: inout [Float])
}

/// How the cross-spectrum is flattened before the inverse transform.
public enum Whitening: Sendable {
    /// Plain cross-correlation: loud bands dominate.
    case none
    /// Each bin divided by the square root of its magnitude.
    case partial
    /// Each bin divided by its magnitude (PHAT): only phase counts, so a
    /// microphone's EQ changes nothing and the peak is one sample wide.
    case phase
}

/// Generalized cross-correlation by FFT: the cross-spectrum of two signals
/// is limited to a frequency band and whitened (each bin divided by its
/// magnitude, the phase transform PHAT), so a
/// shared event gives one sharp peak whatever each microphone's EQ, and
/// rumble or hiss outside the band counts for nothing.
public final class CrossCorrelator {
    public let fft: any RealFourierTransform
    public let sampleRate: Double
    /// Bins inside the band.
    public let bins: Range<Int>
    public let whitening: Whitening
    private var buffer: [Float]
    private var product: [ComplexFloat]

    public init(fft: any RealFourierTransform, sampleRate: Double, band: ClosedRange<Double>, whitening: Whitening = .phase) {
        self.fft = fft
        self.sampleRate = sampleRate
        self.whitening = whitening
        let n = fft.size
        let binHz = sampleRate / Double(n)
        let low = max(1, Int((band.lowerBound / binHz).rounded(.up)))
        let high = min(n / 2, Int((band.upperBound / binHz).rounded(.down)))
        bins = low..<max(low, high + 1)
        buffer = [Float](repeating: 0, count: n)
        product = [ComplexFloat](repeating: ComplexFloat(0, 0), count: n / 2 + 1)
    }

    public var size: Int { fft.size }

    /// The spectrum of `samples` (zero-padded or cut to the transform size).
    public func spectrum(_ samples: ArraySlice<Float>) -> [ComplexFloat] {
        let n = fft.size
        buffer.withUnsafeMutableBufferPointer { b in
            var i = 0
            for v in samples.prefix(n) { b[i] = v; i += 1 }
            while i < n { b[i] = 0; i += 1 }
        }
        var out = [ComplexFloat](repeating: ComplexFloat(0, 0), count: n / 2 + 1)
        fft.forward(&buffer, into: &out)
        return out
    }

    public func spectrum(_ samples: [Float]) -> [ComplexFloat] { spectrum(samples[...]) }

    /// Circular cross-correlation `c[k] = Σₙ a[n + k] · b[n]` of the signals
    /// whose spectra are `a` and `b`, band-limited and whitened: a peak at
    /// `k` means `a` holds `b`'s content `k` samples later (negative lags
    /// wrap to `size − k`). Whitened with PHAT, a perfect match peaks at the
    /// number of bins in the band.
    public func correlate(_ a: [ComplexFloat], _ b: [ComplexFloat], into out: inout [Float]) {
        let w = whitening
        let band = bins
        product.withUnsafeMutableBufferPointer { p in
            a.withUnsafeBufferPointer { x in
                b.withUnsafeBufferPointer { y in
                    for i in 0..<p.count { p[i] = ComplexFloat(0, 0) }
                    for i in band {
                        // a · conj(b)
                        let re = x[i].re * y[i].re + x[i].im * y[i].im
                        let im = x[i].im * y[i].re - x[i].re * y[i].im
                        let m2 = re * re + im * im
                        guard m2 > 1e-30 else { continue }
                        let scale: Float
                        switch w {
                        case .phase: scale = 1 / m2.squareRoot()
                        case .partial: scale = 1 / m2.squareRoot().squareRoot()
                        case .none: scale = 1
                        }
                        p[i] = ComplexFloat(re * scale, im * scale)
                    }
                }
            }
        }
        if out.count != fft.size { out = [Float](repeating: 0, count: fft.size) }
        fft.inverse(&product, into: &out)
    }
}
