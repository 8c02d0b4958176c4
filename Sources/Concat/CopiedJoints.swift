import Media
import Pipeline

/// Why audio with no silent frame of its own (HE-AAC, AMR-NB) is not copied
/// across the joints of `segments`, or `nil` when it may be, as long as no
/// joint needs silence (the copied-audio scan checks that and re-encodes,
/// saying why, where one does). The decoder then reads on across a joint
/// as across a frame: every later segment's codec configuration must be the
/// first's (`JointConfiguration`). A reason is a sentence fragment, joined
/// to the codec's own.
///
/// An HE-AAC frame's SBR data is read with the SBR header last sent in the
/// stream (ISO/IEC 14496-3 4.4.2.8, `bs_header_flag`); FDK's and Apple's
/// encoders repeat it regularly. Whether a later segment's first frame
/// carries one is not checked here: the extension element that holds it
/// comes after the frame's channel elements, which have no length field
/// (reaching it means Huffman-decoding their spectral data). With equal
/// configurations, the frames before its first header are read with the
/// header of the segment before the joint.
func copiedJointRefusal(_ segments: Segments) throws(MediaError) -> String? {
    guard let first = segments.first.audio, let expected = try JointConfiguration(first) else {
        return "the first segment's codec configuration cannot be read"
    }
    for k in 1..<segments.count {
        guard let audio = try segments.segment(k).audio else { continue }
        guard let found = try JointConfiguration(audio) else {
            return "segment \(k + 1)'s codec configuration cannot be read"
        }
        if found != expected {
            return "segment \(k + 1)'s configuration (\(found.summary)) differs from the first's (\(expected.summary)), so its frames cannot follow the first's in one stream"
        }
    }
    return nil
}

/// Why the segments' audio packets cannot be copied into one track as they
/// are, whatever the codec, or `nil`: AAC whose frames carry ADTS headers
/// in some segments (a raw `.aac`, no codec record) and not in others (an
/// MP4's). The muxer takes ADTS headers off with a filter it sets up from
/// the first packet, which refuses a frame without one; after a first
/// segment without them, the others' would be written into the track.
func mixedFramingRefusal(_ segments: Segments) -> String? {
    guard let first = segments.facts.first?.audio, first.codec == "aac" else { return nil }
    for (k, facts) in segments.facts.enumerated().dropFirst() {
        guard let audio = facts.audio, audio.extradata.isEmpty != first.extradata.isEmpty else { continue }
        let (adts, raw) = first.extradata.isEmpty ? ("the first segment's", "segment \(k + 1)'s") : ("segment \(k + 1)'s", "the first segment's")
        return "\(adts) AAC frames carry ADTS headers (a raw AAC stream) and \(raw) do not: one track cannot hold both as they are"
    }
    return nil
}

/// What a decoder must find the same across a joint of copied audio: the
/// codec record (for AAC the AudioSpecificConfig's object type, rate,
/// channel configuration and SBR/PS signalling; an ADTS stream's, from its
/// first frame's header) and the profile libavcodec found in the frames
/// (HE-AAC signalled implicitly, by SBR data in the frames alone).
private struct JointConfiguration: Equatable {
    let record: AudioCodecRecord
    /// libavcodec's name of the profile (`HE-AAC`, `LC`), if it found one.
    let profile: String?

    /// `nil` when the stream has no packet, or an AAC stream has neither a
    /// codec record nor ADTS headers.
    init?(_ audio: StreamReader) throws(MediaError) {
        let s = audio.stream
        var record = AudioCodecRecord(codec: s.codecName, extradata: s.extradata)
        if record == .none, s.codecName == "aac" {
            guard try audio.peek(), let adts = audio.packet.withData({ AudioSpecificConfig(adtsHeader: $0) }) else {
                return nil
            }
            record = .aac(adts)
        }
        self.record = record
        profile = s.profileName
    }

    var summary: String { record.summary + (profile.map { ", profile \($0)" } ?? "") }
}
