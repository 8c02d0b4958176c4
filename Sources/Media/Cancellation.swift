import CFFmpeg
import Synchronization

/// A flag that stops long work: checked by pipelines between packets and by
/// libavformat's interrupt callback inside blocking reads and writes.
public final class Cancellation: Sendable {
    private let state = Atomic<Int32>(0)
    /// A flag whose stop is this one's too (work split into parts that also
    /// stop one another).
    private let parent: Cancellation?

    public init() { parent = nil }

    /// A flag set by its own `cancel` or by `parent`'s.
    public init(parent: Cancellation) { self.parent = parent }

    /// The process-wide flag that the CLI's signal handlers set.
    public static let shared = Cancellation()

    /// Records why work should stop (a signal number, or any positive value).
    public func cancel(reason: Int32 = 1) {
        _ = state.compareExchange(expected: 0, desired: max(reason, 1), ordering: .sequentiallyConsistent)
    }

    public var isCancelled: Bool { state.load(ordering: .relaxed) != 0 || parent?.isCancelled == true }
    /// The value given to `cancel(reason:)` (this flag's, else its parent's), or 0.
    public var reason: Int32 {
        let own = state.load(ordering: .relaxed)
        return own != 0 ? own : parent?.reason ?? 0
    }

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
