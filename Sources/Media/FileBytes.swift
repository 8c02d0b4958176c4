import FileAccess
import FileNames
import Glibc

/// Directories made, and the copies between open files (`OpenFile`) for
/// the verbs that move bytes without a demuxer (the bulk remux).
public enum FileBytes {
    /// Makes `path` and the directories above it that are missing (`mkdir -p`).
    /// Returns nil, or why it could not (the system's words, naming the
    /// directory that failed).
    public static func makeDirectories(_ path: String) -> String? {
        var current = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            current += (current.isEmpty || current.hasSuffix("/") ? "" : "/") + part
            if FileSystem.makeDirectory(current, 0o777) != 0 && errno != EEXIST {
                return "\(String(cString: strerror(errno))) (\(quoted(current)))"
            }
        }
        guard let st = FileSystem.status(path), st.st_mode & S_IFMT == S_IFDIR else { return "not a directory (\(quoted(path)))" }
        return nil
    }

    /// Opens `path` for writing from its start (a staged temporary); errors name `name`.
    public static func create(_ path: String, reportingAs name: String) throws(MediaError) -> OpenFile {
        try MediaError.files("could not write output") { () throws(FileError) in
            try OpenFile(path: path, O_WRONLY, reportingAs: name)
        }
    }

    /// `count` bytes of `source` from `start` appended to `target` (or
    /// written at `targetOffset`), in pieces of 64 MiB (checking for a stop
    /// between them), by the kernel where it can (`OpenFile.copy`). Errors
    /// name `path`.
    public static func copy(from source: OpenFile, at start: Int64, count: Int64, to target: OpenFile, at targetOffset: Int64? = nil,
                           path: String, cancellation: Cancellation, copied: (Int64) -> Void) throws(MediaError) {
        let piece: Int64 = 64 << 20
        var offset = start
        var left = count
        while left > 0 {
            try cancellation.check()
            let want = Int(min(left, piece))
            let to = targetOffset.map { $0 + (count - left) }
            let n = try MediaError.files("could not write output", path: path) { () throws(FileError) in
                try source.copy(want, at: offset, to: target, at: to)
            }
            guard n > 0 else { throw MediaError.invalid("could not remux", path: path, message: "the input ended early") }
            offset += Int64(n)
            left -= Int64(n)
            copied(Int64(n))
        }
    }
}

/// The size of the file at `path` in bytes (`stat`); nil when there is none to read.
package func fileSize(_ path: String) -> Int64? {
    FileSystem.status(path).map { Int64($0.st_size) }
}
