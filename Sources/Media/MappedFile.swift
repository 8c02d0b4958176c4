import CFFmpeg
import Glibc

/// A file's bytes mapped read-only (`mmap`), for scanning media data that
/// no demuxer can index (a recording whose index was never written).
/// Unmapped in `deinit`; the bytes are valid while the object lives.
public final class MappedFile {
    public let path: String
    public let count: Int
    private let base: UnsafeMutableRawPointer?

    public init(path: String) throws(MediaError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw MediaError(code: -errno, operation: "could not open input", path: path)
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            throw MediaError(code: -errno, operation: "could not open input", path: path)
        }
        count = Int(st.st_size)
        guard count > 0 else {
            base = nil
            return
        }
        let p = mmap(nil, count, PROT_READ, MAP_PRIVATE, fd, 0)
        guard let p, p != MAP_FAILED else {
            throw MediaError(code: -errno, operation: "could not map input", path: path)
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

/// The top-level boxes of an MP4/MOV file, as far as the file holds them:
/// whether it has an index (`moov`) and where its media data (`mdat`) lies.
public struct TopLevelBoxes: Sendable {
    /// Each `mdat` payload, clamped to the file.
    public var mediaData: [Range<Int>] = []
    /// The last box runs past the end of the file (or to it, size 0).
    public var cutShort = false
    public var hasIndex = false
    public var hasFragments = false
    /// The file starts with a box an MP4/MOV starts with.
    public var isISOBMFF = false

    public init(_ b: UnsafeRawBufferPointer) {
        func be(_ i: Int, _ n: Int) -> Int { (0..<n).reduce(0) { $0 << 8 | Int(b[i + $1]) } }
        var i = 0
        while i + 8 <= b.count {
            var size = be(i, 4), header = 8
            let type = String(decoding: b[(i + 4)..<(i + 8)], as: UTF8.self)
            if i == 0 { isISOBMFF = ["ftyp", "wide", "free", "skip", "mdat", "moov"].contains(type) }
            guard isISOBMFF else { return }
            if size == 1 {
                guard i + 16 <= b.count else { cutShort = true; return }
                size = be(i + 8, 8)
                header = 16
            }
            if size == 0 {  // to the end of the file: how an unfinished recording's media data is left
                size = b.count - i
                cutShort = true
            }
            guard size >= header else { return }
            switch type {
            case "moov": hasIndex = true
            case "moof": hasFragments = true
            case "mdat": mediaData.append((i + header)..<min(i + size, b.count))
            default: break
            }
            if size > b.count - i { cutShort = true }
            i += min(size, b.count - i)
        }
    }
}

extension TopLevelBoxes {
    /// The boxes of the file at `path`, or nil when it cannot be mapped.
    public init?(path: String) {
        guard let file = try? MappedFile(path: path) else { return nil }
        self = file.withBytes { TopLevelBoxes($0) }
    }

    /// An MP4/MOV whose media data was written but whose index was not, or
    /// not whole (a recording that stopped before it was finished); for a
    /// file libavformat could not open.
    public var lacksIndex: Bool { isISOBMFF && !mediaData.isEmpty && !hasFragments && (!hasIndex || cutShort) }
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
            guard i + length <= b.count else { return nil }
            var v = UInt64(keepMarker ? b[i] : b[i] & (0xff >> length))
            for k in 1..<length { v = v << 8 | UInt64(b[i + k]) }
            let ones = (UInt64(1) << (7 * UInt64(length))) - 1
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
