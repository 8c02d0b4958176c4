import FileNames
import CFFmpeg
import Glibc

/// Reads, writes and copies between open files, for the verbs that move
/// bytes without a demuxer (the bulk remux).
public enum FileBytes {
    /// Up to `count` bytes at `offset` (fewer at the end of the file); nil when none.
    public static func read(_ fd: Int32, _ offset: Int64, _ count: Int) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + got, count - got, off_t(offset) + off_t(got)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            got += n
        }
        return got == 0 ? nil : Array(buffer[0..<got])
    }

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

    /// Opens `path` for writing from its start (a staged temporary).
    public static func create(_ path: String, reportingAs name: String) throws(MediaError) -> Int32 {
        let fd = FileSystem.open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw MediaError.posix(errno, "could not write output", path: name) }
        return fd
    }

    /// All of `bytes`, at `offset`.
    public static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int64, path: String) throws(MediaError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw MediaError.posix(errno, "could not write output", path: path) }
            done += n
        }
    }

    /// All of `bytes`, at the file's position.
    public static func write(_ fd: Int32, _ bytes: [UInt8], path: String) throws(MediaError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw MediaError.posix(errno, "could not write output", path: path) }
            done += n
        }
    }

    /// `count` bytes of `source` from `start` appended to `target` (or
    /// written at `targetOffset`), in pieces of 64 MiB (checking for a stop
    /// between them): by `copy_file_range`, or by reads and writes where the
    /// kernel cannot copy between these files.
    public static func copy(from source: Int32, at start: Int64, count: Int64, to target: Int32, at targetOffset: Int64? = nil,
                           path: String, cancellation: Cancellation, copied: (Int64) -> Void) throws(MediaError) {
        let piece: Int64 = 64 << 20
        var offset = off_t(start)
        var to = targetOffset ?? 0
        var left = count
        var kernel = true
        var buffer: [UInt8] = []
        while left > 0 {
            try cancellation.check()
            let want = Int(min(left, piece))
            var n: Int
            if kernel {
                var from = Int64(offset)
                n = targetOffset == nil ? avtool_copy_file_range(source, &from, target, nil, want)
                    : avtool_copy_file_range(source, &from, target, &to, want)
                if n > 0 { offset = off_t(from) }
                if n < 0 && [EXDEV, ENOSYS, EINVAL, EOPNOTSUPP, EPERM].contains(errno) {
                    kernel = false
                    continue
                }
            } else {
                if buffer.count < want { buffer = [UInt8](repeating: 0, count: want) }
                n = buffer.withUnsafeMutableBytes { pread(source, $0.baseAddress!, want, offset) }
                if n > 0 {
                    let chunk = Array(buffer[0..<n])
                    if targetOffset == nil {
                        try write(target, chunk, path: path)
                    } else {
                        try write(target, chunk, at: to, path: path)
                        to += Int64(n)
                    }
                    offset += off_t(n)
                }
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw n == 0 ? MediaError.invalid("could not remux", path: path, message: "the input ended early")
                    : MediaError.posix(errno, "could not write output", path: path)
            }
            left -= Int64(n)
            copied(Int64(n))
        }
    }
}

/// The size of the file at `path` in bytes (`stat`); nil when there is none to read.
package func fileSize(_ path: String) -> Int64? {
    FileSystem.status(path).map { Int64($0.st_size) }
}
