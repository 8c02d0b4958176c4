import ArgumentParser
import Media

/// Runs a verb's work and turns a failure into one line on stderr and an
/// exit status: 1 for errors, 128+signal when interrupted.
func reportingFailures<T>(_ work: () throws(MediaError) -> T) throws -> T {
    do {
        return try work()
    } catch MediaError.interrupted {
        let sig = Cancellation.shared.reason
        Terminal.error("avtool: interrupted (\(Signals.name(sig))); no output written")
        throw ExitCode(sig > 0 ? 128 + sig : 130)
    } catch {
        Terminal.error("avtool: error: \(error)")
        throw ExitCode.failure
    }
}
