import CFileAccess
import FileNames
import Glibc

/// An open file descriptor, closed once, when the last reference to it goes
/// (nothing that can fail runs then). Every call on it is wrapped here once:
/// interrupted calls (`EINTR`) are made again, reads and writes go on until
/// their whole length is done, and a failure throws one `FileError` naming
/// the call, the file and the system's `errno`.
///
/// `path` is the name errors give: the file's name as the user knows it
/// (a staged output's target, not its `/proc/self/fd` path).
public final class OpenFile: @unchecked Sendable {
    /// The descriptor, for calls this type does not wrap (`mmap`, `flock`, an `AVIOContext`'s writes).
    public let descriptor: Int32
    public let path: String

    /// Takes `descriptor` over: it is closed with this value.
    public init(adopting descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Closed by `close()`: not closed again.
    private var isClosed = false

    deinit { if !isClosed { Glibc.close(descriptor) } }

    /// Closes the file now, reporting what `close(2)` says (a write the
    /// kernel deferred, on some filesystems, fails here); the descriptor is
    /// closed whatever it says, and not again. Nothing may use the file after.
    public func close() throws(FileError) {
        guard !isClosed else { return }
        isClosed = true
        if Glibc.close(descriptor) != 0 && errno != EINTR { throw FileError.last("close", path) }
    }

    /// `open(2)` of `path` (`O_CLOEXEC` added); errors name `reportingAs`, else `path`.
    public convenience init(path: String, _ flags: Int32, mode: mode_t = 0, reportingAs name: String? = nil) throws(FileError) {
        let fd = try Self.retrying("open", name ?? path) { path.withFileSystemPath { Glibc.open($0, flags | O_CLOEXEC, mode) } }
        self.init(adopting: fd, path: name ?? path)
    }

    /// `openat(2)` of the entry `name` (NUL-terminated bytes) in the directory open at
    /// `directory`, a link never followed (`O_NOFOLLOW`, `O_CLOEXEC` added): a name
    /// swapped for a link after a check can only fail this, never send it elsewhere.
    public convenience init(_ name: [CChar], in directory: Int32, _ flags: Int32, mode: mode_t = 0,
                            reportingAs path: String) throws(FileError) {
        let fd = try Self.retrying("openat", path) {
            name.withUnsafeBufferPointer { openat(directory, $0.baseAddress!, flags | O_NOFOLLOW | O_CLOEXEC, mode) }
        }
        self.init(adopting: fd, path: path)
    }

    /// Whether this system has unnamed files (`O_TMPFILE`).
    public static let unnamedFilesExist = AVTOOL_O_TMPFILE != 0

    /// `O_TMPFILE`: a file with no name in the directory open at `directory`,
    /// read and written; the kernel frees it with its last descriptor unless
    /// it is linked under a name. `EOPNOTSUPP` (or another code) where the
    /// filesystem refuses.
    public static func unnamed(in directory: Int32, mode: mode_t, reportingAs path: String) throws(FileError) -> OpenFile {
        guard unnamedFilesExist else { throw FileError(code: EOPNOTSUPP, call: "openat", path: path) }
        let fd = try retrying("openat", path) { openat(directory, ".", AVTOOL_O_TMPFILE | O_RDWR | O_CLOEXEC, mode) }
        return OpenFile(adopting: fd, path: path)
    }

    /// The `O_PATH` flag (Linux): a directory opened for lookups only, one may write into but not list.
    public static let lookupOnly = AVTOOL_O_PATH

    /// `fstat(2)`.
    public func status() throws(FileError) -> stat {
        var st = stat()
        guard fstat(descriptor, &st) == 0 else { throw FileError.last("fstat", path) }
        return st
    }

    /// The file's size in bytes (`fstat`).
    public func size() throws(FileError) -> Int64 { Int64(try status().st_size) }

    /// Fills `buffer` from `offset` (`pread`, again until it is full): the
    /// bytes read, fewer than asked only where the file ends.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(FileError) -> Int {
        var got = 0
        while got < buffer.count {
            let n = pread(descriptor, buffer.baseAddress! + got, buffer.count - got, off_t(offset) + off_t(got))
            if n < 0 {
                if errno == EINTR { continue }
                throw FileError.last("pread", path)
            }
            if n == 0 { break }
            got += n
        }
        return got
    }

    /// `count` bytes from `offset`, fewer only where the file ends.
    public func read(_ count: Int, at offset: Int64) throws(FileError) -> [UInt8] {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBytes { b in Result { () throws(FileError) in try read(into: b, at: offset) } }.get()
        if got < count { bytes.removeSubrange(got...) }
        return bytes
    }

