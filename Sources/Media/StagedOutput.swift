import CFFmpeg
import Glibc

/// An output written to a temporary file beside its target and moved into
/// place only by `commit()`. Until then the target is untouched.
///
/// The temporary has no name (`O_TMPFILE` in the target's directory, on
/// the same filesystem): its path is `/proc/self/fd/N`, which everything that
/// opens the output by path (the muxer, its second pass for an index in
/// front, read-backs, the bulk copy) opens like any file, and `commit()`
/// links it under its name. A process killed at any moment, even by SIGKILL
/// or a power cut, leaves nothing behind: the kernel frees an unnamed file
/// with its last descriptor. Where the filesystem refuses unnamed files
/// (some network and FUSE filesystems), or with `AVTOOL_NAMED_TEMPORARIES=1`
/// (for tests), the temporary is a hidden named file, removed when the
/// staged output is dropped or cancelled by a signal.
public final class StagedOutput {
    public let target: String
    public let temporary: String
    public let overwrite: Bool
    /// The unnamed temporary's descriptor, held until commit or discard; -1 for a named one.
    private let unnamed: Int32
    /// The named temporary's descriptor, which holds its lock; -1 for an unnamed one.
    private let lock: Int32
    private var done = false
    private let counted: Bool
    /// The temporary has no name (`O_TMPFILE`).
    public var isUnnamed: Bool { unnamed >= 0 }

    /// Checks the target before any work starts: its directory exists and is
    /// writable, it is not one of `inputs`, and it does not exist unless
    /// `overwrite`. Reserves the temporary file.
    /// `named`: a named temporary even where unnamed files work, for an
    /// intermediate file that another staged writer replaces by its name.
    /// `counted`: its bytes are an output's (`OutputBytes`), not an
    /// intermediate file's; a file written in place of another temporary
    /// (a part later joined) never is.
    public init(target: String, overwrite: Bool, inputs: [String], named: Bool = false,
                counted: Bool = true) throws(MediaError) {
        self.target = target
        self.overwrite = overwrite
        self.counted = counted && !TemporaryFiles.shared.contains(target)
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
        Self.sweepFolder(of: target)
        if !named, let fd = Self.openUnnamed(in: dir, mode: mode) {
            unnamed = fd
            lock = -1
            temporary = "/proc/self/fd/\(fd)"
            if self.counted { OutputBytes.writing(self) }
            return
        }
        unnamed = -1
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
        // Locked for the temporary's whole life: the kernel drops the lock
        // when this process ends, however it ends, which tells a later run
        // the temporary is a killed writer's (`sweep`).
        flock(fd, LOCK_EX)
        lock = fd
        temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        TemporaryFiles.shared.register(temporary)
        if self.counted { OutputBytes.writing(self) }
    }

    /// The temporary's size so far.
    public var bytesSoFar: Int64 {
        var st = stat()
        let ok = unnamed >= 0 ? fstat(unnamed, &st) == 0 : stat(temporary, &st) == 0
        return ok ? Int64(st.st_size) : 0
    }

    /// Told of the temporaries `init` removed from a directory (the CLI
    /// says so in one line): those whose writer was killed.
    public static let sweptReporter = Locked<(@Sendable (_ directory: String, _ names: [String]) -> Void)?>(nil)

    /// Removes what killed runs left in `dir` (`FolderSweep`) and returns the names.
    static func sweep(_ dir: String) -> [String] { FolderSweep.sweep(dir) }

    deinit { discard() }

    /// An unnamed file in `dir`, or nil where the filesystem (or the switch) says no.
    private static func openUnnamed(in dir: String, mode: mode_t) -> Int32? {
        guard AVTOOL_O_TMPFILE != 0, getenv("AVTOOL_NAMED_TEMPORARIES") == nil else { return nil }
        let fd = open(dir, AVTOOL_O_TMPFILE | O_RDWR | O_CLOEXEC, mode)
        guard fd >= 0 else { return nil }
        // It must open again by its /proc path, as the muxer and read-backs open it.
        let again = open("/proc/self/fd/\(fd)", O_RDONLY | O_CLOEXEC)
        guard again >= 0 else {
            close(fd)
            return nil
        }
        close(again)
        fchmod(fd, mode)
        return fd
    }

