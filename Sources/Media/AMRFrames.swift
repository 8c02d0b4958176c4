import CFFmpeg
import Sync

/// The frames of an AMR packet. A 3GP/MOV sample of AMR holds a run of
/// frames in the storage format (RFC 4867 §5.3, 3GPP TS 26.101): each a
/// header byte whose frame type (FT, bits 6–3) fixes the frame's length,
/// then its speech bits. QuickTime's 3GPP exporter writes 5 per sample,
/// phones up to 50. libavcodec counts one frame per packet
/// (`av_get_audio_frame_duration2` gives 160 samples whatever the size) and
/// its AMR decoders decode only a packet's first frame, so a packet is
/// split into its frames here before it is counted or decoded.
public struct AMRFrames: Sendable {
    /// Samples per frame: 160 (AMR-NB, 8 kHz), 320 (AMR-WB, 16 kHz).
    public let samplesPerFrame: Int64
    /// Bytes per frame, header included, by frame type (libavformat's
    /// `amrnb_packed_size`/`amrwb_packed_size`; SID 6 bytes, NO_DATA 1).
    private let sizes: [Int]

    /// A frame decoders play as silence, made by hand, or why there is none.
    public let silence: Silence

    private static let narrowband = [13, 14, 16, 18, 20, 21, 27, 32, 6, 1, 1, 1, 1, 1, 1, 1]
    private static let wideband = [18, 24, 33, 37, 41, 47, 51, 59, 61, 6, 1, 1, 1, 1, 1, 1]

    /// The frame a gap in copied AMR is filled with: NO_DATA (FT 15), its
    /// header byte alone (RFC 4867 §5.3: F/P 0, FT 1111, Q 1, padding 00).
    /// For AMR-WB (3GPP TS 26.201 frame type 15) libavcodec's decoder gives
    /// 320 zeros for it and Android's decoder silence. libavcodec's AMR-NB
    /// decoder refuses it ("Corrupt bitstream": the frame's samples are
    /// lost, the sound after it moves early), and it has no AMR-NB encoder,
    /// so AMR-NB has none (checked by decoding both).
    public enum Silence: Sendable {
        case frame([UInt8])
        /// Why none (a sentence fragment, as `SilentAudio`'s reasons).
        case none(String)
    }

    private static let noData: [UInt8] = [0x7C]

    /// `nil` for codecs other than AMR-NB and AMR-WB.
    init?(codec: AVCodecID) {
        switch codec {
        case AV_CODEC_ID_AMR_NB:
            (samplesPerFrame, sizes) = (160, Self.narrowband)
            silence = .none("libavcodec has no amr_nb encoder to make silent frames with, and its AMR-NB decoder refuses NO_DATA frames")
        case AV_CODEC_ID_AMR_WB:
            (samplesPerFrame, sizes) = (320, Self.wideband)
            silence = .frame(Self.noData)
        default: return nil
        }
    }

    /// Where each frame of `bytes` starts and ends; `nil` when the bytes are
    /// not a run of whole frames (a damaged or cut payload).
    public func frames(in bytes: UnsafeRawBufferPointer) -> [Range<Int>]? {
        var ranges: [Range<Int>] = []
        var at = 0
        while at < bytes.count {
            let end = at + sizes[Int(bytes[at] >> 3) & 0x0F]
            guard end <= bytes.count else { return nil }
            ranges.append(at..<end)
            at = end
        }
        return ranges
    }

    /// Makes `part` the frame `index` (at `range`) of `packet`: the same
    /// payload referenced, cut to the frame, and timed at its place in the
    /// packet — `index` frames after the packet's start on a clock of
    /// `sampleRate` samples a second, in the packet's `timeBase`. Side data
    /// (skip samples) belongs to the packet's start and stays with frame 0.
    /// The decoder sends AMR a frame at a time this way; the MP4/MOV/3GP
    /// muxer takes only packets of one frame (movenc: "input is not a single
    /// packet", EPERM), so copied AMR is written so too.
    public func cut(_ packet: borrowing Packet, frame index: Int, at range: Range<Int>, into part: borrowing Packet,
                    sampleRate: Int32, timeBase: Rational?) throws(MediaError) {
        try part.reference(packet)
        let q = part.pointer
        q.pointee.data = packet.pointer.pointee.data + range.lowerBound
        q.pointee.size = Int32(range.count)
        if index > 0 { av_packet_free_side_data(q) }
        let samples = Rational.perSecond(sampleRate)
        let offset = samples.flatMap { st in timeBase.flatMap { rescale(Int64(index) * samplesPerFrame, from: st, to: $0) } }
        let end = samples.flatMap { st in timeBase.flatMap { rescale(Int64(index + 1) * samplesPerFrame, from: st, to: $0) } }
        let timing = packet.timing
        part.timing = PacketTiming(pts: offset.flatMap { o in timing.pts.map { $0 &+ o } },
                                   dts: offset.flatMap { o in timing.dts.map { $0 &+ o } },
                                   duration: offset.flatMap { o in end.map { $0 - o } } ?? 0)
    }
}
