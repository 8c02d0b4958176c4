import FileNames
import Glibc

/// The one error of a file call (`open`, `pread`, `copy_file_range`, …):
/// the system's `errno`, the call that failed and the file it concerns.
/// Like swift-system's `Errno`, a code with named statics usable in `catch`
/// patterns (`catch FileError.noSuchFile`), which match on the code alone.
public struct FileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The system's `errno`.
    public let code: Int32
    /// The call that failed: `open`, `openat`, `pread`, `pwrite`, `copy_file_range`, `fallocate`, `fstat`, …
    public let call: String
    /// The file's name as the caller gave it (a staged output's target, not its `/proc` path).
    public let path: String?

    public init(code: Int32, call: String, path: String?) {
        self.code = code
        self.call = call
        self.path = path
    }

    /// The `errno` the last call left, for `call` on `path`.
    static func last(_ call: String, _ path: String?) -> FileError {
        FileError(code: errno, call: call, path: path)
    }

    /// The system's words for the code (`strerror`): "No such file or directory".
    public var message: String { String(cString: strerror(code)) }

    /// `pread 'a.mp4': Input/output error`.
    public var description: String { call + (path.map { " " + quoted($0) } ?? "") + ": " + message }

    public static let noSuchFile = FileError(code: ENOENT, call: "", path: nil)
    public static let exists = FileError(code: EEXIST, call: "", path: nil)
    public static let permissionDenied = FileError(code: EACCES, call: "", path: nil)
    public static let noSpace = FileError(code: ENOSPC, call: "", path: nil)
    /// The call or its flags are not supported here (the filesystem, the kernel).
    public static let notSupported = FileError(code: EOPNOTSUPP, call: "", path: nil)

    /// Matches on the code only.
    public static func ~= (pattern: FileError, error: any Error) -> Bool {
        (error as? FileError)?.code == pattern.code
    }
}
