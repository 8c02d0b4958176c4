#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A thread of its own running `body` (`pthread_create`), joined by `join()`
/// (and by deinit, should nobody have). What `body` captures is its alone
/// until `join()` returns.
public final class WorkerThread: @unchecked Sendable {
    private var thread = pthread_t()
    private var joined = false

    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    public struct StartFailure: Error {
        /// The `pthread_create` error number.
        public let code: Int32
    }

    /// Starts `body`, on a stack of `stackSize` bytes when given.
    public init(stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) throws(StartFailure) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        let box = Unmanaged.passRetained(Body(body)).toOpaque()
        let r = pthread_create(&thread, &attributes, { arg in
            Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue().run()
            return nil
        }, box)
        guard r == 0 else {
            Unmanaged<Body>.fromOpaque(box).release()
            joined = true
            throw StartFailure(code: r)
        }
    }

    /// Waits for the body to return.
    public func join() {
        guard !joined else { return }
        joined = true
        pthread_join(thread, nil)
    }

    deinit { join() }
}

/// A pthread mutex with a condition variable (what `NSCondition` is),
/// which thread sanitizer sees through its pthread interceptors.
public final class Condition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }
    /// Unlocks, waits for a `broadcast`, locks again. Call it locked, in a loop.
    public func wait() { pthread_cond_wait(cond, mutex) }
    public func broadcast() { pthread_cond_broadcast(cond) }

    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