    /// All of `bytes` at `offset` (`pwrite`, again until all are written). A
    /// write of nothing with no error (the device takes no more) is `ENOSPC`.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(FileError) {
        var done = 0
        while done < bytes.count {
            let n = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw FileError.last("pwrite", path)
            }
            guard n > 0 else { throw FileError(code: ENOSPC, call: "pwrite", path: path) }
            done += n
        }
    }

    /// All of `bytes` at `offset`.
    public func write(_ bytes: [UInt8], at offset: Int64) throws(FileError) {
        try bytes.withUnsafeBytes { b in Result { () throws(FileError) in try write(b, at: offset) } }.get()
    }

    /// All of `bytes` at the file's position (`write`, again until all are written).
    public func append(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileError.last("write", path)
            }
            guard n > 0 else { throw FileError(code: ENOSPC, call: "write", path: path) }
            done += n
        }
    }

    /// All of `bytes` at the file's position.
    public func append(_ bytes: [UInt8]) throws(FileError) {
        try bytes.withUnsafeBytes { b in Result { () throws(FileError) in try append(b) } }.get()
    }

    /// What one `read(2)` from the file's position gives into `buffer`
    /// (made again while interrupted): 0 at the end.
    public func readSome(into buffer: UnsafeMutableRawBufferPointer) throws(FileError) -> Int {
        try Self.retrying("read", path) { Glibc.read(descriptor, buffer.baseAddress, buffer.count) }
    }

    /// Everything from the file's position to its end.
    public func contents() throws(FileError) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = try chunk.withUnsafeMutableBytes { b in Result { () throws(FileError) in try readSome(into: b) } }.get()
            if n == 0 { return out }
            out.append(contentsOf: chunk[0..<n])
        }
    }

    /// The whole file at `path`.
    public static func contents(of path: String) throws(FileError) -> [UInt8] {
        try OpenFile(path: path, O_RDONLY).contents()
    }

    /// Up to `count` bytes of this file from `offset` into `target` at
    /// `targetOffset` (nil: at its position, which moves on), by the kernel
    /// (`copy_file_range`: no byte through this process), or by a read and a
    /// write where the kernel cannot copy between these two files (another
    /// filesystem, a kernel without it). The bytes copied: 0 where this file
    /// ends at `offset`.
    public func copy(_ count: Int, at offset: Int64, to target: OpenFile, at targetOffset: Int64?) throws(FileError) -> Int {
        var from = offset, to = targetOffset ?? 0
        while true {
            let n = targetOffset == nil ? avtool_copy_file_range(descriptor, &from, target.descriptor, nil, count)
                : avtool_copy_file_range(descriptor, &from, target.descriptor, &to, count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            guard [EXDEV, ENOSYS, EINVAL, EOPNOTSUPP, EPERM].contains(errno) else { throw FileError.last("copy_file_range", target.path) }
            break
        }
        let piece = try read(count, at: offset)
        if let targetOffset { try target.write(piece, at: targetOffset) } else { try target.append(piece) }
        return piece.count
    }

    /// `fallocate(2)` with `FALLOC_FL_KEEP_SIZE`: blocks reserved for `count`
    /// bytes from `offset`, the file's size unchanged. `EOPNOTSUPP` where the
    /// filesystem cannot, `ENOSPC` where the disk has not the room.
    public func reserve(_ count: Int64, at offset: Int64 = 0) throws(FileError) {
        _ = try Self.retrying("fallocate", path) { avtool_reserve_blocks(descriptor, offset, count) }
    }

    /// `ftruncate(2)`.
    public func truncate(to size: Int64) throws(FileError) {
        _ = try Self.retrying("ftruncate", path) { ftruncate(descriptor, off_t(size)) }
    }

    /// `fsync(2)`: the file's data on the disk, and a write error the kernel deferred to write-back reported.
    public func synchronize() throws(FileError) {
        _ = try Self.retrying("fsync", path) { fsync(descriptor) }
    }

    /// `call`'s result, the call made again while it is interrupted; its
    /// `errno` thrown where it returns a negative value.
    private static func retrying<R: BinaryInteger>(_ call: String, _ path: String, _ body: () -> R) throws(FileError) -> R {
        while true {
            let r = body()
            if r >= 0 { return r }
            if errno == EINTR { continue }
            throw FileError.last(call, path)
        }
    }
}
