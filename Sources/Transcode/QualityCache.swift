import FileAccess
import FileNames
import Glibc
import FoundationEssentials
import Sync

/// The quality search's probes of one input, kept between runs so that a
/// search for another target does not encode the same samples again: a
/// small JSON file per key (the input's identity on disk, the encoder
/// settings but the CRF, the metric, the samples) in
/// `$XDG_CACHE_HOME/avtool` or `~/.cache/avtool`, its name a hash of the
/// key and the key inside it (a hash collision reads as a miss). Written
/// to a new file opened with `O_NOFOLLOW | O_EXCL` and renamed over the old
/// one, so a reader sees a whole file and a link planted in the folder is
/// never followed. A cache that cannot be read or written is no cache: the
/// search runs as without it.
struct QualityCache {
    let key: String
    let file: String?

    private struct Contents: Codable {
        var key: String
        var probes: [CRFSearch.Probe]
    }

    init(key: String) {
        self.key = key
        file = Self.directory().map { $0 + "/quality-" + Self.hash(key) + ".json" }
    }

    /// `$XDG_CACHE_HOME/avtool` (an absolute path only, as the XDG spec
    /// says), else `$HOME/.cache/avtool`; made (mode 0700) when missing.
    static func directory() -> String? {
        let base: String
        if let x = getenv("XDG_CACHE_HOME").map({ String(cString: $0) }), x.hasPrefix("/") {
            base = x
        } else if let h = getenv("HOME").map({ String(cString: $0) }), h.hasPrefix("/") {
            base = h + "/.cache"
        } else {
            return nil
        }
        for dir in [base, base + "/avtool"] where FileSystem.status(dir) == nil {
            guard FileSystem.makeDirectory(dir, 0o700) == 0 || errno == EEXIST else { return nil }
        }
        return base + "/avtool"
    }

    /// The input's identity: device, inode, size and modification time
    /// (to the nanosecond); another file, or this one changed, is another key.
    static func identity(of path: String) -> String? {
        guard let st = FileSystem.status(path) else { return nil }
        return "dev=\(st.st_dev) ino=\(st.st_ino) size=\(st.st_size) mtime=\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
    }

    /// FNV-1a, 64 bits, in hex: a file name, not a security measure.
    static func hash(_ text: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        let hex = String(h, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The probes kept for this key (none when there is no such file, or it is another key's).
    func probes() -> [CRFSearch.Probe] {
        guard let file else { return [] }
        guard let bytes = try? OpenFile(path: file, O_RDONLY | O_NOFOLLOW).contents(),
              let contents = try? JSONDecoder().decode(Contents.self, from: Data(bytes)),
              contents.key == key else { return [] }
        return contents.probes
    }

    /// Keeps `probes` for this key (replacing what was kept).
    func save(_ probes: [CRFSearch.Probe]) {
        guard let file, let data = try? JSONEncoder().encode(Contents(key: key, probes: probes)) else { return }
        let temporary = file + ".\(getpid()).new"
        guard let out = try? OpenFile(path: temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600) else { return }
        let written = (try? out.append(Array(data))) != nil && (try? out.close()) != nil
        let moved = written && FileSystem.rename(temporary, file) == 0
        if !moved { FileSystem.unlink(temporary) }
    }
}
