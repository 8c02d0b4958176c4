/// Opus packets of digital silence, made by hand (RFC 6716), so a gap in a
/// copied Opus stream is filled without an encoder: libavcodec's own Opus
/// encoder is experimental and libopus's frames come with a codec record
/// (`OpusHead`) of their own, which a copied stream's cannot take.
///
/// Each frame is a CELT-only fullband frame (TOC configurations 28–31:
/// 2.5, 5, 10 or 20 ms) whose payload is the two bytes `FF FE`: the range
/// coder's first symbol, the silence flag (RFC 6716 §4.3, p(1) = 1/32768),
/// set. Both libopus and libavcodec's decoder give zeros for it, after real
/// speech too (checked by decoding). A TOC byte alone (a frame of zero
/// bytes, §3.2.1) is not used: libopus conceals it as a lost frame,
/// continuing the sound before it. Several frames go in one code-3 packet
/// (§3.2.5, constant size, no padding), at most 120 ms.
///
/// Only single-stream Opus (channel mapping family 0: mono or stereo) is
/// made here; a multichannel stream's packets hold several streams.
public struct OpusSilence: Sendable, Equatable {
    /// Silence comes in multiples of the shortest CELT frame (2.5 ms at 48 kHz).
    public static let quantum: Int64 = 120
    /// A packet holds at most 120 ms.
    public static let longestPacket: Int64 = 5760
    public let stereo: Bool

    /// Silence for an Opus stream of `channels` channels whose codec record
    /// is `extradata` (an `OpusHead`; empty for mono or stereo by default);
    /// `nil` for a stream these frames cannot join (not 48 kHz, more than
    /// two channels, a channel mapping other than family 0).
    public init?(channels: Int, sampleRate: Int32, extradata: [UInt8]) {
        guard sampleRate == 48_000, channels == 1 || channels == 2 else { return nil }
        if !extradata.isEmpty {
            // OpusHead: magic (8), version, channel count, pre-skip (2), rate (4), gain (2), mapping family.
            guard extradata.count >= 19, extradata.starts(with: Array("OpusHead".utf8)),
                  Int(extradata[9]) == channels, extradata[18] == 0 else { return nil }
        }
        stereo = channels == 2
    }

    /// One packet of `samples` samples of silence (a multiple of `quantum`,
    /// at most `longestPacket`): frames of the longest duration that divides
    /// it; `nil` for any other count.
    public func packet(samples: Int64) -> [UInt8]? {
        guard samples > 0, samples % Self.quantum == 0, samples <= Self.longestPacket else { return nil }
        // Configurations 31, 30, 29, 28: 20, 10, 5, 2.5 ms.
        for (config, frame) in [(31, Int64(960)), (30, 480), (29, 240), (28, 120)] where samples % frame == 0 {
            let count = Int(samples / frame)
            guard count <= 48 else { continue }
            let toc = UInt8(config << 3) | (stereo ? 0x04 : 0)
            let silent: [UInt8] = [0xFF, 0xFE]
            if count == 1 { return [toc] + silent }
            // Code 3: a frame count byte (no VBR, no padding), then the frames, all one size.
            return [toc | 0x03, UInt8(count)] + Array([[UInt8]](repeating: silent, count: count).joined())
        }
        return nil
    }
}
