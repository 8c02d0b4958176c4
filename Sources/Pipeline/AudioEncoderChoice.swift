import Media

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
            return .failure(.invalidOption("'audio-bitrate' \(requested / 1000)k is too low for AAC with \(what) (at least \(minimum / 1000)k)", options: ["audio-bitrate"]))
        }
        if requested > maximum {
            return .failure(.invalidOption("'audio-bitrate' \(requested / 1000)k is too high for AAC with \(what) (at most \(maximum / 1000)k)", options: ["audio-bitrate"]))
        }
        return .success(requested)
    }
}

/// Encoder settings to re-encode `stream` with the encoder `name` (aac,
/// pcm_s16le, …): the input's channels, its rate or the nearest the encoder
/// takes, and for AAC the bit rate `bitRate` (nil: 64 kb/s per channel),
/// refused with a clear message when the encoder cannot use it. Transcode
/// and the assembly verbs both decide here.
public func audioEncoderSettings(for s: InputStream, encoder name: String, bitRate: Int64?, globalHeader: Bool,
                                 operation: String) throws(MediaError) -> AudioEncoderSettings {
    guard let caps = AudioEncoderCapabilities(codec: name) else {
        throw .missingEncoder(name, operation: operation)
    }
    guard s.sampleRate > 0, s.channelCount > 0 else {
        throw MediaError.invalid(operation, path: s.file.path, stream: s.index,
                                 message: "the audio stream has no sample rate or channel count")
    }
    if !caps.channelCounts.isEmpty, !caps.channelCounts.contains(s.channelCount) {
        throw MediaError.invalid(operation, path: s.file.path, stream: s.index,
                                 message: "\(name) cannot encode \(s.channelCount) channels",
                                 remedy: .drop(.audio))
    }
    var settings = AudioEncoderSettings(codec: name, sampleRate: caps.sampleRate(for: s.sampleRate), channels: s.channelCount)
    settings.globalHeader = globalHeader
    if name == "aac" {
        switch AACBitRate.choose(bitRate, sampleRate: settings.sampleRate, channels: s.channelCount) {
        case .success(let b): settings.bitRate = b
        case .failure(let e): throw e.about(path: s.file.path, stream: s.index)
        }
    }
    return settings
}

/// The audio streams of `input` kept by `selection` that are encoded, and
/// how: `encoder` names the encoder for a stream (nil: copied), checked
/// against what `container` holds. Transcode and remux decide here.
public func audioEncodings(_ input: InputFile, container: Container, selection: StreamSelection, bitRate: Int64?,
                           operation: String,
                           encoder: (InputStream) throws(MediaError) -> String?) throws(MediaError) -> [Int: AudioEncoderSettings] {
    var plans: [Int: AudioEncoderSettings] = [:]
    for s in input.streams where s.mediaType == .audio && selection.keeps(s) {
        guard let name = try encoder(s) else { continue }
        guard container.canHold(encoder: name) != false else {
            throw MediaError.invalid(operation, path: input.path, stream: s.index,
                                     message: "\(container.name) cannot hold \(name) audio",
                                     remedy: name.hasPrefix("pcm") ? .pcmNeedsMOV : nil)
        }
        plans[s.index] = try audioEncoderSettings(for: s, encoder: name, bitRate: bitRate,
                                                  globalHeader: container.isISOBMFF || container.muxer == "matroska",
                                                  operation: operation)
    }
    return plans
}
