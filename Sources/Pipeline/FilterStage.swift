import CFFmpeg
import Media
import Threads

/// A frame passed between threads (one owner at a time).
final class FrameBox: @unchecked Sendable {
    let frame: Frame
    init(_ frame: consuming Frame) { self.frame = frame }
}

/// A `FrameFilter` (tone mapping) on a thread of its own, so filtering one
/// frame overlaps with encoding the frames before it: frames go in, in
/// order, and come out filtered, in the same order, at most `depth` frames
/// behind. Where no thread can be started, the filter runs in the caller.
final class FilterStage {
    private let filter: any FrameFilter
    private let inbox = BatchQueue<FrameBox, Never>(limit: 4)
    private let outbox = BatchQueue<FrameBox, MediaError>(limit: 4)
    private var thread: WorkerThread?
    /// Frames sent and not yet taken back.
    private var inFlight = 0
    static let depth = 2

    init(_ filter: any FrameFilter) {
        self.filter = filter
        let work = HandedOver((filter, inbox, outbox))
        thread = try? WorkerThread {
            let (filter, inbox, outbox) = work.value
            while let batch = inbox.take() {
                for box in batch {
                    do throws(MediaError) {
                        outbox.putOne(try Self.filtered(box, by: filter))
                    } catch {
                        outbox.finish(throwing: error)
                        return
                    }
                }
            }
            outbox.finish(throwing: nil)
        }
    }

    deinit {
        inbox.finish(throwing: nil)
        outbox.close()
        thread?.join()
    }

    private static func filtered(_ box: FrameBox, by filter: any FrameFilter) throws(MediaError) -> FrameBox {
        let out = FrameBox(try Frame())
        try filter.filter(box.frame, into: out.frame)
        out.frame.pts = box.frame.pts
        return out
    }

    /// Filters a reference to `frame`; `take` gets each filtered frame due.
    func send(_ frame: borrowing Frame, take: (borrowing Frame) throws(MediaError) -> Void) throws(MediaError) {
        let box = FrameBox(try Frame())
        guard av_frame_ref(box.frame.pointer, frame.pointer) >= 0 else {
            throw MediaError(code: AVTOOL_AVERROR_ENOMEM, operation: "could not pass a frame to the filter")
        }
        guard thread != nil else { return try take(Self.filtered(box, by: filter).frame) }
        _ = inbox.put([box])
        inFlight += 1
        while inFlight > Self.depth { try takeOne(take) }
    }

    /// Every frame still in the stage, filtered.
    func flush(take: (borrowing Frame) throws(MediaError) -> Void) throws(MediaError) {
        while inFlight > 0 { try takeOne(take) }
    }

    private func takeOne(_ take: (borrowing Frame) throws(MediaError) -> Void) throws(MediaError) {
        guard let batch = try outbox.take() else {
            throw MediaError(code: AVTOOL_AVERROR_EXIT, operation: "the filter thread ended early")
        }
        inFlight -= batch.count
        for box in batch { try take(box.frame) }
    }
}

extension BatchQueue {
    /// Producer: queues one value (a closed queue takes no more).
    fileprivate func putOne(_ value: Value) { _ = put([value]) }
}
