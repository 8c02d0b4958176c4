import AVToolKit
import Foundation
import Synchronization

// job-service INPUT DIRECTORY [--no-cancel]: a service loop without the HTTP. It takes job
// requests as JSON (what a request body would carry), runs three
// transcodes of INPUT into DIRECTORY at once in a task group, cancels the
// second halfway through by `Task.cancel()`, and reports on stdout, one
// `name: value` per line: when each job started, how long the cancelled
// one took to stop and what it threw, which files are left, and the
// category of a missing file's error. With --no-cancel, all three run to
// the end (to compare the peak memory with three processes).

/// A job as a request body carries it; decoded with the caller's own
/// `init(from decoder: Decoder)` (Swift's `Decoder`: AVToolKit shows no
/// type of that name).
struct JobRequest: Decodable, Sendable {
    var name: String
    var options: TranscodeOptions

    enum CodingKeys: String, CodingKey { case name, options }

    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        options = try c.decodeIfPresent(TranscodeOptions.self, forKey: .options) ?? TranscodeOptions()
    }
}

/// When each job's first progress came, and the moment one was cancelled.
final class Timeline: Sendable {
    private let firstProgress = Mutex<[String: ContinuousClock.Instant]>([:])

    func progressed(_ job: String) {
        let now = ContinuousClock.now
        firstProgress.withLock { if $0[job] == nil { $0[job] = now } }
    }

    var starts: [String: ContinuousClock.Instant] { firstProgress.withLock { $0 } }
}

/// How a job ended.
enum Outcome: Sendable {
    case finished(TranscodeReport)
    case failed(MediaError, stoppedAfter: Duration?)
}

/// The category of `error` in words: an exhaustive switch, so a new
/// category is a compile error here, not a silent default.
func explain(_ error: MediaError) -> String {
    switch error.category {
    case .notFound: "not-found (no such file)"
    case .permissionDenied: "permission-denied"
    case .noSpace: "no-space"
    case .outputExists: "output-exists"
    case .codecUnavailable: "codec-unavailable"
    case .invalidOption: "invalid-option"
    case .damagedInput: "damaged-input"
    case .invalidData: "invalid-data"
    case .unsupported: "unsupported"
    case .missingStream: "missing-stream"
    case .tooShort: "too-short"
    case .noMatch: "no-match (the recordings could not be aligned)"
    case .interrupted: "interrupted"
    case .ioError: "io-error"
    case .internalMismatch: "internal-mismatch (the output was not what was planned; nothing kept)"
    }
}

/// Seconds, with milliseconds.
func seconds(_ d: Duration) -> String {
    let ms = d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
    return String(format: "%.3f", Double(ms) / 1000)
}

/// The job to cancel: started as a task of its own so it can be cancelled
/// alone; cancelled once its progress passes half.
func runCancelled(_ job: JobRequest, input: String, output: String, timeline: Timeline) async -> Outcome {
    let (halfway, reached) = AsyncStream<Void>.makeStream()
    let work = Task { () async -> Result<TranscodeReport, MediaError> in
        do throws(MediaError) {
            return .success(try await AVTool.transcode(input: input, output: output, options: job.options) { p in
                timeline.progressed(job.name)
                if (p.fraction ?? 0) >= 0.5 { reached.yield(); reached.finish() }
            })
        } catch {
            return .failure(error)
        }
    }
    for await _ in halfway { break }
    let cancelled = ContinuousClock.now
    work.cancel()
    switch await work.value {
    case .success(let report): return .finished(report)
    case .failure(let error): return .failed(error, stoppedAfter: ContinuousClock.now - cancelled)
    }
}

func runJob(_ job: JobRequest, input: String, output: String, timeline: Timeline) async -> Outcome {
    do throws(MediaError) {
        return .finished(try await AVTool.transcode(input: input, output: output, options: job.options) { _ in
            timeline.progressed(job.name)
        })
    } catch {
        return .failed(error, stoppedAfter: nil)
    }
}

/// Peak resident memory of this process so far, in KiB (VmHWM).
func peakResidentKiB() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
    }
    return nil
}

let arguments = CommandLine.arguments
guard arguments.count == 3 || (arguments.count == 4 && arguments[3] == "--no-cancel") else {
    FileHandle.standardError.write(Data("usage: job-service INPUT DIRECTORY [--no-cancel]\n".utf8))
    exit(2)
}
let (input, directory) = (arguments[1], arguments[2])
let cancelsOne = arguments.count == 3
AVTool.setLibraryLogLevel(.quiet)

let body = """
    [{"name": "first", "options": {"preset": "fast", "crf": 28, "size": {"width": 320, "height": -1}, "overwrite": true}},
     {"name": "second", "options": {"preset": "fast", "crf": 28, "size": {"width": 320, "height": -1}, "overwrite": true}},
     {"name": "third", "options": {"preset": "fast", "crf": 28, "size": {"width": 320, "height": -1}, "overwrite": true}}]
    """
let jobs = try JSONDecoder().decode([JobRequest].self, from: Data(body.utf8))
print("decoded: \(jobs.count) jobs, preset \(jobs[0].options.preset), size \(jobs[0].options.size.map(\.description) ?? "-")")

