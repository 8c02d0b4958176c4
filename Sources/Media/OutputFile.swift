import FileNames
import CFFmpeg
import Glibc
import Sync

/// How one output stream is made: copied from an input stream, or encoded.
/// The whole set is given to `OutputFile.init`, which writes the header, so
/// no stream can be added once writing has begun.
public enum OutputStreamSource {
    /// Copy codec parameters, metadata, disposition and side data (rotation);
    /// `isDefault` overrides the default flag of the disposition.
    case copy(InputStream, isDefault: Bool? = nil)
    /// Packets from an opened encoder; metadata, disposition and side data
    /// come from the encoder's source stream.
    case encoded(Encoder)
    /// Copy, with the codec's global header replaced and, when `tag` is
    /// given (four characters), the sample entry's tag: an exact-mode cut's
    /// video, whose re-encoded frames bring parameter sets of their own.
    case spliced(InputStream, extradata: [UInt8], tag: String?)
    /// Packets encoded elsewhere with the settings of `Encoder` (a chunked
    /// transcode's chunks): its parameters and its source's metadata, with
    /// the global header the chunks carry.
    case chunks(Encoder, extradata: [UInt8])
}

/// A media file being written (`avformat_alloc_output_context2`, `avio_open2`,
/// `avformat_write_header`). `finish()` writes the trailer; dropping it
/// unfinished closes the file without one (the staged temporary is then
/// discarded by its owner).
public final class OutputFile {
    let context: UnsafeMutablePointer<AVFormatContext>
    /// Where the bytes go (a staged temporary, usually).
    public let path: String
    /// What errors call the output: the target the user named, not its temporary.
    public let name: String
    public let container: Container
    /// Each output stream's time base as the muxer chose it in the header.
    public private(set) var timeBases: [Rational] = []
    /// The tags given to the file and each stream, as they were before the
    /// header (which adds the muxer's own): what the written file should hold.
    public private(set) var intendedTags = IntendedTags(format: [], streams: [])
    private let cancellation: Cancellation
    private var finished = false
    /// An in-memory output; its I/O context belongs to it, not to this file.
    private let memory: MemoryOutput?
    /// The file written, when the muxer writes one: its I/O context belongs to it.
    private var file: FileOutput?

    /// Creates the file at `path` with exactly `streams`, copies the format
    /// metadata and chapters of `metadataSource`, and writes the header with
    /// `options` (muxer private options such as `movflags`). Errors name
    /// `name` (default: `path`).
    /// `expectedSize`, an estimate of the finished file's size, is reserved
    /// on the disk before the header (see `FileOutput`). Packets whose
    /// payloads are references (`PayloadReferences.refer`) must be written
    /// with `payloads`: their bytes are copied from the input.
    public convenience init(path: String, reportingAs name: String? = nil, container: Container,
                            streams: [OutputStreamSource], metadataSource: InputFile?, edits: MetadataEdits = MetadataEdits(),
                            options: [(String, String)] = [], expectedSize: Int64? = nil, payloads: PayloadReferences? = nil,
                            cancellation: Cancellation = .shared) throws(MediaError) {
        try self.init(path: path, name: name ?? path, memory: nil, container: container, streams: streams,
                      metadataSource: metadataSource, edits: edits, options: options, expectedSize: expectedSize,
                      payloads: payloads, cancellation: cancellation)
    }

    /// The same into memory (`MemoryOutput`): nothing touches the filesystem.
    /// Options that rewrite the output by reopening it (faststart) cannot be used.
    public convenience init(memory: MemoryOutput, name: String, container: Container, streams: [OutputStreamSource],
                            metadataSource: InputFile?, edits: MetadataEdits = MetadataEdits(), options: [(String, String)] = [],
                            cancellation: Cancellation = Cancellation()) throws(MediaError) {
        try self.init(path: name, name: name, memory: memory, container: container, streams: streams,
                      metadataSource: metadataSource, edits: edits, options: options, expectedSize: nil,
                      payloads: nil, cancellation: cancellation)
    }

