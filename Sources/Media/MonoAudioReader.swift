import CFFmpeg
import Sync

/// Reads one audio stream front to back as mono 32-bit float samples at a
/// chosen rate, a block at a time, so memory does not grow with the file:
/// decoded, downmixed and resampled by libswresample, and laid on the
/// stream's own timeline by its timestamps (a gap becomes silence, an
/// overlap is trimmed). Sample 0 is the stream's first audible sample.
public final class MonoAudioReader {
    public let stream: InputStream
    public let sampleRate: Int32
    /// The stream's first audible sample on the file's timeline (s).
    public let startSeconds: Double
    /// The stream's length (s), from the stream or the container, if known.
    public let durationSeconds: Double?
    /// Samples handed out (or skipped) so far.
    public private(set) var position: Int64 = 0

    private let decoder: Decoder
    private let queue: AudioQueue
    private let packet: Packet
    private let frame: Frame
    private var assembler: AudioAssembler
    private let timeBase: Rational
    private var startTicks: Int64?
    private var ended = false

    /// Reads `stream` (its file is read for this stream only from here on).
    public init(stream: InputStream, sampleRate: Int32) throws(MediaError) {
        guard let tb = stream.timeBase, sampleRate > 0 else {
            throw MediaError.invalid("could not read audio", path: stream.file.path, stream: stream.index,
                                     message: "the stream has no valid time base")
        }
        self.stream = stream
        self.sampleRate = sampleRate
        timeBase = tb
        stream.file.discardAll(except: [stream.index])
        decoder = try Decoder(stream: stream, threads: 1)
        queue = try AudioQueue.monoFloat(sampleRate: sampleRate)
        packet = try Packet()
        frame = try Frame()
        startTicks = stream.startTime?.value
        startSeconds = stream.startTime?.seconds ?? 0
        let container = stream.file.duration.map { $0.seconds - (stream.file.startTime?.seconds ?? 0) }
        durationSeconds = stream.duration?.seconds ?? container
        // Exact mode with a small tolerance: timestamps are trusted to 1 ms.
        assembler = AudioAssembler(sampleRate: sampleRate, toleranceSamples: Int64(sampleRate / 1000))
        assembler.start(at: 0)
    }

    /// The next `count` samples (fewer only at the end of the stream).
    public func read(_ count: Int) throws(MediaError) -> [Float] {
        var out: [Float] = []
        out.reserveCapacity(count)
        while out.count < count {
            if queue.count == 0 {
                if ended { break }
                try decodeMore()
                continue
            }
            try queue.take(count - out.count, appendingTo: &out)
        }
        position += Int64(out.count)
        return out
    }

    /// Skips `count` samples; returns how many there were.
    @discardableResult
    public func skip(_ count: Int64) throws(MediaError) -> Int64 {
        var left = count
        while left > 0 {
            let n = try read(Int(min(left, 1 << 16))).count
            if n == 0 { break }
            left -= Int64(n)
        }
        return count - left
    }

    /// Decodes until something is queued or the stream ends.
    private func decodeMore() throws(MediaError) {
        while queue.count == 0 && !ended {
            if try stream.file.read(into: packet) {
                guard packet.streamIndex == stream.index else { continue }
                if packet.isCorrupt { throw stream.file.corruptPacketError(stream: stream.index) }
                while try !decoder.send(packet) { try drain() }
                try drain()
            } else {
                try decoder.sendEnd()
                try drain()
                try queue.flush()
                ended = true
            }
        }
    }

    private func drain() throws(MediaError) {
        let tb = Rational(1, sampleRate)!
        while case .ready = try decoder.receive(into: frame) {
            var at: Int64?
            if let ts = frame.bestEffortTimestamp {
                if startTicks == nil { startTicks = ts }
                at = rescale(ts &- startTicks!, from: timeBase, to: tb)
            }
            let count = queue.convertedCount(of: frame)
            let step = assembler.place(at: at, samples: count)
            if step.silence > 0 { try queue.appendSilence(step.silence) }
            if step.keep > 0 { try queue.append(frame, trim: step.trimStart, keep: step.cut(from: count)) }
            frame.unref()
        }
    }
}
