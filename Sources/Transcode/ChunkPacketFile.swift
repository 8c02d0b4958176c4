import FileAccess
import Glibc
import Media
import Sync

/// A chunk's encoded packets, exactly as the encoder gave them: payload,
/// keyframe flag, PTS, DTS and duration on the source's time base. No
/// container was used for this because none keeps all of that: NUT and
/// Matroska store no DTS (a join would have to infer them, and inferred
/// DTS overlap at the seams), and MP4 rewrites the start into an edit list.
///
/// The file is `AVTCHK01`, then per packet a little-endian header
/// (payload size u32, flags u32: bit 0 keyframe; PTS, DTS, duration i64,
/// with `Int64.min` for a missing PTS or DTS) and the payload. The join on
/// one node reads files written by others (a cluster's tasks): the format
/// does not change.
enum ChunkPacketFile {
    static let magic = Array("AVTCHK01".utf8)
    static let headerSize = 32
    static let largestPacket = 1 << 30
    /// Records are written and read in pieces of this size (a packet larger
    /// than it, on its own): a call per piece, not two per packet.
    static let piece = 1 << 20

    /// One packet's header, as written.
    static func header(size: Int, keyframe: Bool, timing t: PacketTiming) -> [UInt8] {
        var header = [UInt8]()
        header.reserveCapacity(headerSize)
        func append(_ v: UInt64, bytes: Int) {
            for i in 0..<bytes { header.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
        }
        append(UInt64(size), bytes: 4)
        append(keyframe ? 1 : 0, bytes: 4)
        append(UInt64(bitPattern: t.pts ?? .min), bytes: 8)
        append(UInt64(bitPattern: t.dts ?? .min), bytes: 8)
        append(UInt64(bitPattern: t.duration), bytes: 8)
        return header
    }
}

/// Writes a chunk's packets into `path` through a staged output (a file
/// with no name until `commit()`); dropped uncommitted, or killed, it
/// leaves nothing, and never a part of a chunk under the chunk's name.
final class ChunkPacketWriter {
    private let path: String
    private let staged: StagedOutput
    /// Instead of a name at commit: the unnamed file handed on (a chunk store's).
    private let keep: (() -> Void)?
    private var file: OpenFile?
    /// Records not yet written (up to `ChunkPacketFile.piece` bytes).
    private var pending: [UInt8] = []
    private(set) var packets = 0

    convenience init(path: String) throws(MediaError) {
        try self.init(staged: StagedOutput(target: path, overwrite: true, inputs: [], counted: false), name: path, keep: nil)
    }

    /// A writer into `staged`, which `keep` takes at commit (it stays unnamed).
    init(staged: StagedOutput, name: String, keep: (() -> Void)?) throws(MediaError) {
        path = name
        self.staged = staged
        self.keep = keep
        file = try FileBytes.create(staged.temporary, reportingAs: name)
        pending = ChunkPacketFile.magic
        pending.reserveCapacity(ChunkPacketFile.piece)
    }

    func write(_ packet: borrowing Packet) throws(MediaError) {
        pending += ChunkPacketFile.header(size: packet.size, keyframe: packet.isKeyframe, timing: packet.timing)
        if packet.size >= ChunkPacketFile.piece {
            // A large payload is written from the packet itself, after the records before it.
            try flush()
            guard let file else { return }
            try packet.withData { data in
                Result { () throws(MediaError) in try writing { () throws(FileError) in try file.append(data) } }
            }.get()
        } else {
            packet.withData { pending.append(contentsOf: $0) }
            if pending.count >= ChunkPacketFile.piece { try flush() }
        }
        packets += 1
    }

    /// Writes the file out and puts it in place; a named chunk is on the
    /// disk first (`fsync`): a ledger may then say it is done.
    func commit() throws(MediaError) {
        try flush()
        guard let f = file else { return }
        file = nil
        try writing { () throws(FileError) in
            if keep == nil { try f.synchronize() }
            try f.close()
        }
        if let keep { keep() } else { try staged.commit() }
    }

