import CFFmpeg

/// What the muxer was given for one output stream, as its header fixed it:
/// what a read-back of the written file is compared with.
public struct WrittenStreamFacts: Sendable {
    public let type: MediaType
    public let codec: String
    /// The codec tag set before the header (`hvc1`), nil when the muxer chose its own.
    public let tag: String?
    /// The codec's global header is a configuration record (`avcC`/`hvcC`:
    /// its first byte is 1), not Annex B start codes the muxer converts
    /// its packets from; nil when the codec has no such choice.
    public let recordHeader: Bool?
}

extension OutputFile {
    /// The facts of the muxer's stream `index`.
    public func facts(ofStream index: Int) -> WrittenStreamFacts {
        let par = context.pointee.streams[index]!.pointee.codecpar!.pointee
        let tag = par.codec_tag == 0 ? nil : String(decoding: withUnsafeBytes(of: par.codec_tag.littleEndian) { Array($0) }, as: UTF8.self)
        let record: Bool? = switch par.codec_id {
        case AV_CODEC_ID_H264, AV_CODEC_ID_HEVC: par.extradata_size > 0 && par.extradata[0] == 1
        default: nil
        }
        return WrittenStreamFacts(type: MediaType(par.codec_type), codec: avcodec_get_name(par.codec_id).string ?? "unknown",
                                  tag: tag, recordHeader: record)
    }
}

extension UnsafeRawBufferPointer {
    /// Whether the bytes start with an ADTS header's 12 sync bits (AAC
    /// framed for streaming, which MP4/MOV muxers strip).
    public var startsWithADTS: Bool { count > 2 && self[0] == 0xFF && self[1] & 0xF0 == 0xF0 }
}