    private init(path: String, name: String, memory: MemoryOutput?, container: Container,
                 streams: [OutputStreamSource], metadataSource: InputFile?, edits: MetadataEdits,
                 options: [(String, String)], expectedSize: Int64?, payloads: PayloadReferences?,
                 cancellation: Cancellation) throws(MediaError) {
        self.path = path
        self.name = name
        self.memory = memory
        self.container = container
        self.cancellation = cancellation
        var maybe: UnsafeMutablePointer<AVFormatContext>? = nil
        // The muxer keeps the path as its url (a faststart pass reopens the file by it): the name's bytes.
        let r = memory == nil ? path.withFileSystemPath { avformat_alloc_output_context2(&maybe, nil, container.muxer, $0) }
            : avformat_alloc_output_context2(&maybe, nil, container.muxer, nil)
        guard r >= 0, let ctx = maybe else {
            throw MediaError(code: r < 0 ? r : AVTOOL_AVERROR_ENOMEM, operation: "could not create output",
                             path: name, message: "no \(container.muxer) muxer in this FFmpeg build")
        }
        context = ctx
        // From here on deinit cleans up whatever is open.
        // The decoder buffer headroom the `ffmpeg` program gives every muxer
        // (-muxdelay 0.7): MPEG-TS uses it so PCR runs ahead of DTS.
        ctx.pointee.max_delay = 700_000
        for (i, source) in streams.enumerated() {
            try addStream(source, index: i)
        }
        if let input = metadataSource {
            av_dict_copy(&ctx.pointee.metadata, input.context.pointee.metadata, 0)
            // What the demuxer read from the input's `ftyp`: the muxer writes
            // the output's own, and as tags these would name the input's
            // brand in the output (an MP4 claiming `qt  `).
            for key in ["major_brand", "minor_version", "compatible_brands"] { av_dict_set(&ctx.pointee.metadata, key, nil, 0) }
            copyChapters(from: input, window: edits.chapterWindow)
        }
        try apply(edits)
        if let memory {
            ctx.pointee.pb = memory.context
            ctx.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        } else if ctx.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 {
            let file = try FileOutput(path: path, reportingAs: name, expectedSize: expectedSize, payloads: payloads)
            self.file = file
            ctx.pointee.pb = file.context
            ctx.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        }
        intendedTags = IntendedTags(format: entries(of: ctx.pointee.metadata),
                                    streams: (0..<Int(ctx.pointee.nb_streams)).map { entries(of: ctx.pointee.streams[$0]!.pointee.metadata) })
        var dict = makeDictionary(options)
        defer { av_dict_free(&dict) }
        let written = avformat_write_header(ctx, &dict)
        if written < 0 {
            if cancellation.isCancelled { throw MediaError.interrupted }
            if let e = MediaError.fullDisk(written, path: name) { throw e }
            throw refusedStream(written) ?? MediaError(code: written, operation: "could not write header of", path: name,
                             message: MediaError.describe(written)
                                + " (the \(container.name) muxer rejected the stream set)")
        }
        timeBases = (0..<Int(ctx.pointee.nb_streams)).map {
            let tb = ctx.pointee.streams[$0]!.pointee.time_base
            return Rational(tb.num, tb.den) ?? .microseconds
        }
    }

    deinit {
        // The I/O context is the memory's or the file's, freed with them.
        context.pointee.pb = nil
        avformat_free_context(context)
    }

    private func addStream(_ source: OutputStreamSource, index: Int) throws(MediaError) {
        guard let st = avformat_new_stream(context, nil) else {
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not add a stream to", path: name)
        }
        try addStream(source, to: st, index: index)
    }

