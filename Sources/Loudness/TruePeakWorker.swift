import Sync
import Threads

/// A stream's `TruePeakMeter` on a thread of its own: the oversampling
/// filter is most of the meter's work, and runs beside the decoding and
/// K-weighting (ffmpeg's own pipeline is one thread). Each decoded frame's
/// planes are copied and queued; `finish` waits for the last.
final class TruePeakWorker {
    private let queue = BatchQueue<Stretch, Never>(limit: 64)
    private let meter: HandedOver<TruePeakMeter>
    private let thread: WorkerThread
    private var finished = false

    /// One frame's samples, channel after channel.
    struct Stretch: @unchecked Sendable {
        let samples: [Float]
        let count: Int
    }

    /// nil when no thread can be started (the caller measures inline).
    init?(sampleRate: Int, channels: Int) {
        let meter = HandedOver(TruePeakMeter(sampleRate: sampleRate, channels: channels))
        let queue = self.queue
        guard let thread = try? WorkerThread({
            while let batch = queue.take() {
                for stretch in batch { Self.measure(stretch, channels: channels, into: &meter.value) }
            }
        }) else { return nil }
        self.meter = meter
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
        _ = queue.put([Stretch(samples: samples, count: count)])
    }

    /// Waits for every queued frame; the meter.
    func finish() -> TruePeakMeter {
        finished = true
        queue.finish(throwing: nil)
        thread.join()
        return meter.value
    }

    private static func measure(_ s: Stretch, channels: Int, into meter: inout TruePeakMeter) {
        s.samples.withUnsafeBufferPointer { b in
            let planes = (0..<channels).map { b.baseAddress! + $0 * s.count }
            planes.withUnsafeBufferPointer { meter.add($0, count: s.count) }
        }
    }
}
