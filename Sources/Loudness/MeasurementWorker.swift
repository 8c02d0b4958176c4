import Sync
import Threads

/// A stream's `LoudnessMeasurement` on a thread of its own, beside the
/// decoding (ffmpeg's own pipeline is one thread): each decoded frame's
/// planes are copied and queued; `finish` waits for the last.
final class MeasurementWorker {
    private let queue = BatchQueue<Stretch, Never>(limit: 8)
    private let measurement: HandedOver<LoudnessMeasurement>
    private let thread: WorkerThread
    private var finished = false
    /// Frames not yet queued: handed over some at a time, since every
    /// hand-over may wake the thread.
    private var pending: [Stretch] = []
    private var pendingSamples = 0
    static let batchSamples = 16384

    /// One frame's samples, channel after channel.
    struct Stretch: Sendable {
        let samples: [Float]
        let count: Int
    }

    /// nil when no thread can be started (the caller measures inline).
    init?(_ measurement: LoudnessMeasurement) {
        let handed = HandedOver(measurement)
        let queue = self.queue, channels = measurement.channelCount
        guard let thread = try? WorkerThread({
            while let batch = queue.take() {
                for stretch in batch { Self.measure(stretch, channels: channels, into: &handed.value) }
            }
        }) else { return nil }
        self.measurement = handed
        self.thread = thread
    }

    deinit {
        // Left before `finish` (a failure): no more batches, and the thread ends.
        if !finished {
            queue.close()
            queue.finish(throwing: nil)
            thread.join()
        }
    }

    /// Queues a copy of `count` samples of every channel.
    func send(_ channels: UnsafeBufferPointer<UnsafePointer<Float>>, count: Int) {
        var samples = [Float](repeating: 0, count: channels.count * count)
        samples.withUnsafeMutableBufferPointer { b in
            for c in channels.indices { (b.baseAddress! + c * count).update(from: channels[c], count: count) }
        }
        pending.append(Stretch(samples: samples, count: count))
        pendingSamples += count
        if pendingSamples >= Self.batchSamples { handOver() }
    }

    private func handOver() {
        if !pending.isEmpty { _ = queue.put(pending) }
        pending = []
        pendingSamples = 0
    }

    /// Waits for every queued frame; the measurement.
    func finish() -> LoudnessMeasurement {
        finished = true
        handOver()
        queue.finish(throwing: nil)
        thread.join()
        return measurement.value
    }

    private static func measure(_ s: Stretch, channels: Int, into m: inout LoudnessMeasurement) {
        s.samples.withUnsafeBufferPointer { b in
            let planes = (0..<channels).map { b.baseAddress! + $0 * s.count }
            planes.withUnsafeBufferPointer { m.add($0, count: s.count) }
        }
    }
}
