import Media
import Sync
import Threads

/// The limiter takes loudness off with the peaks (much of it, where the
/// peaks are dense): each limited stream's gain is found by rehearsals —
/// the input decoded through the limiter and measured, nothing encoded —
/// the gain moved by what was missing, then along the line through the
/// last two (at most `LimiterSetting.rehearsals`), until within 0.1 LU of
/// the target. The first runs before any encode; each later one beside the
/// encode at the gain it rehearses (`RehearsalBeside`).
struct Rehearsals {
    /// Each limited stream's last gain rehearsed and the loudness it gave.
    private var last: [Int: (gain: Double, loudness: Double)] = [:]
    private(set) var count = 0
    /// Whether the report's gains are the last rehearsal's, each within
    /// 0.1 LU of the target (so too where no stream is limited).
    private(set) var settled = true

    /// Rehearses the report's first settings, in line (none where no stream is limited).
    init(_ report: inout LoudnessReport, input: String, cancellation: Cancellation) throws(MediaError) {
        guard !Self.limiting(report).isEmpty else { return }
        take(try Self.measure(report, input: input, cancellation: cancellation), into: &report)
    }

    /// A gain moved and not yet rehearsed, with a rehearsal left.
    var due: Bool { !settled && count < LimiterSetting.rehearsals }

    static func limiting(_ report: LoudnessReport) -> [Int: LimiterSetting] {
        Dictionary(uniqueKeysWithValues: report.streams.compactMap { s in s.limiter.map { (s.plan.stream, $0) } })
    }

    /// One rehearsal: the limited streams decoded through their limiters and measured.
    static func measure(_ report: LoudnessReport, input: String, cancellation: Cancellation) throws(MediaError) -> [StreamLoudness] {
        let limiting = limiting(report)
        return try measureLoudness(path: input, only: Set(limiting.keys), limiting: limiting, cancellation: cancellation)
    }

    static func within(_ m: StreamLoudness, of target: Double) -> Bool { abs(target - m.figures.integratedLUFS) <= 0.1 }

    /// Takes a rehearsal's figures: a stream further than 0.1 LU from the
    /// target has its gain moved by what was missing (along the line
    /// through its last two rehearsals, once there are two).
    mutating func take(_ measured: [StreamLoudness], into report: inout LoudnessReport) {
        let target = report.target.integratedLUFS
        count += 1
        settled = true
        for m in measured {
            guard let i = report.streams.firstIndex(where: { $0.plan.stream == m.stream }), var l = report.streams[i].limiter
            else { continue }
            let previous = last[m.stream]
            last[m.stream] = (l.gainDB, m.figures.integratedLUFS)
            guard !Self.within(m, of: target) else { continue }
            var slope = 1.0
            if let p = previous, abs(l.gainDB - p.gain) > 0.01 {
                slope = min(max((m.figures.integratedLUFS - p.loudness) / (l.gainDB - p.gain), 0.1), 1)
            }
            l.gainDB = min(l.gainDB + (target - m.figures.integratedLUFS) / slope, LoudnessStreamPlan.largestGainDB)
            report.streams[i].limiter = l
            settled = false
        }
    }
}

/// A rehearsal on a thread of its own, beside the encode at the gains it
/// rehearses (the encoder has a core of its own; the rehearsal shares the
/// other with the decoding): once it finds a stream further than 0.1 LU
/// from the target it cancels `stop`, and the encode, whose gain will move,
/// ends early. Most often it finds the gain right, and the encode's wait
/// for it was the rehearsal's whole time.
final class RehearsalBeside {
    private let thread: WorkerThread
    private let result: HandedOver<Result<[StreamLoudness], MediaError>?>
    /// The rehearsal's own flag: set when it is left before `finish` (the
    /// encode failed), so the caller does not wait out a whole rehearsal.
    private let abandoned: Cancellation
    private var finished = false

    /// nil when no thread can be started (the caller rehearses in line).
    init?(_ report: LoudnessReport, input: String, cancellation: Cancellation, stop: Cancellation) {
        let result = HandedOver<Result<[StreamLoudness], MediaError>?>(nil)
        let target = report.target.integratedLUFS
        let abandoned = Cancellation(parent: cancellation)
        guard let thread = try? WorkerThread({
            do throws(MediaError) {
                let measured = try Rehearsals.measure(report, input: input, cancellation: abandoned)
                result.value = .success(measured)
                if !measured.allSatisfy({ Rehearsals.within($0, of: target) }) { stop.cancel() }
            } catch {
                result.value = .failure(error)
                stop.cancel()
            }
        }) else { return nil }
        self.thread = thread
        self.result = result
        self.abandoned = abandoned
    }

    deinit {
        if !finished { abandoned.cancel() }
        thread.join()
    }

    /// Waits for the rehearsal; its figures, or what stopped it.
    func finish() throws(MediaError) -> [StreamLoudness] {
        finished = true
        thread.join()
        guard let r = result.value else { throw MediaError.interrupted }
        return try r.get()
    }
}
