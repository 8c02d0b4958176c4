import CFFmpeg
import FileAccess
import Glibc
import Threads

/// A file written through a custom `AVIOContext` over a descriptor this
/// owns, in place of libavformat's `file` protocol:
/// - 256 KiB buffers (the protocol's is 32 KiB, a system call for every
///   32 KiB; writes of 1 MiB into reserved blocks ran up to 5× slower
///   here once other large files had just been written and deleted),
///   written behind: a full buffer goes to a writer thread of the file's
///   own, and the muxer goes on filling the next (the buffers are swapped
///   in the context, no copy), so the kernel's copy into the page cache
///   overlaps the demuxing and muxing;
/// - positioned writes (`pwrite`), done in the order given;
/// - the output's expected size reserved up front (`fallocate`), so the
///   filesystem allocates its blocks once instead of page by page, and a
///   disk too small for it is found before the first packet. What the
///   reservation over-estimated is given back when the file is closed.
///
/// With `payloads`, the context hands each payload over straight from its
/// packet (`direct`), and a payload that names the input's bytes
/// (`PayloadReferences`) is not written: its place in the file is noted
/// there and left empty, for the caller to fill from the input.
///
/// A seek waits until every write given so far is done, so a muxer that
/// reads its own output back (faststart's second pass reopens the file)
/// finds it complete. A failed write is reported at the next write, seek
/// or close.
final class FileOutput {
    let context: UnsafeMutablePointer<AVIOContext>
    private let file: OpenFile
    private let path: String
    private var position: Int64 = 0
    /// The end of what was written: the file's size.
    private var end: Int64 = 0
    private var reserved = false
    private var closed = false

    static let bufferSize = 256 << 10
    /// Buffers in all: the one being filled, the rest being written or free.
    static let bufferCount = 3

    /// All the buffers, each filled by the muxer or written, in turn.
    private let buffers: [UnsafeMutablePointer<UInt8>]
    private var current = 0
    /// Payloads that name the input's bytes: placed, not written.
    private let payloads: PayloadReferences?
    /// Shared with the writer thread, under `changed`.
    private var pending: [(buffer: Int, count: Int, at: Int64)] = []
    private var busy: Set<Int> = []
    private var failure: Int32 = 0
    private var stopping = false
    private let changed = Condition()
    private var writer: WorkerThread?

    /// Opens `path` for writing from an empty file (a file that is not empty
    /// is truncated) and reserves `expectedSize` bytes where given.
    init(path: String, reportingAs name: String, expectedSize: Int64?, payloads: PayloadReferences? = nil) throws(MediaError) {
        self.path = name
        self.payloads = payloads
        file = try MediaError.files("could not create output") { () throws(FileError) in
            let file = try OpenFile(path: path, O_WRONLY | O_CREAT, mode: 0o666, reportingAs: name)
            // Truncating a file that is already empty (the staged temporary)
            // makes ext4 (auto_da_alloc) flush the whole output at close: only
            // a file with something in it is truncated.
            if let size = try? file.size(), size > 0 { try file.truncate(to: 0) }
            return file
        }
        if let expectedSize, expectedSize > 0 {
            // Only a help: where the filesystem cannot reserve, or has not
            // the room for an estimate, the writes themselves find out.
            reserved = (try? file.reserve(expectedSize)) != nil
        }
        var made: [UnsafeMutablePointer<UInt8>] = []
        for _ in 0..<Self.bufferCount {
            guard let b = av_malloc(Self.bufferSize) else { break }
            made.append(b.assumingMemoryBound(to: UInt8.self))
        }
        guard made.count == Self.bufferCount,
              let io = avio_alloc_context(made[0], Int32(Self.bufferSize), 1, nil, nil,
                                          { opaque, buffer, size in
                                              Unmanaged<FileOutput>.fromOpaque(opaque!).takeUnretainedValue().write(buffer!, Int(size))
                                          },
                                          { opaque, offset, whence in
                                              Unmanaged<FileOutput>.fromOpaque(opaque!).takeUnretainedValue().seek(offset, whence)
                                          }) else {
            for b in made { av_free(b) }
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not create output", path: name)
        }
        buffers = made
        context = io
        context.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
        // libavformat marks a flush point after every packet, and a context
        // flushes there once it holds `min_packet_size` bytes: 0 would be a
        // system call a packet.
        context.pointee.min_packet_size = Int32(Self.bufferSize)
        // Payloads reach `write` as the packets hold them (their pointers say which they are).
        if payloads != nil { context.pointee.direct = 1 }
    }

