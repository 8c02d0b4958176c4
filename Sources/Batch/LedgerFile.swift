import FileAccess
import Glibc

/// The opening and reading of a ledger file (the main one, a shard's). The
/// ledger lives in the outputs' folder, which others may write into: a
/// ledger that is a link is not followed (the run would append to, and trim,
/// whatever it points at), and one that is not a regular file (a FIFO, which
/// would block; a device such as /dev/zero, which never ends) is refused.
/// Lines are read one at a time with a bound, so no file makes the run hold
/// more than its entries.
enum LedgerFile {
    /// Longer lines are not entries (an entry takes about a kilobyte).
    static let lineLimit = 1 << 20

    /// Opens the ledger file at `path` (`O_NOFOLLOW`, `O_NONBLOCK`: a FIFO
    /// cannot block the open), then checks it is a regular file; nil if it
    /// does not exist and `flags` do not create it.
    static func open(_ path: String, flags: Int32, what: String = "ledger") throws(Ledger.Failure) -> OpenFile? {
        let file: OpenFile
        do throws(FileError) { file = try OpenFile(path: path, flags | O_NOFOLLOW | O_NONBLOCK, mode: 0o644) } catch {
            if error.code == ENOENT && flags & O_CREAT == 0 { return nil }
            if error.code == ELOOP { throw refusal(what, path, "is a symbolic link, which avtool does not follow") }
            throw Ledger.Failure(description: "could not open the \(what) '\(Paths.display(path))': \(error.message)")
        }
        let st = try? file.status()
        guard let st, st.st_mode & S_IFMT == S_IFREG else {
            throw refusal(what, path, "is not a regular file (\(st.map { kind($0.st_mode) } ?? "not a file"))")
        }
        // Blocking again for the writes.
        _ = fcntl(file.descriptor, F_SETFL, fcntl(file.descriptor, F_GETFL) & ~O_NONBLOCK)
        return file
    }

    private static func refusal(_ what: String, _ path: String, _ why: String) -> Ledger.Failure {
        Ledger.Failure(description: "the \(what) '\(Paths.display(path))' \(why); remove it, or choose another with --ledger")
    }

    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFDIR: "a directory"
        case S_IFSOCK: "a socket"
        default: "not a file"
        }
    }

    /// Each line of the open `file` from its current position, without
    /// its newline, empty ones left out; a line longer than `lineLimit` is
    /// given as nil (not an entry) without being kept.
    static func lines(of file: OpenFile, _ body: ([UInt8]?) -> Void) {
        var line: [UInt8] = []
        var tooLong = false
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        func end() {
            if tooLong { body(nil) } else if !line.isEmpty { body(line) }
            line.removeAll(keepingCapacity: true)
            tooLong = false
        }
        while true {
            // (A read that fails ends the lines, as the file's end does.)
            let n = chunk.withUnsafeMutableBytes { (try? file.readSome(into: $0)) ?? 0 }
            guard n > 0 else { break }
            var start = 0
            while start < n {
                let newline = chunk[start..<n].firstIndex(of: UInt8(ascii: "\n"))
                let piece = chunk[start..<(newline ?? n)]
                if !tooLong {
                    if line.count + piece.count > lineLimit {
                        tooLong = true
                        line.removeAll()
                    } else {
                        line += piece
                    }
                }
                guard let newline else { break }
                end()
                start = newline + 1
            }
        }
        end()
    }
}
