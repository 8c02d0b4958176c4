import CFFmpeg
import Glibc

/// FFmpeg's muxers refuse some streams in words about FFmpeg ("Operation not
/// permitted", "Not yet implemented in FFmpeg, patches welcome", "Invalid
/// argument"): said here for the user's file — which stream, what the muxer
/// cannot take, what to do instead — with FFmpeg's text kept after it, and
/// coded `unsupported` (a muxer's refusal is not the file system's).
extension OutputFile {
    /// The header refused: the stream the muxer's set-up refuses alone
    /// (`Container.setUpAccepts`), named; nil when none is refused alone.
    func refusedStream(_ code: Int32) -> MediaError? {
        for i in 0..<Int(context.pointee.nb_streams) {
            let par = context.pointee.streams[i]!.pointee.codecpar!
            guard container.setUpAccepts(par) == false else { continue }
            let kind = Self.kind(par)
            return MediaError(code: code, operation: "could not write", path: name, stream: i,
                              message: "the \(container.name) muxer of FFmpeg 5.1 cannot write \(Self.what(par)) "
                                + "(FFmpeg: \(MediaError.describe(code)))",
                              remedy: .otherContainerOrConvert(kind), category: .unsupported)
        }
        return nil
    }

    /// A packet refused while the output itself is sound (no I/O error):
    /// movenc returns EPERM for a packet that holds several frames ("input is
    /// not a single packet", AMR stored several frames a sample) and
    /// "patches welcome" for one it cannot cut into samples.
    func refusedPacket(_ code: Int32, stream: Int) -> MediaError? {
        guard code == avtool_averror(EPERM) || code == AVTOOL_AVERROR_PATCHWELCOME,
              (context.pointee.pb?.pointee.error ?? 0) >= 0 else { return nil }
        let par = context.pointee.streams[stream]!.pointee.codecpar!
        let cause = code == avtool_averror(EPERM) ? "a packet that holds several frames or pictures, which it takes only one at a time"
            : "a packet it cannot divide into samples"
        return MediaError(code: code, operation: "could not write", path: name, stream: stream,
                          message: "the \(container.name) muxer of FFmpeg 5.1 refused \(Self.what(par)): \(cause) "
                            + "(FFmpeg: \(MediaError.describe(code)))",
                          remedy: .otherContainerOrConvert(Self.kind(par)), category: .unsupported)
    }

    private static func what(_ par: UnsafePointer<AVCodecParameters>) -> String {
        let codec = avcodec_get_name(par.pointee.codec_id).map { String(cString: $0) } ?? "unknown"
        return "\(MediaType(par.pointee.codec_type).rawValue) codec '\(codec)'"
    }

    private static func kind(_ par: UnsafePointer<AVCodecParameters>) -> StreamKind {
        switch par.pointee.codec_type {
        case AVMEDIA_TYPE_VIDEO: .video
        case AVMEDIA_TYPE_AUDIO: .audio
        case AVMEDIA_TYPE_SUBTITLE: .subtitles
        default: .data
        }
    }
}
