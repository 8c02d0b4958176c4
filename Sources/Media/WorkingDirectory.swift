import FileAccess
import Glibc

/// A hidden working directory beside an output (the chunks of a chunked
/// transcode), `.NAME.work-XXXXXX`, removed with its files when dropped.
/// Like a named temporary it is locked (`flock` on the directory) for its
/// whole life, so the next run into its folder removes it if its writer was
/// killed (`FolderSweep`), and never while its writer lives. It holds a
/// marker file from its making: a directory is removed only if it is ours
/// (owner, marker) and holds nothing but regular files.
public final class WorkingDirectory {
    static let marker = ".work-"
    /// The file each working directory holds, made first (`O_EXCL`).
    static let markerFile = Directory.name(".avtool-working-directory")
    public let path: String
    /// The directory itself, opened once: it holds the lock, and its files are removed through it.
    private let lock: OpenFile?

    public init(beside output: String) throws(MediaError) {
        let (dir, base) = StagedOutput.split(output)
        // Made and opened relative to the folder's descriptor, as mkdtemp makes one.
        guard let folder = Directory(path: dir),
              let made = folder.makeUniqueDirectory(".\(base)\(Self.marker)", mode: 0o700) else {
            throw MediaError.posix(errno, "could not make a working directory", path: "\(dir)/.\(base)\(Self.marker)")
        }
        path = dir + "/" + Directory.text(made)
        lock = try? folder.open(made, O_RDONLY | O_DIRECTORY, reportingAs: path)
        if let lock {
            flock(lock.descriptor, LOCK_EX)
            _ = try? OpenFile(Self.markerFile, in: lock.descriptor, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600, reportingAs: path)
        }
        TemporaryFiles.shared.register(path)
    }

    deinit {
        // Through the descriptor held since the making: whatever its name names by now.
        if let lock, let entry = Directory(duplicating: lock.descriptor) {
            Self.remove(entry, named: path)
        } else {
            Self.remove(path)
        }
        TemporaryFiles.shared.unregister(path)
    }

    /// Removes the working directory at `path` (this run's own): its regular
    /// files through the directory's descriptor, then the directory if its
    /// name still names it. A directory in it, or a link, keeps it.
    static func remove(_ path: String) {
        guard let parent = Directory(path: StagedOutput.split(path).dir),
              let entry = Directory(Directory.name(StagedOutput.split(path).base), in: parent) else { return }
        remove(entry, named: path)
    }

    /// The same for the open directory `entry`, whose name is `path`.
    private static func remove(_ entry: borrowing Directory, named path: String) {
        let (dir, base) = StagedOutput.split(path)
        guard let st = entry.status, removeFiles(in: entry, pausing: false), let parent = Directory(path: dir) else { return }
        _ = parent.remove(Directory.name(base), ifStill: st, directory: true)
    }

    /// Removes `name` in `folder` if it is a working directory whose writer
    /// is gone: a real directory (not a link), ours, older than a second, not
    /// locked, with our marker (or, killed before it was written, empty), and
    /// nothing in it but regular files. Everything is done through the
    /// directory's descriptor: if the name is swapped for a link meanwhile,
    /// only this directory's files are removed, and the link is kept.
    static func removeIfAbandoned(_ name: [CChar], in folder: borrowing Directory, now: time_t) -> Bool {
        guard let entry = Directory(name, in: folder), let st = entry.status, st.st_uid == geteuid(),
              now - st.st_ctim.tv_sec >= 1, flock(entry.fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        let names = entry.names()
        guard names.isEmpty || names.contains(markerFile) else { return false }
        guard removeFiles(in: entry, pausing: true) else { return false }
        return folder.remove(name, ifStill: st, directory: true)
    }

    /// Removes the files in `entry`, the marker last, if every entry is a
    /// regular file of ours; false (nothing removed) otherwise.
    private static func removeFiles(in entry: borrowing Directory, pausing: Bool) -> Bool {
        let names = entry.names()
        for name in names {
            guard let st = entry.status(of: name), st.st_mode & S_IFMT == S_IFREG, st.st_uid == geteuid() else { return false }
        }
        for name in names where name != markerFile {
            if pausing { FolderSweep.pauseForTests() }
            entry.remove(name)
        }
        entry.remove(markerFile)
        return true
    }
}
