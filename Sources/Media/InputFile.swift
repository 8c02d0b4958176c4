import CFFmpeg
import Glibc
import Sync

/// An opened media file for reading (`avformat_open_input` +
/// `avformat_find_stream_info`); closed with `avformat_close_input`.
public final class InputFile {
    let context: UnsafeMutablePointer<AVFormatContext>
    public let path: String
    private let cancellation: Cancellation

    /// Opens and probes `path`. Errors name the path and FFmpeg's reason.
    public init(path: String, cancellation: Cancellation = .shared) throws(MediaError) {
        self.path = path
        self.cancellation = cancellation
        try Self.checkReadable(path)
        guard var ctx = avformat_alloc_context() else {
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not open input", path: path)
        }
        ctx.pointee.interrupt_callback = cancellation.interruptCallback
        var maybe: UnsafeMutablePointer<AVFormatContext>? = ctx
        // On failure avformat_open_input frees the context it was given.
        let opened = avformat_open_input(&maybe, path, nil, nil)
        guard opened >= 0, let c = maybe else {
            throw MediaError(code: opened, operation: "could not open input", path: path,
                             message: Self.openMessage(opened))
        }
        ctx = c
        let found = avformat_find_stream_info(ctx, nil)
        if found < 0 {
            avformat_close_input(&maybe)
            throw MediaError(code: found, operation: "could not read stream information", path: path)
        }
        context = ctx
    }

    deinit {
        var c: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&c)
    }

    private static func openMessage(_ code: Int32) -> String {
        code == AVTOOL_AVERROR_INVALIDDATA
            ? "not a media file libavformat can read (\(MediaError.describe(code)))"
            : MediaError.describe(code)
    }

    /// Refuses what libavformat would misreport: directories, empty files.
    private static func checkReadable(_ path: String) throws(MediaError) {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw MediaError.posix(errno, "could not open input", path: path)
        }
        if st.st_mode & S_IFMT == S_IFDIR {
            throw MediaError.posix(EISDIR, "could not open input", path: path)
        }
        if st.st_mode & S_IFMT == S_IFREG && st.st_size == 0 {
            throw MediaError(code: AVTOOL_AVERROR_INVALIDDATA, operation: "could not open input", path: path,
                             message: "the file is empty")
        }
    }

    public var streams: [InputStream] {
        (0..<Int(context.pointee.nb_streams)).map { InputStream(file: self, index: $0) }
    }

    /// The demuxer's short name, e.g. `mov,mp4,m4a,3gp,3g2,mj2`.
    public var formatName: String { context.pointee.iformat.pointee.name.string ?? "unknown" }
    public var formatLongName: String? { context.pointee.iformat.pointee.long_name.string }

    /// Container duration (`AV_TIME_BASE` units), if known.
    public var duration: Timestamp? {
        let d = context.pointee.duration
        return d == AVTOOL_NOPTS_VALUE || d < 0 ? nil : Timestamp(d, .microseconds)
    }

    public var startTime: Timestamp? {
        Packet.known(context.pointee.start_time).map { Timestamp($0, .microseconds) }
    }

    /// Overall bit rate in bits per second, if known.
    public var bitRate: Int64? { context.pointee.bit_rate > 0 ? context.pointee.bit_rate : nil }

    public var metadata: [(key: String, value: String)] { entries(of: context.pointee.metadata) }

    public var chapterCount: Int { Int(context.pointee.nb_chapters) }

    /// Size of the file in bytes, if the I/O layer knows it.
    public var size: Int64? {
        guard let pb = context.pointee.pb else { return nil }
        let s = avio_size(pb)
        return s > 0 ? s : nil
    }

    /// Bytes consumed so far, for progress.
    public var bytesRead: Int64 {
        guard let pb = context.pointee.pb else { return 0 }
        return max(avio_tell(pb), 0)
    }

    /// Reads the next packet into `packet` (`av_read_frame`). Returns `false`
    /// at the end of the file. The previous payload is released first. A
    /// damaged packet is returned flagged (`isCorrupt`); the caller decides.
    public func read(into packet: borrowing Packet) throws(MediaError) -> Bool {
        av_packet_unref(packet.pointer)
        let r = av_read_frame(context, packet.pointer)
        if r == AVTOOL_AVERROR_EOF { return false }
        if r < 0 {
            if cancellation.isCancelled { throw MediaError.interrupted }
            throw MediaError(code: r, operation: "could not read", path: path)
        }
        return true
    }

    /// Makes the demuxer skip every stream but `kept` (`AVDISCARD_ALL`):
    /// their packets are not returned and, where the format allows (MP4,
    /// MOV), not even read.
    public func discardAll(except kept: Set<Int>) {
        for i in 0..<Int(context.pointee.nb_streams) where !kept.contains(i) {
            context.pointee.streams[i]!.pointee.discard = AVDISCARD_ALL
        }
    }

    /// The error for a packet flagged corrupt (a cut-off file, a damaged stream).
    public func corruptPacketError(stream: Int) -> MediaError {
        MediaError(code: AVTOOL_AVERROR_INVALIDDATA, operation: "could not read", path: path, stream: stream,
                   message: "packet is corrupt or truncated (the file is damaged or cut off)")
    }
}
