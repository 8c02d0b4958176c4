import FileNames
import Glibc

/// An open directory whose entries are named relative to it (`openat`,
/// `fstatat`, `unlinkat`), never by a path built after a check: a name that
/// another user swaps for a link between the check and the act can then only
/// fail the act, never send it elsewhere. Links are never followed below the
/// directory itself.
public struct Directory: ~Copyable {
    /// The directory's descriptor (`O_DIRECTORY`), closed with this value.
    public let fd: Int32

    /// The directory at `path` (the user named it: a link in its path is theirs to make).
    /// A directory this user may write into but not list (`-wx`, a drop
    /// box) opens for lookups only (`O_PATH`): its entries can be made, linked,
    /// renamed and removed through it, not listed.
    public init?(path: String) {
        func open(_ flags: Int32) -> Int32 { path.withFileSystemPath { Glibc.open($0, flags | O_DIRECTORY | O_CLOEXEC, 0) } }
        var fd = open(O_RDONLY)
        if fd < 0 && errno == EACCES { fd = open(OpenFile.lookupOnly) }
        guard fd >= 0 else { return nil }
        self.fd = fd
    }

    /// The directory `name` in `parent`, if it is one and not a link to one.
    public init?(_ name: [CChar], in parent: borrowing Directory) {
        let fd = name.withUnsafeBufferPointer { openat(parent.fd, $0.baseAddress!, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        self.fd = fd
    }

    /// The directory open at `other` (a descriptor of its own, `dup`).
    public init?(duplicating other: Int32) {
        let fd = dup(other)
        guard fd >= 0 else { return nil }
        self.fd = fd
    }

    deinit { close(fd) }

    /// The directory's own status (`fstat`).
    public var status: stat? {
        var st = stat()
        return fstat(fd, &st) == 0 ? st : nil
    }

    /// The status of the entry `name` itself, a link not followed.
    public func status(of name: [CChar]) -> stat? {
        var st = stat()
        return name.withUnsafeBufferPointer { fstatat(fd, $0.baseAddress!, &st, AT_SYMLINK_NOFOLLOW) } == 0 ? st : nil
    }

    /// The entries' names (NUL-terminated bytes, as the system gives them), "." and ".." left out.
    public func names() -> [[CChar]] {
        let copy = dup(fd)
        guard copy >= 0 else { return [] }
        guard let stream = fdopendir(copy) else {
            close(copy)
            return []
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [[CChar]] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.bindMemory(to: CChar.self).prefix { $0 != 0 }) + [0]
            }
            if name != [46, 0] && name != [46, 46, 0] { names.append(name) }
        }
        return names
    }

    /// The status of the entry `name`, a link followed (as `stat` by path would).
    public func status(following name: [CChar]) -> stat? {
        var st = stat()
        return name.withUnsafeBufferPointer { fstatat(fd, $0.baseAddress!, &st, 0) } == 0 ? st : nil
    }

    /// Makes an entry under a name of its own, `prefix` and six random
    /// letters (as `mkstemp` and `mkdtemp` do, relative to this directory):
    /// `make` tries a name, giving a descriptor or 0 on success, -1 with
    /// `errno` on failure; a name taken is tried again with another. Nil with
    /// `errno` set if none could be made.
    public func makeUnique(_ prefix: String, _ make: (UnsafePointer<CChar>) -> Int32) -> (name: [CChar], result: Int32)? {
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        for _ in 0..<100 {
            let name = (prefix + String(decoding: (0..<6).map { _ in letters.randomElement()! }, as: UTF8.self)).fileSystemPath
            let result = name.withUnsafeBufferPointer { make($0.baseAddress!) }
            if result >= 0 { return (name, result) }
            guard errno == EEXIST else { return nil }
        }
        errno = EEXIST
        return nil
    }

    /// A new file under a name of its own (`makeUnique`), read and written,
    /// made only where no entry is (`O_CREAT | O_EXCL`, a link never
    /// followed), with `mode`; its errors name `path`. Nil with `errno` set.
    public func makeUniqueFile(_ prefix: String, mode: mode_t, reportingAs path: String) -> (name: [CChar], file: OpenFile)? {
        let fd = self.fd
        guard let made = makeUnique(prefix, { openat(fd, $0, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode) }) else {
            return nil
        }
        return (made.name, OpenFile(adopting: made.result, path: path))
    }