    deinit {
        stopWriter()
        // The buffers are this file's, not the context's.
        context.pointee.buffer = nil
        var c: UnsafeMutablePointer<AVIOContext>? = context
        avio_context_free(&c)
        for b in buffers { av_free(b) }
    }

    /// Waits for the writes given so far, gives back the reserved blocks
    /// past the end of what was written and closes the file. The context
    /// must have been flushed.
    func close() throws(MediaError) {
        guard !closed else { return }
        let code = drain()
        stopWriter()
        closed = true
        if code < 0 {
            try? file.close()
            throw MediaError(code: code, operation: "could not write to", path: path)
        }
        try MediaError.files("could not close") { () throws(FileError) in
            // (Closed whatever the truncation says.)
            defer { try? file.close() }
            if reserved { try file.truncate(to: end) }
            try file.close()
        }
    }

    // MARK: the writer thread

    private func startWriter() -> Bool {
        if writer != nil { return true }
        let me = Unmanaged.passUnretained(self)
        // The thread ends (and is joined) before this object goes away.
        nonisolated(unsafe) let file = me
        writer = try? WorkerThread { file.takeUnretainedValue().writeLoop() }
        return writer != nil
    }

    private func stopWriter() {
        guard let writer else { return }
        changed.withLock {
            stopping = true
            changed.broadcast()
        }
        writer.join()
        self.writer = nil
    }

    private func writeLoop() {
        while true {
            changed.lock()
            while pending.isEmpty && !stopping { changed.wait() }
            guard let job = pending.first else {
                changed.unlock()
                return
            }
            let failed = failure < 0
            changed.unlock()
            let code = failed ? 0 : writeFully(buffers[job.buffer], job.count, at: job.at)
            changed.withLock {
                if code < 0 && failure == 0 { failure = code }
                pending.removeFirst()
                busy.remove(job.buffer)
                changed.broadcast()
            }
        }
    }

    /// Waits until every write given is done; the first error, or 0.
    private func drain() -> Int32 {
        changed.withLock {
            while !pending.isEmpty { changed.wait() }
            return failure
        }
    }

    /// All `size` bytes at `offset`; 0, or the failure's code (a write of nothing: `ENOSPC`).
    private func writeFully(_ buffer: UnsafePointer<UInt8>, _ size: Int, at offset: Int64) -> Int32 {
        do throws(FileError) {
            try file.write(UnsafeRawBufferPointer(start: buffer, count: size), at: offset)
            return 0
        } catch {
            return avtool_averror(error.code)
        }
    }

    // MARK: the context's callbacks

    private func write(_ buffer: UnsafeMutablePointer<UInt8>, _ size: Int) -> Int32 {
        let at = position
        if let payloads, payloads.holds(buffer) {
            // A named payload: its place noted, nothing written.
            guard payloads.place(buffer, count: size, at: at) else { return AVTOOL_AVERROR_EINVAL }
            position += Int64(size)
            end = max(end, position)
            return Int32(size)
        }
        position += Int64(size)
        end = max(end, position)
        // Written behind when it is the buffer being filled (libavformat
        // flushes only that one) and a thread could be started; otherwise here.
        guard buffer == buffers[current], startWriter() else {
            let code = drain()
            if code < 0 { return code }
            let written = writeFully(buffer, size, at: at)
            return written < 0 ? written : Int32(size)
        }
        let next: Int = changed.withLock {
            pending.append((current, size, at))
            busy.insert(current)
            changed.broadcast()
            // The next free buffer (one always frees up: the writer takes them in turn).
            while true {
                if failure < 0 { return -1 }
                if let free = (0..<Self.bufferCount).first(where: { !busy.contains($0) }) { return free }
                changed.wait()
            }
        }
        guard next >= 0 else { return changed.withLock { failure } }
        current = next
        // flush_buffer goes on from `buffer`, which is now the free one.
        context.pointee.buffer = buffers[next]
        context.pointee.buf_ptr = buffers[next]
        context.pointee.buf_end = buffers[next] + Self.bufferSize
        return Int32(size)
    }

    private func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
        if whence & AVSEEK_SIZE != 0 { return end }
        // What is read back after a seek (faststart's second pass) must be in the file.
        let code = drain()
        if code < 0 { return Int64(code) }
        guard let target = seekTarget(offset, whence, position: Int(position), size: Int(end)) else {
            return Int64(AVTOOL_AVERROR_EINVAL)
        }
        position = target
        return target
    }
}
