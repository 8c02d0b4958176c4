import FileAccess
import Glibc

/// The removal of what killed runs left in an output folder: named
/// temporaries (`.NAME.avtool-XXXXXX`) and working directories
/// (`.NAME.work-XXXXXX`) whose writer is gone.
///
/// The folder may be shared with people who would like a run of another
/// user (root's, say) to delete or overwrite their victims' files, so every
/// step goes through descriptors (`Directory`): the folder is opened once,
/// each entry with `O_NOFOLLOW`, checked (ours, the right kind, unlocked) and
/// removed relative to the descriptors, never by a path after a check. An
/// entry is removed only if it is ours. A folder others may write into and
/// that is not sticky is not swept at all: there anyone may rename our
/// entries, and a run has no business tidying such a folder.
enum FolderSweep {
    /// Removes the abandoned temporaries and working directories in `dir`
    /// and returns their names. A writer holds a lock (`flock`) on its
    /// temporary from a moment after making it until it is gone; one not
    /// locked and older than a second is a killed writer's. A live writer's
    /// is never touched (two runs may write into one folder at once), nor
    /// this process's own (a temporary another staged writer replaced by
    /// name no longer holds its writer's lock).
    static func sweep(_ dir: String) -> [String] {
        guard let folder = Directory(path: dir) else { return [] }
        return sweep(folder, named: dir)
    }

    /// The same in the open folder `folder`, whose path is `dir`.
    static func sweep(_ folder: borrowing Directory, named dir: String) -> [String] {
        guard !folder.othersMayWrite || folder.isSticky else { return [] }
        let now = time(nil)
        var removed: [String] = []
        for name in folder.names() {
            let text = Directory.text(name)
            guard !TemporaryFiles.shared.contains(dir + "/" + text) else { continue }
            if matches(name, suffix: WorkingDirectory.marker) {
                if WorkingDirectory.removeIfAbandoned(name, in: folder, now: now) { removed.append(text) }
            } else if matches(name, suffix: ".avtool-"), removeTemporaryIfAbandoned(name, in: folder, now: now) {
                removed.append(text)
            }
        }
        return removed
    }

    /// `.` + anything + `suffix` + six characters (`mkstemp`'s and `mkdtemp`'s `XXXXXX`).
    private static func matches(_ name: [CChar], suffix: String) -> Bool {
        let bytes = name.dropLast().map { UInt8(bitPattern: $0) }
        let tail = Array(suffix.utf8)
        guard bytes.count >= 1 + tail.count + 6, bytes[0] == UInt8(ascii: ".") else { return false }
        let start = bytes.count - 6 - tail.count
        return Array(bytes[start..<(start + tail.count)]) == tail
    }

    /// Removes the named temporary `name` if it is a regular file of ours,
    /// older than a second, and not locked by a writer.
    private static func removeTemporaryIfAbandoned(_ name: [CChar], in folder: borrowing Directory, now: time_t) -> Bool {
        guard let file = try? folder.open(name, O_RDONLY | O_NONBLOCK, reportingAs: Directory.text(name)),
              let st = try? file.status(), st.st_mode & S_IFMT == S_IFREG, st.st_uid == geteuid(), now - st.st_ctim.tv_sec >= 1,
              flock(file.descriptor, LOCK_EX | LOCK_NB) == 0 else { return false }
        return folder.remove(name, ifStill: st)
    }

    /// `AVTOOL_TEST_SWEEP_PAUSE=N`: a pause of N microseconds before each
    /// file a sweep removes from a working directory, so a test can swap the
    /// directory's name for a link while the sweep runs. Nothing without it.
    private static let pause: UInt32? = getenv("AVTOOL_TEST_SWEEP_PAUSE").flatMap { UInt32(String(cString: $0)) }

    static func pauseForTests() {
        if let pause { usleep(pause) }
    }
}