    /// A new directory under a name of its own (`mkdirat`, as `mkdtemp`). Nil with `errno` set.
    public func makeUniqueDirectory(_ prefix: String, mode: mode_t) -> [CChar]? {
        let fd = self.fd
        return makeUnique(prefix) { mkdirat(fd, $0, mode) }?.name
    }

    /// The file at `path` (a link in the path followed: an unnamed file's
    /// `/proc/self/fd` path) linked here as `name` (`linkat`); false, with
    /// `errno` set (`EEXIST` where the name is taken), if it could not be.
    public func link(path: String, as name: [CChar]) -> Bool {
        name.withUnsafeBufferPointer { n in path.withFileSystemPath { linkat(AT_FDCWD, $0, fd, n.baseAddress!, AT_SYMLINK_FOLLOW) } } == 0
    }

    /// The file at `path` linked here under a name of its own (`makeUnique`). Nil with `errno` set.
    public func linkUnique(path: String, _ prefix: String) -> [CChar]? {
        let fd = self.fd
        return makeUnique(prefix) { n in path.withFileSystemPath { linkat(AT_FDCWD, $0, fd, n, AT_SYMLINK_FOLLOW) } }?.name
    }

    /// `renameat` within this directory; false, with `errno` set, if it could not be.
    public func rename(_ from: [CChar], to: [CChar]) -> Bool {
        from.withUnsafeBufferPointer { f in to.withUnsafeBufferPointer { renameat(fd, f.baseAddress!, fd, $0.baseAddress!) } } == 0
    }

    /// `linkat` within this directory; false, with `errno` set (`EEXIST` where `to` is taken), if it could not be.
    public func link(_ from: [CChar], to: [CChar]) -> Bool {
        from.withUnsafeBufferPointer { f in to.withUnsafeBufferPointer { linkat(fd, f.baseAddress!, fd, $0.baseAddress!, 0) } } == 0
    }

    /// `fsync` of the directory: its entries' changes (a rename) on the disk.
    public func synchronize() { _ = fsync(fd) }

    /// Opens the entry `name` (`flags` gain `O_NOFOLLOW` and `O_CLOEXEC`: `OpenFile`'s `openat`);
    /// errors name it `path`.
    public func open(_ name: [CChar], _ flags: Int32, mode: mode_t = 0, reportingAs path: String) throws(FileError) -> OpenFile {
        try OpenFile(name, in: fd, flags, mode: mode, reportingAs: path)
    }

    /// Removes the entry `name` (`AT_REMOVEDIR` for an empty directory); false if it could not.
    @discardableResult
    public func remove(_ name: [CChar], directory: Bool = false) -> Bool {
        name.withUnsafeBufferPointer { unlinkat(fd, $0.baseAddress!, directory ? AT_REMOVEDIR : 0) } == 0
    }

    /// Removes the entry `name` only if it is still the file `expected` was
    /// taken of (same device and inode), so a name swapped meanwhile is kept.
    public func remove(_ name: [CChar], ifStill expected: stat, directory: Bool = false) -> Bool {
        guard let now = status(of: name), now.st_dev == expected.st_dev, now.st_ino == expected.st_ino else { return false }
        return remove(name, directory: directory)
    }

    /// Another user may add, remove or rename entries here: the directory is
    /// another's, or writable by a group not ours, or by everyone. (ACLs are
    /// not read; a group is judged by its id alone.)
    public var othersMayWrite: Bool {
        guard let st = status else { return true }
        return (st.st_uid != geteuid() && st.st_mode & S_IWUSR != 0)
            || (st.st_gid != getegid() && st.st_mode & S_IWGRP != 0)
            || st.st_mode & S_IWOTH != 0
    }

    /// The directory's sticky bit: only an entry's owner (or the directory's) may remove or rename it.
    public var isSticky: Bool { status.map { $0.st_mode & S_ISVTX != 0 } ?? false }

    /// `name` as text, exactly (`FileName`).
    public static func text(_ name: [CChar]) -> String { FileName.text(name.dropLast().map { UInt8(bitPattern: $0) }) }

    /// `text` as a name (NUL-terminated bytes).
    public static func name(_ text: String) -> [CChar] { text.fileSystemPath }
}
