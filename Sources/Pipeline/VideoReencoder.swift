import Media
import Sync

/// A stage between a video's decoder and its encoder that gives one frame
/// for each frame it takes, at the same time (tone mapping).
public protocol FrameFilter: AnyObject {
    /// `frame` filtered into `out` (timestamp and side data kept).
    func filter(_ frame: borrowing Frame, into out: borrowing Frame) throws(MediaError)
}

/// Decodes one video stream (threaded) and encodes it again: each frame
/// filtered when asked (`filter`: tone mapping), converted only when the
/// encoder needs it (pixel format, size), its RPU and HDR10+ metadata
/// carried to its picture when asked (`metadata`), timed by the core's
/// `FrameTimestamps` (the encoder gives packets no duration), and at a
/// constant frame rate when asked (`FrameRateConverter`: each output
/// instant shows the latest input frame). Otherwise timestamps pass through
/// in the stream's own time base, so variable frame rate stays variable.
public final class VideoReencoder: Reencoder {
    public let encoder: Encoder
    private let stream: InputStream
    private let decoder: Decoder
    private let width: Int, height: Int, pixelFormat: String
    private var scaler: Scaler?
    private var scalerFormat: String?
    private var frameTimes: FrameTimestamps
    private var rateConverter: FrameRateConverter?
    private let frame: Frame, converted: Frame, held: Frame, encoded: Packet
    /// Applied to every frame before it is converted and encoded, on a
    /// thread of its own (`FilterStage`).
    public var filter: (any FrameFilter)?
    private var stage: FilterStage?
    /// Each frame's RPU and HDR10+ metadata, carried to its encoded picture.
    public let metadata: PictureMetadataCarrier?
    public private(set) var framesDecoded = 0
    public private(set) var framesEncoded = 0
    /// Called with each picture as the encoder is given it (filtered and
    /// converted), after it is sent: what a measure of the encode's quality
    /// compares the encoder's output with.
    public var encoderInput: ((borrowing Frame) throws(MediaError) -> Void)?
    /// Called with each packet the encoder makes, before it is emitted.
    public var encoderOutput: ((borrowing Packet) throws(MediaError) -> Void)?
    /// Called every few decoded frames with the count and the frame's time.
    public var progress: ((Int, Timestamp) -> Void)?
    /// Only frames shown in this chunk are encoded (a chunked transcode);
    /// the others are decoded and let go. `nil`: every frame.
    public var window: ChunkPlan.Chunk?
    /// A frame after the window has been decoded: the window is complete
    /// (frames come out of the decoder in presentation order).
    public private(set) var isPastWindow = false
    /// The first frame encoded in the window, and the count of decoded frames left out.
    public private(set) var firstInWindow: Int64?
    public private(set) var framesOutsideWindow = 0
    /// Frames of the window the decoder concealed errors in or marked
    /// corrupt: after a seek, a start that is no clean entry point.
    public private(set) var damagedInWindow = 0

    /// Opens the decoder for `stream` and the encoder with `settings` (its
    /// time base is set here: the stream's, or 1/`frameRate` for a constant
    /// output rate).
    /// `carrying`: the per-picture metadata passed from each frame to its picture.
    public init(stream: InputStream, settings: VideoEncoderSettings, frameRate: Rational?,
                carrying: PictureMetadata.Kinds = []) throws(MediaError) {
        guard let timeBase = stream.timeBase else {
            throw MediaError.invalid("could not decode", path: stream.file.path, stream: stream.index,
                                     message: "the stream has no valid time base")
        }
        self.stream = stream
        decoder = try Decoder(stream: stream)
        rateConverter = frameRate.flatMap { FrameRateConverter(frameRate: $0, inputTimeBase: timeBase) }
        var settings = settings
        settings.timeBase = rateConverter?.outputTimeBase ?? timeBase
        encoder = try Encoder(video: settings, source: stream)
        (width, height, pixelFormat) = (settings.width, settings.height, settings.pixelFormat)
        frameTimes = FrameTimestamps(frameRate: stream.averageFrameRate ?? stream.realFrameRate, timeBase: timeBase,
                                     wrapBits: stream.wrapBits)
        frame = try Frame()
        converted = try Frame()
        held = try Frame()
        encoded = try Packet()
        metadata = carrying.isEmpty ? nil : PictureMetadataCarrier(kinds: carrying)
    }