    /// The records pending, written.
    private func flush() throws(MediaError) {
        guard let file, !pending.isEmpty else { return }
        try writing { () throws(FileError) in try file.append(pending) }
        pending.removeAll(keepingCapacity: true)
    }

    private func writing(_ body: () throws(FileError) -> Void) throws(MediaError) {
        try MediaError.files("could not write", path: path, body)
    }
}

/// Reads a chunk's packets back, a piece of the file at a time.
final class ChunkPacketReader {
    let path: String
    private let file: OpenFile
    private let size: Int64
    /// Bytes of the file read ahead: `window` holds those from `windowStart`.
    private var window: [UInt8] = []
    private var windowStart: Int64 = 0
    /// Where the next record starts.
    private var offset: Int64 = 0
    private var read = 0

    init(path: String) throws(MediaError) {
        self.path = path
        let opened = try MediaError.files("could not read") { () throws(FileError) -> (OpenFile, Int64) in
            let file = try OpenFile(path: path, O_RDONLY)
            return (file, try file.size())
        }
        (file, size) = opened
        guard try take(ChunkPacketFile.magic.count).elementsEqual(ChunkPacketFile.magic) else {
            throw MediaError.invalid("could not read", path: path, message: "not a chunk of a chunked transcode")
        }
    }

    /// The next packet into `packet`; false at the end.
    func next(into packet: borrowing Packet) throws(MediaError) -> Bool {
        guard offset < size else { return false }
        let at = offset, number = read + 1
        let header = Array(try take(ChunkPacketFile.headerSize))
        guard header.count == ChunkPacketFile.headerSize else {
            throw cutOff("packet \(number)'s header at byte \(at) has \(header.count) of its \(ChunkPacketFile.headerSize) bytes")
        }
        func value(_ at: Int, _ bytes: Int) -> UInt64 {
            (0..<bytes).reduce(UInt64(0)) { $0 | UInt64(header[at + $1]) << (8 * UInt64($1)) }
        }
        let count = Int(value(0, 4))
        guard count <= ChunkPacketFile.largestPacket else {
            throw MediaError.invalid("could not read", path: path,
                                     message: "the chunk is damaged: packet \(number) at byte \(at) declares \(count) bytes, more than \(ChunkPacketFile.largestPacket)")
        }
        let payload = try take(count)
        guard payload.count == count else {
            throw cutOff("packet \(number)'s \(count) bytes at byte \(at + Int64(ChunkPacketFile.headerSize)) run past its end at byte \(size)")
        }
        try payload.withUnsafeBytes { raw in
            Result { () throws(MediaError) in try packet.fill(raw, keyframe: value(4, 4) & 1 != 0) }
        }.get()
        let pts = Int64(bitPattern: value(8, 8)), dts = Int64(bitPattern: value(16, 8))
        packet.timing = PacketTiming(pts: pts == .min ? nil : pts, dts: dts == .min ? nil : dts,
                                     duration: Int64(bitPattern: value(24, 8)))
        read += 1
        return true
    }

    /// The `count` bytes at `offset`, fewer only where the file ends; `offset` moves past them.
    private func take(_ count: Int) throws(MediaError) -> ArraySlice<UInt8> {
        if offset < windowStart || offset + Int64(count) > windowStart + Int64(window.count) {
            let (file, at) = (self.file, offset)
            window = try MediaError.files("could not read") { () throws(FileError) in
                try file.read(max(count, ChunkPacketFile.piece), at: at)
            }
            windowStart = offset
        }
        let from = Int(offset - windowStart)
        let bytes = window[from..<min(from + count, window.count)]
        offset += Int64(bytes.count)
        return bytes
    }

    private func cutOff(_ what: String) -> MediaError {
        MediaError.invalid("could not read", path: path, message: "the chunk is cut off: \(what)")
    }
}
