import CFFmpeg
import Sync

public enum MediaType: String, Sendable, Codable {
    case video, audio, subtitle, data, attachment, unknown

    init(_ type: AVMediaType) {
        switch type {
        case AVMEDIA_TYPE_VIDEO: self = .video
        case AVMEDIA_TYPE_AUDIO: self = .audio
        case AVMEDIA_TYPE_SUBTITLE: self = .subtitle
        case AVMEDIA_TYPE_DATA: self = .data
        case AVMEDIA_TYPE_ATTACHMENT: self = .attachment
        default: self = .unknown
        }
    }
}

/// A borrowed view of one stream of an `InputFile`; it keeps the file open.
public struct InputStream {
    public let file: InputFile
    public let index: Int

    var stream: UnsafeMutablePointer<AVStream> { file.context.pointee.streams[index]! }
    var parameters: UnsafeMutablePointer<AVCodecParameters> { stream.pointee.codecpar }
    var codecID: AVCodecID { parameters.pointee.codec_id }

    public var mediaType: MediaType { MediaType(parameters.pointee.codec_type) }
    /// The container's id for the stream (`AVStream.id`): the `tkhd` track
    /// id for MP4/MOV, the PID for MPEG-TS.
    public var id: Int { Int(stream.pointee.id) }

    /// The bytes of the picture of an attached picture stream (cover art).
    public var attachedPictureBytes: Int? { isAttachedPicture ? Int(stream.pointee.attached_pic.size) : nil }

    /// What the metadata edits take this stream for.
    public var edited: EditedStream { EditedStream(mediaType, attachedPicture: isAttachedPicture) }

    /// Cover art and other still pictures stored as a video stream.
    public var isAttachedPicture: Bool { stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 }
    public var isDefault: Bool { stream.pointee.disposition & AV_DISPOSITION_DEFAULT != 0 }

