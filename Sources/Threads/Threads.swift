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

    /// Starts `body` on a thread nobody joins (`pthread_detach`): its
    /// resources go back when it returns. For work whose end is reported
    /// another way (a continuation resumed by `body`).
    public static func detach(stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) throws(StartFailure) {
        let thread = try WorkerThread(stackSize: stackSize, body)
        thread.joined = true
        pthread_detach(thread.thread)
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

/// Values passed from one thread to another in batches, in order: one
/// lock a batch, not a value. The producer waits while `limit` batches
/// are queued; `finish` ends it (with an error the consumer meets after
/// the last batch); the consumer's `close` makes the producer's `put`
/// return false.
public final class BatchQueue<Value, Failure: Error>: @unchecked Sendable {
    private var batches: [[Value]] = []
    private var finished = false
    private var closed = false
    private var failure: Failure?
    private let limit: Int
    private let changed = Condition()

    public init(limit: Int = 32) { self.limit = limit }

    /// Producer: queues `batch`; false once the consumer has closed the queue.
    public func put(_ batch: [Value]) -> Bool {
        changed.withLock {
            while batches.count >= limit && !closed { changed.wait() }
            guard !closed else { return false }
            batches.append(batch)
            changed.broadcast()
            return true
        }
    }

    /// Producer: no more batches; `error`, if any, is what stopped it.
    public func finish(throwing error: Failure?) {
        changed.withLock {
            finished = true
            failure = error
            changed.broadcast()
        }
    }

    /// Consumer: the next batch, nil after the last; throws the producer's
    /// error once the batches before it are taken.
    public func take() throws(Failure) -> [Value]? {
        let (batch, error): ([Value]?, Failure?) = changed.withLock {
            while batches.isEmpty && !finished { changed.wait() }
            if batches.isEmpty { return (nil, failure) }
            let b = batches.removeFirst()
            changed.broadcast()
            return (b, nil)
        }
        if let error { throw error }
        return batch
    }

    /// Consumer: every batch queued now, without waiting (none: `[]`);
    /// throws the producer's error once the batches before it are taken.
    public func takeQueued() throws(Failure) -> [[Value]] {
        let (queued, error): ([[Value]], Failure?) = changed.withLock {
            let b = batches
            batches.removeAll()
            if !b.isEmpty { changed.broadcast() }
            return (b, b.isEmpty && finished ? failure : nil)
        }
        if let error { throw error }
        return queued
    }

    /// Consumer: takes no more; a waiting producer is woken and told to stop.
    public func close() {
        changed.withLock {
            closed = true
            batches.removeAll()
            changed.broadcast()
        }
    }
}

/// A value handed to a `WorkerThread` and taken back after `join()`: the
/// two threads never use it at once.
public final class HandedOver<Value>: @unchecked Sendable {
    public var value: Value
    public init(_ value: Value) { self.value = value }
}
