import CFFmpeg
import FileAccess
import Glibc

/// Bytes in memory read through a custom `AVIOContext` (`avio_alloc_context`
/// with read and seek callbacks), so a whole input can be demuxed without a
/// file: the fuzz harness feeds its inputs this way. Give it to
/// `InputFile(memory:name:)`, which keeps it alive while open.
public final class MemoryInput {
    private let bytes: [UInt8]
    private var position = 0
    /// libavformat may reallocate the context's buffer: it is freed through
    /// the context, never through a pointer kept here.
    let context: UnsafeMutablePointer<AVIOContext>

    public init(_ data: [UInt8]) throws(MediaError) {
        bytes = data
        context = try makeIOContext(writable: false, read: { opaque, buffer, size in
            Unmanaged<MemoryInput>.fromOpaque(opaque!).takeUnretainedValue().read(buffer!, Int(size))
        }, write: nil, seek: { opaque, offset, whence in
            Unmanaged<MemoryInput>.fromOpaque(opaque!).takeUnretainedValue().seek(offset, whence)
        })
        context.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit { freeIOContext(context) }

    public var count: Int { bytes.count }

    private func read(_ buffer: UnsafeMutablePointer<UInt8>, _ size: Int) -> Int32 {
        let n = min(max(size, 0), bytes.count - position)
        guard n > 0 else { return AVTOOL_AVERROR_EOF }
        bytes.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress! + position, byteCount: n) }
        position += n
        return Int32(n)
    }

    private func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
        guard let target = seekTarget(offset, whence, position: position, size: bytes.count) else {
            return whence & AVSEEK_SIZE != 0 ? Int64(bytes.count) : Int64(AVTOOL_AVERROR_EINVAL)
        }
        // Past the end reads as the end (EOF on the next read), as a file does.
        position = Int(min(target, Int64(bytes.count)))
        return target
    }
}

/// A seekable in-memory output through a custom `AVIOContext` (write and seek
/// callbacks): muxers that go back to patch headers (MP4's sizes, Matroska's
/// cues) work as on a file. Writes beyond `limit` bytes fail with ENOSPC, so
/// a runaway output cannot take all memory. Give it to
/// `OutputFile(memory:container:…)`.
public final class MemoryOutput {
    public private(set) var bytes: [UInt8] = []
    public let limit: Int
    private var position = 0
    let context: UnsafeMutablePointer<AVIOContext>

    /// Only counts: the bytes written are dropped, positions and the size
    /// are kept (a trial write whose size is what is wanted).
    public let countsOnly: Bool
    /// The end of what was written (the file's size had it been kept).
    public private(set) var size = 0

    public init(limit: Int = 1 << 30, countsOnly: Bool = false) throws(MediaError) {
        self.limit = limit
        self.countsOnly = countsOnly
        context = try makeIOContext(writable: true, read: nil, write: { opaque, buffer, size in
            Unmanaged<MemoryOutput>.fromOpaque(opaque!).takeUnretainedValue().write(buffer!, Int(size))
        }, seek: { opaque, offset, whence in
            Unmanaged<MemoryOutput>.fromOpaque(opaque!).takeUnretainedValue().seek(offset, whence)
        })
        context.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
        // Counting, payloads go straight to the callback: not copied into the buffer first.
        if countsOnly { context.pointee.direct = 1 }
    }

    deinit { freeIOContext(context) }

    private func write(_ buffer: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
        guard size > 0 else { return 0 }
        let end = position + size
        guard end <= limit else { return AVTOOL_AVERROR_ENOSPC }
        if countsOnly {
            position = end
            self.size = max(self.size, end)
            return Int32(size)
        }
        if end > bytes.count { bytes.append(contentsOf: repeatElement(0, count: end - bytes.count)) }
        bytes.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: position).copyMemory(from: buffer, byteCount: size) }
        position = end
        return Int32(size)
    }

    private func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
        let length = countsOnly ? size : bytes.count
        guard let target = seekTarget(offset, whence, position: position, size: length) else {
            return whence & AVSEEK_SIZE != 0 ? Int64(length) : Int64(AVTOOL_AVERROR_EINVAL)
        }
        guard target <= Int64(limit) else { return Int64(AVTOOL_AVERROR_EINVAL) }
        position = Int(target)
        return target
    }
}

