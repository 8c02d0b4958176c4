import Glibc

/// The path calls avtool makes, each taking a path as text and giving the
/// system its bytes (`withFileSystemPath`), so a name that is not UTF-8
/// reaches the system as it was typed or listed. Opening a file is
/// `FileAccess`'s (`OpenFile`, `Directory`).
public enum FileSystem {
    /// `stat(2)` (links followed); nil with `errno` set on failure.
    public static func status(_ path: String) -> stat? {
        var st = stat()
        let r = path.withFileSystemPath { (p: UnsafePointer<CChar>) -> Int32 in stat(p, &st) }
        return r == 0 ? st : nil
    }

    /// `lstat(2)` (a link itself); nil with `errno` set on failure.
    public static func linkStatus(_ path: String) -> stat? {
        var st = stat()
        let r = path.withFileSystemPath { (p: UnsafePointer<CChar>) -> Int32 in lstat(p, &st) }
        return r == 0 ? st : nil
    }

    /// `unlink(2)`.
    @discardableResult
    public static func unlink(_ path: String) -> Int32 { path.withFileSystemPath { Glibc.unlink($0) } }

    /// `rename(2)`.
    @discardableResult
    public static func rename(_ from: String, _ to: String) -> Int32 {
        from.withFileSystemPath { f in to.withFileSystemPath { t in Glibc.rename(f, t) } }
    }

    /// `mkdir(2)`.
    public static func makeDirectory(_ path: String, _ mode: mode_t) -> Int32 { path.withFileSystemPath { Glibc.mkdir($0, mode) } }

    /// The current directory (`getcwd`), as text.
    public static func currentDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return buffer.withUnsafeBufferPointer { FileName.text(cString: $0.baseAddress!) }
    }

    /// The program's arguments (`argv` after the program's name) as text, exactly: `CommandLine.arguments`
    /// puts U+FFFD for a byte that is not UTF-8, which then names another file or none.
    public static func arguments() -> [String] {
        (1..<Int(CommandLine.argc)).compactMap { CommandLine.unsafeArgv[$0].map { FileName.text(cString: $0) } }
    }
}
