import CFFmpeg
import Media
import Pipeline
import Sync

/// The limited plan's processing of one stream: the gain and Sync's
/// `TruePeakLimiter` (its envelope from the meter's own 4× filter), on the
/// decoded samples as 32-bit float planes. The limiter holds samples back
/// for its look-ahead; each frame comes out once all its samples are
/// limited, with the timestamp and length of the frame that went in, so
/// every sample keeps its place and the output is as long as the input.
final class PeakLimiter: AudioFrameStage {
    private let gainDB: Double
    private let limitDBTP: Double
    private let path: String
    private let stream: Int
    private let timeBase: Rational
    private var limiter: TruePeakLimiter?
    private let samples = PlanarSamples()
    /// The frames gone in and not yet out: their timestamps and lengths.
    private var shapes: [(pts: Int64?, count: Int)] = []
    private var layout = AVChannelLayout()
    private var rate: Int32 = 0
    private var ended = false

    init(gainDB: Double, limitDBTP: Double, stream: InputStream) throws(MediaError) {
        guard let tb = stream.timeBase else {
            throw MediaError.invalid("could not limit the peaks of", path: stream.file.path, stream: stream.index,
                                     message: "the stream has no valid time base")
        }
        self.gainDB = gainDB
        self.limitDBTP = limitDBTP
        path = stream.file.path
        self.stream = stream.index
        timeBase = tb
    }

    deinit { av_channel_layout_uninit(&layout) }

    /// How far the limiter brought the loudest peak down (dB), and for how long (s).
    var reduction: (db: Double, seconds: Double) {
        guard let limiter else { return (0, 0) }
        return (limiter.largestReductionDB, Double(limiter.limitedSamples) / Double(max(limiter.sampleRate, 1)))
    }

    func send(_ frame: borrowing Frame) throws(MediaError) {
        let f = frame.pointer
        let channels = Int(f.pointee.ch_layout.nb_channels)
        if limiter == nil {
            guard f.pointee.sample_rate > 0, channels > 0, av_channel_layout_copy(&layout, &f.pointee.ch_layout) >= 0 else {
                throw failure("the stream has no sample rate or no channels")
            }
            rate = f.pointee.sample_rate
            limiter = TruePeakLimiter(sampleRate: Int(rate), channels: channels, gainDB: gainDB, ceilingDBTP: limitDBTP)
        }
        guard f.pointee.sample_rate == rate, channels == limiter!.channelCount else {
            throw failure("the stream changes its sample rate or channel count midway")
        }
        guard samples.load(f) else {
            let name = av_get_sample_fmt_name(AVSampleFormat(f.pointee.format)).map { String(cString: $0) } ?? "?"
            throw failure("the decoder gives samples as \(name), which the limiter does not read")
        }
        shapes.append((frame.bestEffortTimestamp, frame.sampleCount))
        samples.withChannels { limiter!.add($0, count: $1) }
    }

    func sendEnd() throws(MediaError) {
        limiter?.finish()
        ended = true
    }

    /// The next frame whose samples are all limited: 32-bit float planes,
    /// stamped as the frame that went in.
    func receive(into frame: borrowing Frame) throws(MediaError) -> CodecOutput {
        guard let shape = shapes.first else { return ended ? .end : .needsInput }
        guard shape.count <= limiter!.available else { return .needsInput }
        shapes.removeFirst()
        let f = frame.pointer
        f.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        f.pointee.sample_rate = rate
        f.pointee.nb_samples = Int32(shape.count)
        var code = av_channel_layout_copy(&f.pointee.ch_layout, &layout)
        if code >= 0 { code = av_frame_get_buffer(f, 0) }
        guard code >= 0 else { throw MediaError(code: code, operation: "could not limit the peaks of", path: path, stream: stream) }
        let planes = (0..<limiter!.channelCount).map {
            UnsafeMutableRawPointer(f.pointee.extended_data[$0]!).assumingMemoryBound(to: Float.self)
        }
        planes.withUnsafeBufferPointer { limiter!.take(shape.count, into: $0) }
        frame.pts = shape.pts
        return .ready
    }

    var outputTimeBase: Rational { timeBase }

    private func failure(_ message: String) -> MediaError {
        MediaError.invalid("could not limit the peaks of", path: path, stream: stream, message: message)
    }
}
