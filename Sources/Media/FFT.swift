import CFFmpeg
import Sync

/// A real-to-complex and complex-to-real FFT of one size, libavutil's
/// `av_tx` (`AV_TX_FLOAT_RDFT`), forward and inverse contexts made by
/// `av_tx_init` and freed by `av_tx_uninit`. Unnormalized both ways.
public final class RealFFT: RealFourierTransform {
    public let size: Int
    private var forwardContext: OpaquePointer?
    private var inverseContext: OpaquePointer?
    private let forwardFunction: av_tx_fn
    private let inverseFunction: av_tx_fn

    /// `size` must be even (a power of two is fastest).
    public init(size: Int) throws(MediaError) {
        let op = "could not set up an FFT of \(size) points"
        guard size >= 2, size % 2 == 0, size <= Int(Int32.max) else {
            throw MediaError.invalid(op, message: "the size must be even and positive")
        }
        self.size = size
        var scale: Float = 1
        var f: av_tx_fn?
        var i: av_tx_fn?
        let flags = UInt64(AV_TX_UNALIGNED.rawValue)
        try MediaError.check(av_tx_init(&forwardContext, &f, AV_TX_FLOAT_RDFT, 0, Int32(size), &scale, flags), op)
        let r = av_tx_init(&inverseContext, &i, AV_TX_FLOAT_RDFT, 1, Int32(size), &scale, flags)
        guard r >= 0, let f, let i else {
            av_tx_uninit(&forwardContext)
            av_tx_uninit(&inverseContext)
            throw MediaError(code: r < 0 ? r : AVTOOL_AVERROR_ENOMEM, operation: op)
        }
        forwardFunction = f
        inverseFunction = i
    }

    deinit {
        av_tx_uninit(&forwardContext)
        av_tx_uninit(&inverseContext)
    }

    public func forward(_ input: inout [Float], into output: inout [ComplexFloat]) {
        precondition(input.count >= size)
        if output.count != size / 2 + 1 { output = [ComplexFloat](repeating: ComplexFloat(0, 0), count: size / 2 + 1) }
        input.withUnsafeMutableBytes { inp in
            output.withUnsafeMutableBytes { out in
                forwardFunction(forwardContext, out.baseAddress, inp.baseAddress, MemoryLayout<Float>.stride)
            }
        }
    }

    public func inverse(_ input: inout [ComplexFloat], into output: inout [Float]) {
        precondition(input.count >= size / 2 + 1)
        if output.count != size { output = [Float](repeating: 0, count: size) }
        input.withUnsafeMutableBytes { inp in
            output.withUnsafeMutableBytes { out in
                inverseFunction(inverseContext, out.baseAddress, inp.baseAddress, MemoryLayout<ComplexFloat>.stride)
            }
        }
    }
}
