import CFFmpeg
import CFFmpegLazy
import Synchronization

/// How much of FFmpeg's own logging reaches stderr (or the handler given to
/// `LibraryLog.handle`).
public enum LibraryLogLevel: Sendable, Hashable {
    /// Nothing: avtool reports errors itself, in one line.
    case quiet
    /// Errors only.
    case error
    case warning
    case info
    case debug

    var ffmpegLevel: Int32 {
        switch self {
        case .quiet: AV_LOG_QUIET
        case .error: AV_LOG_ERROR
        case .warning: AV_LOG_WARNING
        case .info: AV_LOG_INFO
        case .debug: AV_LOG_DEBUG
        }
    }

    /// The level of a message FFmpeg logs at `level` (`AV_LOG_…`).
    init(message level: Int32) {
        self = level <= AV_LOG_ERROR ? .error : level <= AV_LOG_WARNING ? .warning : level <= AV_LOG_INFO ? .info : .debug
    }

    /// Sets `av_log_set_level` for the whole process (when FFmpeg's
    /// libraries are loaded: asking does not load them).
    public func apply() {
        avtool_ffmpeg_set_log_level(ffmpegLevel)
    }
}

/// One line of FFmpeg's own log.
public struct LibraryLogMessage: Sendable {
    /// How severe it is (never `.quiet`).
    public let level: LibraryLogLevel
    /// The line as FFmpeg formats it (`[mp4 @ 0x…] …`), without its newline.
    public let text: String

    public init(level: LibraryLogLevel, text: String) {
        self.level = level
        self.text = text
    }
}

/// FFmpeg's log sent to a handler instead of stderr. FFmpeg has one log for
/// the whole process, so there is one handler.
public enum LibraryLog {
    private struct Route: Sendable {
        var threshold: Int32
        var handler: (@Sendable (LibraryLogMessage) -> Void)?
    }

    private static let route = Mutex(Route(threshold: AV_LOG_INFO, handler: nil))

    /// Sends FFmpeg's messages up to `level` to `handler`, on the thread that
    /// logs them; `nil` gives them back to FFmpeg's own printing on stderr.
    public static func handle(upTo level: LibraryLogLevel, with handler: (@Sendable (LibraryLogMessage) -> Void)?) {
        route.withLock { $0 = Route(threshold: level.ffmpegLevel, handler: handler) }
        level.apply()
        if handler == nil {
            av_log_set_callback { (context: UnsafeMutableRawPointer?, level: Int32, format: UnsafePointer<CChar>?, arguments: CVaListPointer?) in
                guard let arguments else { return }
                av_log_default_callback(context, level, format, arguments)
            }
            return
        }
        av_log_set_callback { (context: UnsafeMutableRawPointer?, level: Int32, format: UnsafePointer<CChar>?, arguments: CVaListPointer?) in
            let (threshold, handler) = LibraryLog.route.withLock { ($0.threshold, $0.handler) }
            guard let handler, level <= threshold, let format, let arguments else { return }
            var line = [CChar](repeating: 0, count: 1024)
            var printPrefix: Int32 = 1
            _ = av_log_format_line2(context, level, format, arguments, &line, Int32(line.count), &printPrefix)
            var text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            while text.last == "\n" { text.removeLast() }
            guard !text.isEmpty else { return }
            handler(LibraryLogMessage(level: LibraryLogLevel(message: level), text: text))
        }
    }
}