    private func addStream(_ source: OutputStreamSource, to st: UnsafeMutablePointer<AVStream>, index: Int) throws(MediaError) {
        switch source {
        case .copy(let input, let isDefault):
            let src = input.stream
            try MediaError.check(avcodec_parameters_copy(st.pointee.codecpar, src.pointee.codecpar),
                                 "could not copy codec parameters to", path: name, stream: index)
            st.pointee.codecpar.pointee.codec_tag = container.codecTag(for: input.codecID, inputTag: input.codecTag)
            st.pointee.time_base = src.pointee.time_base
            st.pointee.avg_frame_rate = src.pointee.avg_frame_rate
            st.pointee.r_frame_rate = src.pointee.r_frame_rate
            st.pointee.sample_aspect_ratio = src.pointee.codecpar.pointee.sample_aspect_ratio
            try inherit(from: input, into: st, index: index)
            if input.isAttachedPicture && container.muxer == "matroska" { try makeAttachment(st, from: input, index: index) }
            if let isDefault {
                st.pointee.disposition = isDefault ? st.pointee.disposition | AV_DISPOSITION_DEFAULT
                    : st.pointee.disposition & ~AV_DISPOSITION_DEFAULT
            }
        case let .spliced(input, extradata, tag):
            try addStream(.copy(input), to: st, index: index)
            let par = st.pointee.codecpar!
            try replaceExtradata(of: par, with: extradata, index: index)
            if let tag, tag.utf8.count == 4 {
                let c = Array(tag.utf8)
                par.pointee.codec_tag = avtool_mktag(CChar(bitPattern: c[0]), CChar(bitPattern: c[1]),
                                                     CChar(bitPattern: c[2]), CChar(bitPattern: c[3]))
            }
        case .encoded(let encoder):
            let ctx = encoder.context
            try MediaError.check(avcodec_parameters_from_context(st.pointee.codecpar, ctx),
                                 "could not set codec parameters of", path: name, stream: index)
            st.pointee.codecpar.pointee.codec_tag = container.codecTag(for: ctx.pointee.codec_id)
            st.pointee.time_base = ctx.pointee.time_base
            st.pointee.avg_frame_rate = ctx.pointee.framerate
            st.pointee.sample_aspect_ratio = ctx.pointee.sample_aspect_ratio
            if let input = encoder.source {
                // Not what the encoder's pictures do not hold: Dolby Vision without its RPUs, HDR metadata of SDR.
                var left: Set<UInt32> = []
                if encoder.dolbyVision == nil { left.insert(AV_PKT_DATA_DOVI_CONF.rawValue) }
                if !encoder.keepsHDRMetadata {
                    left.formUnion([AV_PKT_DATA_MASTERING_DISPLAY_METADATA.rawValue, AV_PKT_DATA_CONTENT_LIGHT_LEVEL.rawValue,
                                    AV_PKT_DATA_DOVI_CONF.rawValue])
                }
                try inherit(from: input, into: st, index: index, leavingOut: left)
                // The source's codec library is not this stream's.
                av_dict_set(&st.pointee.metadata, "encoder", nil, 0)
            }
        case let .chunks(encoder, extradata):
            try addStream(.encoded(encoder), to: st, index: index)
            try replaceExtradata(of: st.pointee.codecpar!, with: extradata, index: index)
        }
    }

    /// The codec's global header replaced by `extradata`.
    private func replaceExtradata(of par: UnsafeMutablePointer<AVCodecParameters>, with extradata: [UInt8],
                                  index: Int) throws(MediaError) {
        av_freep(&par.pointee.extradata)
        par.pointee.extradata_size = 0
        guard let buffer = av_mallocz(extradata.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not add a stream to", path: name, stream: index)
        }
        let bytes = buffer.assumingMemoryBound(to: UInt8.self)
        bytes.update(from: extradata, count: extradata.count)
        par.pointee.extradata = bytes
        par.pointee.extradata_size = Int32(extradata.count)
    }

