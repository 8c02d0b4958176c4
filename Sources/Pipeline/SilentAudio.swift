import Media
import Sync

/// Silence in the codec of a stream being copied, so gaps can be filled
/// without re-encoding the real audio. For PCM, sample frames of the
/// format's zero (any number of samples). For frame codecs, a frame of
/// digital silence from libavcodec's encoder for that codec at the stream's
/// rate and channel layout, used when a decoder takes it as part of the same
/// stream: the encoder's codec record says to a decoder what the stream's
/// says (`AudioCodecRecord`: for AAC the object type, rate, channel
/// configuration and frame length, not the bytes each encoder writes) and
/// its frames are as long. AC-3, E-AC-3, MP3 and MP2 frames carry their own
/// headers, so rate, layout and frame length are the whole match. For
/// Opus and AMR-WB, frames made by hand (`OpusSilence`, `AMRFrames.silence`):
/// any decoder takes them, with the stream's own codec record.
public final class SilentAudio {
    /// Silence comes in multiples of this many samples (1 for PCM).
    public let quantum: Int64
    /// Samples per silent packet at most.
    public let packetSamples: Int64
    /// The silent frame (an encoder's, or AMR's made by hand).
    private let template: Packet
    /// An encoder whose frames decode as part of the stream, set to encode
    /// real sound well (for stretches re-encoded onto the copied frames'
    /// grid); `nil` for PCM, whose silence is any number of samples.
    public let encoderSettings: AudioEncoderSettings?
    /// Whether a frame's decoded samples depend on the frame before (AAC,
    /// AC-3, MP3: overlapping transforms), so a copied frame after a joint
    /// decodes against another recording's frame unless the joint's frames
    /// are re-encoded; not so for PCM and ALAC.
    public var overlapsFrames: Bool { encoderSettings.map { !["alac", "flac"].contains($0.codec) } ?? false }
    /// One silent sample frame, for PCM.
    private let pcmFrame: [UInt8]?
    /// Opus silence, made by hand.
    private let opus: OpusSilence?
    /// Why no silence can be made (`none(for:reason:)`): the stream is
    /// copied only where nothing has to be inserted.
    public let unavailable: String?
    private var pcmBytes: [UInt8] = []

    /// Silence for a stream, or why there is none.
    public enum Match {
        case silence(SilentAudio)
        /// Why no silent frame decodes as part of the stream (a sentence
        /// fragment: "its AAC is HE-AAC …").
        case unavailable(String)
    }

    /// Silent frames that decode as part of `s`, or why none can be made.
    public static func matching(_ s: InputStream) throws(MediaError) -> Match {
        if let frame = s.pcmSilence { return .silence(try SilentAudio(pcm: frame)) }
        if s.codecName.hasPrefix("pcm_") {
            return .unavailable("silence cannot be made as \(s.codecName) samples (not interleaved integer or float PCM)")
        }
        if s.codecName == "opus", let opus = OpusSilence(channels: s.channelCount, sampleRate: s.sampleRate, extradata: s.extradata) {
            return .silence(try SilentAudio(opus: opus, frameSize: Int64(s.frameSize)))
        }
        if let amr = s.amrFrames {
            switch amr.silence {
            case .frame(let bytes): return .silence(try SilentAudio(amr: bytes, samples: amr.samplesPerFrame))
            case .none(let reason): return .unavailable(reason)
            }
        }
        if let reason = aacRefusal(s) { return .unavailable(reason) }
        guard let name = s.encoderName, let caps = AudioEncoderCapabilities(codec: name) else {
            return .unavailable("libavcodec has no \(s.codecName) encoder to make silent frames with")
        }
        guard caps.sampleRate(for: s.sampleRate) == s.sampleRate else {
            return .unavailable("libavcodec's \(name) encoder does not take \(s.sampleRate) Hz")
        }
        guard caps.channelCounts.isEmpty || caps.channelCounts.contains(s.channelCount) else {
            return .unavailable("libavcodec's \(name) encoder does not take \(s.channelCount) channels")
        }
        guard let encoder = try openEncoder(name, for: s) else {
            return .unavailable("libavcodec's \(name) encoder cannot be opened at \(s.sampleRate) Hz, \(s.channelLayout ?? "\(s.channelCount) channels")")
        }
        if let mismatch = mismatch(encoder, s) {
            return .unavailable("libavcodec's \(name) frames would not decode as part of it: \(mismatch)")
        }
        guard let frame = try silentFrame(encoder) else {
            return .unavailable("libavcodec's \(name) encoder made no silent frame")
        }
        var settings = AudioEncoderSettings(codec: name, sampleRate: s.sampleRate, channels: s.channelCount)
        settings.channelLayout = encoder.channelLayout
        settings.sampleFormat = encoder.sampleFormat
        settings.bitRate = encoder.bitRate
        if name == "aac" {
            // Transparent for a few frames, every band coded (noise substitution
            // would leave the transform's aliasing at a seam uncancelled).
            settings.bitRate = min(max(s.bitRate ?? 0, Int64(s.channelCount) * 96_000),
                                   AACBitRate.maximum(sampleRate: s.sampleRate, channels: s.channelCount))
            settings.options = [("aac_pns", "0")]
        } else if name == "libmp3lame" {
            settings.options = [("reservoir", "0")]
        }
        return .silence(SilentAudio(frame: frame, samples: Int64(encoder.frameSize), settings: settings))
    }