    /// Gives the unnamed temporary the name `name` (fails with EEXIST if it is taken).
    private func linkUnnamed(as name: String) -> Bool {
        linkat(AT_FDCWD, temporary, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0
    }

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
        StopPoint.commit.reached()
        if counted { OutputBytes.finished(self, bytes: bytesSoFar) }
        let op = "could not write output"
        if unnamed >= 0 {
            try commitUnnamed()
            return
        }
        if overwrite {
            var existing = stat()
            let replacing = lstat(target, &existing) == 0
            if replacing {
                keepOwner(of: existing)
                try flushTemporary()
            }
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
        close(lock)
    }

    /// The unnamed temporary linked under the target's name; over an
    /// existing file (`overwrite`) through a hidden name of its own and a
    /// rename, which replaces the old file in one step.
    private func commitUnnamed() throws(MediaError) {
        let op = "could not write output"
        if overwrite {
            var existing = stat()
            let replacing = lstat(target, &existing) == 0
            if replacing {
                keepOwner(of: existing)
                try flushTemporary()
            }
            let (dir, base) = Self.split(target)
            var named: String?
            let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
            for _ in 0..<100 {
                // The named temporaries' pattern: if a kill comes before the rename, the next run sweeps it.
                let name = "\(dir)/.\(base).avtool-" + String((0..<6).map { _ in letters.randomElement()! })
                if linkUnnamed(as: name) {
                    named = name
                    break
                }
                guard errno == EEXIST else { throw MediaError.posix(errno, op, path: target) }
            }
            guard let named else { throw MediaError.posix(EEXIST, op, path: target) }
            guard rename(named, target) == 0 else {
                let e = errno
                unlink(named)
                throw MediaError.posix(e, op, path: target)
            }
            if replacing { Self.flushDirectory(of: target) }
        } else if !linkUnnamed(as: target) {
            let e = errno
            if e == EEXIST {
                throw MediaError(code: avtool_averror(EEXIST), operation: op, path: target,
                                 message: "file exists", remedy: .overwrite)
            }
            throw MediaError.posix(e, op, path: target)
        }
        done = true
        close(unnamed)
    }

    /// The temporary given the owner and group of the file it replaces
    /// (`existing`), and its mode again (a change of owner clears set-id
    /// bits), so replacing another user's file (`-y`, as root) leaves that
    /// user their file. Where the system does not allow it (a user may not
    /// give a file away), the new file is the caller's, as `cp` over it is.
    private func keepOwner(of existing: stat) {
        guard existing.st_mode & S_IFMT == S_IFREG, existing.st_uid != geteuid() || existing.st_gid != getegid() else { return }
        let fd = unnamed >= 0 ? unnamed : lock
        if fchown(fd, existing.st_uid, existing.st_gid) == 0 { fchmod(fd, existing.st_mode & 0o7777) }
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
        if counted { OutputBytes.finished(self, bytes: 0) }
        if unnamed >= 0 {
            close(unnamed)
            return
        }
        unlink(temporary)
        TemporaryFiles.shared.unregister(temporary)
        close(lock)
    }

    /// Sweeps the folder `target` is to be written into (as `init` does),
    /// telling `sweptReporter` what it removed.
    public static func sweepFolder(of target: String) {
        let dir = split(target).dir
        let swept = sweep(dir)
        if !swept.isEmpty { sweptReporter.withLock { $0 }?(dir, swept) }
    }

    public static func split(_ path: String) -> (dir: String, base: String) {
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

/// Moments of a run a test can stop the process at, to kill it there:
/// with `AVTOOL_STOP_AT=index` (before an output's index is written) or
/// `AVTOOL_STOP_AT=commit` (before an output takes its name) the process
/// stops itself (SIGSTOP) on reaching it. Nothing happens without the variable.
public enum StopPoint: String, Sendable {
    case index, commit

    private static let chosen: String? = getenv("AVTOOL_STOP_AT").map { String(cString: $0) }

    public func reached() {
        if Self.chosen == rawValue { raise(SIGSTOP) }
    }
}

/// Temporaries not yet committed, so a signal handler can remove them when
/// the process must stop at once.
public final class TemporaryFiles: Sendable {
    public static let shared = TemporaryFiles()
    private let paths = Locked<Set<String>>([])

    func register(_ path: String) { paths.withLock { _ = $0.insert(path) } }
    func unregister(_ path: String) { paths.withLock { _ = $0.remove(path) } }
    func contains(_ path: String) -> Bool { paths.withLock { $0.contains(path) } }

    /// Unlinks every registered temporary (a working directory with its files).
    public func removeAll() {
        paths.withLock {
            for p in $0 where unlink(p) != 0 && errno == EISDIR { WorkingDirectory.remove(p) }
            $0.removeAll()
        }
    }
}