    /// Disposition, metadata and stream side data (rotation lives there in
    /// FFmpeg 5.1, not in codecpar) of `input`, copied one by one but for
    /// the side data types in `leavingOut`.
    private func inherit(from input: InputStream, into st: UnsafeMutablePointer<AVStream>, index: Int,
                         leavingOut: Set<UInt32> = []) throws(MediaError) {
        let src = input.stream
        st.pointee.disposition = src.pointee.disposition
        av_dict_copy(&st.pointee.metadata, src.pointee.metadata, 0)
        for i in 0..<Int(src.pointee.nb_side_data) {
            let sd = src.pointee.side_data[i]
            if leavingOut.contains(sd.type.rawValue) { continue }
            guard let dst = av_stream_new_side_data(st, sd.type, sd.size) else {
                throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not copy side data to",
                                 path: name, stream: index)
            }
            dst.update(from: sd.data, count: sd.size)
        }
    }

    /// A picture stream (cover art) as a Matroska attachment: the picture's
    /// bytes as the attachment's file, under the name and MIME type it had
    /// (an attachment read back from Matroska), else `cover.jpg`/`cover.png`
    /// as Matroska players look for it. An attachment takes no packets.
    private func makeAttachment(_ st: UnsafeMutablePointer<AVStream>, from input: InputStream, index: Int) throws(MediaError) {
        let par = st.pointee.codecpar!
        let picture = input.stream.pointee.attached_pic
        guard picture.size > 0, let data = picture.data else {
            throw MediaError.invalid("could not write", path: name, stream: index, message: "the cover art has no picture")
        }
        let bytes = [UInt8](UnsafeBufferPointer(start: data, count: Int(picture.size)))
        try replaceExtradata(of: par, with: bytes, index: index)
        par.pointee.codec_type = AVMEDIA_TYPE_ATTACHMENT
        st.pointee.disposition &= ~AV_DISPOSITION_ATTACHED_PIC
        let png = input.codecName == "png"
        if input.tag("filename") == nil { av_dict_set(&st.pointee.metadata, "filename", png ? "cover.png" : "cover.jpg", 0) }
        if input.tag("mimetype") == nil { av_dict_set(&st.pointee.metadata, "mimetype", png ? "image/png" : "image/jpeg", 0) }
    }

    /// `edits` on the tags and display matrices set so far: the turn, then
    /// the tags as `MetadataEdits.applied` leaves them.
    private func apply(_ edits: MetadataEdits) throws(MediaError) {
        guard !edits.isEmpty else { return }
        let n = Int(context.pointee.nb_streams)
        func stream(_ j: Int) -> UnsafeMutablePointer<AVStream> { context.pointee.streams[j]! }
        let kinds = (0..<n).map { j in
            EditedStream(MediaType(stream(j).pointee.codecpar.pointee.codec_type),
                         attachedPicture: stream(j).pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0)
        }
        if let degrees = edits.rotation {
            // libavformat 5.1 writes the display matrix only in MP4/MOV.
            guard container.isISOBMFF else {
                throw MediaError.invalidOption("'rotate' needs an MP4 or MOV output: \(container.name) cannot store a rotation",
                                               options: ["rotate"])
            }
            for j in 0..<n where kinds[j] == .video {
                guard let sd = av_stream_new_side_data(stream(j), AV_PKT_DATA_DISPLAYMATRIX, 9 * 4) else {
                    throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not set the rotation of", path: name, stream: j)
                }
                sd.withMemoryRebound(to: Int32.self, capacity: 9) { $0.update(from: MetadataEdits.displayMatrix(degrees), count: 9) }
            }
        }
        let before = IntendedTags(format: entries(of: context.pointee.metadata), streams: (0..<n).map { entries(of: stream($0).pointee.metadata) })
        let after = try edits.applied(to: before, streams: kinds)
        func replace(_ dict: inout OpaquePointer?, with tags: [(key: String, value: String)]) {
            av_dict_free(&dict)
            for (k, v) in tags { av_dict_set(&dict, k, v, 0) }
        }
        replace(&context.pointee.metadata, with: after.format)
        for j in 0..<n { replace(&stream(j).pointee.metadata, with: after.streams[j]) }
    }

    private func copyChapters(from input: InputFile, window: ChapterWindow?) {
        let n = Int(input.context.pointee.nb_chapters)
        guard n > 0, container.muxer != "mpegts",
              let raw = av_calloc(n, MemoryLayout<UnsafeMutablePointer<AVChapter>?>.stride) else { return }
        let array = raw.bindMemory(to: UnsafeMutablePointer<AVChapter>?.self, capacity: n)
        var count = 0
        for i in 0..<n {
            guard let src = input.context.pointee.chapters[i],
                  let mem = av_mallocz(MemoryLayout<AVChapter>.size) else { continue }
            let ch = mem.bindMemory(to: AVChapter.self, capacity: 1)
            ch.pointee.id = src.pointee.id
            ch.pointee.time_base = src.pointee.time_base
            ch.pointee.start = src.pointee.start
            ch.pointee.end = src.pointee.end
            if let window {
                let tb = Rational(unchecked: src.pointee.time_base.num, src.pointee.time_base.den)
                guard tb.isValidTimeBase, let clipped = window.clip(start: src.pointee.start, end: src.pointee.end, timeBase: tb) else {
                    av_free(mem)
                    continue
                }
                ch.pointee.start = clipped.start
                ch.pointee.end = clipped.end
            }
            av_dict_copy(&ch.pointee.metadata, src.pointee.metadata, 0)
            array[count] = ch
            count += 1
        }
        // avformat_free_context frees each chapter and the array.
        context.pointee.chapters = array
        context.pointee.nb_chapters = UInt32(count)
    }

    /// Writes `packet` in interleaved order (`av_interleaved_write_frame`).
    /// Its timing must already be in the output stream's time base. The
    /// packet is blank afterwards. `MuxSession.write` is the one caller: it
    /// maps every packet through its track's timeline first.
    public func write(_ packet: borrowing Packet) throws(MediaError) {
        packet.pointer.pointee.pos = -1
        // Cover art made a Matroska attachment holds its picture already.
        if context.pointee.streams[packet.streamIndex]!.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_ATTACHMENT { return }
        let r = av_interleaved_write_frame(context, packet.pointer)
        if r < 0 {
            if cancellation.isCancelled { throw MediaError.interrupted }
            if let e = MediaError.fullDisk(r, path: name, stream: packet.streamIndex) { throw e }
            throw refusedPacket(r, stream: packet.streamIndex)
                ?? MediaError(code: r, operation: "could not write to", path: name, stream: packet.streamIndex)
        }
    }

    /// Flushes interleaving queues, writes the trailer (for MP4/MOV with
    /// faststart this moves the index to the front) and closes the file.
    public func finish() throws(MediaError) {
        guard !finished else { return }
        finished = true
        StopPoint.index.reached()
        let r = av_write_trailer(context)
        if r < 0 {
            if cancellation.isCancelled { throw MediaError.interrupted }
            if let e = MediaError.fullDisk(r, path: name) { throw e }
            throw MediaError(code: r, operation: "could not finish", path: name)
        }
        guard let pb = context.pointee.pb else { return }
        avio_flush(pb)
        let ioError = pb.pointee.error
        if ioError < 0 {
            if let e = MediaError.fullDisk(ioError, path: name) { throw e }
            throw MediaError(code: ioError, operation: "could not write to", path: name)
        }
        if let file {
            // Closing flushes what the kernel still holds: a full disk can show only here.
            do { try file.close() } catch {
                if let e = MediaError.fullDisk(error.code, path: name) { throw e }
                throw error
            }
        }
    }

    /// Bytes written so far.
    public var bytesWritten: Int64 {
        guard let pb = context.pointee.pb else { return 0 }
        return max(avio_tell(pb), 0)
    }
}

