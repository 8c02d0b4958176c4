import Dispatch
import Glibc
import Media

/// SIGINT/SIGTERM stop work cleanly: the first sets the shared cancellation
/// flag and wakes every thread doing media work out of a blocking read
/// (pipelines stop, temporaries are removed, exit 130/143); a second
/// signal, or a pipeline that does not stop within a few seconds, removes the
/// temporaries and exits at once.
enum Signals {
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
    nonisolated(unsafe) private static var mainThread = pthread_self()
    /// Threads doing media work besides the main one (batch jobs), woken
    /// with it. A thread is in the set only while it runs, and `stop` signals
    /// under the same lock, so no thread is signalled after it has ended.
    private static let workers = Locked<Set<pthread_t>>([])

    static func install() {
        guard sources.isEmpty else { return }
        mainThread = pthread_self()
        // A no-op handler without SA_RESTART: signalling the main thread with
        // it makes a blocking read (a FIFO, a stalled disk) return EINTR, so
        // libavformat checks the interrupt callback and stops.
        var wake = sigaction()
        wake.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&wake.sa_mask)
        wake.sa_flags = 0
        sigaction(SIGUSR2, &wake, nil)
        // A parent may have left these blocked in the mask we inherited.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for sig in [SIGUSR2, SIGINT, SIGTERM] { sigaddset(&unblock, sig) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                if Cancellation.shared.isCancelled { stopNow(sig) }
                stop(reason: sig)
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Stops the work for `reason` (a signal number, or `Deadline.reason`):
    /// sets the shared cancellation flag, wakes the main thread out of a
    /// blocking read, and exits at once if the work has not stopped within
    /// a few seconds.
    static func stop(reason: Int32) {
        Cancellation.shared.cancel(reason: reason)
        pthread_kill(mainThread, SIGUSR2)
        workers.withLock { for t in $0 { pthread_kill(t, SIGUSR2) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 5) { stopNow(Cancellation.shared.reason) }
    }

    /// Runs `work` on this thread so that a stop wakes it out of a blocking
    /// read too (a batch job on a worker thread).
    static func wakeable<T, E: Error>(_ work: () throws(E) -> T) throws(E) -> T {
        let me = pthread_self()
        workers.withLock { _ = $0.insert(me) }
        defer { workers.withLock { _ = $0.remove(me) } }
        return try work()
    }

    private static func stopNow(_ reason: Int32) -> Never {
        TemporaryFiles.shared.removeAll()
        let (message, status) = outcome(reason)
        Terminal.error(message)
        _exit(status)
    }

    /// The line and exit status for work stopped for `reason`: 128 + the
    /// signal number, or 124 (as timeout(1)) for `--timeout`.
    static func outcome(_ reason: Int32) -> (message: String, status: Int32) {
        if reason == Deadline.reason {
            return ("avtool: error: timed out after \(Deadline.text) (--timeout); no output written", 124)
        }
        return ("avtool: interrupted (\(name(reason))); no output written", reason > 0 ? 128 + reason : 130)
    }

    static func name(_ sig: Int32) -> String {
        switch sig {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        default: "signal \(sig)"
        }
    }
}
