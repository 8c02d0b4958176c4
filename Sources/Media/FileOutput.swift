import CFFmpeg
import Glibc

/// A file written through a custom `AVIOContext` over a descriptor this
/// owns, in place of libavformat's `file` protocol: a 1 MiB buffer (the
/// protocol's is 32 KiB, a system call for every 32 KiB), positioned writes
/// (`pwrite`: a muxer's seek back to patch a header costs no call), and the
/// output's expected size reserved up front (`fallocate`), so the
/// filesystem allocates its blocks once instead of page by page, and a disk
/// too small for it is found before the first packet. What the reservation
/// over-estimated is given back when the file is closed.
final class FileOutput {
    let context: UnsafeMutablePointer<AVIOContext>
    private let fd: Int32
    private let path: String
    private var position: Int64 = 0
    /// The end of what was written: the file's size.
    private var end: Int64 = 0
    private var reserved = false
    private var closed = false

    static let bufferSize = 1 << 20

    /// Opens `path` for writing from an empty file (a file that is not empty
    /// is truncated) and reserves `expectedSize` bytes where given.
    init(path: String, reportingAs name: String, expectedSize: Int64?) throws(MediaError) {
        self.path = name
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw MediaError.posix(errno, "could not create output", path: name) }
        var st = stat()
        // Truncating a file that is already empty (the staged temporary)
        // makes ext4 (auto_da_alloc) flush the whole output at close: only
        // a file with something in it is truncated.
        if fstat(fd, &st) == 0 && st.st_size > 0 && ftruncate(fd, 0) != 0 {
            let e = errno
            Glibc.close(fd)
            throw MediaError.posix(e, "could not create output", path: name)
        }
        if let expectedSize, expectedSize > 0 {
            // Only a help: where the filesystem cannot reserve, or has not
            // the room for an estimate, the writes themselves find out.
            reserved = avtool_reserve_blocks(fd, 0, expectedSize) == 0
        }
        guard let buffer = av_malloc(Self.bufferSize) else {
            Glibc.close(fd)
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not create output", path: name)
        }
        guard let io = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(Self.bufferSize), 1, nil, nil,
                                          { opaque, buffer, size in
                                              Unmanaged<FileOutput>.fromOpaque(opaque!).takeUnretainedValue().write(buffer!, Int(size))
                                          },
                                          { opaque, offset, whence in
                                              Unmanaged<FileOutput>.fromOpaque(opaque!).takeUnretainedValue().seek(offset, whence)
                                          }) else {
            av_free(buffer)
            Glibc.close(fd)
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not create output", path: name)
        }
        context = io
        context.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
        // libavformat marks a flush point after every packet, and a context
        // flushes there once it holds `min_packet_size` bytes: 0 would be a
        // system call a packet.
        context.pointee.min_packet_size = Int32(Self.bufferSize)
    }

    deinit {
        var buffer: UnsafeMutableRawPointer? = UnsafeMutableRawPointer(context.pointee.buffer)
        av_freep(&buffer)
        var c: UnsafeMutablePointer<AVIOContext>? = context
        avio_context_free(&c)
        if !closed { Glibc.close(fd) }
    }

    /// Gives back the reserved blocks past the end of what was written and
    /// closes the file. The context must have been flushed.
    func close() throws(MediaError) {
        guard !closed else { return }
        closed = true
        if reserved && ftruncate(fd, off_t(end)) != 0 {
            let e = errno
            Glibc.close(fd)
            throw MediaError.posix(e, "could not close", path: path)
        }
        if Glibc.close(fd) != 0 && errno != EINTR {
            throw MediaError.posix(errno, "could not close", path: path)
        }
    }

    private func write(_ buffer: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
        var done = 0
        while done < size {
            let n = pwrite(fd, buffer + done, size - done, off_t(position) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                return avtool_averror(errno)
            }
            // A write of nothing with no error: the device takes no more.
            guard n > 0 else { return AVTOOL_AVERROR_ENOSPC }
            done += n
        }
        position += Int64(size)
        end = max(end, position)
        return Int32(size)
    }

    private func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
        if whence & AVSEEK_SIZE != 0 { return end }
        let base: Int64
        switch whence & ~AVSEEK_FORCE {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = position
        case SEEK_END: base = end
        default: return Int64(AVTOOL_AVERROR_EINVAL)
        }
        let (target, overflow) = base.addingReportingOverflow(offset)
        guard !overflow, target >= 0 else { return Int64(AVTOOL_AVERROR_EINVAL) }
        position = target
        return target
    }
}