    /// libavcodec's short codec name, e.g. `h264`, `aac`, `pcm_s16le`, `none`.
    public var codecName: String { avcodec_get_name(codecID).string ?? "unknown" }
    public var codecLongName: String? { avcodec_descriptor_get(codecID)?.pointee.long_name.string }
    /// Whether every frame of the codec is a keyframe (libavcodec's
    /// `AV_CODEC_PROP_INTRA_ONLY`: MJPEG, Photo-JPEG, ProRes, DNxHD, PNG…).
    public var isIntraOnly: Bool {
        avcodec_descriptor_get(codecID).map { $0.pointee.props & AV_CODEC_PROP_INTRA_ONLY != 0 } ?? false
    }
    public var profileName: String? { avcodec_profile_name(codecID, parameters.pointee.profile).string }
    /// The codec tag as four characters (`avc1`, `hvc1`), when set.
    public var codecTag: String? {
        let tag = parameters.pointee.codec_tag
        guard tag != 0 else { return nil }
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: tag >> (8 * $0)) }
        guard bytes.allSatisfy({ $0 >= 32 && $0 < 127 }) else { return String(format: tag) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `nil` for a zero or negative time base (a broken file).
    public var timeBase: Rational? {
        let tb = stream.pointee.time_base
        return Rational(tb.num, tb.den).flatMap { $0.isValidTimeBase ? $0 : nil }
    }

    public var startTime: Timestamp? {
        guard let tb = timeBase, let v = Packet.known(stream.pointee.start_time) else { return nil }
        return Timestamp(v, tb)
    }

    public var duration: Timestamp? {
        guard let tb = timeBase, let v = Packet.known(stream.pointee.duration), v >= 0 else { return nil }
        return Timestamp(v, tb)
    }

    /// Frame count from the container header, if it has one.
    public var declaredFrameCount: Int64? { stream.pointee.nb_frames > 0 ? stream.pointee.nb_frames : nil }
    public var bitRate: Int64? { parameters.pointee.bit_rate > 0 ? parameters.pointee.bit_rate : nil }

    /// Width of the timestamp counter when it wraps (33 for MPEG-TS), else `nil`.
    public var wrapBits: Int? {
        let b = Int(stream.pointee.pts_wrap_bits)
        return b > 0 && b < 63 ? b : nil
    }

    public var metadata: [(key: String, value: String)] { entries(of: stream.pointee.metadata) }
    public var language: String? { tag("language") }

    /// The value of tag `key` (any case), if set.
    public func tag(_ key: String) -> String? {
        av_dict_get(stream.pointee.metadata, key, nil, 0).map { String(cString: $0.pointee.value) }
    }

    /// A QuickTime timecode track (`tmcd`), which libavformat reads as data.
    public var isTimecodeTrack: Bool { mediaType == .data && codecTag == "tmcd" }

    /// A QuickTime chapter track (another track's `chap` reference names
    /// it), whose samples libavformat reads as the file's chapters and
    /// never as packets.
    public var isChapterTrack: Bool {
        guard mediaType == .data, file.chapterCount > 0, let index = file.sourceIndex else { return false }
        return index.tracks.contains { t in t.references.contains { $0.type.description == "chap" && $0.ids.contains(id) } }
    }

    /// An attachment's file name and MIME type as a reader sees them, e.g.
    /// `'font.ttf' (application/x-truetype-font, 4096 bytes)`.
    public var attachmentName: String {
        let tags = Dictionary(metadata.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        let file = tags["filename"].map { "'\($0)'" } ?? "without a name"
        let type = tags["mimetype"] ?? codecName
        return "\(file) (\(type), \(extradata.count) bytes)"
    }

    // MARK: video

    public var width: Int { Int(parameters.pointee.width) }
    public var height: Int { Int(parameters.pointee.height) }
    /// Frames the decoder holds back to reorder B-frames (`video_delay`).
    public var reorderDelay: Int { Int(parameters.pointee.video_delay) }
    /// Ticks of `timeBase` every DTS must be lowered by for no frame to be
    /// shown before it is decoded (`SourceTrack.decodeLead`; MP4/MOV video).
    public var decodeLead: Int64 {
        guard mediaType == .video else { return 0 }
        return file.sourceIndex?.track(id: id)?.decodeLead ?? 0
    }
    public var averageFrameRate: Rational? { Self.positive(stream.pointee.avg_frame_rate) }
    public var realFrameRate: Rational? { Self.positive(stream.pointee.r_frame_rate) }
    public var sampleAspectRatio: Rational? { Self.positive(parameters.pointee.sample_aspect_ratio) }
    /// The codec level (`level`: H.264 `level_idc`, HEVC `general_level_idc`), nil if unknown.
    public var level: Int? { parameters.pointee.level > 0 ? Int(parameters.pointee.level) : nil }
    /// Whether the video is coded as fields (interlaced).
    public var isInterlaced: Bool {
        let f = parameters.pointee.field_order
        return f != AV_FIELD_UNKNOWN && f != AV_FIELD_PROGRESSIVE
    }
    public var pixelFormat: String? {
        parameters.pointee.format < 0 ? nil : av_get_pix_fmt_name(AVPixelFormat(parameters.pointee.format)).string
    }
    public var colorRange: String? {
        parameters.pointee.color_range == AVCOL_RANGE_UNSPECIFIED ? nil
            : av_color_range_name(parameters.pointee.color_range).string
    }
    public var colorPrimaries: String? {
        parameters.pointee.color_primaries == AVCOL_PRI_UNSPECIFIED ? nil
            : av_color_primaries_name(parameters.pointee.color_primaries).string
    }
    public var colorTransfer: String? {
        parameters.pointee.color_trc == AVCOL_TRC_UNSPECIFIED ? nil
            : av_color_transfer_name(parameters.pointee.color_trc).string
    }
    public var colorSpace: String? {
        parameters.pointee.color_space == AVCOL_SPC_UNSPECIFIED ? nil
            : av_color_space_name(parameters.pointee.color_space).string
    }

    /// The display matrix (nine values, as MP4's `tkhd` holds them); `nil` without one.
    public var displayMatrix: [Int32]? {
        var size: Int = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 36 else { return nil }
        return Array(UnsafeBufferPointer(start: UnsafeRawPointer(data).assumingMemoryBound(to: Int32.self), count: 9))
    }

    /// Counter-clockwise rotation in degrees from the display matrix, the
    /// value ffprobe prints (`av_display_rotation_get`); `nil` without one.
    public var rotation: Double? {
        var size: Int = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 36 else {
            return nil
        }
        let matrix = UnsafeRawPointer(data).assumingMemoryBound(to: Int32.self)
        let r = av_display_rotation_get(matrix)
        return r.isNaN ? nil : r
    }

    // MARK: audio

    public var sampleRate: Int32 { parameters.pointee.sample_rate }
    public var channelCount: Int { Int(parameters.pointee.ch_layout.nb_channels) }
    public var channelLayout: String? {
        var buffer = [CChar](repeating: 0, count: 128)
        guard parameters.pointee.ch_layout.nb_channels > 0,
              av_channel_layout_describe(&parameters.pointee.ch_layout, &buffer, buffer.count) >= 0 else {
            return nil
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    public var sampleFormat: String? {
        parameters.pointee.format < 0 ? nil : av_get_sample_fmt_name(AVSampleFormat(parameters.pointee.format)).string
    }
    /// Samples per coded frame when fixed (1024 for AAC-LC), else 0.
    public var frameSize: Int { Int(parameters.pointee.frame_size) }
    /// Encoder delay recorded in the codec parameters, if any.
    public var initialPadding: Int { Int(parameters.pointee.initial_padding) }

    /// Samples a packet of this stream decodes to: every frame it holds
    /// (AMR: its frames, read from their headers, `AMRFrames`), else from
    /// its size and the codec (`av_get_audio_frame_duration2`: PCM's sample
    /// count, a frame codec's frame); 0 when it cannot tell.
    public func samples(in packet: borrowing Packet) -> Int64 {
        if let amr = AMRFrames(codec: codecID) {
            let frames = packet.withData { amr.frames(in: $0)?.count }
            return frames.map { Int64($0) * amr.samplesPerFrame } ?? 0
        }
        return Int64(av_get_audio_frame_duration2(parameters, packet.pointer.pointee.size))
    }

    /// The storage-format frames of this stream's packets, for AMR (whose
    /// packets may hold many); `nil` for other codecs.
    public var amrFrames: AMRFrames? { AMRFrames(codec: codecID) }

    /// The codec's global header (AudioSpecificConfig, avcC, …), empty if none.
    public var extradata: [UInt8] {
        let p = parameters.pointee
        guard let d = p.extradata, p.extradata_size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: d, count: Int(p.extradata_size)))
    }

    /// The codec profile number (`FF_PROFILE_*`), or nil if unknown.
    public var profile: Int32? { parameters.pointee.profile >= 0 ? parameters.pointee.profile : nil }
    /// Bytes per sample frame for PCM codecs (block_align), else 0.
    public var blockAlign: Int { Int(parameters.pointee.block_align) }
    /// The name of libavcodec's encoder for this stream's codec, if it has one.
    public var encoderName: String? { avcodec_find_encoder(codecID)?.pointee.name.string }
    /// Whether silence in this codec is all-zero bytes (signed PCM).
    public var isSignedPCM: Bool {
        codecName.hasPrefix("pcm_s") || codecName.hasPrefix("pcm_f")
    }

    /// One sample frame (every channel) of digital silence for interleaved
    /// PCM, e.g. `[0, 0, 0, 0]` for 16-bit stereo, `[0x80]` for unsigned
    /// 8-bit mono; `nil` for other codecs. The frame's size comes from the
    /// codec (`av_get_bits_per_sample`) when the demuxer leaves the block
    /// alignment empty, as MOV's `lpcm`/`twos`/`in24` entries often do.
    public var pcmSilence: [UInt8]? {
        guard channelCount > 0 else { return nil }
        let name = codecName
        let sample: [UInt8]
        switch name {
        case "pcm_alaw": sample = [0xD5]
        case "pcm_mulaw": sample = [0xFF]
        case "pcm_s8": sample = [0]
        case "pcm_u8": sample = [0x80]
        default:
            // pcm_{s,u,f}{16,24,32,64}{le,be}
            let body = name.dropFirst(4)
            guard name.hasPrefix("pcm_"), let kind = body.first, "suf".contains(kind),
                  body.hasSuffix("le") || body.hasSuffix("be"),
                  let bits = Int(body.dropFirst().dropLast(2)), [16, 24, 32, 64].contains(bits),
                  Int(av_get_bits_per_sample(codecID)) == bits else { return nil }
            var s = [UInt8](repeating: 0, count: bits / 8)
            if kind == "u" { s[body.hasSuffix("le") ? s.count - 1 : 0] = 0x80 }
            sample = s
        }
        let frame = Array([[UInt8]](repeating: sample, count: channelCount).joined())
        // A block alignment that is not one sample frame (planar, or blocks
        // of several frames) is not this layout.
        guard blockAlign == 0 || blockAlign == frame.count else { return nil }
        return frame
    }

    private static func positive(_ q: AVRational) -> Rational? {
        q.num > 0 && q.den > 0 ? Rational(q.num, q.den) : nil
    }
}

private extension String {
    init(format tag: UInt32) { self = "0x" + String(tag, radix: 16) }
}
