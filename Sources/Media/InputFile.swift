import FileAccess
import FileNames
import CFFmpeg
import Glibc
import ISOBMFF
import Sync

/// An opened media file for reading (`avformat_open_input` +
/// `avformat_find_stream_info`); closed with `avformat_close_input`.
public final class InputFile {
    let context: UnsafeMutablePointer<AVFormatContext>
    public let path: String
    private let cancellation: Cancellation
    /// What `path` was when opened (regular files only), to notice a file
    /// truncated, rewritten or replaced while it is being read.
    public let identity: FileIdentity?
    /// The bytes of an input opened from memory; closed after the context.
    let memory: MemoryInput?
    /// A file read through a custom I/O context (`HollowFileInput`), kept open with it.
    private let customIO: HollowFileInput?

    /// Opens and probes `path`. Errors name the path and FFmpeg's reason.
    /// `packetsOnly` skips the probe that decodes the first frames
    /// (`avformat_find_stream_info`): for reading packet timings and seeking
    /// in a file already opened in full, whose streams describe it.
    /// `format` names the demuxer to use (no format probe): for reading
    /// back what this program wrote.
    /// `sameAs`, an earlier opening of the same path in the same run: the
    /// file must still be the one that opening read (a change since is an
    /// error, now or when it shows while reading).
    public convenience init(path: String, cancellation: Cancellation = .shared, packetsOnly: Bool = false,
                            format: String? = nil, sameAs earlier: InputFile? = nil) throws(MediaError) {
        try self.init(path: path, cancellation: cancellation, packetsOnly: packetsOnly, format: format,
                      expecting: earlier?.identity)
    }

    /// Opens `path` as above, where an earlier opening, since closed, found
    /// the regular file `expected` (its `identity`; `nil`: none to compare):
    /// the file is checked against it without the earlier opening held.
    public init(path: String, cancellation: Cancellation = .shared, packetsOnly: Bool = false,
                format: String? = nil, expecting expected: FileIdentity?) throws(MediaError) {
        self.path = path
        self.cancellation = cancellation
        memory = nil
        let now = try Self.checkReadable(path)
        identity = expected ?? now
        // A file changed since is not opened at all (its index was checked as it was).
        if let expected, let changed = FileIdentity.changedError(path: path, since: expected) { throw changed }
        // A crafted or broken MP4/MOV index is refused before libavformat trusts it.
        if now != nil, expected == nil, let damage = Self.indexDamageError(path) { throw damage }
        // A fragmented MP4 cut off inside a fragment's moof is read up to that
        // fragment: libavformat refuses the whole file otherwise, and what is
        // missing is said from the fragments' boxes (`cutOff`).
        if now != nil, let end = TopLevelBoxes(path: path)?.cutFragmentAt {
            customIO = try HollowFileInput(path: path, holes: [], length: Int64(end))
        } else {
            customIO = nil
        }
        context = try Self.open(url: customIO == nil ? path : nil, io: customIO?.context, name: path, probe: !packetsOnly,
                                format: format, cancellation: cancellation)
        if expected != nil, let changed = changedError() { throw changed }
    }

    /// Opens and probes bytes in memory (a custom `AVIOContext`); `name`
    /// stands for the path in errors and reports. Nothing else is opened:
    /// formats that refer to other files or URLs (playlists, concat lists,
    /// references) cannot follow them.
    public init(memory: MemoryInput, name: String, cancellation: Cancellation = Cancellation(),
                packetsOnly: Bool = false, format: String? = nil) throws(MediaError) {
        path = name
        self.cancellation = cancellation
        self.memory = memory
        customIO = nil
        identity = nil
        context = try Self.open(url: nil, io: memory.context, name: name, probe: !packetsOnly, format: format,
                                cancellation: cancellation)
    }

