import CFFmpeg
import CFFmpegFilter
import Glibc
import Media
import Sync

/// Measures encoded pictures against the pictures they were made from,
/// as `ffmpeg -lavfi ssim` (or `psnr`) does: two `buffer` inputs →
/// libavfilter's `ssim`/`psnr` → `buffersink`, each output frame carrying
/// its score in its metadata (`lavfi.ssim.All`, `lavfi.psnr.mse_avg`).
/// Pictures are paired in the order each side sends them (the n-th encoded
/// picture with the n-th source one), which need not be at the same time.
/// Both sides must have the same size and pixel format. The graph is made
/// from the first source picture.
public final class PictureComparison {
    public let metric: QualityMetric
    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private var sources: (UnsafeMutablePointer<AVFilterContext>, UnsafeMutablePointer<AVFilterContext>)?
    private var sink: UnsafeMutablePointer<AVFilterContext>?
    private let staging: Frame, out: Frame
    private var sent = (0, 0)
    private var pending: [Int64] = []
    private let path: String, stream: Int
    /// Each compared picture's score: SSIM, or its mean squared error (PSNR).
    public private(set) var perPicture: [Double] = []
    /// The largest sample value (255 for 8 bits), for PSNR.
    public private(set) var peak = 255.0

    public init(_ metric: QualityMetric, path: String, stream: Int) throws(MediaError) {
        self.metric = metric
        self.path = path
        self.stream = stream
        staging = try Frame()
        out = try Frame()
    }

    deinit { avtool_avfilter_graph_free(&graph) }

    /// A source picture (the graph takes a reference of its own).
    public func sendSource(_ frame: borrowing Frame) throws(MediaError) {
        if graph == nil { try build(like: frame) }
        try send(frame, to: sources!.0, index: sent.0)
        sent.0 += 1
    }

    /// The encoded picture made of the next source picture, decoded.
    public func sendEncoded(_ frame: borrowing Frame) throws(MediaError) {
        guard let s = sources else {
            throw MediaError.invalid("could not measure the quality of", path: path, stream: stream,
                                     message: "an encoded picture came before any source picture")
        }
        try send(frame, to: s.1, index: sent.1)
        sent.1 += 1
    }

    /// Ends both inputs and gives the score of all the pictures: SSIM's mean,
    /// or PSNR from the mean squared error (as the filters' summaries).
    public func finish() throws(MediaError) -> Double {
        guard let s = sources else { return .nan }
        try check(avtool_av_buffersrc_add_frame(s.0, nil))
        try check(avtool_av_buffersrc_add_frame(s.1, nil))
        try drain()
        return Self.score(of: perPicture[...], metric: metric, peak: peak)
    }

    /// The score of a run of pictures' per-picture values.
    public func score(ofPictures range: Range<Int>) -> Double {
        Self.score(of: perPicture[range], metric: metric, peak: peak)
    }

    /// The scores of `length` pictures in a row: half-overlapping runs, the
    /// last ending with the last picture; the whole when there are no more
    /// than `length` (none without pictures).
    public static func runs(of values: [Double], length: Int, metric: QualityMetric, peak: Double) -> [Double] {
        let n = values.count
        guard n > length, length > 0 else { return n == 0 ? [] : [score(of: values[...], metric: metric, peak: peak)] }
        let starts = Array(stride(from: 0, to: n - length, by: max(1, length / 2))) + [n - length]
        return starts.map { score(of: values[$0..<($0 + length)], metric: metric, peak: peak) }
    }

    /// The lowest score of `length` pictures in a row (`runs`; NaN without pictures).
    public static func weakestRun(of values: [Double], length: Int, metric: QualityMetric, peak: Double) -> Double {
        runs(of: values, length: length, metric: metric, peak: peak).min() ?? .nan
    }

    /// The score of pictures' per-picture values (SSIM, or mean squared errors for PSNR).
    public static func score(of values: ArraySlice<Double>, metric: QualityMetric, peak: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let mean = values.reduce(0, +) / Double(values.count)
        switch metric {
        case .ssim: return mean
        case .psnr: return mean > 0 ? 10 * log10(peak * peak / mean) : 99
        }
    }

    private func send(_ frame: borrowing Frame, to source: UnsafeMutablePointer<AVFilterContext>, index: Int) throws(MediaError) {
        try check(av_frame_ref(staging.pointer, frame.pointer))
        // Paired by their order: the n-th picture of each side at time n.
        staging.pts = Int64(index)
        // The graph takes the reference; `staging` is left blank.
        try check(avtool_av_buffersrc_add_frame(source, staging.pointer))
        try drain()
    }

    private func drain() throws(MediaError) {
        guard let sink else { return }
        while true {
            let r = avtool_av_buffersink_get_frame(sink, out.pointer)
            if r == AVTOOL_AVERROR_EAGAIN || r == AVTOOL_AVERROR_EOF { return }
            try check(r)
            let key = metric == .ssim ? "lavfi.ssim.All" : "lavfi.psnr.mse_avg"
            let entry = av_dict_get(out.pointer.pointee.metadata, key, nil, 0)
            guard let text = entry?.pointee.value, let v = Double(String(cString: text)) else {
                out.unref()
                throw MediaError.invalid("could not measure the quality of", path: path, stream: stream,
                                         message: "the \(metric.rawValue) filter gave a picture without its '\(key)'")
            }
            perPicture.append(v)
            out.unref()
        }
    }

    private func build(like first: borrowing Frame) throws(MediaError) {
        let op = "could not set up the \(metric.rawValue) measure for"
        func fail(_ code: Int32) -> MediaError { MediaError(code: code, operation: op, path: path, stream: stream) }
        guard avtool_filters_load() == 0 else {
            throw MediaError(code: avtool_averror(ENOSYS), operation: op, path: path, stream: stream,
                             message: "could not load libavfilter: \(String(cString: avtool_filters_load_error()))")
        }
        if let d = av_pix_fmt_desc_get(AVPixelFormat(first.pointer.pointee.format)) {
            peak = Double((1 << d.pointee.comp.0.depth) - 1)
        }
        guard let g = avtool_avfilter_graph_alloc() else { throw fail(AVTOOL_AVERROR_ENOMEM) }
        graph = g
        let tb = Rational(1, 25)!
        var made: [UnsafeMutablePointer<AVFilterContext>] = []
        for name in ["source", "encoded"] {
            guard let src = avtool_avfilter_graph_alloc_filter(g, avtool_avfilter_get_by_name("buffer"), name) else {
                throw fail(AVTOOL_AVERROR_ENOMEM)
            }
            var r = FilterGraph.configureSource(src, like: first, timeBase: tb)
            if r >= 0 { r = avtool_avfilter_init_str(src, nil) }
            if r < 0 { throw fail(r) }
            made.append(src)
        }
        var snk: UnsafeMutablePointer<AVFilterContext>?
        var r = avtool_avfilter_graph_create_filter(&snk, avtool_avfilter_get_by_name("buffersink"), "out", nil, nil, g)
        guard r >= 0, let snk else { throw fail(r < 0 ? r : AVTOOL_AVERROR_ENOMEM) }
        r = FilterGraph.link(g, "[source][encoded]\(metric.rawValue)[out]", sources: made, sink: snk)
        if r >= 0 { r = avtool_avfilter_graph_config(g, nil) }
        if r < 0 { throw fail(r) }
        sources = (made[0], made[1])
        sink = snk
    }

    private func check(_ r: Int32) throws(MediaError) {
        if r < 0 { throw MediaError(code: r, operation: "could not measure the \(metric.rawValue) of", path: path, stream: stream) }
    }
}
