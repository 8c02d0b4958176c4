import CFFmpeg
import Glibc

/// Packets whose payloads are not in memory but named by where they are in
/// their input file, for a stream copy of MP4/MOV whose payloads the muxer
/// writes as they are: each packet read without its payload (a hollow
/// input's) is given a payload pointer of its own into a region of zero
/// pages mapped read-only (`refer`), the packet's place in the region
/// telling which packet it is. The muxer writes each payload from the
/// packet as it is, so the same file comes out as from payloads read,
/// with the media data's bytes left to copy from file to file.
///
/// The output notes where each named payload goes (`place`): the
/// `placements`, runs of bytes that follow each other in the input and the
/// output, are what the caller copies from the input into the output.
///
/// A packet that cannot be named so (no place in the input, larger than
/// the region allows, more packets than the index listed) is given its
/// bytes read from the input (`fill`). Used on one thread: the muxer's.
public final class PayloadReferences {
    /// The input's descriptor, the copies' source.
    public let source: Int32
    public let path: String
    private let base: UnsafeMutableRawPointer
    private let length: Int
    /// Packets that can be named: one byte of the region each.
    private let slots: Int
    /// The largest payload named; larger ones are read.
    private let largest: Int
    /// One reference for the whole region, each packet's a new reference to it.
    private var region: UnsafeMutablePointer<AVBufferRef>?
    /// Where each named packet's bytes are, by its place in the region.
    private var places: [(position: Int64, size: Int32)] = []
    /// A run of payload bytes: `count` bytes of the input at `from`, placed at `at` in the output.
    public struct Placement: Sendable, Equatable {
        public var at: Int64
        public var from: Int64
        public var count: Int64
    }
    /// Where the output holds the input's bytes, in the order placed.
    public private(set) var placements: [Placement] = []

    /// For the packets of `path`, at most `packets` of them named, each of
    /// at most `largest` bytes.
    public init(path: String, packets: Int, largest: Int = 64 << 20) throws(MediaError) {
        self.path = path
        source = open(path, O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { throw MediaError.posix(errno, "could not open input", path: path) }
        slots = max(packets, 0)
        self.largest = largest
        length = slots + largest + Int(AV_INPUT_BUFFER_PADDING_SIZE)
        // Reserved address space only: every page reads as the kernel's one zero page.
        let p = mmap(nil, length, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        guard let p, p != MAP_FAILED else {
            let e = errno
            Glibc.close(source)
            throw MediaError.posix(e, "could not remux", path: path)
        }
        base = p
        // The region is never freed through this reference (its free does nothing).
        region = av_buffer_create(p.assumingMemoryBound(to: UInt8.self), length, { _, _ in }, nil, AV_BUFFER_FLAG_READONLY)
        places.reserveCapacity(slots)
        guard region != nil else {
            munmap(p, length)
            Glibc.close(source)
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not allocate a packet")
        }
    }

    /// Must outlive every packet made by `refer`, in the muxer's queues
    /// too: keep it until the output is finished.
    deinit {
        av_buffer_unref(&region)
        munmap(base, length)
        Glibc.close(source)
    }

    /// Makes `packet`'s payload a reference to its bytes in the input, or
    /// (where it cannot be named) the bytes themselves, read.
    public func refer(_ packet: borrowing Packet) throws(MediaError) {
        let p = packet.pointer
        let size = Int(p.pointee.size), position = p.pointee.pos
        guard position >= 0, size > 0, size <= largest, places.count < slots,
              let ref = av_buffer_ref(region) else {
            try fill(packet)
            return
        }
        let slot = places.count
        places.append((position, Int32(size)))
        // The payload read (none: a hollow input's) goes; timing, flags and side data stay.
        av_buffer_unref(&p.pointee.buf)
        p.pointee.buf = ref
        p.pointee.data = base.advanced(by: slot).assumingMemoryBound(to: UInt8.self)
    }

    /// Reads `packet`'s bytes from the input into its payload (a muxer that
    /// keeps a payload, a carried track's, needs the bytes themselves).
    public func fill(_ packet: borrowing Packet) throws(MediaError) {
        let p = packet.pointer
        let size = Int(p.pointee.size)
        guard size > 0 else { return }
        guard p.pointee.pos >= 0, av_packet_make_writable(p) >= 0 else {
            throw MediaError.invalid("could not remux", path: path, message: "a packet's place in the file is not known")
        }
        var done = 0
        while done < size {
            let n = pread(source, p.pointee.data + done, size - done, off_t(p.pointee.pos) + off_t(done))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw n == 0 ? MediaError.invalid("could not remux", path: path, message: "the input ended early")
                    : MediaError.posix(errno, "could not read", path: path)
            }
            done += n
        }
    }

    /// Notes that the `count` bytes at `pointer`, a named packet's whole
    /// payload, go to `at` in the output; false for anything else.
    func place(_ pointer: UnsafeRawPointer, count: Int, at: Int64) -> Bool {
        let offset = pointer - UnsafeRawPointer(base)
        guard offset >= 0, offset < places.count, Int(places[offset].size) == count else { return false }
        let from = places[offset].position, n = Int64(count)
        if let last = placements.last, last.at + last.count == at, last.from + last.count == from {
            placements[placements.count - 1].count += n
        } else {
            placements.append(Placement(at: at, from: from, count: n))
        }
        return true
    }

    /// Whether `pointer` is in the region (a payload that must be named).
    func holds(_ pointer: UnsafeRawPointer) -> Bool {
        let offset = pointer - UnsafeRawPointer(base)
        return offset >= 0 && offset < length
    }
}
