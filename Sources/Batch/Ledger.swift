import FileAccess
import FileNames
import FoundationEssentials
import Threads
import Glibc

/// A file as a job saw it: size and modification time (nanoseconds).
public struct FileSignature: Codable, Sendable, Equatable, Hashable {
    public var path: String
    public var size: Int64
    public var mtimeNs: Int64

    public init(path: String, size: Int64, mtimeNs: Int64) {
        self.path = path
        self.size = size
        self.mtimeNs = mtimeNs
    }

    /// The signature of an existing file, or nil.
    public static func of(_ path: String) -> FileSignature? {
        guard let st = FileSystem.status(path) else { return nil }
        return FileSignature(path: path, size: Int64(st.st_size),
                             mtimeNs: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec))
    }
}

/// One finished job, as a line of the ledger.
public struct LedgerEntry: Codable, Sendable, Equatable {
    public enum Status: String, Codable, Sendable { case done, failed, interrupted }

    public var verb: String
    public var inputs: [FileSignature]
    public var output: String
    /// The output as written (done jobs only).
    public var outputFile: FileSignature?
    public var optionsDigest: String
    public var arguments: [String]
    public var status: Status
    public var seconds: Double
    public var error: String?
    /// A failure's error code (an AVERROR: a negative errno, or a libav tag), where it had one.
    public var errorCode: Int32?
    /// A failure's kind, as the verbs' `--json` errors name it (`unsupported`, `not-found`…).
    public var errorCategory: String?
    public var finished: String
    public var host: String
    public var shard: String?

    public init(job: Job, inputs: [FileSignature], outputFile: FileSignature?, status: Status,
                seconds: Double, error: String?, errorCode: Int32? = nil, errorCategory: String? = nil, shard: String?) {
        verb = job.verb
        self.inputs = inputs
        output = job.output
        self.outputFile = outputFile
        optionsDigest = job.optionsDigest
        arguments = job.arguments
        self.status = status
        self.seconds = seconds
        self.error = error
        self.errorCode = errorCode
        self.errorCategory = errorCategory
        finished = Date().ISO8601Format()
        host = ProcessInfo.processInfo.hostName
        self.shard = shard
    }
}

/// What to do with a job, from the ledger and the files as they are now.
public enum JobDecision: Sendable, Equatable {
    /// Run it; `overwrite` when it replaces an output this recipe made.
    case run(reason: String, overwrite: Bool)
    case skip(reason: String)

    public var runs: Bool { if case .run = self { true } else { false } }

    /// - Parameters:
    ///   - last: the ledger's latest entry for the job's output.
    ///   - inputs: the inputs' signatures now (nil for one that is missing).
    ///   - output: the output's signature now, nil if it does not exist.
    public static func decide(job: Job, last: LedgerEntry?, inputs: [FileSignature?], output: FileSignature?,
                              force: Bool) -> JobDecision {
        guard let output else {
            return .run(reason: last?.status == .done ? "output missing" : "new", overwrite: false)
        }
        if force { return .run(reason: "forced", overwrite: true) }
        guard let last, last.status == .done else {
            return .skip(reason: "output exists and the ledger has no record of making it (--force replaces it)")
        }
        if last.outputFile != output {
            return .run(reason: "output changed since it was made", overwrite: true)
        }
        if last.optionsDigest != job.optionsDigest {
            return .run(reason: "options changed", overwrite: true)
        }
        let now = inputs.map { $0 }
        if now.count != last.inputs.count || zip(now, last.inputs).contains(where: { $0 != $1 }) {
            return .run(reason: "inputs changed", overwrite: true)
        }
        return .skip(reason: "up to date")
    }
}

/// The batch ledger: JSON Lines, one entry per finished job, appended with a
/// single write and synced, so a kill at any moment leaves at worst one cut
/// line at the end, which the next run removes. A lock keeps two batches from
/// sharing one ledger. Shards write `NAME.shard-K-of-N.jsonl` beside it; all of
/// them are read, and `merge` folds them into the main file.
public final class Ledger: @unchecked Sendable {
    public let path: String
    private let file: OpenFile
    private let lock = Condition()
    private let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.keyEncodingStrategy = .convertToSnakeCase
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Opens (creating) the ledger for appending and takes its lock.
    public init(path: String) throws(Failure) {
        self.path = path
        // (Created if missing; a link, FIFO or device is refused.)
        guard let file = try LedgerFile.open(path, flags: O_RDWR | O_APPEND | O_CREAT) else {
            throw Failure(description: "could not open the ledger '\(Paths.display(path))'")
        }
        guard flock(file.descriptor, LOCK_EX | LOCK_NB) == 0 else {
            throw Failure(description: "the ledger '\(Paths.display(path))' is in use by another 'avtool batch'; wait for it or use --ledger")
        }
        self.file = file
        Self.cutTornLine(file)
    }

