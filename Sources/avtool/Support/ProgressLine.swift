import Media
import Probe

/// One self-overwriting status line on stderr (only when stderr is a
/// terminal and not `--quiet`): percent, speed relative to real time, ETA.
final class ProgressLine {
    private let enabled: Bool
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private var lastDraw: ContinuousClock.Instant
    private var drawn = false

    init(quiet: Bool) {
        enabled = !quiet && Terminal.stderrIsTerminal
        start = clock.now
        lastDraw = start
    }

    var elapsed: Double { (clock.now - start).seconds }

    /// - Parameters:
    ///   - fraction: 0…1 if known.
    ///   - position: media seconds done, for the speed (× real time).
    func update(fraction: Double?, position: Double?, detail: String = "") {
        guard enabled else { return }
        let now = clock.now
        guard (now - lastDraw).seconds >= 0.2 else { return }
        lastDraw = now
        let t = elapsed
        var line = ""
        if let f = fraction { line += "\(fixed1(f * 100))%" }
        if let p = position, t > 0 { line += "  ×\(fixed1(p / t))" }
        if !detail.isEmpty { line += "  " + detail }
        if let f = fraction, f > 0.01, t > 0.5 {
            line += "  ETA \(Self.clockText(t * (1 - f) / f))"
        }
        Terminal.status("\r\u{1B}[K" + line)
        drawn = true
    }

    /// Clears the line so the summary starts clean.
    func finish() {
        if drawn { Terminal.status("\r\u{1B}[K") }
        drawn = false
    }


    private func fixed1(_ v: Double) -> String {
        guard v.isFinite, abs(v) < 1e17 else { return "\(v)" }
        let n = (v * 10).rounded()
        return "\(Int64(n) / 10).\(abs(Int64(n) % 10))"
    }

    /// h:mm:ss or m:ss.
    static func clockText(_ s: Double) -> String {
        let total = Int(s.rounded())
        let (h, m, sec) = (total / 3600, total / 60 % 60, total % 60)
        let mm = m < 10 ? "0\(m)" : "\(m)", ss = sec < 10 ? "0\(sec)" : "\(sec)"
        return h > 0 ? "\(h):\(mm):\(ss)" : "\(m):\(ss)"
    }
}
