import Media

/// The first frames of an HDR video stream, decoded as its packets go by in
/// the probe's one read: what only the bitstream says — HDR10+ dynamic
/// metadata and HDR10 static metadata in SEI messages. One decoder thread,
/// a few frames; the decoder is freed as soon as it has seen enough.
final class FirstFrames {
    private var decoder: Decoder?
    private let frame: Frame
    private var packets = 0
    private var frames = 0
    /// Whether any frame came out of the decoder.
    private(set) var decodedAny = false
    private(set) var hasHDR10Plus = false
    /// The first frame's HDR10 static metadata, if any frame carries it.
    private(set) var staticMetadata: HDRMetadata?

    /// HDR10+ comes with every frame where an encoder writes it; a few frames
    /// are enough to tell, and few packets are needed for them (the
    /// decoder's reordering delay).
    static let framesLooked = 4
    static let packetsSent = 32

    /// A scan of `stream` when it is video with an HDR transfer or a Dolby
    /// Vision record (HDR10+ is for PQ video only); nil for other streams
    /// or when the stream cannot be decoded.
    init?(_ stream: InputStream) {
        guard stream.mediaType == .video, !stream.isAttachedPicture,
              stream.hasHDRTransfer || stream.dolbyVision != nil,
              let d = try? Decoder(stream: stream, threads: 1), let f = try? Frame() else { return nil }
        decoder = d
        frame = f
    }

    /// Decodes `packet` of the stream, until enough frames are seen. A
    /// packet that does not decode is passed over: the probe reports the
    /// file, not the decoder's complaints.
    func add(_ packet: borrowing Packet) {
        guard let decoder else { return }
        packets += 1
        do throws(MediaError) {
            while try !decoder.send(packet) {
                try receive(decoder)
                if self.decoder == nil { return }
            }
            try receive(decoder)
        } catch {}
        if packets >= Self.packetsSent { self.decoder = nil }
    }

    /// Drains the decoder at the end of the stream (a stream of fewer
    /// packets than the decoder holds back).
    func finish() {
        guard let decoder else { return }
        do throws(MediaError) {
            try decoder.sendEnd()
            try receive(decoder)
        } catch {}
        self.decoder = nil
    }

    private func receive(_ decoder: Decoder) throws(MediaError) {
        while self.decoder != nil, case .ready = try decoder.receive(into: frame) {
            decodedAny = true
            frames += 1
            if frame.hasHDR10Plus { hasHDR10Plus = true }
            if staticMetadata == nil { staticMetadata = frame.hdrMetadata }
            frame.unref()
            if hasHDR10Plus && staticMetadata != nil || frames >= Self.framesLooked { self.decoder = nil }
        }
    }
}
