import CFFmpeg
import FileAccess
import Glibc

/// Packets whose payloads are not in memory but named by where they are in
/// their input file, for a stream copy of MP4/MOV whose payloads the muxer
/// writes as they are: each packet read without its payload (a hollow
/// input's) is given a payload pointer into a region of zero pages mapped
/// read-only, as large as the input (`refer`): at the packet's own place
/// in the file, so the pointer says where its bytes are. The muxer writes each payload from the
/// packet as it is, so the same file comes out as from payloads read,
/// with the media data's bytes left to copy from file to file.
///
/// The output notes where each named payload goes (`place`): the
/// `placements`, runs of bytes that follow each other in the input and the
/// output, are what the caller copies from the input into the output.
///
/// A packet that cannot be named so (no place in the input, or bytes past
/// its end) is given its bytes read from the input (`fill`). Used on one
/// thread: the muxer's.
public final class PayloadReferences {
    /// The input, the copies' source.
    public let source: OpenFile
    public let path: String
    private let base: UnsafeMutableRawPointer
    private let length: Int
    /// The input's size: payloads lie before it.
    private let size: Int64
    /// One reference for the whole region, each packet's a new reference to it.
    private var region: UnsafeMutablePointer<AVBufferRef>?
    /// A run of payload bytes: `count` bytes of the input at `from`, placed at `at` in the output.
    public struct Placement: Sendable, Equatable {
        public var at: Int64
        public var from: Int64
        public var count: Int64
    }
    /// Where the output holds the input's bytes, in the order placed.
    public private(set) var placements: [Placement] = []

    /// For the packets of `path`.
    public init(path: String) throws(MediaError) {
        self.path = path
        let opened = try MediaError.files("could not open input") { () throws(FileError) in
            let file = try OpenFile(path: path, O_RDONLY)
            let size = try file.size()
            // (An empty input: errno 0, as before, whose words are "Success"; libavformat refuses it first.)
            guard size > 0 else { throw FileError(code: 0, call: "fstat", path: path) }
            return (file, size)
        }
        source = opened.0
        size = opened.1
        length = Int(size) + Int(AV_INPUT_BUFFER_PADDING_SIZE)
        // Reserved address space only: every page reads as the kernel's one zero page.
        let p = mmap(nil, length, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        guard let p, p != MAP_FAILED else { throw MediaError.posix(errno, "could not remux", path: path) }
        base = p
        // The region is never freed through this reference (its free does nothing).
        region = av_buffer_create(p.assumingMemoryBound(to: UInt8.self), length, { _, _ in }, nil, AV_BUFFER_FLAG_READONLY)
        guard region != nil else {
            munmap(p, length)
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not allocate a packet")
        }
    }

    /// Must outlive every packet made by `refer`, in the muxer's queues
    /// too: keep it until the output is finished.
    deinit {
        av_buffer_unref(&region)
        munmap(base, length)
    }

    /// Makes `packet` the packet `shape` describes, its payload a reference
    /// to its bytes in the input, or (where it cannot be named) the bytes
    /// themselves, read.
    public func refer(_ packet: borrowing Packet, as shape: PacketShape) throws(MediaError) {
        let count = Int64(shape.size)
        guard shape.position >= 0, count > 0, shape.position <= size - count, let ref = av_buffer_ref(region) else {
            try fill(packet, as: shape)
            return
        }
        let p = packet.pointer
        av_packet_unref(p)
        p.pointee.buf = ref
        p.pointee.data = base.advanced(by: Int(shape.position)).assumingMemoryBound(to: UInt8.self)
        try shape.apply(to: p)
    }

    /// Makes `packet` the packet `shape` describes with its payload's bytes:
    /// the shape's own where it kept them, else read from the input (a
    /// muxer that keeps a payload, a carried track's, needs the bytes).
    public func fill(_ packet: borrowing Packet, as shape: PacketShape) throws(MediaError) {
        let p = packet.pointer
        av_packet_unref(p)
        let size = Int(shape.size)
        guard av_new_packet(p, Int32(size)) >= 0 else {
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not allocate a packet")
        }
        if let bytes = shape.payload, bytes.count == size {
            p.pointee.data.update(from: bytes, count: size)
        } else if size > 0 {
            guard shape.position >= 0 else {
                throw MediaError.invalid("could not remux", path: path, message: "a packet's place in the file is not known")
            }
            let got = try MediaError.files("could not read") { () throws(FileError) in
                try source.read(into: UnsafeMutableRawBufferPointer(start: p.pointee.data, count: size), at: shape.position)
            }
            guard got == size else { throw MediaError.invalid("could not remux", path: path, message: "the input ended early") }
        }
        try shape.apply(to: p)
    }

    /// Notes that the `count` bytes at `pointer`, a named packet's whole
    /// payload, go to `at` in the output; false for anything else.
    func place(_ pointer: UnsafeRawPointer, count: Int, at: Int64) -> Bool {
        let from = Int64(pointer - UnsafeRawPointer(base)), n = Int64(count)
        guard from >= 0, n > 0, from <= size - n else { return false }
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
