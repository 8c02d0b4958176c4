import FileAccess
import Glibc
import ISOBMFF

/// A file's bytes mapped read-only (`mmap`), for scanning media data that
/// no demuxer can index (a recording whose index was never written).
/// Unmapped in `deinit`; the bytes are valid while the object lives.
public final class MappedFile {
    public let path: String
    public let count: Int
    private let base: UnsafeMutableRawPointer?

    public init(path: String) throws(MediaError) {
        self.path = path
        let file = try MediaError.files("could not open input") { () throws(FileError) in try OpenFile(path: path, O_RDONLY) }
        count = try Int(MediaError.files("could not open input") { () throws(FileError) in try file.size() })
        guard count > 0 else {
            base = nil
            return
        }
        let p = mmap(nil, count, PROT_READ, MAP_PRIVATE, file.descriptor, 0)
        guard let p, p != MAP_FAILED else {
            throw MediaError.posix(errno, "could not map input", path: path)
        }
        madvise(p, count, MADV_SEQUENTIAL)
        base = p
    }

    deinit {
        if let base { munmap(base, count) }
    }

    /// The file's bytes, valid inside `body`.
    public func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }
}

/// Where a Matroska/WebM file's segment ends by its header: the EBML
/// header, then the Segment element whose size says how many bytes follow.
public struct MatroskaSegment: Sendable, Equatable {
    /// Bytes the segment's end lies from the file's start (nil: unknown
    /// size, as a live recording writes it until it finishes).
    public var declaredEnd: Int64?

    /// Reads the top-level elements up to the Segment; nil when the bytes
    /// do not start a Matroska file.
    public init?(_ b: UnsafeRawBufferPointer) {
        /// A variable-length integer at `i`: its length and value (the
        /// marker bit kept for IDs); `allOnes` when every value bit is set.
        func vint(_ i: Int, keepMarker: Bool) -> (length: Int, value: UInt64, allOnes: Bool)? {
            guard i < b.count, b[i] != 0 else { return nil }
            let length = b[i].leadingZeroBitCount + 1
            guard let raw = BigEndianReader(b).uint(at: i, size: length) else { return nil }
            // Without the marker: the length's zero bits and the 1 after them.
            let ones = (UInt64(1) << (7 * UInt64(length))) - 1
            let v = keepMarker ? raw : raw & ones
            return (length, v, !keepMarker && v == ones)
        }
        var i = 0, first = true
        while let id = vint(i, keepMarker: true), let size = vint(i + id.length, keepMarker: false) {
            if first {
                guard id.value == 0x1A45DFA3 else { return nil }
                first = false
            }
            let data = i + id.length + size.length
            if id.value == 0x18538067 {
                declaredEnd = size.allOnes ? nil : Int64(data) + Int64(clamping: size.value)
                return
            }
            guard !size.allOnes, size.value < UInt64(Int.max - data) else { return nil }
            i = data + Int(size.value)
        }
        return nil
    }
}
