/// Runs bodies on threads of their own, at most `capacity` units at once:
/// each body holds `weight` units while it runs (a batch's transcode the
/// whole pool, its copies one each; a chunked transcode's chunks one each).
/// `start` waits for room; once the pool is stopped, nothing more starts
/// and those running finish. Where no thread can be started, a body runs
/// on the caller's.
public final class WorkerPool: @unchecked Sendable {
    public let capacity: Int
    private let cond = Condition()
    private var free: Int
    private var stopped = false
    private var threads: [WorkerThread] = []
    private let stackSize: Int?

    public init(capacity: Int, stackSize: Int? = nil) {
        self.capacity = max(capacity, 1)
        free = self.capacity
        self.stackSize = stackSize
    }

    /// Waits until `weight` units are free (at most the capacity), then
    /// starts `body` unless the pool was stopped or `unless()` is true by
    /// then. Returns whether it started.
    @discardableResult
    public func start(weight: Int = 1, unless: () -> Bool = { false },
                      _ body: @escaping @Sendable () -> Void) -> Bool {
        let units = min(max(weight, 1), capacity)
        cond.lock()
        while free < units && !stopped { cond.wait() }
        if stopped || unless() {
            stopped = true
            cond.unlock()
            return false
        }
        free -= units
        cond.unlock()
        let run: @Sendable () -> Void = { [self] in
            body()
            // The units return only once the body is done, so `wait` ends after it.
            cond.lock()
            free += units
            cond.broadcast()
            cond.unlock()
        }
        if let t = try? WorkerThread(stackSize: stackSize, run) {
            cond.withLock { threads.append(t) }
        } else {
            run()
        }
        return true
    }

    /// Nothing more starts; the bodies running go on to their end.
    public func stop() {
        cond.lock()
        stopped = true
        cond.broadcast()
        cond.unlock()
    }

    public var isStopped: Bool { cond.withLock { stopped } }

    /// Waits for every body started, and joins their threads.
    public func wait() {
        cond.lock()
        while free < capacity { cond.wait() }
        let done = threads
        threads.removeAll()
        cond.unlock()
        for t in done { t.join() }
    }
}
