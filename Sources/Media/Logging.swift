import CFFmpeg
import CFFmpegLazy

/// How much of FFmpeg's own logging reaches stderr.
public enum LibraryLogLevel: Sendable {
    /// Nothing: avtool reports errors itself, in one line.
    case quiet
    case warning
    case info
    case debug

    /// Sets `av_log_set_level` for the whole process (when FFmpeg's
    /// libraries are loaded: asking does not load them).
    public func apply() {
        let level: Int32 = switch self {
        case .quiet: AV_LOG_QUIET
        case .warning: AV_LOG_WARNING
        case .info: AV_LOG_INFO
        case .debug: AV_LOG_DEBUG
        }
        avtool_ffmpeg_set_log_level(level)
    }
}