    /// Opens the index of the MP4/MOV file at `path`, given as bytes with
    /// its sample tables emptied (`MovieLayout.hollowIndex`), with the
    /// MP4/MOV demuxer and without the probe: its streams, their
    /// descriptions, tags and matrices, and the file's duration, as an
    /// opening of the file would give them, without an index entry per
    /// packet (it has no packets). `identity` is the file's when its
    /// index was read (`changedError`); `sourceIndex` its tracks.
    public init(index: MemoryInput, of path: String, identity: FileIdentity, sourceIndex: SourceIndex) throws(MediaError) {
        self.path = path
        cancellation = Cancellation()
        memory = index
        customIO = nil
        self.identity = identity
        sourceIndexRead = (sourceIndex, ())
        context = try Self.open(url: nil, io: index.context, name: path, probe: false, format: "mov", cancellation: cancellation)
    }

    /// Opens a file whose media data is not to be read (`HollowFileInput`)
    /// with `format`'s demuxer, without the probe: its packets carry their
    /// sizes, timing and flags, their payloads are not the file's.
    public init(hollow: HollowFileInput, name: String, format: String, cancellation: Cancellation = Cancellation()) throws(MediaError) {
        path = name
        self.cancellation = cancellation
        memory = nil
        customIO = hollow
        identity = nil
        // No parser may look at the payloads (they are not the file's): the
        // packets are what the index says, nothing inferred.
        context = try Self.open(url: nil, io: hollow.context, name: name, probe: false, format: format,
                                flags: AVFMT_FLAG_NOPARSE | AVFMT_FLAG_NOFILLIN, cancellation: cancellation)
    }

    /// `avformat_open_input` + `avformat_find_stream_info` (if `probe`).
    private static func open(url: String?, io: UnsafeMutablePointer<AVIOContext>?, name: String, probe: Bool,
                             format: String? = nil, flags: Int32 = 0,
                             cancellation: Cancellation) throws(MediaError) -> UnsafeMutablePointer<AVFormatContext> {
        guard let ctx = avformat_alloc_context() else {
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not open input", path: name)
        }
        ctx.pointee.flags |= flags
        ctx.pointee.interrupt_callback = cancellation.interruptCallback
        var options: OpaquePointer? = nil
        av_dict_set(&options, "format_whitelist", allowedFormats, 0)
        if let io {
            ctx.pointee.pb = io
            av_dict_set(&options, "protocol_whitelist", "none", 0)
        }
        defer { av_dict_free(&options) }
        var maybe: UnsafeMutablePointer<AVFormatContext>? = ctx
        // On failure avformat_open_input frees the context it was given
        // (not a custom I/O context: that stays with its owner).
        let demuxer = format.flatMap { av_find_input_format($0) }
        let opened = url.map { u in u.withFileSystemPath { avformat_open_input(&maybe, $0, demuxer, &options) } }
            ?? avformat_open_input(&maybe, nil, demuxer, &options)
        guard opened >= 0, let c = maybe else {
            // A stop while probing cuts the read short: that is the stop, not a bad file.
            if cancellation.isCancelled { throw MediaError.interrupted }
            if opened == AVTOOL_AVERROR_EINVAL, let url, let format = probedFormat(url),
               format.names.contains(where: referencingFormats.contains) {
                throw MediaError(code: opened, operation: "could not open input", path: name,
                                 message: "its format is \(format.description), which names other files or URLs to read; avtool reads media files only")
            }
            if opened == AVTOOL_AVERROR_INVALIDDATA, let url, TopLevelBoxes(path: url)?.lacksIndex == true {
                throw MediaError(code: opened, operation: "could not open input", path: name,
                                 message: "it is an MP4/MOV without its index (moov): the recording was never finished",
                                 remedy: .repair)
            }
            throw MediaError(code: opened, operation: "could not open input", path: name,
                             message: Self.openMessage(opened))
        }
        guard probe else { return c }
        let found = avformat_find_stream_info(c, nil)
        // A stop while probing may end it with success and half the
        // streams' parameters: that is the stop too, not what the file holds.
        if found < 0 || cancellation.isCancelled {
            avformat_close_input(&maybe)
            if cancellation.isCancelled { throw MediaError.interrupted }
            throw MediaError(code: found, operation: "could not read stream information", path: name)
        }
        return c
    }

