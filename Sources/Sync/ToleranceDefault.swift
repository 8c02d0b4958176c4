/// How far a verb lets audio land from its own timestamps when no
/// `--tolerance` is given: the difference under which a gap or overlap is
/// read as timestamp jitter and absorbed by laying packets back to back,
/// above which it is filled with silence or trimmed. A packet is moved only
/// while its distance from its own timestamp stays within it, so absorbed
/// jitter never adds up to drift (`AudioAssembler` compares each packet
/// with its own timestamp, not with the one before).
///
/// The limits it is set against: ITU-R BT.1359 finds sound detectably out
/// of sync from about 45 ms early or 125 ms late; EBU R37 allows the whole
/// chain +40 ms (early) / −60 ms (late). A verb's shift spends part of that
/// budget before the player and the display spend the rest.
public enum ToleranceDefault: Sendable, Equatable {
    /// 1 ms: timestamps read as exact but for rounding. For placements
    /// avtool makes itself, whose error would last a whole segment rather
    /// than a packet (concat's joints), for sync by audio's drift budget,
    /// and for the gaps probe reports.
    case rounding
    /// 20 ms: a recording's own timestamp jitter (a messaging app's audio
    /// runs a few to 15 ms early and late) absorbed by copying: half of EBU
    /// R37's 40 ms audio-early allowance and under half of BT.1359's 45 ms,
    /// never more than one video frame at 50 fps, and at least half a frame
    /// of AAC (1024 samples at 44.1 kHz: 11.6 ms), MP3, AC-3, AMR and 20 ms
    /// Opus, so silence in whole frames of the stream's own codec always
    /// lands within it. For fill-silence and merge.
    case jitter

    public var milliseconds: Int64 {
        switch self {
        case .rounding: 1
        case .jitter: 20
        }
    }

    /// In samples at `sampleRate`, rounded up, and never less than one tick
    /// of `timeBase` (timestamps are rounded to ticks). Zero for a
    /// non-positive sample rate.
    public func samples(timeBase: Rational, sampleRate: Int32) -> Int64 {
        guard sampleRate > 0, let perSample = Rational.perSecond(sampleRate) else { return 0 }
        let tick = rescale(1, from: timeBase, to: perSample, rounding: .up) ?? Int64.max
        return max(tick, (Int64(sampleRate) * milliseconds + 999) / 1000)
    }
}