/// `json` decoded as `T`, encoded and decoded again: the same value, or nil.
func roundTrip<T: Codable & Equatable>(_ type: T.Type, _ json: String) -> String? {
    guard let value = try? JSONDecoder().decode(T.self, from: Data(json.utf8)),
          let again = try? JSONDecoder().decode(T.self, from: JSONEncoder().encode(value)), again == value else { return nil }
    return "\(T.self)"
}
let kinds = [
    roundTrip(RemuxOptions.self, #"{"container": "mkv", "salvage": true, "streams": {"subtitles": false}}"#),
    roundTrip(TranscodeOptions.self, #"{"bitrate": 2000000, "frameRate": "30000/1001", "audio": "aac", "tune": "grain"}"#),
    roundTrip(AssemblyOptions.self, #"{"tolerance": 0.002, "end": null, "overwrite": true}"#),
    roundTrip(CutOptions.self, #"{"from": 1.5, "to": 4, "mode": "exact", "keep": [{"from": 1, "to": 2}]}"#),
    roundTrip(SplitOptions.self, #"{"every": 30, "container": "mp4"}"#),
    roundTrip(RepairOptions.self, #"{"reference": "whole.mp4"}"#),
    roundTrip(LoudnessOptions.self, #"{"target": {"integratedLUFS": -14, "truePeakDBTP": -1}}"#),
]
print("round-trip: \(kinds.map { $0 ?? "failed" }.joined(separator: " "))")

let timeline = Timeline()
let began = ContinuousClock.now
let outcomes = await withTaskGroup(of: (String, Outcome).self) { group in
    for job in jobs {
        let output = directory + "/" + job.name + ".mp4"
        group.addTask {
            (job.name, job.name == "second" && cancelsOne ? await runCancelled(job, input: input, output: output, timeline: timeline)
                                            : await runJob(job, input: input, output: output, timeline: timeline))
        }
    }
    var outcomes: [String: Outcome] = [:]
    for await (name, outcome) in group { outcomes[name] = outcome }
    return outcomes
}
print("elapsed: \(seconds(ContinuousClock.now - began))")

let starts = timeline.starts
for job in jobs {
    print("started \(job.name): \(starts[job.name].map { seconds($0 - began) } ?? "never")")
}
if let first = starts.values.min(), let last = starts.values.max(), starts.count == jobs.count {
    print("start-spread: \(seconds(last - first))")
}
for job in jobs {
    switch outcomes[job.name] {
    case .finished(let report)?:
        print("\(job.name): finished, \(report.framesEncoded) frames")
    case .failed(let error, let stoppedAfter)?:
        print("\(job.name): \(explain(error))")
        if let stoppedAfter { print("cancel-latency: \(seconds(stoppedAfter))") }
    case nil:
        print("\(job.name): lost")
    }
}
let left = (try? FileManager.default.contentsOfDirectory(atPath: directory))?.sorted() ?? []
print("left: \(left.joined(separator: " "))")

// The same work as a sequence of events, its task cancelled at the first
// progress: the iteration throws `interrupted` (it does not end as if the
// job had finished) and the output is not written.
if cancelsOne {
    let watcher = Task { () async -> String in
        do throws(MediaError) {
            for try await event in AVTool.events({ progress throws(MediaError) in
                try await AVTool.transcode(input: input, output: directory + "/events.mp4", options: jobs[0].options,
                                           progress: progress)
            }) {
                switch event {
                case .progress: withUnsafeCurrentTask { $0?.cancel() }
                case .finished: return "finished"
                }
            }
            return "ended without a report"
        } catch {
            return explain(error)
        }
    }
    print("events-cancelled: \(await watcher.value)")
    try? await Task.sleep(for: .milliseconds(500))
    let after = (try? FileManager.default.contentsOfDirectory(atPath: directory))?.sorted() ?? []
    print("left-after-events: \(after.joined(separator: " "))")
}

// A task cancelled before it calls a verb: the verb throws at once, no work begun.
let early = Task { () async -> String in
    withUnsafeCurrentTask { $0?.cancel() }
    do throws(MediaError) {
        _ = try await AVTool.probe(input)
        return "probed"
    } catch {
        return explain(error)
    }
}
print("cancelled-before: \(await early.value)")

do throws(MediaError) {
    _ = try await AVTool.probe(directory + "/no-such-file.mp4")
    print("missing: probed")
} catch {
    print("missing: \(explain(error))")
}
// FFmpeg's own messages to a handler, not to stderr: an MP4 whose recording
// never finished (no index) makes libavformat log an error.
final class LogLines: Sendable {
    let lines = Mutex<[String]>([])
}
let log = LogLines()
AVTool.setLibraryLogHandler(upTo: .error) { message in log.lines.withLock { $0.append("\(message.level): \(message.text)") } }
let unfinished = directory + "/unfinished.mp4"
_ = FileManager.default.createFile(atPath: unfinished,
                                   contents: Data([0, 0, 0, 0x14] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isom".utf8)))
do throws(MediaError) {
    _ = try await AVTool.probe(unfinished)
    print("unfinished: probed")
} catch {
    print("unfinished: \(explain(error))")
}
try? FileManager.default.removeItem(atPath: unfinished)
AVTool.setLibraryLogHandler(upTo: .quiet, nil)
print("library-log: \(log.lines.withLock { $0.first } ?? "none")")

if let kib = peakResidentKiB() { print("peak-rss-kib: \(kib)") }
