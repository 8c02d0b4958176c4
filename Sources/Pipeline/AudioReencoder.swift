import Media
import Sync

/// Decodes audio and encodes it again (AAC or PCM): converted to the
/// encoder's format, cut into the encoder's frame size, and laid on the
/// output's sample timeline by the core's `AudioAssembler` (exact mode): a
/// gap becomes exactly as many samples of silence, an overlap is trimmed, a
/// limit cuts the tail, so the audio stays where its timestamps put it.
/// Several inputs (segments) can follow one another through one encoder.
public final class AudioReencoder {
    public let encoder: Encoder
    private var decoder: Decoder?
    private var stream: InputStream?
    private let queue: AudioQueue
    private var assembler: AudioAssembler
    private let sampleTimeBase: Rational
    /// Added to decoded positions (in samples) for the current input.
    private var shift: Int64 = 0
    /// Samples at or after this output position are cut.
    public var limit: Int64?
    /// The longest silence made in one place; a longer gap is refused as a
    /// broken timestamp (`fillLimitError`).
    public var longestFillSeconds = AudioAssembler.longestFillSeconds
    private let decoded: Frame
    private let chunk: Frame
    private let packet: Packet
    /// Samples sent to the encoder.
    public private(set) var sent: Int64 = 0
    /// The encoder on its own thread (`encodeOnThread`).
    private var encoding: EncoderStage?

    /// Opens the encoder (metadata from `source`); call `begin` for each
    /// input to decode. The bit rate is not checked here (see `AACBitRate.choose`).
    public init(settings: AudioEncoderSettings, source: InputStream, toleranceSamples: Int64? = nil) throws(MediaError) {
        do {
            encoder = try Encoder(audio: settings, source: source)
        } catch {
            throw error.about(path: source.file.path, stream: source.index)
        }
        queue = try AudioQueue(for: encoder)
        sampleTimeBase = encoder.timeBase
        let tolerance = toleranceSamples ?? AudioGapScanner.defaultTolerance(
            timeBase: source.timeBase ?? .microseconds, sampleRate: encoder.sampleRate)
        assembler = AudioAssembler(sampleRate: encoder.sampleRate, toleranceSamples: tolerance)
        decoded = try Frame()
        chunk = try Frame()
        packet = try Packet()
    }

    /// Runs the encoder on a thread of its own from now on, beside the
    /// decoder and the stage before it (where no thread can be started, it
    /// stays inline). The packets are the same, passed to `emit` a few
    /// frames later. Call before the first packet.
    public func encodeOnThread() {
        if encoding == nil { encoding = EncoderStage(encoder) }
    }

    /// Switches to decoding `stream`, whose positions (in samples of the
    /// encoder's rate) get `shift` added. Call `endInput` on the previous one first.
    ///
    /// With `drift` (the stream's clock rate relative to the output's, minus
    /// 1) the audio is resampled once to undo it, and its positions are
    /// stretched by the same ratio around `anchor` (a position before the
    /// shift, e.g. its first sample), which stays in place.
    public func begin(_ stream: InputStream, shift: Int64 = 0, drift: Double? = nil, anchor: Int64 = 0) throws(MediaError) {
        decoder = try Decoder(stream: stream)
        self.stream = stream
        self.shift = shift
        let correction = drift.flatMap { DriftCorrection(drift: $0, inputRate: stream.sampleRate, outputRate: encoder.sampleRate) }
        if drift != nil && correction == nil {
            throw MediaError.invalid("could not resample", path: stream.file.path, stream: stream.index,
                                     message: "a clock drift of \(drift! * 1e6) ppm cannot be corrected")
        }
        queue.driftCorrection = correction
        self.anchor = anchor
    }

    /// A linear gain on every decoded sample (loudness normalization); set
    /// before the first packet.
    public var gain: Double? {
        get { queue.gain }
        set { queue.gain = newValue }
    }

    /// Processing between the decoder and the converter (a limiter), for
    /// a single input; its frames are placed by the timestamps they carry.
    public var stage: (any AudioFrameStage)?

    /// The position that stays put under a drift correction.
    private var anchor: Int64 = 0

    public var silenceInserted: Int64 { assembler.silenceInserted }
    public var samplesTrimmed: Int64 { assembler.samplesTrimmed }
    public var repairs: [AudioRepair] { assembler.repairs }
    /// The farthest a frame landed from its timestamp, within the tolerance.
    public var largestShift: Int64 { assembler.largestShift }
    /// The next sample's output position (encoder time base), `nil` before any.
    public var cursor: Int64? { assembler.cursor }
    public var origin: Int64? { assembler.origin }

    /// Decodes `input` and passes each encoded packet (timing in the
    /// encoder's time base, 1/rate) to `emit`.
    public func send(_ input: borrowing Packet, emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        guard let decoder else { return }
        while try !decoder.send(input) { try drainDecoder(emit) }
        try drainDecoder(emit)
    }

    /// Decodes `input` and drops what it decodes: a decoder whose frames
    /// overlap the one before (AAC) then decodes the next packet right.
    public func warm(_ input: borrowing Packet) throws(MediaError) {
        guard let decoder else { return }
        while try !decoder.send(input) {
            while case .ready = try decoder.receive(into: decoded) { decoded.unref() }
        }
        while case .ready = try decoder.receive(into: decoded) { decoded.unref() }
    }

