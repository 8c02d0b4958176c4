import Dispatch
import Media

/// `--timeout`: stops the work like a signal does once the time is up
/// (no output, no temporary left), exit status 124.
enum Deadline {
    /// The cancellation reason for a timeout (not a signal number).
    static let reason: Int32 = 1 << 16
    nonisolated(unsafe) private(set) static var text = ""

    /// Starts the clock; `limit` was checked to be positive.
    static func arm(_ limit: Duration, text: String) {
        self.text = text
        let micro = limit.components.seconds * 1_000_000 + limit.components.attoseconds / 1_000_000_000_000
        DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(Int(micro))) {
            Signals.stop(reason: reason)
        }
    }
}
