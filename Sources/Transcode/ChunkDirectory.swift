import FileAccess
import FileNames
import Glibc
import FoundationEssentials
import Threads
import Media
import Pipeline
import Sync

// MARK: The chunk directory

/// A chunk directory: its manifest and ledger. A chunked transcode without
/// a directory of the user's keeps its chunks in unnamed files in the
/// output's folder instead (`unnamed`), and the manifest and ledger in
/// memory, so a kill leaves nothing behind.
final class ChunkDirectory: Sendable {
    /// The directory, or for unnamed chunks the output's folder.
    let path: String
    private let unnamed: Locked<(files: [String: StagedOutput], texts: [String: Data])>?

    init(path: String) {
        self.path = path
        unnamed = nil
    }

    /// Unnamed chunks beside `output`; nil where its filesystem has no unnamed files.
    init?(unnamedBeside output: String) throws(MediaError) {
        let probe = try StagedOutput(target: output + ".chunk", overwrite: true, inputs: [], counted: false)
        guard probe.isUnnamed else { return nil }
        path = StagedOutput.split(output).dir
        unnamed = Locked(([:], [:]))
    }

    func file(_ name: String) -> String {
        if let unnamed { return unnamed.withLock { $0.files[name]?.temporary } ?? "" }
        return path.hasSuffix("/") ? path + name : path + "/" + name
    }

    /// A writer of chunk file `name`, which takes that name when committed.
    func writer(_ name: String) throws(MediaError) -> ChunkPacketWriter {
        guard let unnamed else { return try ChunkPacketWriter(path: file(name)) }
        let staged = try StagedOutput(target: path + "/" + name, overwrite: true, inputs: [], counted: false)
        return try ChunkPacketWriter(staged: staged, name: name) { unnamed.withLock { $0.files[name] = staged } }
    }

    /// The bytes of the manifest or a record, nil when it is not there.
    private func contents(_ name: String) -> Data? {
        if let unnamed { return unnamed.withLock { $0.texts[name] } }
        return (try? OpenFile.contents(of: file(name))).map { Data($0) }
    }

    /// Makes the directory if needed and puts `manifest` there, or checks
    /// that the one there (another task's) is the same; several tasks may
    /// start at once, and exactly one manifest wins.
    func settle(_ manifest: ChunkManifest) throws(MediaError) {
        if unnamed == nil, let why = FileBytes.makeDirectories(path) {
            throw MediaError.invalid("could not use chunk directory", path: path, message: why)
        }
        let name = ChunkFiles.manifest
        if contents(name) == nil {
            // Named only once complete; if another task's manifest came
            // first, this one is not written and that one is checked.
            do {
                try write(manifest, to: name, overwrite: false)
            } catch where contents(name) != nil {}
        }
        let existing: ChunkManifest = try read(name)
        if let difference = difference(existing, manifest) {
            throw MediaError.invalid("could not use chunk directory", path: path,
                                     message: "it holds chunks of another transcode: \(difference)",
                                     hint: "use an empty directory for each transcode, or the same options for every task")
        }
    }

    /// The manifest of a directory made by chunk tasks.
    func manifest() throws(MediaError) -> ChunkManifest {
        guard contents(ChunkFiles.manifest) != nil else {
            throw MediaError.invalid("could not join", path: path,
                                     message: "no \(ChunkFiles.manifest): not a chunk directory, or no chunk task has started",
                                     hint: "run 'avtool transcode IN --chunk K/N --chunk-dir DIR' for each chunk first")
        }
        return try read(ChunkFiles.manifest)
    }

    /// The ledger's record of chunk `number` if the chunk is complete with
    /// `settings` (its file there, of the size recorded); `nil` otherwise.
    func completed(_ number: Int, of count: Int, settings: String) -> ChunkRecord? {
        guard let record: ChunkRecord = try? read(ChunkFiles.record(number, of: count)),
              record.settings == settings, fileSize(file(record.file)) == record.bytes else { return nil }
        return record
    }

    func record(_ record: ChunkRecord) throws(MediaError) {
        try write(record, to: ChunkFiles.record(record.number, of: record.count), overwrite: true)
    }

    /// `value` as JSON under `name`, which names it only once it is complete
    /// (a kill leaves the old record or none, never a part).
    private func write<T: Encodable>(_ value: T, to name: String, overwrite: Bool) throws(MediaError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let target = file(name)
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            throw MediaError.invalid("could not write", path: target, message: "\(error)")
        }
        if let unnamed {
            unnamed.withLock { if overwrite || $0.texts[name] == nil { $0.texts[name] = data } }
            return
        }
        let staged = try StagedOutput(target: target, overwrite: overwrite, inputs: [], counted: false)
        let file = try FileBytes.create(staged.temporary, reportingAs: target)
        try MediaError.files("could not write output") { () throws(FileError) in try file.append(Array(data)) }
        try staged.commit()
    }

    private func read<T: Decodable>(_ name: String) throws(MediaError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: contents(name) ?? Data())
        } catch {
            throw MediaError.invalid("could not read", path: file(name), message: "not a chunk manifest or ledger this version reads")
        }
    }

    /// The record `name` as it is, nil when absent or unreadable.
    func rawRecord(_ name: String) -> ChunkRecord? { try? read(name) }

    private func difference(_ a: ChunkManifest, _ b: ChunkManifest) -> String? {
        if a.source != b.source { return "of '\(a.source)', not '\(b.source)'" }
        if a.sourceBytes != b.sourceBytes { return "of a \(a.sourceBytes)-byte file, this one has \(b.sourceBytes) bytes" }
        if a.count != b.count { return "in \(a.count) chunks, not \(b.count)" }
        if a.settings != b.settings { return "encoded with '\(a.settings)', not '\(b.settings)'" }
        if a != b { return "planned otherwise (stream, time base or boundaries)" }
        return nil
    }
}


/// Bytes as lowercase hex (the ledger's parameter sets).
func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
}

/// Hex back to bytes; `nil` if it is not hex.
func bytes(hex text: String) -> [UInt8]? {
    let chars = Array(text.utf8)
    guard chars.count % 2 == 0 else { return nil }
    func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: c - 48
        case 97...102: c - 87
        default: nil
        }
    }
    var out: [UInt8] = []
    out.reserveCapacity(chars.count / 2)
    for i in stride(from: 0, to: chars.count, by: 2) {
        guard let h = nibble(chars[i]), let l = nibble(chars[i + 1]) else { return nil }
        out.append(h << 4 | l)
    }
    return out
}
