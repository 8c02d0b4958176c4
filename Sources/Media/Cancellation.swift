import CFFmpeg
import Synchronization

/// A flag that stops long work: checked by pipelines between packets and by
/// libavformat's interrupt callback inside blocking reads and writes.
public final class Cancellation: Sendable {
    private let state = Atomic<Int32>(0)

    public init() {}

    /// The process-wide flag that the CLI's signal handlers set.
    public static let shared = Cancellation()

    /// Records why work should stop (a signal number, or any positive value).
    public func cancel(reason: Int32 = 1) {
        _ = state.compareExchange(expected: 0, desired: max(reason, 1), ordering: .sequentiallyConsistent)
    }

    public var isCancelled: Bool { state.load(ordering: .relaxed) != 0 }
    /// The value given to `cancel(reason:)`, or 0.
    public var reason: Int32 { state.load(ordering: .relaxed) }

    /// Throws `MediaError.interrupted` once cancelled.
    public func check() throws(MediaError) {
        if isCancelled { throw MediaError.interrupted }
    }

    /// An `AVIOInterruptCB` that reads this flag; the caller keeps `self` alive
    /// as long as the callback is installed.
    var interruptCallback: AVIOInterruptCB {
        AVIOInterruptCB(
            callback: { opaque in
                guard let opaque else { return 0 }
                return Unmanaged<Cancellation>.fromOpaque(opaque).takeUnretainedValue().isCancelled ? 1 : 0
            },
            opaque: Unmanaged.passUnretained(self).toOpaque())
    }
}
