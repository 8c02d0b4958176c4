import ArgumentParser
import Media

/// Runs a verb's work and turns a failure into one line on stderr and an
/// exit status: 1 for errors, 128+signal when interrupted, 124 on --timeout.
func reportingFailures<T>(_ work: () throws(MediaError) -> T) throws -> T {
    do {
        return try work()
    } catch MediaError.interrupted {
        let (message, status) = Signals.outcome(Cancellation.shared.reason)
        Terminal.error(message)
        throw ExitCode(status)
    } catch {
        Terminal.error("avtool: error: \(error.commandLineText)")
        throw ExitCode.failure
    }
}
