import Media
import Sync

/// Silence in the codec of a stream being copied, so gaps can be filled
/// without re-encoding the real audio: for AAC (and other frame codecs), a
/// frame of digital silence from libavcodec's encoder for that codec at the
/// stream's rate, channels and bit rate — used only when the encoder's
/// configuration (extradata, frame size) is the stream's own, so a decoder
/// takes it as part of the same stream; for signed PCM, zero bytes.
public final class SilentAudio {
    /// Silence comes in multiples of this many samples (1 for PCM).
    public let quantum: Int64
    /// Samples per silent packet at most.
    public let packetSamples: Int64
    private let template: Packet
    private let isPCM: Bool
    private let bytesPerSample: Int

    /// `nil` when silence cannot be made to match the stream.
    public init?(matching s: InputStream) throws(MediaError) {
        if s.codecName.hasPrefix("pcm_") {
            guard s.isSignedPCM, s.blockAlign > 0 else { return nil }
            quantum = 1
            packetSamples = 1024
            bytesPerSample = s.blockAlign
            template = try Packet()
            isPCM = true
            return
        }
        guard s.frameSize > 0, let name = s.encoderName, let caps = AudioEncoderCapabilities(codec: name),
              caps.sampleRate(for: s.sampleRate) == s.sampleRate,
              caps.channelCounts.isEmpty || caps.channelCounts.contains(s.channelCount) else { return nil }
        var settings = AudioEncoderSettings(codec: name, sampleRate: s.sampleRate, channels: s.channelCount)
        settings.bitRate = s.bitRate ?? 0
        settings.globalHeader = true
        let encoder: Encoder
        do {
            encoder = try Encoder(audio: settings, source: nil)
        } catch {
            return nil
        }
        guard encoder.frameSize == s.frameSize, encoder.extradata == s.extradata else { return nil }
        // Encode a few frames of zeros; past the encoder's start-up, every
        // packet is the same silent frame.
        let queue = try AudioQueue(for: encoder)
        let frame = try Frame(), packet = try Packet()
        let n = encoder.frameSize
        try queue.appendSilence(Int64(n * 6))
        var packets = 0
        let chosen = try Packet()
        var found = false
        var pts: Int64 = 0
        while queue.count >= n && !found {
            try queue.take(n, into: frame)
            frame.pts = pts
            pts += Int64(n)
            while try !encoder.send(frame) {
                while case .ready = try encoder.receive(into: packet) { packets += 1 }
            }
            while !found, case .ready = try encoder.receive(into: packet) {
                packets += 1
                if packets >= 3 {
                    try chosen.reference(packet)
                    found = true
                }
            }
        }
        guard found else { return nil }
        template = chosen
        isPCM = false
        quantum = Int64(n)
        packetSamples = Int64(n)
        bytesPerSample = 0
    }

    /// A silent packet of `samples` samples (a whole frame for frame codecs).
    public func packet(samples: Int64, into packet: borrowing Packet) throws(MediaError) {
        if isPCM {
            try packet.zeroed(count: Int(samples) * bytesPerSample)
        } else {
            try packet.reference(template)
        }
    }
}