    deinit {
        var c: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&c)
    }

    private static func openMessage(_ code: Int32) -> String {
        code == AVTOOL_AVERROR_INVALIDDATA
            ? "not a media file libavformat can read (\(MediaError.describe(code)))"
            : MediaError.describe(code)
    }

    /// Whether packet timings read without the probe are the same as with
    /// it: MP4/MOV take every timing from the sample tables, while for other
    /// demuxers libavformat fills in DTS and durations from what the probe
    /// found (the codec delay, the frame size).
    public var timingsNeedNoProbe: Bool { formatName.hasPrefix("mov") }

    /// The file's tags and each stream's, as the demuxer read them.
    public var tags: IntendedTags {
        IntendedTags(format: entries(of: context.pointee.metadata),
                     streams: (0..<Int(context.pointee.nb_streams)).map { entries(of: context.pointee.streams[$0]!.pointee.metadata) })
    }

    /// Whether `other` (another opening of the same file) has the same
    /// streams at the same indexes: types, codecs and time bases.
    public func hasSameStreams(as other: InputFile) -> Bool {
        let a = streams, b = other.streams
        return a.count == b.count && zip(a, b).allSatisfy {
            $0.mediaType == $1.mediaType && $0.codecName == $1.codecName && $0.timeBase == $1.timeBase
        }
    }

    /// Refuses what libavformat would misreport: directories, empty files.
    /// Returns the identity of a regular file.
    private static func checkReadable(_ path: String) throws(MediaError) -> FileIdentity? {
        guard let st = FileSystem.status(path) else {
            throw MediaError.posix(errno, "could not open input", path: path)
        }
        if st.st_mode & S_IFMT == S_IFDIR {
            throw MediaError.posix(EISDIR, "could not open input", path: path)
        }
        if st.st_mode & S_IFMT == S_IFREG && st.st_size == 0 {
            throw MediaError(code: AVTOOL_AVERROR_INVALIDDATA, operation: "could not open input", path: path,
                             message: "the file is empty")
        }
        return st.st_mode & S_IFMT == S_IFREG ? FileIdentity(st) : nil
    }

    /// The error for a regular file that is no longer what was opened: cut
    /// short, rewritten or replaced while being read (what was read may be
    /// part old, part new, or stop early). `nil` if unchanged.
    public func changedError() -> MediaError? {
        identity.flatMap { FileIdentity.changedError(path: path, since: $0) }
    }

    public var streams: [InputStream] {
        (0..<Int(context.pointee.nb_streams)).map { InputStream(file: self, index: $0) }
    }

    /// The demuxer's short name, e.g. `mov,mp4,m4a,3gp,3g2,mj2`.
    public var formatName: String { context.pointee.iformat.pointee.name.string ?? "unknown" }

    /// The file's MP4/MOV index read box by box (`readSourceIndex`), read
    /// once, when first asked: what libavformat does not pass on.
    public var sourceIndex: SourceIndex? {
        if let read = sourceIndexRead { return read.index }
        let index = readSourceIndex()
        sourceIndexRead = (index, ())
        return index
    }
    private var sourceIndexRead: (index: SourceIndex?, Void)?
    public var formatLongName: String? { context.pointee.iformat.pointee.long_name.string }

    /// Container duration (`AV_TIME_BASE` units), if known.
    public var duration: Timestamp? {
        let d = context.pointee.duration
        return d == AVTOOL_NOPTS_VALUE || d < 0 ? nil : Timestamp(d, .microseconds)
    }

    public var startTime: Timestamp? {
        Packet.known(context.pointee.start_time).map { Timestamp($0, .microseconds) }
    }

    /// Overall bit rate in bits per second, if known.
    public var bitRate: Int64? { context.pointee.bit_rate > 0 ? context.pointee.bit_rate : nil }

    public var metadata: [(key: String, value: String)] { entries(of: context.pointee.metadata) }

    public var chapterCount: Int { Int(context.pointee.nb_chapters) }

    /// Each chapter's start on the file's timeline, in microseconds, in order.
    public var chapterStarts: [Timestamp] {
        (0..<chapterCount).compactMap { i -> Timestamp? in
            guard let c = context.pointee.chapters[i], c.pointee.time_base.num > 0, c.pointee.time_base.den > 0 else { return nil }
            return Timestamp(c.pointee.start, Rational(unchecked: c.pointee.time_base.num, c.pointee.time_base.den))
                .rescaled(to: .microseconds)
        }.sorted { $0.value < $1.value }
    }

    /// Size of the file in bytes, if the I/O layer knows it.
    public var size: Int64? {
        guard let pb = context.pointee.pb else { return nil }
        let s = avio_size(pb)
        return s > 0 ? s : nil
    }

    /// Whether opening the same name again reads the same bytes: a regular
    /// file or bytes in memory, not a pipe or a device, which can be read
    /// only once.
    public var canBeReadAgain: Bool { identity != nil || memory != nil }

    /// The MP4/MOV index read from the file's boxes (`SourceIndex`), for a
    /// regular file opened from its path by the MP4/MOV demuxer; nil
    /// otherwise (bytes in memory, a pipe, another format).
    public func readSourceIndex() -> SourceIndex? {
        guard identity != nil, memory == nil, customIO == nil, formatName.hasPrefix("mov") else { return nil }
        return SourceIndex(path: path)
    }

    /// Bytes consumed so far, for progress.
    public var bytesRead: Int64 {
        guard let pb = context.pointee.pb else { return 0 }
        return max(avio_tell(pb), 0)
    }

    /// Reads the next packet into `packet` (`av_read_frame`). Returns `false`
    /// at the end of the file. The previous payload is released first. A
    /// damaged packet is returned flagged (`isCorrupt`); the caller decides.
    public func read(into packet: borrowing Packet) throws(MediaError) -> Bool {
        av_packet_unref(packet.pointer)
        let r = av_read_frame(context, packet.pointer)
        if r == AVTOOL_AVERROR_EOF {
            // A file cut short ends early without an error: make sure it is whole.
            if let changed = changedError() { throw changed }
            return false
        }
        if r < 0 {
            if cancellation.isCancelled { throw MediaError.interrupted }
            if let changed = changedError() { throw changed }
            throw MediaError(code: r, operation: "could not read", path: path)
        }
        return true
    }

    /// Moves reading to the keyframe of stream `index` at or before
    /// `timestamp` (in the stream's time base; `av_seek_frame` backward).
    /// False when the input cannot seek there; reading then goes on as before.
    public func seek(stream index: Int, toKeyframeBefore timestamp: Int64) -> Bool {
        av_seek_frame(context, Int32(index), timestamp, AVSEEK_FLAG_BACKWARD) >= 0
    }

    /// Makes the demuxer skip every stream but `kept` (`AVDISCARD_ALL`):
    /// their packets are not returned and, where the format allows (MP4,
    /// MOV), not even read.
    public func discardAll(except kept: Set<Int>) {
        for i in 0..<Int(context.pointee.nb_streams) {
            context.pointee.streams[i]!.pointee.discard = kept.contains(i) ? AVDISCARD_DEFAULT : AVDISCARD_ALL
        }
    }

    /// The error for a packet flagged corrupt (a cut-off file, a damaged stream).
    public func corruptPacketError(stream: Int) -> MediaError {
        // A read cut short by a stop flags its packet corrupt: that is the stop.
        if cancellation.isCancelled { return .interrupted }
        if let changed = changedError() { return changed }
        if let cut = cutOffSoFar {
            return MediaError(code: AVTOOL_AVERROR_INVALIDDATA, operation: "could not read", path: path, stream: stream,
                              message: "it is cut off: \(cut)", remedy: .salvage)
        }
        return MediaError(code: AVTOOL_AVERROR_INVALIDDATA, operation: "could not read", path: path, stream: stream,
                          message: "packet is corrupt or truncated (the file is damaged or cut off)", remedy: .salvage)
    }
}