    /// Input frames dropped and repeated for a constant rate.
    public var framesDropped: Int { rateConverter?.dropped ?? 0 }
    public var framesDuplicated: Int64 { rateConverter?.duplicated ?? 0 }

    public func send(_ packet: borrowing Packet, emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        while try !decoder.send(packet) { try drainDecoder(emit) }
        try drainDecoder(emit)
    }

    public func finish(emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        try decoder.sendEnd()
        try drainDecoder(emit)
        if rateConverter != nil { try submitHeld(rateConverter!.finish(), emit) }
        try stage?.flush { out throws(MediaError) in try encode(out, emit) }
        try encoder.sendEnd()
        try drainEncoder(emit)
    }

    private func drainDecoder(_ emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        while case .ready = try decoder.receive(into: frame) {
            framesDecoded += 1
            let (pts, duration) = frameTimes.frame(timestamp: frame.bestEffortTimestamp, duration: frame.duration)
            if let window, !window.contains(pts) {
                if window.isPast(pts) { isPastWindow = true }
                framesOutsideWindow += 1
                frame.unref()
                continue
            }
            if window != nil, firstInWindow == nil { firstInWindow = pts }
            if window != nil, frame.isDamaged { damagedInWindow += 1 }
            frame.clearPictureType()
            if rateConverter != nil {
                try submitHeld(rateConverter!.add(pts: pts, duration: duration), emit)
                held.take(from: frame)
            } else {
                frame.pts = pts
                try submit(frame, emit)
                frame.unref()
            }
            if let progress, framesDecoded % 8 == 0 { progress(framesDecoded, Timestamp(pts, stream.timeBase!)) }
        }
    }

    /// Filters, converts when the encoder needs it, then encodes.
    private func submit(_ f: borrowing Frame, _ emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        if let metadata, let pts = f.pts { metadata.note(f, pts: pts) }
        guard let filter else { return try encode(f, emit) }
        if stage == nil { stage = FilterStage(filter) }
        try stage!.send(f) { out throws(MediaError) in try encode(out, emit) }
    }

    private func encode(_ f: borrowing Frame, _ emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        if f.pixelFormat != pixelFormat || f.width != width || f.height != height {
            if scaler == nil || scalerFormat != f.pixelFormat {
                scaler = try Scaler(fromWidth: f.width, height: f.height, pixelFormat: f.pixelFormat ?? "none",
                                    toWidth: width, height: height, pixelFormat: pixelFormat)
                scalerFormat = f.pixelFormat
            }
            try scaler!.scale(f, into: converted)
            while try !encoder.send(converted) { try drainEncoder(emit) }
            try encoderInput?(converted)
        } else {
            while try !encoder.send(f) { try drainEncoder(emit) }
            try encoderInput?(f)
        }
        try drainEncoder(emit)
    }

    /// The held frame (constant frame rate) once for each output slot in `slots`.
    private func submitHeld(_ slots: Range<Int64>, _ emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        // A frame repeated for half a day is a broken timestamp, not a still.
        let (count, overflow) = slots.upperBound.subtractingReportingOverflow(slots.lowerBound)
        let perSecond = rateConverter.map { max($0.outputTimeBase.denominator / max($0.outputTimeBase.numerator, 1), 1) } ?? 1
        if overflow || count / Int64(perSecond) > AudioAssembler.longestFillSeconds {
            throw MediaError.invalid("could not transcode", path: stream.file.path, stream: stream.index,
                                     message: "--fps would repeat one frame for more than \(AudioAssembler.longestFillSeconds / 3600) hours at output frame \(slots.lowerBound); the video's timestamps jump (a broken file)")
        }
        for n in slots {
            held.pts = n
            try submit(held, emit)
        }
    }

    private func drainEncoder(_ emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        while case .ready = try encoder.receive(into: encoded) {
            try metadata?.apply(to: encoded)
            var t = encoded.timing
            // At a constant rate every packet lasts one tick of 1/fps.
            t.duration = rateConverter != nil ? 1 : frameTimes.packetDuration(pts: t.pts, duration: t.duration)
            encoded.timing = t
            framesEncoded += 1
            try encoderOutput?(encoded)
            try emit(encoded)
        }
    }
}
