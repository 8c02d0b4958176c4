import ArgumentParser
import Glibc
import Media

/// Runs a verb's work and turns a failure into one line on stderr and an
/// exit status: 1 for errors, 128+signal when interrupted, 124 on --timeout.
/// With `json`, the failure is also a JSON object on stdout (`ErrorReport`).
func reportingFailures<T>(json: Bool = false, _ work: () throws(MediaError) -> T) throws -> T {
    do {
        return try work()
    } catch MediaError.interrupted {
        let (message, status) = Signals.outcome(Cancellation.shared.reason)
        Terminal.error(message)
        if json {
            let code = status == 124 ? "timeout" : "interrupted"
            // The message without the line's "avtool: error: " (or "avtool: "), as every JSON error gives it.
            let bare = message.hasPrefix("avtool: error: ") ? String(message.dropFirst(15))
                : message.hasPrefix("avtool: ") ? String(message.dropFirst(8)) : message
            Terminal.output(jsonText(ErrorReport(error: .init(code: code, message: bare, exitStatus: status))))
        }
        throw ExitCode(status)
    } catch {
        Terminal.error("avtool: error: \(error.commandLineText)")
        if json { Terminal.output(jsonText(ErrorReport(error))) }
        throw ExitCode.failure
    }
}

/// A failure as `--json` prints it: `{"error": {"code": …, "message": …}}`.
/// `code` is stable (README, "Exit status and error codes"); the message is for people.
struct ErrorReport: Encodable {
    struct Body: Encodable {
        var code: String
        var message: String
        var operation: String?
        var path: String?
        var stream: Int?
        var hint: String?
        var options: [String]?
        var exitStatus: Int32
    }
    var error: Body

    init(error: Body) { self.error = error }

    init(_ e: MediaError) {
        error = Body(code: e.category.rawValue, message: e.commandLineText, operation: e.operation, path: e.path,
                     stream: e.stream, hint: e.hint ?? e.remedy?.flagText, options: e.options.isEmpty ? nil : e.options,
                     exitStatus: ExitCode.failure.rawValue)
    }

    /// A usage error (the command line itself), exit status 64.
    static func usage(_ message: String) -> ErrorReport {
        ErrorReport(error: Body(code: "usage", message: message, exitStatus: ExitCode.validationFailure.rawValue))
    }
}
