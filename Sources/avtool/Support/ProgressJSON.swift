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
/// `status` `ok` (percent 100) or `error`. Each line is a `ProgressRecord`
/// written by `jsonLine`, the encoding of the reports:
///
///     {"bytes_written":52428800,"elapsed_s":15.3,"eta_s":21.7,"event":"progress","out_time_s":124.2,"percent":41.5,"speed":8.1}
///
/// Work with phases of its own (`transcode --quality`: `quality-search`,
/// then `encode`) adds `"phase"` to each line from the first phase on.
final class ProgressJSON: @unchecked Sendable {
    private let fd: Int32
    private let lock = Locked(State())
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private let extra: NamedStrings

    private struct State {
        var percent: Double?
        var position: Double?
        var lastLine: ContinuousClock.Instant?
        var ended = false
        /// More fields for the next lines (a batch's counts and running jobs).
        var more: (any Encodable & Sendable)?
    }

    /// - Parameter fields: more string fields every line carries, by their JSON names.
    init(fd: Int32, fields: [(String, String)] = []) {
        self.fd = fd
        start = clock.now
        extra = NamedStrings(pairs: fields)
        tick()
    }

    /// New state from the work; a line if half a second passed since the last.
    /// `more`: fields the next lines carry besides the record's (they replace those given before).
    func update(fraction: Double?, position: Double?, more: (any Encodable & Sendable)? = nil) {
        let line = lock.withLock { s -> Bool in
            if let more { s.more = more }
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
            let record = ProgressRecord(event: event, status: status, percent: s.percent, position: s.position,
                                        elapsed: (now - start).seconds, bytesWritten: OutputBytes.total)
            var parts: [any Encodable] = [record, extra]
            if let more = s.more { parts.append(more) }
            return jsonLine(Merged(parts: parts))
        }
        guard let text else { return }
        write(text)
    }

    /// A line of its own (a batch's `{"event":"job",…}`), between the progress lines.
    func event(_ line: some Encodable) {
        let done = lock.withLock { $0.ended }
        guard !done else { return }
        write(jsonLine(line))
    }

    private let writing = Locked(())

    private func write(_ text: String) {
        writing.withLock { _ in Terminal.write(fd, text) }
    }

    /// `v` to `digits` decimals, as the lines show it; not finite stays as it is.
    static func rounded(_ v: Double, _ digits: Int) -> Double {
        var scale = 1.0
        for _ in 0..<max(digits, 0) { scale *= 10 }
        return (v * scale).rounded() / scale
    }
}

/// A `progress` or `end` line's own fields; what is not known yet (a
/// position, a percent, an ETA) is left out.
struct ProgressRecord: Encodable {
    var event: String
    var status: String?
    var percent: Double?
    var outTimeS: Double?
    var speed: Double?
    var etaS: Double?
    var elapsedS: Double
    var bytesWritten: Int64

    init(event: String, status: String?, percent: Double?, position: Double?, elapsed: Double, bytesWritten: Int64) {
        let round = ProgressJSON.rounded
        self.event = event
        self.status = status
        self.percent = percent.map { round($0, 2) }
        outTimeS = position.map { round($0, 3) }
        speed = position.flatMap { elapsed > 0 ? round($0 / elapsed, 2) : nil }
        etaS = percent.flatMap { p in p > 0.5 && p < 100 && elapsed > 0 ? round(elapsed * (100 - p) / p, 1) : nil }
        elapsedS = round(elapsed, 3)
        self.bytesWritten = bytesWritten
    }
}

/// What a batch adds to each `--progress json` line: jobs done, of how many,
/// and each running job's percent.
struct BatchProgress: Encodable, Sendable {
    struct Job: Encodable, Sendable {
        var output: String
        var percent: Double
    }

    var done: Int
    var total: Int
    var jobs: [Job]
}

/// A job's start or end, a `--progress json` line of its own; an end says
/// how it went (`status`), in how long, and how many jobs are done.
struct BatchJobLine: Encodable {
    var event = "job"
    var status: String
    var output: String
    var seconds: Double?
    var detail: String?
    var done: Int?
    var total: Int?
}

/// Several values' fields in one JSON object: each encodes into the same one.
private struct Merged: Encodable {
    let parts: [any Encodable]

    func encode(to encoder: any Swift.Encoder) throws {
        for part in parts { try part.encode(to: encoder) }
    }
}

/// String fields whose names are known only at run time.
private struct NamedStrings: Encodable, Sendable {
    let pairs: [(String, String)]

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Swift.Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (name, value) in pairs { try container.encode(value, forKey: Key(stringValue: name)) }
    }
}

/// What `--progress` can write.
enum ProgressFormat: String, ExpressibleByArgument, CaseIterable {
    case json
}