/// Which file a path names and its size and modification time.
public struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64
    public let size: Int64
    let modified: timespec

    /// The error for the regular file at `path`, whose identity was
    /// `before`, when it is no longer what it was: cut short, rewritten or
    /// replaced while being read (what was read may be part old, part new,
    /// or stop early). `nil` if unchanged.
    public static func changedError(path: String, since before: FileIdentity) -> MediaError? {
        let what: String
        if let st = FileSystem.status(path) {
            let now = FileIdentity(st)
            if now == before { return nil }
            if now.device != before.device || now.inode != before.inode {
                what = "it was replaced by another file"
            } else if now.size < before.size {
                what = "it was truncated from \(before.size) to \(now.size) bytes"
            } else if now.size > before.size {
                what = "it grew from \(before.size) to \(now.size) bytes"
            } else {
                what = "it was modified"
            }
        } else {
            what = "it was removed or renamed"
        }
        return MediaError(code: AVTOOL_AVERROR_INVALIDDATA, operation: "could not read", path: path,
                          message: "the file changed while it was being read (\(what))",
                          hint: "let whatever writes it finish, then run again")
    }

    /// The identity of the regular file open as `file`; nil for anything else.
    public init?(file: OpenFile) {
        guard let st = try? file.status(), st.st_mode & S_IFMT == S_IFREG else { return nil }
        self.init(st)
    }

    init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int64(st.st_size)
        modified = st.st_mtim
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.device == b.device && a.inode == b.inode && a.size == b.size
            && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
    }
}

