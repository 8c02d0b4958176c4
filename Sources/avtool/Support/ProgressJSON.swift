import ArgumentParser
import Dispatch
import Glibc
import Media

/// `--progress json`: machine-readable progress as JSON Lines, on stderr or
/// on the descriptor `--progress-fd` names, for job queues and GUIs.
///
/// A line at least once a second while work runs (a timer repeats the last
/// state when the work reports nothing new), each with `percent` (never
/// lower than the line before), the output position, speed, ETA, elapsed
/// time and the bytes of the outputs written so far (`OutputBytes`: their sizes, intermediate files left out); then one `end` line with
/// `status` `ok` (percent 100) or `error`.
///
///     {"event":"progress","percent":41.5,"out_time_s":124.2,"speed":8.1,"eta_s":21.7,"elapsed_s":15.3,"bytes_written":52428800}
final class ProgressJSON: @unchecked Sendable {
    private let fd: Int32
    private let lock = Locked(State())
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private let extra: String

    private struct State {
        var percent: Double?
        var position: Double?
        var lastLine: ContinuousClock.Instant?
        var ended = false
        /// More `,"key":value` pairs for the next lines (a batch's running jobs).
        var fragment = ""
    }

    /// - Parameter fields: more `"key":value` pairs every line carries (a batch job's output).
    init(fd: Int32, fields: [(String, String)] = []) {
        self.fd = fd
        start = clock.now
        extra = fields.map { ",\(Self.quoted($0.0)):\(Self.quoted($0.1))" }.joined()
        tick()
    }

    /// New state from the work; a line if half a second passed since the last.
    func update(fraction: Double?, position: Double?, fragment: String? = nil) {
        let line = lock.withLock { s -> Bool in
            if let fragment { s.fragment = fragment }
            if let f = fraction, f.isFinite { s.percent = max(s.percent ?? 0, min(max(f, 0), 1) * 100) }
            if let p = position, p.isFinite { s.position = p }
            guard !s.ended else { return false }
            if let last = s.lastLine, clock.now - last < .milliseconds(500) { return false }
            return true
        }
        if line { emit(event: "progress") }
    }

    /// The last line: `ok` at 100 %, or `error`.
    func end(ok: Bool) {
        let first = lock.withLock { s -> Bool in
            defer { s.ended = true }
            if ok { s.percent = 100 }
            return !s.ended
        }
        if first { emit(event: "end", status: ok ? "ok" : "error", force: true) }
    }

    /// Repeats the state until the end, so a line comes at least once a second.
    private func tick() {
        // Checked four times a second, a line when 0.75 s passed: a loaded
        // machine's late wake-ups still leave lines less than a second apart.
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(250)) { [self] in
            let due = lock.withLock { s -> Bool? in
                guard !s.ended else { return nil }
                guard let last = s.lastLine else { return true }
                return clock.now - last >= .milliseconds(750)
            }
            guard let due else { return }
            if due { emit(event: "progress") }
            tick()
        }
    }

    private func emit(event: String, status: String? = nil, force: Bool = false) {
        let now = clock.now
        let text: String? = lock.withLock { s in
            guard force || !s.ended else { return nil }
            s.lastLine = now
            let elapsed = (now - start).seconds
            var line = "{\"event\":\"\(event)\""
            if let status { line += ",\"status\":\"\(status)\"" }
            if let p = s.percent { line += ",\"percent\":\(Self.number(p, 2))" }
            if let t = s.position { line += ",\"out_time_s\":\(Self.number(t, 3))" }
            if let t = s.position, elapsed > 0 { line += ",\"speed\":\(Self.number(t / elapsed, 2))" }
            if let p = s.percent, p > 0.5, p < 100, elapsed > 0 {
                line += ",\"eta_s\":\(Self.number(elapsed * (100 - p) / p, 1))"
            }
            line += ",\"elapsed_s\":\(Self.number(elapsed, 3))"
            line += ",\"bytes_written\":\(OutputBytes.total)"
            return line + s.fragment + extra + "}\n"
        }
        guard let text else { return }
        write(text)
    }

    /// A line of its own (`{"event":"job",…}`), between the progress lines.
    func event(_ fields: [(String, String)]) {
        let done = lock.withLock { $0.ended }
        guard !done else { return }
        write("{" + fields.map { "\(Self.quoted($0.0)):\($0.1)" }.joined(separator: ",") + "}\n")
    }

    private let writing = Locked(())

    private func write(_ text: String) {
        writing.withLock { _ in Terminal.write(fd, text) }
    }

    static func number(_ v: Double, _ digits: Int) -> String {
        v.isFinite ? fixed(v, digits) : "null"
    }

    static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where u.value < 0x20: out += "\\u" + String(repeating: "0", count: 4 - String(u.value, radix: 16).count) + String(u.value, radix: 16)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}

/// What `--progress` can write.
enum ProgressFormat: String, ExpressibleByArgument, CaseIterable {
    case json
}