extension Container {
    /// The codec tag to set before the header: `hvc1` for HEVC in MP4/MOV
    /// (Apple players refuse movenc's default `hev1`), else 0 so the muxer
    /// picks its own.
    /// HEVC in MP4/MOV: `hvc1` (parameter sets only in the sample entry, as
    /// Apple's players want), unless the input's is `hev1`, whose pictures
    /// may carry parameter sets in band that `hvc1` does not allow.
    func codecTag(for codec: AVCodecID, inputTag: String? = nil) -> UInt32 {
        if isISOBMFF && codec == AV_CODEC_ID_HEVC {
            return inputTag == "hev1" ? avtool_mktag(0x68, 0x65, 0x76, 0x31) : avtool_mktag(0x68, 0x76, 0x63, 0x31)
        }
        return 0
    }

    /// Whether this container can hold the stream (see `canHold`). Cover art
    /// is written by the MP4/M4A muxers (as 'covr') and into Matroska as an
    /// image attachment (`makeAttachment`); the MOV muxer would drop it
    /// silently. Attachments (a file in the stream's codec parameters, named
    /// by its `filename` and `mimetype` tags) only Matroska holds.
    public func canHold(_ stream: InputStream) -> Bool? {
        if stream.isAttachedPicture { return muxer == "mp4" || muxer == "ipod" || muxer == "matroska" }
        if stream.mediaType == .attachment { return muxer == "matroska" }
        guard let listed = listed(stream.codecID) else { return nil }
        return listed ? setUpAccepts(stream.parameters) ?? true : false
    }
}

extension OutputStreamSource {
    /// The input stream the output stream is made from (an encoder's source).
    public var inputStream: InputStream? {
        switch self {
        case .copy(let s, _), .spliced(let s, _, _): s
        case .encoded(let e), .chunks(let e, _): e.source
        }
    }
}
