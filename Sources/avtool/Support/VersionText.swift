import Glibc
import Media

/// What `avtool --version` prints: avtool's version and commit, the FFmpeg
/// libraries it runs on, x265's version and the Swift it was built with.
enum VersionText {
    static let version = "0.1.0"

    static var text: String {
        var lines = ["avtool \(version)" + (commit.map { " (commit \($0))" } ?? "")]
        lines.append("FFmpeg \(LibraryVersions.ffmpeg): "
            + LibraryVersions.libraries.map { "\($0.name) \($0.version)" }.joined(separator: ", "))
        lines.append("x265 " + (LibraryVersions.x265 ?? "not available (libavcodec was built without libx265)"))
        lines.append("libx264 " + (LibraryVersions.x264 ? "available" : "not available"))
        lines.append("Swift \(swiftVersion)")
        return lines.joined(separator: "\n")
    }

    /// The compiler this binary was built with.
    static var swiftVersion: String {
        #if compiler(>=6.4)
        "6.4 or later"
        #elseif compiler(>=6.3)
        "6.3"
        #elseif compiler(>=6.2)
        "6.2"
        #elseif compiler(>=6.1)
        "6.1"
        #else
        "6.0"
        #endif
    }

    /// The commit the binary was built from: `share/avtool/commit` beside an
    /// installed binary (written by `scripts/install.sh` and the package), or
    /// the checkout's HEAD for a binary under `.build/`.
    static var commit: String? {
        guard let exe = executablePath else { return nil }
        var dir = parent(exe)
        if let installed = read(parent(dir) + "/share/avtool/commit") { return installed }
        for _ in 0..<5 {
            if let head = read(dir + "/.git/HEAD") {
                if head.hasPrefix("ref: ") {
                    let ref = String(head.dropFirst(5))
                    if let hash = read(dir + "/.git/" + ref) { return String(hash.prefix(12)) }
                    // A packed ref.
                    let packed = read(dir + "/.git/packed-refs")?.split(separator: "\n")
                        .first { $0.hasSuffix(" " + ref) }
                    return packed.map { String($0.prefix(12)) }
                }
                return String(head.prefix(12))
            }
            dir = parent(dir)
        }
        return nil
    }

    private static var executablePath: String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// The first line of a small text file, nil if it cannot be read.
    private static func read(_ path: String) -> String? {
        guard let f = fopen(path, "r") else { return nil }
        defer { fclose(f) }
        var buffer = [CChar](repeating: 0, count: 512)
        guard fgets(&buffer, Int32(buffer.count), f) != nil else { return nil }
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let trimmed = line.split(separator: "\n").first.map(String.init) ?? ""
        return trimmed.isEmpty ? nil : trimmed
    }
}
