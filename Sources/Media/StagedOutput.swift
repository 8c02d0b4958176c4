import CFFmpeg
import Glibc

/// An output written to a temporary file beside its target and moved into
/// place only by `commit()`. Until then the target is untouched; a staged
/// output that is dropped, or cancelled by a signal, removes its temporary.
public final class StagedOutput {
    public let target: String
    public let temporary: String
    public let overwrite: Bool
    private var done = false

    /// Checks the target before any work starts: its directory exists and is
    /// writable, it is not one of `inputs`, and it does not exist unless
    /// `overwrite`. Reserves the temporary file.
    public init(target: String, overwrite: Bool, inputs: [String]) throws(MediaError) {
        self.target = target
        self.overwrite = overwrite
        let op = "could not write output"
        let (dir, base) = Self.split(target)
        guard !base.isEmpty, base != ".", base != ".." else {
            throw MediaError.posix(EISDIR, op, path: target)
        }
        var st = stat()
        guard stat(dir, &st) == 0 else {
            throw MediaError(code: avtool_averror(errno), operation: op, path: target,
                             message: "directory '\(dir)' does not exist")
        }
        guard st.st_mode & S_IFMT == S_IFDIR else {
            throw MediaError(code: avtool_averror(ENOTDIR), operation: op, path: target,
                             message: "'\(dir)' is not a directory")
        }
        for input in inputs where Self.sameFile(input, target) {
            throw MediaError(code: avtool_averror(EINVAL), operation: op, path: target,
                             message: "the output is the input file", hint: "choose another output path")
        }
        // What the finished file's permissions will be: those of the file it
        // replaces, else what the umask allows (mkstemp makes it 0600).
        let mask = umask(0)
        umask(mask)
        var mode = mode_t(0o666) & ~mask
        var tst = stat()
        if stat(target, &tst) == 0 {
            mode = tst.st_mode & 0o7777
            if tst.st_mode & S_IFMT == S_IFDIR {
                throw MediaError.posix(EISDIR, op, path: target)
            }
            if !overwrite {
                throw MediaError(code: avtool_averror(EEXIST), operation: op, path: target,
                                 message: "file exists", remedy: .overwrite)
            }
        }
        // Reserve a unique temporary name in the same directory (same
        // filesystem, so the final rename is atomic).
        var template = Array("\(dir)/.\(base).avtool-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            let e = errno
            throw MediaError(code: avtool_averror(e), operation: op, path: target,
                             message: e == EACCES || e == EROFS || e == EPERM
                                ? "directory '\(dir)' is not writable (\(MediaError.describe(avtool_averror(e))))"
                                : MediaError.describe(avtool_averror(e)))
        }
        fchmod(fd, mode)
        close(fd)
        temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        TemporaryFiles.shared.register(temporary)
    }

    deinit { discard() }

    /// Moves the finished temporary onto the target. Without `overwrite` this
    /// never replaces a file that appeared meanwhile (hard link, then unlink).
    ///
    /// When it replaces an existing file (`overwrite`), the temporary is
    /// flushed to the disk first (`fsync`), and the directory after the
    /// rename: a power cut then leaves the old file or the whole new one,
    /// never a name on data still in memory with the old data gone, and a
    /// write error the kernel deferred to write-back surfaces here, before
    /// the old file is lost. A new name is not flushed (as the ffmpeg program
    /// and `cp` do not): a power cut can lose only that output, never an
    /// input or an older file, and the batch ledger's size and time check
    /// redoes it. Flushing costs about 0.3 s per GB here (bench/remux-bench.sh).
    public func commit() throws(MediaError) {
        guard !done else { return }
        let op = "could not write output"
        if overwrite {
            var existing = stat()
            let replacing = lstat(target, &existing) == 0
            if replacing { try flushTemporary() }
            guard rename(temporary, target) == 0 else {
                throw MediaError.posix(errno, op, path: target)
            }
            if replacing { Self.flushDirectory(of: target) }
        } else if link(temporary, target) == 0 {
            unlink(temporary)
        } else {
            let e = errno
            if e == EEXIST {
                throw MediaError(code: avtool_averror(EEXIST), operation: op, path: target,
                                 message: "file exists", remedy: .overwrite)
            }
            // Filesystems without hard links: check, then rename.
            var st = stat()
            if stat(target, &st) == 0 {
                throw MediaError(code: avtool_averror(EEXIST), operation: op, path: target, message: "file exists",
                                 remedy: .overwrite)
            }
            guard rename(temporary, target) == 0 else { throw MediaError.posix(errno, op, path: target) }
        }
        done = true
        TemporaryFiles.shared.unregister(temporary)
    }

    /// `fsync` of the finished temporary; errors name the target.
    private func flushTemporary() throws(MediaError) {
        let fd = open(temporary, O_RDONLY | O_CLOEXEC)
        var e: Int32 = 0
        if fd < 0 {
            e = errno
        } else {
            while fsync(fd) != 0 {
                if errno == EINTR { continue }
                e = errno
                break
            }
            close(fd)
        }
        guard e != 0 else { return }
        if let full = OutputFile.fullDisk(avtool_averror(e), name: target) { throw full }
        throw MediaError.posix(e, "could not write output", path: target)
    }

    /// `fsync` of the directory holding `path`, so the rename itself is on
    /// the disk. Best effort: some filesystems refuse it on a directory.
    static func flushDirectory(of path: String) {
        let fd = open(split(path).dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// Removes the temporary; safe to call again.
    public func discard() {
        guard !done else { return }
        done = true
        unlink(temporary)
        TemporaryFiles.shared.unregister(temporary)
    }

    /// Temporaries of `target` that a killed process left behind (the names
    /// `init` reserves), for a caller that knows no other process is writing
    /// `target` to remove.
    public static func leftovers(of target: String) -> [String] {
        let (dir, base) = split(target)
        var g = glob_t()
        defer { globfree(&g) }
        // Glob metacharacters in the name are escaped so only the suffix is a pattern.
        let escaped = "\(dir)/.\(base)".map { "*?[\\".contains($0) ? "\\\($0)" : String($0) }.joined()
        guard glob(escaped + ".avtool-??????", GLOB_PERIOD, nil, &g) == 0 else { return [] }
        return (0..<Int(g.gl_pathc)).compactMap { g.gl_pathv[$0].map { String(cString: $0) } }
    }

    static func split(_ path: String) -> (dir: String, base: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let dir = String(path[..<slash])
        return (dir.isEmpty ? "/" : dir, String(path[path.index(after: slash)...]))
    }

    /// Same inode, or (for a target that does not exist yet) same resolved path.
    static func sameFile(_ a: String, _ b: String) -> Bool {
        var sa = stat(), sb = stat()
        if stat(a, &sa) == 0, stat(b, &sb) == 0 {
            return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
        }
        return false
    }
}

/// Temporaries not yet committed, so a signal handler can remove them when
/// the process must stop at once.
public final class TemporaryFiles: Sendable {
    public static let shared = TemporaryFiles()
    private let paths = Locked<Set<String>>([])

    func register(_ path: String) { paths.withLock { _ = $0.insert(path) } }
    func unregister(_ path: String) { paths.withLock { _ = $0.remove(path) } }

    /// Unlinks every registered temporary.
    public func removeAll() {
        paths.withLock {
            for p in $0 { unlink(p) }
            $0.removeAll()
        }
    }
}

