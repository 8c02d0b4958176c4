import FileAccess
import FileNames
import FoundationEssentials
import Glibc

/// The file-system paths a batch works with: reading a whole file (the
/// recipe, the ledger), joining a recipe's relative paths to its base,
/// printing a path relative to the working directory, and asking whether a
/// path exists or is a file.
public enum Paths {
    /// The whole file at `path`, read with POSIX `read` (FoundationEssentials'
    /// `FileManager.contents(atPath:)` loses a 4 KiB buffer on every empty
    /// file, which LeakSanitizer reports); nil, with `errno` set, when it
    /// cannot be read.
    public static func contents(of path: String) -> [UInt8]? {
        do throws(FileError) { return try OpenFile.contents(of: path) } catch {
            errno = error.code
            return nil
        }
    }

    /// `rel` under `base` unless it is absolute.
    public static func join(_ base: String, _ rel: String) -> String {
        if rel.hasPrefix("/") || base.isEmpty || base == "." { return normalize(rel) }
        return normalize(base + "/" + rel)
    }

    /// Removes `./` and duplicate slashes (not `..`, which may cross symlinks).
    static func normalize(_ p: String) -> String {
        let absolute = p.hasPrefix("/")
        let parts = p.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        let joined = parts.joined(separator: "/")
        return absolute ? "/" + joined : (joined.isEmpty ? "." : joined)
    }

    static func relative(_ path: String, to base: String) -> String {
        let b = normalize(base)
        if b == "." { return path }
        if path.hasPrefix(b + "/") { return String(path.dropFirst(b.count + 1)) }
        return path
    }

    /// A path as printed: relative to the working directory when under it.
    public static func display(_ path: String) -> String {
        guard path.hasPrefix("/"), let cwd = currentDirectory() else { return path }
        return cwd == "/" ? path : relative(path, to: cwd)
    }

    static func currentDirectory() -> String? {
        FileSystem.currentDirectory()
    }

    /// `path` from the root: joined to the working directory unless absolute.
    public static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? normalize(path) : join(currentDirectory() ?? "/", path)
    }

    /// The same file (device and inode, links followed), or, where either
    /// does not exist yet, the same path from the root.
    public static func sameFile(_ a: String, _ b: String) -> Bool {
        if let sa = FileSystem.status(a), let sb = FileSystem.status(b) { return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino }
        return absolute(a) == absolute(b)
    }

    public static func exists(_ path: String) -> Bool {
        FileSystem.status(path) != nil
    }

    static func isFile(_ path: String) -> Bool {
        FileSystem.status(path).map { $0.st_mode & S_IFMT != S_IFDIR } ?? false
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR
    }

    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let d = String(path[..<slash])
        return d.isEmpty ? "/" : d
    }
}