    /// Drains the current input's decoder.
    public func endInput(emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        guard let decoder else { return }
        try decoder.sendEnd()
        try drainDecoder(emit)
        if let stage {
            try stage.sendEnd()
            try drainStage(stage, emit)
        }
        self.decoder = nil
    }

    /// Silence from the cursor to `end` (output samples).
    public func pad(to end: Int64, emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        let from = assembler.cursor ?? end
        let n = assembler.pad(to: end)
        try checkFill(n, at: from)
        try appendSilence(n, emit)
    }

    /// Refuses silence longer than `longestFillSeconds`.
    private func checkFill(_ samples: Int64, at position: Int64) throws(MediaError) {
        guard AudioAssembler.exceedsFillLimit(samples, sampleRate: encoder.sampleRate, seconds: longestFillSeconds) else { return }
        throw fillLimitError(samples: samples, at: position, sampleRate: encoder.sampleRate, limitSeconds: longestFillSeconds,
                             path: stream?.file.path ?? encoder.source?.file.path, stream: stream?.index ?? encoder.source?.index)
    }

    /// Queues silence and encodes it a second at a time, so a long gap
    /// never sits in memory whole.
    private func appendSilence(_ n: Int64, _ emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        var left = n
        let second = Int64(max(encoder.sampleRate, 1))
        while left > 0 {
            let k = min(left, second)
            try queue.appendSilence(k)
            try encodeQueued(final: false, emit)
            left -= k
        }
    }

    /// Starts the timeline at `position` if nothing was written (all-silence output).
    public func start(at position: Int64) { assembler.start(at: position) }

    /// Flushes the decoder, the converter and the encoder.
    public func finish(emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        try endInput(emit: emit)
        try queue.flush()
        try encodeQueued(final: true, emit)
        if let encoding {
            self.encoding = nil
            return try encoding.finish(emit: emit)
        }
        try encoder.sendEnd()
        try drainEncoder(emit)
    }

    private func drainDecoder(_ emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        guard let decoder, let stream else { return }
        while case .ready = try decoder.receive(into: decoded) {
            guard let stage else {
                try place(decoded, timestamp: decoded.bestEffortTimestamp, timeBase: stream.timeBase!, emit)
                continue
            }
            try stage.send(decoded)
            decoded.unref()
            try drainStage(stage, emit)
        }
    }

    /// What the stage has ready, placed by the timestamps it carries (in
    /// the stage's output time base).
    private func drainStage(_ stage: any AudioFrameStage, _ emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        while case .ready = try stage.receive(into: decoded) {
            try place(decoded, timestamp: decoded.pts, timeBase: stage.outputTimeBase, emit)
        }
    }

    /// Puts a frame on the output's sample timeline (a gap filled, an
    /// overlap trimmed, the limit kept), queues it and encodes what is due;
    /// the frame is blank afterwards.
    private func place(_ frame: borrowing Frame, timestamp: Int64?, timeBase: Rational,
                       _ emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        let correction = queue.driftCorrection
        let at = timestamp
            .flatMap { rescale($0, from: timeBase, to: sampleTimeBase) }
            .map { (correction?.map($0, anchor: anchor) ?? $0) &+ shift }
        let count = queue.convertedCount(of: frame)
        let step = assembler.place(at: at, samples: count, limit: limit)
        try checkFill(step.silence, at: step.position &- step.silence)
        try appendSilence(step.silence, emit)
        if step.keep > 0 { try queue.append(frame, trim: step.trimStart, keep: step.cut(from: count)) }
        frame.unref()
        try encodeQueued(final: false, emit)
    }

    private func encodeQueued(final: Bool, _ emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        let size = encoder.frameSize > 0 ? encoder.frameSize : 1024
        while queue.count >= size || (final && queue.count > 0) {
            try queue.take(size, into: chunk)
            chunk.pts = (assembler.origin ?? 0) &+ sent
            sent &+= Int64(chunk.sampleCount)
            if let encoding {
                try encoding.send(chunk, emit: emit)
                continue
            }
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

/// The error for a gap or pad longer than `limitSeconds`.
package func fillLimitError(samples: Int64, at position: Int64, sampleRate: Int32, limitSeconds: Int64,
                            path: String?, stream: Int?) -> MediaError {
    let rate = Int64(max(sampleRate, 1))
    func span(_ seconds: Int64) -> String {
        seconds >= 2 * 86_400 ? "\(seconds / 86_400) days" : seconds >= 2 * 3600 ? "\(seconds / 3600) hours" : "\(seconds) s"
    }
    return MediaError.invalid("could not fill silence in", path: path, stream: stream,
                              message: "the audio would need \(span(samples / rate)) of silence at \(position / rate) s; a jump that long is a broken timestamp, not a pause (at most \(span(limitSeconds)) are filled)")
}

/// A step between an audio decoder and the encoder's converter — a filter
/// graph, say — that may hold samples back for a while (a limiter's look-ahead)
/// and hands out frames stamped in its `outputTimeBase`.
public protocol AudioFrameStage: AnyObject {
    /// Takes a decoded frame (the caller unrefs it afterwards).
    func send(_ frame: borrowing Frame) throws(MediaError)
    /// No more input: what is held comes out.
    func sendEnd() throws(MediaError)
    func receive(into frame: borrowing Frame) throws(MediaError) -> CodecOutput
    /// The time base of the frames' `pts`; valid once a frame came out.
    var outputTimeBase: Rational { get }
}
