import Dispatch
import Glibc
import Media

/// SIGINT/SIGTERM stop work cleanly: the first sets the shared cancellation
/// flag (pipelines stop, temporaries are removed, exit 130/143); a second
/// signal, or a pipeline that does not stop within a few seconds, removes the
/// temporaries and exits at once.
enum Signals {
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    static func install() {
        guard sources.isEmpty else { return }
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                if Cancellation.shared.isCancelled { stopNow(sig) }
                Cancellation.shared.cancel(reason: sig)
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
