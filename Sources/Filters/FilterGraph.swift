import CFFmpeg
import CFFmpegFilter
import Glibc
import Media
import Sync

/// A filter graph with one input and one output: `abuffer` (audio) or
/// `buffer` (video) → the filters `description` names → `abuffersink` or
/// `buffersink` (`avfilter_graph_alloc`, `avfilter_graph_parse_ptr`,
/// `avfilter_graph_config`). The graph owns its filter contexts; this class
/// owns the graph. libavfilter is loaded when the first graph is made.
public final class FilterGraph {
    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private let source: UnsafeMutablePointer<AVFilterContext>
    private let sink: UnsafeMutablePointer<AVFilterContext>
    private let path: String
    private let stream: Int
    private let kind: String

    /// A graph whose input takes frames shaped like `first` (audio: sample
    /// format, rate, channel layout; video: pixel format, size, sample
    /// aspect ratio), timed in `timeBase`.
    public init(_ description: String, shapedLike first: borrowing Frame, timeBase: Rational,
                path: String, stream: Int) throws(MediaError) {
        self.path = path
        self.stream = stream
        let video = first.pointer.pointee.width > 0
        kind = video ? "video" : "audio"
        let op = "could not set up the \(kind) filters '\(description)' for"
        func fail(_ code: Int32) -> MediaError { MediaError(code: code, operation: op, path: path, stream: stream) }
        guard avtool_filters_load() == 0 else {
            throw MediaError(code: avtool_averror(ENOSYS), operation: op, path: path, stream: stream,
                             message: "could not load libavfilter: \(String(cString: avtool_filters_load_error()))")
        }
        guard let g = avtool_avfilter_graph_alloc() else { throw fail(AVTOOL_AVERROR_ENOMEM) }
        graph = g
        // Audio filters run on the caller's thread; video ones (tone mapping) on as many as libavfilter likes.
        g.pointee.nb_threads = video ? 0 : 1

        guard let src = avtool_avfilter_graph_alloc_filter(g, avtool_avfilter_get_by_name(video ? "buffer" : "abuffer"), "in") else {
            avtool_avfilter_graph_free(&graph)
            throw fail(AVTOOL_AVERROR_ENOMEM)
        }
        var r = Self.configureSource(src, like: first, timeBase: timeBase)
        if r >= 0 { r = avtool_avfilter_init_str(src, nil) }
        var snk: UnsafeMutablePointer<AVFilterContext>?
        if r >= 0 { r = avtool_avfilter_graph_create_filter(&snk, avtool_avfilter_get_by_name(video ? "buffersink" : "abuffersink"), "out", nil, nil, g) }
        if r >= 0, let snk { r = Self.link(g, description, sources: [src], sink: snk) }
        if r >= 0 { r = avtool_avfilter_graph_config(g, nil) }
        guard r >= 0, let snk else {
            avtool_avfilter_graph_free(&graph)
            throw fail(r < 0 ? r : AVTOOL_AVERROR_ENOMEM)
        }
        source = src
        sink = snk
    }

    deinit { avtool_avfilter_graph_free(&graph) }

    /// The input's shape from a decoded frame (`av_buffersrc_parameters_set`).
    /// A video frame's colour properties travel with each frame.
    static func configureSource(_ src: UnsafeMutablePointer<AVFilterContext>, like frame: borrowing Frame,
                                        timeBase: Rational) -> Int32 {
        guard let par = avtool_av_buffersrc_parameters_alloc() else { return AVTOOL_AVERROR_ENOMEM }
        defer {
            av_channel_layout_uninit(&par.pointee.ch_layout)
            av_free(par)
        }
        let f = frame.pointer
        par.pointee.format = f.pointee.format
        par.pointee.time_base = AVRational(num: timeBase.numerator, den: timeBase.denominator)
        if f.pointee.width > 0 {
            par.pointee.width = f.pointee.width
            par.pointee.height = f.pointee.height
            par.pointee.sample_aspect_ratio = f.pointee.sample_aspect_ratio.num > 0
                ? f.pointee.sample_aspect_ratio : AVRational(num: 1, den: 1)
            return avtool_av_buffersrc_parameters_set(src, par)
        }
        par.pointee.sample_rate = f.pointee.sample_rate
        // A layout the file leaves unnamed (WAV, PCM in MOV) is taken as the
        // usual one for its channel count, as the ffmpeg program does.
        if f.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC {
            av_channel_layout_default(&par.pointee.ch_layout, f.pointee.ch_layout.nb_channels)
        } else {
            let r = av_channel_layout_copy(&par.pointee.ch_layout, &f.pointee.ch_layout)
            if r < 0 { return r }
        }
        return avtool_av_buffersrc_parameters_set(src, par)
    }

    /// Links the sources → `description` → sink: the labels `in` (one
    /// source) or the sources' own names (several), and `out`.
    static func link(_ g: UnsafeMutablePointer<AVFilterGraph>, _ description: String,
                     sources: [UnsafeMutablePointer<AVFilterContext>],
                     sink: UnsafeMutablePointer<AVFilterContext>) -> Int32 {
        var outputs: UnsafeMutablePointer<AVFilterInOut>?
        var inputs = avtool_avfilter_inout_alloc()
        defer {
            avtool_avfilter_inout_free(&outputs)
            avtool_avfilter_inout_free(&inputs)
        }
        // The lists own their names (freed by avfilter_inout_free).
        for source in sources.reversed() {
            guard let o = avtool_avfilter_inout_alloc() else { return AVTOOL_AVERROR_ENOMEM }
            o.pointee.name = sources.count == 1 ? av_strdup("in") : av_strdup(source.pointee.name)
            o.pointee.filter_ctx = source
            o.pointee.pad_idx = 0
            o.pointee.next = outputs
            outputs = o
        }
        guard let i = inputs else { return AVTOOL_AVERROR_ENOMEM }
        i.pointee.name = av_strdup("out")
        i.pointee.filter_ctx = sink
        i.pointee.pad_idx = 0
        i.pointee.next = nil
        return avtool_avfilter_graph_parse_ptr(g, description, &inputs, &outputs, nil)
    }

    /// The time base of the frames that come out (`av_buffersink_get_time_base`).
    public var outputTimeBase: Rational {
        let tb = avtool_av_buffersink_get_time_base(sink)
        return Rational(tb.num, tb.den) ?? .microseconds
    }

    /// Sends a decoded frame (`av_buffersrc_write_frame`: the graph takes a
    /// reference of its own; `frame` is left as it was).
    public func send(_ frame: borrowing Frame) throws(MediaError) {
        try check(avtool_av_buffersrc_write_frame(source, frame.pointer))
    }

    /// Signals the end of input so the filters flush what they hold.
    public func sendEnd() throws(MediaError) {
        try check(avtool_av_buffersrc_add_frame(source, nil))
    }

    /// The next filtered frame (`av_buffersink_get_frame`).
    public func receive(into frame: borrowing Frame) throws(MediaError) -> CodecOutput {
        let r = avtool_av_buffersink_get_frame(sink, frame.pointer)
        if r == AVTOOL_AVERROR_EAGAIN { return .needsInput }
        if r == AVTOOL_AVERROR_EOF { return .end }
        try check(r)
        return .ready
    }

    private func check(_ r: Int32) throws(MediaError) {
        if r < 0 { throw MediaError(code: r, operation: "could not filter \(kind)", path: path, stream: stream) }
    }
}
