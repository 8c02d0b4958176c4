import CFFmpeg
import FileAccess
import FileNames
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
    /// The target's folder, opened once (`O_DIRECTORY`): the temporary is
    /// made, checked, linked, renamed and removed relative to it, never by a
    /// path after a check, so a folder another user swaps for a link meanwhile
    /// cannot send the output, or a removal, elsewhere.
    private let folder: Directory
    /// The target's name in `folder`.
    private let name: [CChar]
    /// The named temporary's name in `folder`; nil for an unnamed one.
    private let temporaryName: [CChar]?
    /// The unnamed temporary, held until commit or discard; nil for a named one.
    private var unnamed: OpenFile?
    /// The named temporary, open: it holds its lock until commit or discard; nil for an unnamed one.
    private var lock: OpenFile?
    private var done = false
    private let counted: Bool
    /// The temporary has no name (`O_TMPFILE`).
    public var isUnnamed: Bool { temporaryName == nil }
    /// The temporary, open, until commit or discard.
    private var held: OpenFile? { unnamed ?? lock }

    /// Checks the target before any work starts: its directory exists and is
    /// writable, it is not one of `inputs`, and it does not exist unless
    /// `overwrite` (nor is another user's that this one could not give back,
    /// unless `OthersFiles.current` allows it). Reserves the temporary file.
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
        guard let folder = Directory(path: dir) else {
            let e = errno
            throw MediaError(code: avtool_averror(e), operation: op, path: target,
                             message: e == ENOTDIR ? "\(quoted(dir)) is not a directory"
                                : e == ENOENT ? "directory \(quoted(dir)) does not exist"
                                : "directory \(quoted(dir)): \(MediaError.describe(avtool_averror(e)))")
        }
        name = base.fileSystemPath
        let existing = folder.status(following: name)
        for input in inputs where Self.sameFile(input, existing) {
            throw MediaError(code: avtool_averror(EINVAL), operation: op, path: target,
                             message: "the output is the input file", hint: "choose another output path")
        }
        // What the finished file's permissions will be: those of the file it
        // replaces, else what the umask allows (mkstemp makes it 0600).
        let mask = umask(0)
        umask(mask)
        var mode = mode_t(0o666) & ~mask
        if let existing {
            mode = existing.st_mode & 0o7777
            if existing.st_mode & S_IFMT == S_IFDIR {
                throw MediaError.posix(EISDIR, op, path: target)
            }
            if !overwrite {
                throw MediaError(code: avtool_averror(EEXIST), operation: op, path: target,
                                 message: "file exists", remedy: .overwrite)
            }
        }
        if let link = folder.status(of: name) { try Self.checkOwner(of: link, target: target) }
        let swept = FolderSweep.sweep(folder, named: dir)
        if !swept.isEmpty { Self.sweptReporter.withLock { $0 }?(dir, swept) }
        if !named, let file = Self.openUnnamed(in: folder, mode: mode, target: target) {
            unnamed = file
            lock = nil
            temporaryName = nil
            temporary = "/proc/self/fd/\(file.descriptor)"
            self.folder = folder
            if self.counted { OutputBytes.writing(self) }
            return
        }
        unnamed = nil
        // A unique temporary name in the same folder (same filesystem, so
        // the final rename is atomic), made as mkstemp makes one.
        guard let made = folder.makeUniqueFile(".\(base).avtool-", mode: 0o600, reportingAs: target) else {
            let e = errno
            throw MediaError(code: avtool_averror(e), operation: op, path: target,
                             message: e == EACCES || e == EROFS || e == EPERM
                                ? "directory \(quoted(dir)) is not writable (\(MediaError.describe(avtool_averror(e))))"
                                : MediaError.describe(avtool_averror(e)))
        }
        let file = made.file
        fchmod(file.descriptor, mode)
        // Locked for the temporary's whole life: the kernel drops the lock
        // when this process ends, however it ends, which tells a later run
        // the temporary is a killed writer's (`sweep`).
        flock(file.descriptor, LOCK_EX)
        lock = file
        temporaryName = made.name
        temporary = dir + "/" + Directory.text(made.name)
        self.folder = folder
        TemporaryFiles.shared.register(temporary)
        if self.counted { OutputBytes.writing(self) }
    }

    /// The temporary's size so far.
    public var bytesSoFar: Int64 {
        guard let held, let size = try? held.size() else { return 0 }
        return size
    }

    /// Told of the temporaries `init` removed from a directory (the CLI
    /// says so in one line): those whose writer was killed.
    public static let sweptReporter = Locked<(@Sendable (_ directory: String, _ names: [String]) -> Void)?>(nil)

    deinit { discard() }

    /// An unnamed file in `folder`, or nil where the filesystem (or the switch) says no.
    private static func openUnnamed(in folder: borrowing Directory, mode: mode_t, target: String) -> OpenFile? {
        guard getenv("AVTOOL_NAMED_TEMPORARIES") == nil,
              let file = try? OpenFile.unnamed(in: folder.fd, mode: mode, reportingAs: target),
              // It must open again by its /proc path, as the muxer and read-backs open it.
              (try? OpenFile(path: "/proc/self/fd/\(file.descriptor)", O_RDONLY)) != nil else { return nil }
        fchmod(file.descriptor, mode)
        return file
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
    ///
    /// Every step is relative to the folder's descriptor (`linkat`,
    /// `renameat`, `unlinkat`), as the temporary was made.
    public func commit() throws(MediaError) {
        guard !done else { return }
        StopPoint.commit.reached()
        if counted { OutputBytes.finished(self, bytes: bytesSoFar) }
        if overwrite, let existing = folder.status(of: name) {
            try Self.checkOwner(of: existing, target: target)
            keepOwner(of: existing)
            try flushTemporary()
        }
        let replaced = overwrite && folder.status(of: name) != nil
        if let temporaryName {
            try commitNamed(temporaryName)
        } else {
            try commitUnnamed()
        }
        if replaced { folder.synchronize() }
        done = true
        if !isUnnamed { TemporaryFiles.shared.unregister(temporary) }
        (unnamed, lock) = (nil, nil)
    }

    /// The named temporary renamed onto the target (`overwrite`), else linked
    /// under its name and unlinked, so a file that appeared meanwhile is kept.
    private func commitNamed(_ temporaryName: [CChar]) throws(MediaError) {
        let op = "could not write output"
        if overwrite {
            guard folder.rename(temporaryName, to: name) else { throw MediaError.posix(errno, op, path: target) }
            return
        }
        if folder.link(temporaryName, to: name) {
            folder.remove(temporaryName)
            return
        }
        let e = errno
        // Filesystems without hard links: check, then rename.
        guard e != EEXIST, folder.status(of: name) == nil else {
            throw MediaError(code: avtool_averror(EEXIST), operation: op, path: target, message: "file exists",
                             remedy: .overwrite)
        }
        guard folder.rename(temporaryName, to: name) else { throw MediaError.posix(errno, op, path: target) }
    }

    /// The unnamed temporary linked under the target's name; over an
    /// existing file (`overwrite`) through a hidden name of its own and a
    /// rename, which replaces the old file in one step.
    private func commitUnnamed() throws(MediaError) {
        let op = "could not write output"
        if overwrite {
            // The named temporaries' pattern: if a kill comes before the rename, the next run sweeps it.
            guard let named = folder.linkUnique(path: temporary, ".\(Self.split(target).base).avtool-") else {
                throw MediaError.posix(errno, op, path: target)
            }
            guard folder.rename(named, to: name) else {
                let e = errno
                folder.remove(named)
                throw MediaError.posix(e, op, path: target)
            }
        } else if !folder.link(path: temporary, as: name) {
            let e = errno
            if e == EEXIST {
                throw MediaError(code: avtool_averror(EEXIST), operation: op, path: target,
                                 message: "file exists", remedy: .overwrite)
            }
            throw MediaError.posix(e, op, path: target)
        }
    }

    /// Refuses to replace `existing`, another user's regular file, where
    /// this process could not give it back to them (`fchown` needs root), unless
    /// `OthersFiles.current` allows it: the new file would be the caller's,
    /// and its owner could no longer change it or (mode 0600) read it.
    static func checkOwner(of existing: stat, target: String) throws(MediaError) {
        guard existing.st_mode & S_IFMT == S_IFREG, existing.st_uid != geteuid(), geteuid() != 0,
              OthersFiles.current == .refuse else { return }
        throw MediaError(code: avtool_averror(EPERM), operation: "could not write output", path: target,
                         message: "the file is another user's (uid \(existing.st_uid)); replaced, it would be yours",
                         remedy: .replaceOthersFiles)
    }

    /// The temporary given the owner and group of the file it replaces
    /// (`existing`), and its mode again (a change of owner clears set-id
    /// bits), so replacing another user's file (`-y`, as root) leaves that
    /// user their file. Where the system does not allow it (a user may not
    /// give a file away), the new file is the caller's, as `cp` over it is.
    private func keepOwner(of existing: stat) {
        guard existing.st_mode & S_IFMT == S_IFREG, existing.st_uid != geteuid() || existing.st_gid != getegid() else { return }
        guard let fd = held?.descriptor else { return }
        if fchown(fd, existing.st_uid, existing.st_gid) == 0 { fchmod(fd, existing.st_mode & 0o7777) }
    }

    /// `fsync` of the finished temporary; errors name the target.
    private func flushTemporary() throws(MediaError) {
        do throws(FileError) { try held?.synchronize() } catch { throw MediaError(error, "could not write output", path: target) }
    }

    /// Removes the temporary; safe to call again.
    public func discard() {
        guard !done else { return }
        done = true
        if counted { OutputBytes.finished(self, bytes: 0) }
        if let temporaryName {
            folder.remove(temporaryName)
            TemporaryFiles.shared.unregister(temporary)
        }
        (unnamed, lock) = (nil, nil)
    }

    /// Sweeps the folder `target` is to be written into (as `init` does),
    /// telling `sweptReporter` what it removed.
    public static func sweepFolder(of target: String) {
        let dir = split(target).dir
        let swept = FolderSweep.sweep(dir)
        if !swept.isEmpty { sweptReporter.withLock { $0 }?(dir, swept) }
    }

    public static func split(_ path: String) -> (dir: String, base: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let dir = String(path[..<slash])
        return (dir.isEmpty ? "/" : dir, String(path[path.index(after: slash)...]))
    }

    /// Whether `input` is the file `existing` (same device and inode).
    static func sameFile(_ input: String, _ existing: stat?) -> Bool {
        guard let existing, let st = FileSystem.status(input) else { return false }
        return st.st_dev == existing.st_dev && st.st_ino == existing.st_ino
    }
}

/// Whether a writing run may replace another user's file it could not give
/// back to them (`--replace-others-files`). A run's choice, set for the
/// work it wraps (`with`): a batch's jobs, on threads of their own, each
/// have their step's.
public enum OthersFiles: Sendable {
    case refuse, replace

    @TaskLocal public static var current: OthersFiles = .refuse
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
            for p in $0 where FileSystem.unlink(p) != 0 && errno == EISDIR { WorkingDirectory.remove(p) }
            $0.removeAll()
        }
    }
}

