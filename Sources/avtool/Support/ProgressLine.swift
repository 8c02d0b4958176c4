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

    /// `--progress json` lines, written beside (or instead of) the terminal line.
    let json: ProgressJSON?

    init(quiet: Bool, json: ProgressJSON? = nil) {
        // JSON lines on stderr and a redrawn line there would mix.
        enabled = !quiet && Terminal.stderrIsTerminal && json == nil
        self.json = json
        start = clock.now
        lastDraw = start
    }

    var elapsed: Double { (clock.now - start).seconds }

    /// - Parameters:
    ///   - fraction: 0…1 if known.
    ///   - position: media seconds done, for the speed (× real time).
    func update(fraction: Double?, position: Double?, detail: String = "") {
        json?.update(fraction: fraction, position: position)
        guard enabled else { return }
        let now = clock.now
        guard (now - lastDraw).seconds >= 0.2 else { return }
        lastDraw = now
        let t = elapsed
        var line = ""
        if let f = fraction { line += "\(fixed(f * 100, 1))%" }
        if let p = position, t > 0 { line += "  ×\(fixed(p / t, 1))" }
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

    /// h:mm:ss or m:ss.
    static func clockText(_ s: Double) -> String {
        // An estimate from absurd rates (a broken file) must not trap.
        let total = s.isFinite && s >= 0 && s < 1e12 ? Int(s.rounded()) : 0
        let (h, m, sec) = (total / 3600, total / 60 % 60, total % 60)
        let mm = m < 10 ? "0\(m)" : "\(m)", ss = sec < 10 ? "0\(sec)" : "\(sec)"
        return h > 0 ? "\(h):\(mm):\(ss)" : "\(m):\(ss)"
    }
}