    /// No silence, for a stream with none (HE-AAC, AMR-NB, …): its frames (the
    /// stream's frame size, else single samples) still measure what an end
    /// falls short by, but nothing is made.
    public static func none(for s: InputStream, reason: String) throws(MediaError) -> SilentAudio {
        try SilentAudio(unavailable: reason, frameSize: Int64(max(s.frameSize, 1)))
    }

    private init(unavailable reason: String, frameSize: Int64) throws(MediaError) {
        quantum = frameSize
        packetSamples = frameSize
        pcmFrame = nil
        opus = nil
        unavailable = reason
        template = try Packet()
        encoderSettings = nil
    }

    private init(pcm frame: [UInt8]) throws(MediaError) {
        quantum = 1
        packetSamples = 1024
        pcmFrame = frame
        opus = nil
        unavailable = nil
        template = try Packet()
        encoderSettings = nil
    }

    /// Opus: silence in steps of 2.5 ms, in packets as long as the stream's
    /// frames (`frameSize`, when it is a CELT multiple), else 20 ms.
    private init(opus: OpusSilence, frameSize: Int64) throws(MediaError) {
        quantum = OpusSilence.quantum
        let fits = frameSize > 0 && frameSize % OpusSilence.quantum == 0 && frameSize <= OpusSilence.longestPacket
        packetSamples = fits ? frameSize : 960
        pcmFrame = nil
        self.opus = opus
        unavailable = nil
        template = try Packet()
        encoderSettings = nil
    }

    /// AMR-WB: its silent frame made by hand (`AMRFrames.silence`), a frame a packet.
    private init(amr frame: [UInt8], samples: Int64) throws(MediaError) {
        quantum = samples
        packetSamples = samples
        pcmFrame = nil
        opus = nil
        unavailable = nil
        encoderSettings = nil
        template = try Packet()
        try template.fill(frame, keyframe: true)
    }

    private init(frame: consuming Packet, samples: Int64, settings: AudioEncoderSettings) {
        quantum = samples
        packetSamples = samples
        pcmFrame = nil
        opus = nil
        unavailable = nil
        template = frame
        encoderSettings = settings
    }

    /// A silent packet of `samples` samples (a whole frame for frame codecs,
    /// whole multiples of `quantum` up to `packetSamples` for Opus).
    public func packet(samples: Int64, into packet: borrowing Packet) throws(MediaError) {
        if let unavailable { throw MediaError.invalid("could not make silence", message: unavailable) }
        if let opus {
            guard let bytes = opus.packet(samples: samples) else {
                throw MediaError.invalid("could not make silence", message: "\(samples) samples are not a whole Opus packet of 2.5 ms frames")
            }
            try packet.fill(bytes, keyframe: true)
            return
        }
        guard let pcmFrame else {
            try packet.reference(template)
            return
        }
        let count = Int(samples) * pcmFrame.count
        if pcmBytes.count != count {
            pcmBytes = Array([[UInt8]](repeating: pcmFrame, count: Int(samples)).joined())
        }
        try packet.fill(pcmBytes, keyframe: true)
    }

