import Filters
import Glibc
import Media
import Pipeline
import Sync

/// The limited plan's processing of one stream, as a filter graph built on
/// the first decoded frame: the gain (`volume`, in doubles), then
/// libavfilter's look-ahead limiter `alimiter` run at 4× the sample rate so
/// it holds the inter-sample (true) peaks and not only the samples', with
/// its delay compensated (`latency`) and no make-up gain (`level=0`); back
/// to the stream's rate at the end. Every sample keeps its place: the frames
/// come out with the timestamps of the ones that went in.
final class PeakLimiter: AudioFrameStage {
    private let gainDB: Double
    private let limitDBTP: Double
    private let path: String
    private let stream: Int
    private let timeBase: Rational
    private var graph: FilterGraph?

    /// How far under the plan's ceiling the first pass sets the limiter:
    /// the resampling back and the encoder add to the peaks (how much is
    /// measured on the output, and corrected by a further pass).
    static let margin = 0.5

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

    func send(_ frame: borrowing Frame) throws(MediaError) {
        if graph == nil {
            let rate = frame.pointer.pointee.sample_rate
            let limit = max(pow(10, limitDBTP / 20), 0.0625)
            let description = "volume=volume=\(fixed(gainDB, 6))dB:precision=double,"
                + "aresample=\(4 * Int(rate)),"
                + "alimiter=limit=\(fixed(limit, 6)):level=0:latency=1:attack=5:release=50,"
                + "aresample=\(rate)"
            graph = try FilterGraph(description, shapedLike: frame, timeBase: timeBase, path: path, stream: stream)
        }
        try graph!.send(frame)
    }

    func sendEnd() throws(MediaError) { try graph?.sendEnd() }

    func receive(into frame: borrowing Frame) throws(MediaError) -> CodecOutput {
        guard let graph else { return .end }
        return try graph.receive(into: frame)
    }

    var outputTimeBase: Rational { graph?.outputTimeBase ?? timeBase }
}
