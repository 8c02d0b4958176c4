import CFFmpeg
import Media
import Sync

/// One audio stream's measured loudness.
public struct StreamLoudness: Sendable, Codable, Equatable {
    /// The stream's index in its file.
    public var stream: Int
    public var figures: LoudnessFigures
}

/// Measures every audio stream of `path`, or those in `only` (cover art and
/// other streams are not read, let alone decoded): BS.1770-4 / EBU R128 over each whole
/// stream, with true and sample peaks, as FFmpeg's `ebur128=peak=true`
/// filter measures them (Sync's `LoudnessMeasurement`, on the decoded
/// samples). An empty result when the file has no audio. A stream with a
/// setting in `limiting` is measured as the limiter at that setting would
/// put it out (before an encoder): a rehearsal, nothing encoded.
public func measureLoudness(path: String, only: Set<Int>? = nil, limiting: [Int: LimiterSetting] = [:],
                            cancellation: Cancellation = .shared) throws(MediaError) -> [StreamLoudness] {
    let input = try InputFile(path: path, cancellation: cancellation)
    let audio = input.streams.filter { $0.mediaType == .audio && only?.contains($0.index) != false }
    guard !audio.isEmpty else { return [] }
    input.discardAll(except: Set(audio.map(\.index)))
    var meters: [Int: StreamMeter] = [:]
    for s in audio { meters[s.index] = try StreamMeter(stream: s, limiting: limiting[s.index]) }

    let packet = try Packet()
    while try input.read(into: packet) {
        try cancellation.check()
        guard let meter = meters[packet.streamIndex] else { continue }
        if packet.isCorrupt { throw input.corruptPacketError(stream: packet.streamIndex) }
        try meter.send(packet)
    }
    return try audio.map { s throws(MediaError) in
        StreamLoudness(stream: s.index, figures: try meters[s.index]!.finish())
    }
}

/// Decoder → `LoudnessMeasurement` for one stream (on a thread of its own,
/// `MeasurementWorker`), set up by the first decoded frame's rate and
/// channel layout.
final class StreamMeter {
    private let stream: InputStream
    private let decoder: Decoder
    private let decoded: Frame
    /// Measured here when no thread could be started for it.
    private var measurement: LoudnessMeasurement?
    private var worker: MeasurementWorker?
    private var format: (rate: Int, channels: Int)?
    private let samples = PlanarSamples()
    private let limiting: LimiterSetting?
    private var limiter: TruePeakLimiter?
    /// The limiter's output, a plane per channel.
    private var limited: [UnsafeMutablePointer<Float>] = []
    private var limitedCapacity = 0

    /// The decoded samples measured: from `skip` on, and before `end()`
    /// (read as each frame is decoded); nil: all.
    private let window: (skip: Int64, end: () -> Int64?)?
    /// Samples decoded so far.
    private var position: Int64 = 0

    convenience init(stream: InputStream, limiting: LimiterSetting? = nil) throws(MediaError) {
        try self.init(stream: stream, decoder: Decoder(stream: stream, threads: 1), limiting: limiting)
    }

    /// Measures what `decoder` makes of `stream`'s packets (or of an
    /// encoder's), only the samples in `window`.
    init(stream: InputStream, decoder: Decoder, limiting: LimiterSetting? = nil,
         window: (skip: Int64, end: () -> Int64?)? = nil) throws(MediaError) {
        self.stream = stream
        self.limiting = limiting
        self.decoder = decoder
        self.window = window
        decoded = try Frame()
    }

    func send(_ packet: borrowing Packet) throws(MediaError) {
        while try !decoder.send(packet) { try drainDecoder() }
        try drainDecoder()
    }

    deinit { limited.forEach { $0.deallocate() } }

    /// Flushes the decoder; the stream's figures.
    func finish() throws(MediaError) -> LoudnessFigures {
        try decoder.sendEnd()
        try drainDecoder()
        if limiter != nil {
            limiter!.finish()
            measureLimited()
        }
        if let worker { measurement = worker.finish() }
        worker = nil
        guard let measurement, measurement.samples > 0 else {
            throw MediaError.invalid("could not measure the loudness of", path: stream.file.path, stream: stream.index,
                                     message: "the stream has no decodable audio")
        }
        return measurement.figures
    }

