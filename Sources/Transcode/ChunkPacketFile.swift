import FileNames
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
/// with `Int64.min` for a missing PTS or DTS) and the payload.
enum ChunkPacketFile {
    static let magic = Array("AVTCHK01".utf8)
    static let headerSize = 32
    static let largestPacket = 1 << 30
}

/// Writes a chunk's packets into `path` through a staged output (a file
/// with no name until `commit()`); dropped uncommitted, or killed, it
/// leaves nothing, and never a part of a chunk under the chunk's name.
final class ChunkPacketWriter {
    private let path: String
    private let staged: StagedOutput
    /// Instead of a name at commit: the unnamed file handed on (a chunk store's).
    private let keep: (() -> Void)?
    private var file: UnsafeMutablePointer<FILE>?
    private(set) var packets = 0

    convenience init(path: String) throws(MediaError) {
        try self.init(staged: StagedOutput(target: path, overwrite: true, inputs: [], counted: false), name: path, keep: nil)
    }

    /// A writer into `staged`, which `keep` takes at commit (it stays unnamed).
    init(staged: StagedOutput, name: String, keep: (() -> Void)?) throws(MediaError) {
        path = name
        self.staged = staged
        self.keep = keep
        guard let f = FileSystem.openStream(staged.temporary, "wb") else {
            throw MediaError(code: -errno, operation: "could not write", path: path)
        }
        file = f
        try put(ChunkPacketFile.magic)
    }

    deinit {
        if let file { fclose(file) }
    }

    func write(_ packet: borrowing Packet) throws(MediaError) {
        let t = packet.timing
        var header = [UInt8]()
        header.reserveCapacity(ChunkPacketFile.headerSize)
        func append(_ v: UInt64, bytes: Int) {
            for i in 0..<bytes { header.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
        }
        append(UInt64(packet.size), bytes: 4)
        append(packet.isKeyframe ? 1 : 0, bytes: 4)
        append(UInt64(bitPattern: t.pts ?? .min), bytes: 8)
        append(UInt64(bitPattern: t.dts ?? .min), bytes: 8)
        append(UInt64(bitPattern: t.duration), bytes: 8)
        try put(header)
        let written = packet.withData { data in
            data.isEmpty ? 0 : fwrite(data.baseAddress, 1, data.count, file)
        }
        guard written == packet.size else { throw MediaError(code: -errno, operation: "could not write", path: path) }
        packets += 1
    }

    /// Flushes the file to disk and puts it in place.
    func commit() throws(MediaError) {
        guard let f = file else { return }
        file = nil
        // A named chunk is flushed to the disk first: a ledger may say it is done.
        let flushed = fflush(f) == 0 && (keep != nil || fsync(fileno(f)) == 0)
        let closed = fclose(f) == 0
        guard flushed && closed else {
            throw MediaError(code: -errno, operation: "could not write", path: path)
        }
        if let keep { keep() } else { try staged.commit() }
    }

    private func put(_ bytes: [UInt8]) throws(MediaError) {
        guard fwrite(bytes, 1, bytes.count, file) == bytes.count else {
            throw MediaError(code: -errno, operation: "could not write", path: path)
        }
    }
}

/// Reads a chunk's packets back.
final class ChunkPacketReader {
    let path: String
    private let file: UnsafeMutablePointer<FILE>
    private var payload: [UInt8] = []

    init(path: String) throws(MediaError) {
        self.path = path
        guard let f = FileSystem.openStream(path, "rb") else { throw MediaError(code: -errno, operation: "could not read", path: path) }
        file = f
        var magic = [UInt8](repeating: 0, count: ChunkPacketFile.magic.count)
        guard fread(&magic, 1, magic.count, f) == magic.count, magic == ChunkPacketFile.magic else {
            fclose(f)
            throw MediaError.invalid("could not read", path: path, message: "not a chunk of a chunked transcode")
        }
    }

    deinit { fclose(file) }

    /// The next packet into `packet`; false at the end.
    func next(into packet: borrowing Packet) throws(MediaError) -> Bool {
        var header = [UInt8](repeating: 0, count: ChunkPacketFile.headerSize)
        let got = fread(&header, 1, header.count, file)
        if got == 0 && feof(file) != 0 { return false }
        func value(_ at: Int, _ bytes: Int) -> UInt64 {
            (0..<bytes).reduce(UInt64(0)) { $0 | UInt64(header[at + $1]) << (8 * UInt64($1)) }
        }
        let size = Int(value(0, 4))
        guard got == header.count, size <= ChunkPacketFile.largestPacket else { throw damaged }
        if payload.count < size { payload = [UInt8](repeating: 0, count: size) }
        guard fread(&payload, 1, size, file) == size else { throw damaged }
        let keyframe = value(4, 4) & 1 != 0
        let filled = payload.withUnsafeBytes { raw -> Result<Void, MediaError> in
            do throws(MediaError) {
                try packet.fill(UnsafeRawBufferPointer(rebasing: raw[0..<size]), keyframe: keyframe)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try filled.get()
        let pts = Int64(bitPattern: value(8, 8)), dts = Int64(bitPattern: value(16, 8))
        packet.timing = PacketTiming(pts: pts == .min ? nil : pts, dts: dts == .min ? nil : dts,
                                     duration: Int64(bitPattern: value(24, 8)))
        return true
    }

    private var damaged: MediaError {
        MediaError.invalid("could not read", path: path, message: "the chunk is cut off or damaged")
    }
}
