import Dispatch
import Glibc
import Media

/// SIGINT/SIGTERM stop work cleanly: the first sets the shared cancellation
/// flag (pipelines stop, temporaries are removed, exit 130/143); a second
/// signal, or a pipeline that does not stop within a few seconds, removes the
/// temporaries and exits at once.
enum Signals {
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
    nonisolated(unsafe) private static var mainThread = pthread_self()

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
                Cancellation.shared.cancel(reason: sig)
                pthread_kill(mainThread, SIGUSR2)
                DispatchQueue.global().asyncAfter(deadline: .now() + 5) { stopNow(sig) }
            }
            source.resume()
            sources.append(source)
        }
    }

    private static func stopNow(_ sig: Int32) -> Never {
        TemporaryFiles.shared.removeAll()
        Terminal.error("avtool: interrupted (\(name(sig))); no output written")
        _exit(128 + sig)
    }

    static func name(_ sig: Int32) -> String {
        switch sig {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        default: "signal \(sig)"
        }
    }
}