    private func drainDecoder() throws(MediaError) {
        while case .ready = try decoder.receive(into: decoded) {
            defer { decoded.unref() }
            let f = decoded.pointer
            let rate = Int(f.pointee.sample_rate), channels = Int(f.pointee.ch_layout.nb_channels)
            if format == nil {
                guard rate > 0, channels > 0 else { throw failure("the stream has no sample rate or no channels") }
                let m = LoudnessMeasurement(sampleRate: rate, channelWeights: channelWeights(f))
                limiter = limiting.map {
                    TruePeakLimiter(sampleRate: rate, channels: channels, gainDB: $0.gainDB, ceilingDBTP: $0.limitDBTP)
                }
                worker = MeasurementWorker(m)
                if worker == nil { measurement = m }
                format = (rate, channels)
            }
            guard rate == format!.rate, channels == format!.channels else {
                throw failure("the stream changes its sample rate or channel count midway")
            }
            guard samples.load(f) else {
                let name = av_get_sample_fmt_name(AVSampleFormat(f.pointee.format)).map { String(cString: $0) } ?? "?"
                throw failure("the decoder gives samples as \(name), which the meter does not read")
            }
            let (first, n) = windowed(samples.sampleCount)
            guard n > 0 else { continue }
            if limiter != nil {
                samples.withChannels(from: first, count: n) { limiter!.add($0, count: $1) }
                measureLimited()
            } else {
                samples.withChannels(from: first, count: n) { measure($0, count: $1) }
            }
        }
    }

    /// Of the next `count` decoded samples, the first in the window and how many are.
    private func windowed(_ count: Int) -> (first: Int, count: Int) {
        let at = position
        position += Int64(count)
        guard let window else { return (0, count) }
        let first = min(max(window.skip - at, 0), Int64(count))
        let end = window.end().map { min(max($0 - at, first), Int64(count)) } ?? Int64(count)
        return (Int(first), Int(end - first))
    }

    private func measure(_ channels: UnsafeBufferPointer<UnsafePointer<Float>>, count: Int) {
        if let worker { worker.send(channels, count: count) } else { measurement!.add(channels, count: count) }
    }

    /// What the limiter has ready, measured.
    private func measureLimited() {
        let n = limiter!.available
        guard n > 0 else { return }
        if n > limitedCapacity {
            limited.forEach { $0.deallocate() }
            limited = (0..<limiter!.channelCount).map { _ in .allocate(capacity: n) }
            limitedCapacity = n
        }
        limited.withUnsafeBufferPointer { limiter!.take(n, into: $0) }
        limited.map { UnsafePointer($0) }.withUnsafeBufferPointer { measure($0, count: n) }
    }

    private func failure(_ message: String) -> MediaError {
        MediaError.invalid("could not measure the loudness of", path: stream.file.path, stream: stream.index,
                           message: message)
    }
}

/// Each channel's weight from the frame's layout; a layout the file
/// leaves unnamed is taken as the usual one for its channel count, as the
/// ffmpeg program does before its filters.
private func channelWeights(_ f: UnsafeMutablePointer<AVFrame>) -> [Double] {
    var layout = AVChannelLayout()
    defer { av_channel_layout_uninit(&layout) }
    if f.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC {
        av_channel_layout_default(&layout, f.pointee.ch_layout.nb_channels)
    } else if av_channel_layout_copy(&layout, &f.pointee.ch_layout) < 0 {
        av_channel_layout_default(&layout, f.pointee.ch_layout.nb_channels)
    }
    return (0..<Int(f.pointee.ch_layout.nb_channels)).map { i in
        LoudnessChannelWeight.weight(channel: Int(av_channel_layout_channel_from_index(&layout, UInt32(i)).rawValue))
    }
}