/// A file read through a custom `AVIOContext` that leaves the byte ranges
/// in `holes` unread: a read inside one returns at once, the buffer left as
/// it was. Demuxing an MP4/MOV this way with its media data as the hole
/// gives every packet's size, timing and flags, read from the index alone,
/// with no payload read from the disk: what a trial write needs. With a
/// `length`, the file reads as if it ended there.
public final class HollowFileInput {
    private let file: OpenFile
    private let fileSize: Int64
    private let holes: [Range<Int64>]
    private var position: Int64 = 0
    let context: UnsafeMutablePointer<AVIOContext>

    public init(path: String, holes: [Range<Int64>], length: Int64? = nil) throws(MediaError) {
        let opened = try MediaError.files("could not open input") { () throws(FileError) in
            let file = try OpenFile(path: path, O_RDONLY)
            return (file, try file.size())
        }
        file = opened.0
        fileSize = min(opened.1, length ?? opened.1)
        self.holes = holes.sorted { $0.lowerBound < $1.lowerBound }
        context = try makeIOContext(writable: false, read: { opaque, buffer, size in
            Unmanaged<HollowFileInput>.fromOpaque(opaque!).takeUnretainedValue().read(buffer!, Int(size))
        }, write: nil, seek: { opaque, offset, whence in
            Unmanaged<HollowFileInput>.fromOpaque(opaque!).takeUnretainedValue().seek(offset, whence)
        })
        context.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        freeIOContext(context)
    }

    private func read(_ buffer: UnsafeMutablePointer<UInt8>, _ size: Int) -> Int32 {
        let n = Int64(min(max(size, 0), Int(clamping: fileSize - position)))
        guard n > 0 else { return AVTOOL_AVERROR_EOF }
        var at = position
        let end = position + n
        while at < end {
            if let hole = holes.first(where: { $0.contains(at) }) {
                at = min(hole.upperBound, end)
                continue
            }
            let next = holes.first { $0.lowerBound > at }?.lowerBound ?? end
            let want = min(next, end) - at
            let got: Int
            do throws(FileError) {
                got = try file.read(into: UnsafeMutableRawBufferPointer(start: buffer + Int(at - position), count: Int(want)), at: at)
            } catch {
                return avtool_averror(error.code)
            }
            guard got > 0 else { return AVTOOL_AVERROR_EOF }
            at += Int64(got)
        }
        position = end
        return Int32(n)
    }

    private func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
        guard let target = seekTarget(offset, whence, position: Int(position), size: Int(fileSize)) else {
            return whence & AVSEEK_SIZE != 0 ? fileSize : Int64(AVTOOL_AVERROR_EINVAL)
        }
        position = min(target, fileSize)
        return target
    }
}

/// The absolute position a seek asks for; `nil` for `AVSEEK_SIZE`, an
/// unknown `whence`, a negative result or overflow.
func seekTarget(_ offset: Int64, _ whence: Int32, position: Int, size: Int) -> Int64? {
    if whence & AVSEEK_SIZE != 0 { return nil }
    let base: Int64
    switch whence & ~AVSEEK_FORCE {
    case SEEK_SET: base = 0
    case SEEK_CUR: base = Int64(position)
    case SEEK_END: base = Int64(size)
    default: return nil
    }
    let (target, overflow) = base.addingReportingOverflow(offset)
    return overflow || target < 0 ? nil : target
}

private typealias ReadCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32
private typealias SeekCallback = @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64

/// `avio_alloc_context` with a buffer from `av_malloc`; `opaque` is set by the caller.
private func makeIOContext(writable: Bool, read: ReadCallback?, write: ReadCallback?,
                           seek: SeekCallback) throws(MediaError) -> UnsafeMutablePointer<AVIOContext> {
    let size = 32_768
    guard let buffer = av_malloc(size) else {
        throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not make an in-memory stream")
    }
    guard let io = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(size), writable ? 1 : 0,
                                      nil, read, write, seek) else {
        av_free(buffer)
        throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not make an in-memory stream")
    }
    return io
}

/// Frees the context and its (possibly reallocated) buffer.
private func freeIOContext(_ io: UnsafeMutablePointer<AVIOContext>) {
    var buffer: UnsafeMutableRawPointer? = UnsafeMutableRawPointer(io.pointee.buffer)
    av_freep(&buffer)
    var c: UnsafeMutablePointer<AVIOContext>? = io
    avio_context_free(&c)
}
