import Media
import Sync

/// How audio streams are written.
public enum AudioMode: String, Sendable, CaseIterable, Codable {
    /// Copied when the container holds the codec, else encoded to AAC.
    case auto
    /// Always copied; a codec the container cannot hold is an error.
    case copy
    /// Encoded to AAC-LC.
    case aac
    /// Encoded to 16-bit little-endian PCM (what iOS writes in MOV).
    case pcm

    var encoderName: String? {
        switch self {
        case .aac: "aac"
        case .pcm: "pcm_s16le"
        case .auto, .copy: nil
        }
    }
}

/// The AAC bit-rate rules, checked before anything is written.
public enum AACBitRate {
    /// Per channel, when no bit rate is asked for.
    public static let defaultPerChannel: Int64 = 64_000
    /// Below this per channel FFmpeg's AAC encoder has too few bits for its
    /// side information and the result is unusable.
    public static let minimumPerChannel: Int64 = 8_000

    /// The most AAC-LC can carry: 6144 bits per channel per 1024-sample
    /// frame (the decoder's input buffer), i.e. 6 × rate per channel.
    public static func maximum(sampleRate: Int32, channels: Int) -> Int64 {
        6 * Int64(sampleRate) * Int64(channels)
    }

    /// The bit rate to use: the requested one if the encoder can use it (an
    /// error saying why not otherwise); the default capped at the maximum.
    public static func choose(_ requested: Int64?, sampleRate: Int32, channels: Int) -> Result<Int64, MediaError> {
        let maximum = maximum(sampleRate: sampleRate, channels: channels)
        let minimum = minimumPerChannel * Int64(channels)
        guard let requested else { return .success(min(defaultPerChannel * Int64(channels), maximum)) }
        let what = "\(channels) channel\(channels == 1 ? "" : "s") at \(sampleRate) Hz"
        if requested < minimum {
            return .failure(.invalid("invalid option", message: "'--audio-bitrate' \(requested / 1000)k is too low for AAC with \(what) (at least \(minimum / 1000)k)"))
        }
        if requested > maximum {
            return .failure(.invalid("invalid option", message: "'--audio-bitrate' \(requested / 1000)k is too high for AAC with \(what) (at most \(maximum / 1000)k)"))
        }
        return .success(requested)
    }
}

/// What happened to one audio stream.
public struct AudioOutcome: Sendable, Codable, Equatable {
    public var stream: Int
    /// `copy` or the encoder's name.
    public var action: String
    public var codec: String
    public var sampleRate: Int32?
    public var bitRate: Int64?
    /// Samples of silence written where the input's audio had gaps.
    public var silenceInserted: Int64 = 0
    /// Doubled samples dropped where the input's audio overlapped itself.
    public var samplesTrimmed: Int64 = 0
}

/// Decodes one audio stream and encodes it again (AAC or PCM): converted to
/// the encoder's format, cut into the encoder's frame size, timed by the
/// core's `AudioSampleClock` from a sample counter — gaps in the input
/// become exact runs of silence, so the audio stays where its timestamps
/// put it.
public final class AudioReencoder {
    public let stream: InputStream
    public let encoder: Encoder
    private let decoder: Decoder
    private let queue: AudioQueue
    private var clock: AudioSampleClock
    private let decoded: Frame
    private let chunk: Frame
    private let packet: Packet
    /// Samples sent to the encoder.
    private var sent: Int64 = 0

    /// Opens the decoder and the encoder. The bit rate is not checked here
    /// (see `AACBitRate.choose`).
    public init(stream: InputStream, encoder name: String, sampleRate: Int32, bitRate: Int64,
                globalHeader: Bool) throws(MediaError) {
        self.stream = stream
        decoder = try Decoder(stream: stream)
        var settings = AudioEncoderSettings(codec: name, sampleRate: sampleRate, channels: max(stream.channelCount, 1))
        settings.bitRate = bitRate
        settings.globalHeader = globalHeader
        do {
            encoder = try Encoder(audio: settings, source: stream)
        } catch {
            throw error.about(path: stream.file.path, stream: stream.index)
        }
        queue = try AudioQueue(for: encoder)
        clock = AudioSampleClock(timeBase: stream.timeBase!, sampleRate: encoder.sampleRate)!
        decoded = try Frame()
        chunk = try Frame()
        packet = try Packet()
    }

    public var silenceInserted: Int64 { clock.silenceInserted }
    public var samplesTrimmed: Int64 { clock.samplesTrimmed }

    /// Decodes `input` and passes each encoded packet (timing in the
    /// encoder's time base, 1/rate) to `emit`.
    public func send(_ input: borrowing Packet, emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        while try !decoder.send(input) { try drainDecoder(emit) }
        try drainDecoder(emit)
    }

    /// Flushes the decoder, the converter and the encoder.
    public func finish(emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        try decoder.sendEnd()
        try drainDecoder(emit)
        try queue.flush()
        try encodeQueued(final: true, emit)
        try encoder.sendEnd()
        try drainEncoder(emit)
    }

    private func drainDecoder(_ emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        while case .ready = try decoder.receive(into: decoded) {
            let placement = clock.place(pts: decoded.bestEffortTimestamp, samples: queue.convertedCount(of: decoded))
            if placement.silence > 0 { try queue.appendSilence(placement.silence) }
            try queue.append(decoded, trim: placement.trim)
            decoded.unref()
            try encodeQueued(final: false, emit)
        }
    }

    private func encodeQueued(final: Bool, _ emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        let size = encoder.frameSize > 0 ? encoder.frameSize : 1024
        while queue.count >= size || (final && queue.count > 0) {
            try queue.take(size, into: chunk)
            chunk.pts = (clock.origin ?? 0) &+ sent
            sent &+= Int64(chunk.sampleCount)
            while try !encoder.send(chunk) { try drainEncoder(emit) }
            try drainEncoder(emit)
        }
    }

    private func drainEncoder(_ emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        while case .ready = try encoder.receive(into: packet) {
            try emit(packet)
        }
    }
}