    /// Why an AAC stream's frames are not what libavcodec's encoder makes
    /// (it writes AAC-LC, 1024-sample frames, channel configurations 1–7).
    private static func aacRefusal(_ s: InputStream) -> String? {
        guard s.codecName == "aac" else { return nil }
        // FF_PROFILE_AAC_HE / FF_PROFILE_AAC_HE_V2: SBR found in the frames (implicit signalling).
        let asc = AudioSpecificConfig(s.extradata)
        if asc?.parametricStereo == true || s.profile == 28 {
            return "its AAC is HE-AACv2 (SBR and parametric stereo): a silent frame needs SBR and PS extension data, which libavcodec's encoder does not write"
        }
        if asc?.sbr == true || s.profile == 4 {
            return "its AAC is HE-AAC (SBR): a silent frame needs SBR extension data, which libavcodec's encoder does not write"
        }
        guard let asc else { return "its AAC codec record (AudioSpecificConfig) cannot be read" }
        if asc.objectType != 2 { return "its AAC object type is \(asc.objectType); libavcodec's encoder writes AAC-LC (2)" }
        if asc.frameLength != 1024 { return "its AAC frames are \(asc.frameLength) samples; libavcodec's encoder makes 1024" }
        return nil
    }

    /// The encoder for silent frames of `s`: its rate and layout, its bit
    /// rate when the encoder takes it (else the encoder's own), frames that
    /// stand alone (no MP3 bit reservoir reaching into the next frame).
    private static func openEncoder(_ name: String, for s: InputStream) throws(MediaError) -> Encoder? {
        var settings = AudioEncoderSettings(codec: name, sampleRate: s.sampleRate, channels: s.channelCount)
        // AAC: the channel configuration, which follows from the count, decides.
        if s.codecName != "aac" { settings.channelLayout = s.channelLayout }
        // ALAC: the bit depth.
        settings.sampleFormat = s.sampleFormat
        settings.globalHeader = true
        if name == "libmp3lame" { settings.options = [("reservoir", "0")] }
        for rate in [s.bitRate ?? 0, 0] {
            settings.bitRate = rate
            if let e = try? Encoder(audio: settings, source: nil) { return e }
        }
        return nil
    }

    /// What differs between the encoder's frames and the stream's, for a
    /// decoder; `nil` when nothing does.
    private static func mismatch(_ encoder: Encoder, _ s: InputStream) -> String? {
        if s.frameSize > 0, encoder.frameSize != s.frameSize {
            return "frames of \(encoder.frameSize) samples, the stream's are \(s.frameSize)"
        }
        if encoder.frameSize <= 0 { return "the encoder's frames have no fixed length" }
        if let theirs = s.channelLayout, let mine = encoder.channelLayout, theirs != mine,
           s.codecName != "aac" {  // AAC: the channel configuration below decides
            return "channel layout \(mine), the stream's is \(theirs)"
        }
        let theirs = AudioCodecRecord(codec: s.codecName, extradata: s.extradata)
        let mine = AudioCodecRecord(codec: s.codecName, extradata: encoder.extradata)
        guard theirs.accepts(mine) else { return "codec record \(mine.summary), the stream's is \(theirs.summary)" }
        return nil
    }

    /// A frame of digital silence: a few frames of zeros encoded; past the
    /// encoder's start-up, every packet is the same silent frame.
    private static func silentFrame(_ encoder: Encoder) throws(MediaError) -> Packet? {
        let queue = try AudioQueue(for: encoder)
        let frame = try Frame(), packet = try Packet()
        let n = encoder.frameSize
        try queue.appendSilence(Int64(n * 6))
        var packets = 0
        var pts: Int64 = 0
        while queue.count >= n {
            try queue.take(n, into: frame)
            frame.pts = pts
            pts += Int64(n)
            while try !encoder.send(frame) {
                while case .ready = try encoder.receive(into: packet) { packets += 1 }
            }
            while case .ready = try encoder.receive(into: packet) {
                packets += 1
                if packets >= 3 { return packet }
            }
        }
        return nil
    }
}

extension AudioCodecRecord {
    /// A short description for messages.
    public var summary: String {
        switch self {
        case .aac(let c):
            "AAC object type \(c.objectType), \(c.sampleRate) Hz, channel configuration \(c.channelConfiguration), \(c.frameLength)-sample frames"
                + (c.parametricStereo ? ", SBR and PS signalled" : c.sbr ? ", SBR signalled" : "")
        case .alac(let c):
            "ALAC \(c.bitDepth)-bit, \(c.channels) channels, \(c.sampleRate) Hz, \(c.frameLength)-sample frames"
        case .flac(let c):
            "FLAC \(c.bitsPerSample)-bit, \(c.channels) channels, \(c.sampleRate) Hz, blocks of at most \(c.maxBlockSize) samples"
        case .none: "none"
        case .bytes(let b): b.map { String($0, radix: 16) }.joined(separator: " ")
        }
    }
}
