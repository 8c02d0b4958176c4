import CFFmpeg
import Media
import Threads

/// An audio `Encoder` on a thread of its own, so encoding overlaps with the
/// decoding and processing before it (a limiter): frames go in, in order, a
/// batch at a time; packets come back in order, as the encoder makes them,
/// to be written on the caller's thread (the muxer stays on one thread).
/// The encoder is the stage's alone until `finish` returns: the caller
/// reads only what opening it fixed (its frame size, rate, time base).
final class EncoderStage {
    /// A packet passed back from the encoder's thread (one owner at a time).
    final class PacketBox: @unchecked Sendable {
        let packet: Packet
        init(_ packet: consuming Packet) { self.packet = packet }
    }

    private let inbox = BatchQueue<FrameBox, Never>(limit: 4)
    /// Unbounded: the encoder's thread never waits on the caller, who may be
    /// waiting on `inbox`; what it holds is bounded by the frames in `inbox`.
    private let outbox = BatchQueue<PacketBox, MediaError>(limit: Int.max)
    private let thread: WorkerThread
    private var pending: [FrameBox] = []
    private var finished = false
    static let batchFrames = 8

    /// nil when no thread can be started (the caller encodes inline).
    init?(_ encoder: Encoder) {
        let work = HandedOver((encoder, inbox, outbox))
        guard let thread = try? WorkerThread({
            let (encoder, inbox, outbox) = work.value
            do throws(MediaError) {
                while let batch = inbox.take() {
                    var made: [PacketBox] = []
                    for box in batch {
                        while try !encoder.send(box.frame) { try Self.receive(encoder, into: &made) }
                        try Self.receive(encoder, into: &made)
                    }
                    if !made.isEmpty && !outbox.put(made) { return }
                }
                try encoder.sendEnd()
                var made: [PacketBox] = []
                try Self.receive(encoder, into: &made)
                if !made.isEmpty { _ = outbox.put(made) }
                outbox.finish(throwing: nil)
            } catch {
                inbox.close()
                outbox.finish(throwing: error)
            }
        }) else { return nil }
        self.thread = thread
    }

    deinit {
        // Left before `finish` (a failure): no more frames, and the thread ends.
        if !finished {
            inbox.finish(throwing: nil)
            outbox.close()
            thread.join()
        }
    }

    private static func receive(_ encoder: Encoder, into made: inout [PacketBox]) throws(MediaError) {
        while true {
            let packet = try Packet()
            guard case .ready = try encoder.receive(into: packet) else { return }
            made.append(PacketBox(packet))
        }
    }

    /// Queues `frame` for the encoder (taken: it is blank afterwards); the
    /// packets made so far go to `emit`.
    func send(_ frame: borrowing Frame, emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        let box = FrameBox(try Frame())
        box.frame.take(from: frame)
        pending.append(box)
        if pending.count >= Self.batchFrames { try handOver() }
        for batch in try outbox.takeQueued() {
            for p in batch { try emit(p.packet) }
        }
    }

    /// No more frames: the encoder drained, every packet left to `emit`.
    func finish(emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) {
        try handOver()
        finished = true
        inbox.finish(throwing: nil)
        defer { thread.join() }
        while let batch = try outbox.take() {
            for p in batch { try emit(p.packet) }
        }
    }

    /// Passes the pending frames; a stopped encoder's error is thrown.
    private func handOver() throws(MediaError) {
        guard !pending.isEmpty else { return }
        let batch = pending
        pending = []
        guard inbox.put(batch) else {
            // The encoder's thread failed: its error is after its last packets.
            while try outbox.take() != nil {}
            throw MediaError(code: AVTOOL_AVERROR_EXIT, operation: "the encoder's thread ended early")
        }
    }
}