/// Demuxers that open other files or URLs named inside the input: concat
/// lists, HLS and DASH playlists, IMF compositions, SDP/RTP/RTSP sessions.
/// A list that names itself opens itself until the process runs out of
/// files or stack; one that names a URL sends avtool onto the network, where
/// an unreachable host hangs it. avtool reads media files, so these are
/// refused (the whitelist is inherited by any nested open, too).
let referencingFormats: Set<String> = ["concat", "hls", "dash", "imf", "sdp", "rtp", "rtsp"]

/// Every other demuxer of this libavformat, as `format_whitelist`.
let allowedFormats: String = {
    var names = Set<String>()
    var opaque: UnsafeMutableRawPointer? = nil
    while let format = av_demuxer_iterate(&opaque) {
        let parts = String(cString: format.pointee.name).split(separator: ",").map(String.init)
        if !parts.contains(where: referencingFormats.contains) { names.formUnion(parts) }
    }
    return names.sorted().joined(separator: ",")
}()

/// The demuxer libavformat would pick for the file at `url`, from its
/// first bytes (`av_probe_input_buffer2`), to name a refused format.
private func probedFormat(_ url: String) -> (names: [String], description: String)? {
    var pb: UnsafeMutablePointer<AVIOContext>? = nil
    guard url.withFileSystemPath({ avio_open(&pb, $0, AVIO_FLAG_READ) }) >= 0 else { return nil }
    defer { avio_closep(&pb) }
    var format: UnsafePointer<AVInputFormat>? = nil
    guard av_probe_input_buffer2(pb, &format, url, nil, 0, 0) >= 0, let f = format else { return nil }
    let name = String(cString: f.pointee.name)
    let long = f.pointee.long_name.map { String(cString: $0) } ?? name
    return (name.split(separator: ",").map(String.init), "\(long) (\(name))")
}
