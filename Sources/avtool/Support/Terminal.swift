import FileNames
import Glibc

/// Writes to stderr with write(2): Glibc's `stderr` is not concurrency-safe in Swift 6.
/// Lines of text (`error`, `output`) go through `escapedLines`: whatever a
/// tag, a track's name or a file's holds, it cannot drive the terminal.
enum Terminal {
    static func error(_ text: String) { write(2, escapedLines(text) + "\n") }
    static func status(_ text: String) { write(2, text) }
    static func output(_ text: String) { write(1, escapedLines(text) + "\n") }

    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    /// All of `text` to `fd` (write(2) until done or it fails).
    static func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }
}