    /// A kill during a write can leave a last line without its newline: drop it.
    private static func cutTornLine(_ file: OpenFile) {
        guard let size = try? file.size(), size > 0,
              let last = try? file.read(1, at: size - 1), last.count == 1, last[0] != UInt8(ascii: "\n") else { return }
        var end = size - 1
        while end > 0, let byte = try? file.read(1, at: end - 1), byte.count == 1, byte[0] != UInt8(ascii: "\n") { end -= 1 }
        try? file.truncate(to: end)
    }

    public func append(_ entry: LedgerEntry) throws(Failure) {
        guard var data = try? encoder.encode(entry) else { throw Failure(description: "could not encode a ledger entry") }
        data.append(UInt8(ascii: "\n"))
        lock.lock()
        defer { lock.unlock() }
        do throws(FileError) { try file.append(Array(data)) } catch {
            throw Failure(description: "could not write the ledger '\(Paths.display(path))': \(error.message)")
        }
        _ = fdatasync(file.descriptor)
    }

    /// The shard ledgers that belong beside `path`.
    public static func shardFiles(of path: String) -> [String] {
        let stem = path.hasSuffix(".jsonl") ? String(path.dropLast(6)) : path
        // (The stem's own glob characters, as in a folder 'o[1]', stand for themselves.)
        let literal = stem.map { "*?[]{}\\".contains($0) ? "\\\($0)" : String($0) }.joined()
        return Glob.match(literal + ".shard-*-of-*.jsonl")
    }

    /// Whether `file` is named as a shard ledger beside the ledger `path`.
    public static func isShardLedger(_ file: String, of path: String) -> Bool {
        let stem = Paths.absolute(path.hasSuffix(".jsonl") ? String(path.dropLast(6)) : path)
        let name = Paths.absolute(file)
        return name.hasPrefix(stem + ".shard-") && name.hasSuffix(".jsonl")
    }

    public static func shardPath(of path: String, shard: Shard) -> String {
        let stem = path.hasSuffix(".jsonl") ? String(path.dropLast(6)) : path
        return "\(stem).shard-\(shard.index)-of-\(shard.count).jsonl"
    }

    /// Every entry of the ledger and its shards, in file order (main first);
    /// lines that are not entries are counted, not fatal. A ledger file that
    /// is a link, a FIFO or a device is refused.
    public static func read(_ path: String) throws(Failure) -> (entries: [LedgerEntry], badLines: Int) {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        var entries: [LedgerEntry] = []
        var bad = 0
        for file in [path] + shardFiles(of: path) {
            guard let opened = try LedgerFile.open(file, flags: O_RDONLY, what: file == path ? "ledger" : "shard ledger") else { continue }
            LedgerFile.lines(of: opened) { line in
                if let line, let e = try? decoder.decode(LedgerEntry.self, from: Data(line)) { entries.append(e) } else { bad += 1 }
            }
        }
        return (entries, bad)
    }

    /// The entry a job's decision rests on, of `records` (those of its
    /// output): the newest finished one ("done") that made the file there
    /// now (`now`: its size and time); else the newest finished one (the file
    /// changed since); else the newest of any kind. So an interrupted or
    /// failed redo, or an entry dated in the future, never hides the record
    /// of the file that is there.
    public static func record(_ records: [LedgerEntry], output now: FileSignature?) -> LedgerEntry? {
        func newest(_ es: [LedgerEntry]) -> LedgerEntry? {
            // (By finish time, the later in file order on a tie.)
            es.enumerated().max { ($0.element.finished, $0.offset) < ($1.element.finished, $1.offset) }?.element
        }
        let done = records.filter { $0.status == .done }
        return newest(done.filter { now != nil && $0.outputFile == now }) ?? newest(done) ?? newest(records)
    }

    /// Folds the shard ledgers into this one and removes them.
    /// - Returns: the number of entries moved.
    public func mergeShards() throws(Failure) -> Int {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        var moved = 0
        for file in Self.shardFiles(of: path) {
            guard let shard = try LedgerFile.open(file, flags: O_RDONLY, what: "shard ledger") else { continue }
            guard flock(shard.descriptor, LOCK_EX | LOCK_NB) == 0 else {
                throw Failure(description: "the shard ledger '\(Paths.display(file))' is still in use by a running batch")
            }
            var read: [LedgerEntry] = []
            LedgerFile.lines(of: shard) { line in
                if let line, let e = try? decoder.decode(LedgerEntry.self, from: Data(line)) { read.append(e) }
            }
            for e in read {
                try append(e)
                moved += 1
            }
            FileSystem.unlink(file)
        }
        return moved
    }
}

/// `--shard K/N`: the K-th (0 ≤ K < N, as Slurm's SLURM_ARRAY_TASK_ID counts)
/// of N disjoint parts of the jobs. A job belongs to the part its output path
/// hashes to, so a job keeps its shard when other jobs come and go.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    public var index: Int
    public var count: Int

    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]), n >= 1, k >= 0, k < n else { return nil }
        index = k
        count = n
    }

    public func contains(_ job: Job) -> Bool {
        UInt64(Digest.fnv1a(job.output), radix: 16)! % UInt64(count) == UInt64(index)
    }

    public var description: String { "\(index)/\(count)" }
}
