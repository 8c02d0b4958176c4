// AVToolKit: avtool's verbs as a Swift library, the same work the `avtool`
// command line does, as `async` functions on `AVTool`.
//
// | verb             | function                                      | options              | report             |
// |------------------|-----------------------------------------------|----------------------|--------------------|
// | probe            | `AVTool.probe(_:gapTolerance:)`               | —                    | `ProbeReport`      |
// | remux            | `AVTool.remux(input:output:options:…)`        | `RemuxOptions`       | `RemuxReport`      |
// | transcode        | `AVTool.transcode(input:output:options:…)`    | `TranscodeOptions`   | `TranscodeReport`  |
// | merge            | `AVTool.merge(video:audio:output:…)`          | `AssemblyOptions`    | `AssemblyReport`   |
// | concat           | `AVTool.concat(_:output:options:…)`           | `AssemblyOptions`    | `AssemblyReport`   |
// | fill-silence     | `AVTool.fillSilence(input:output:…)`          | `AssemblyOptions`    | `AssemblyReport`   |
// | sync             | `AVTool.estimateSync(video:audio:…)`          | `WaveformSyncSettings` | `AudioSyncReport` |
// | cut              | `AVTool.cut(input:output:options:…)`          | `CutOptions`         | `CutReport`        |
// | split            | `AVTool.split(input:pattern:options:…)`       | `SplitOptions`       | `SplitReport`      |
// | repair           | `AVTool.repair(input:output:options:…)`       | `RepairOptions`      | `RepairReport`     |
// | loudness         | `AVTool.normalizeLoudness(input:output:…)`    | `LoudnessOptions`    | `LoudnessReport`   |
// | probe --loudness | `AVTool.measureLoudness(_:)`                  | —                    | `[StreamLoudness]` |
//
// The modules behind it are imported, not re-exported: `import AVToolKit`
// shows the verbs and the names in Surface.swift, not the FFmpeg bridge.

import Concat
import Cut
import Loudness
import Media
import Probe
import Remux
import Repair
import Sync
import Threads
import Transcode
#if canImport(Glibc)
import Glibc
#endif

/// avtool's verbs for Swift concurrency.
///
/// Each verb is `async throws(MediaError)`: the blocking work (FFmpeg's
/// reads, codecs and writes) runs on a thread of its own, never on the
/// cooperative pool, so a `TaskGroup` of N jobs runs N jobs at once; how
/// many to run is the caller's choice.
///
/// Cancelling the calling task stops the work: it ends within one packet
/// or one blocking read or write, the unfinished output is removed, and the
/// verb throws a ``MediaError`` whose `MediaError.category` is
/// `MediaError.Category.interrupted` (never `CancellationError`: the
/// error type stays `MediaError`). A task already cancelled throws that
/// error before any work. Each call has its own stop flag: one cancelled
/// job stops no other.
///
/// `progress`, when given, is called on the work's thread (hence
/// `@Sendable`) as the work goes on — a transcode at each frame encoded,
/// the copying verbs every 256 packets — so keep it short.
public enum AVTool {
    /// An event of a running verb: progress, then its report.
    public enum Event<Progress: Sendable, Report: Sendable>: Sendable {
        /// How far the work is.
        case progress(Progress)
        /// The work is done and the output written.
        case finished(Report)
    }

    /// Runs `work` (one verb) and gives its progress, then its report, as an
    /// asynchronous sequence whose failure is a ``MediaError``:
    ///
    ///     for try await event in AVTool.events({ progress in
    ///         try await AVTool.merge(video: v, audio: a, output: o, progress: progress)
    ///     }) { … }
    ///
    /// The sequence ends after ``Event/finished(_:)``, or throws the verb's
    /// error. Ending the iteration early (`break`) or cancelling the
    /// iterating task cancels the work, and the iteration, if still
    /// waiting, throws an error of category `MediaError.Category.interrupted`
    /// — a cancelled run never ends as if it had finished.
    ///
    /// `work` may be written without `throws(MediaError)` (a closure's
    /// thrown type is not inferred from its context): whatever else it
    /// throws comes out as a `MediaError` too — `CancellationError` as
    /// `MediaError.Category.interrupted`, anything else as
    /// `MediaError.Category.ioError` with the error's description as the
    /// operation.
    ///
    /// - Parameter work: One verb call, given the progress callback to pass on.
    /// - Returns: The events of that call; it starts at once, iterated or not.
    public static func events<Progress: Sendable, Report: Sendable>(
        _ work: @escaping @Sendable (_ progress: @escaping @Sendable (Progress) -> Void) async throws -> Report
    ) -> Events<Progress, Report> {
        // The newest progress is enough; the report, last, is never dropped.
        let (stream, continuation) = AsyncStream<Events<Progress, Report>.Step>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let task = Task {
            do {
                let report = try await work { continuation.yield(.progress($0)) }
                continuation.yield(.finished(report))
            } catch let error as MediaError {
                continuation.yield(.failed(error))
            } catch is CancellationError {
                continuation.yield(.failed(MediaError.interrupted))
            } catch {
                continuation.yield(.failed(MediaError(code: -EIO, operation: String(describing: error))))
            }
            continuation.finish()
        }
        continuation.onTermination = { reason in
            if case .cancelled = reason { task.cancel() }
        }
        return Events(stream: stream)
    }

    /// The versions of the libraries as loaded: FFmpeg's and each of its libraries', x265's.
    public static var libraryVersions: String {
        "FFmpeg \(LibraryVersions.ffmpeg): " + LibraryVersions.libraries.map { "\($0.name) \($0.version)" }.joined(separator: ", ")
            + "; x265 " + (LibraryVersions.x265 ?? "not available")
    }

    /// Sets how much of FFmpeg's own logging reaches standard error. FFmpeg
    /// has one level for the whole process, so this applies to every job;
    /// failures come back as ``MediaError`` whatever the level.
    ///
    /// - Parameter level: `.quiet` for none.
    public static func setLibraryLogLevel(_ level: LibraryLogLevel) {
        level.apply()
    }

    /// Sends FFmpeg's own messages, up to `level`, to `handler` instead of
    /// standard error (`nil` gives them back to standard error). FFmpeg has
    /// one log for the whole process: the handler gets every job's
    /// messages, on the thread of the job that logs them.
    ///
    /// - Parameters:
    ///   - level: The least severe messages passed on (`.error`: errors only).
    ///   - handler: Called with each line.
    public static func setLibraryLogHandler(upTo level: LibraryLogLevel,
                                            _ handler: (@Sendable (LibraryLogMessage) -> Void)?) {
        LibraryLog.handle(upTo: level, with: handler)
    }

    /// Runs `work` on a thread of its own, with a stop flag of its own
    /// that the calling task's cancellation sets.
    static func run<Report: Sendable>(
        _ work: @escaping @Sendable (Cancellation) throws(MediaError) -> Report
    ) async throws(MediaError) -> Report {
        if Task.isCancelled { throw MediaError.interrupted }
        let cancellation = Cancellation()
        let result: Result<Report, MediaError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Report, MediaError>, Never>) in
                do throws(WorkerThread.StartFailure) {
                    // The stack the command line's main thread has: the verbs recurse little, FFmpeg's codecs more.
                    try WorkerThread.detach(stackSize: 8 << 20) {
                        do throws(MediaError) {
                            continuation.resume(returning: .success(try work(cancellation)))
                        } catch {
                            continuation.resume(returning: .failure(error))
                        }
                    }
                } catch {
                    continuation.resume(returning: .failure(
                        MediaError(code: -error.code, operation: "could not start a thread for the work")))
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
        switch result {
        case .success(let report):
            return report
        case .failure(let error) where cancellation.isCancelled && error.category != .interrupted:
            // A blocking call stopped by the flag may report its own code; the documented one is `interrupted`.
            throw MediaError(code: MediaError.interrupted.code, operation: MediaError.interrupted.operation, path: error.path)
        case .failure(let error):
            throw error
        }
    }
}

extension AVTool {
/// The events of one verb call (``AVTool/events(_:)``): progress, then the
/// report; a failure is the verb's ``MediaError``.
public struct Events<Progress: Sendable, Report: Sendable>: AsyncSequence, Sendable {
    /// Progress, then the report.
    public typealias Element = AVTool.Event<Progress, Report>
    /// The verb's error.
    public typealias Failure = MediaError

    enum Step: Sendable {
        case progress(Progress)
        case finished(Report)
        case failed(MediaError)
    }

    let stream: AsyncStream<Step>

    /// Iterates the events.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }

    /// The iterator of ``Events``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// Progress, then the report.
        public typealias Element = AVTool.Event<Progress, Report>
        /// The verb's error.
        public typealias Failure = MediaError
        var base: AsyncStream<Step>.Iterator
        var ended = false

        /// The next event; `nil` after the report. Throws the verb's error,
        /// or one of category `interrupted` when the iterating task is
        /// cancelled before the report.
        public mutating func next() async throws(MediaError) -> Element? {
            guard !ended else { return nil }
            switch await base.next() {
            case .progress(let p)?:
                return .progress(p)
            case .finished(let report)?:
                ended = true
                return .finished(report)
            case .failed(let error)?:
                ended = true
                throw error
            case nil:
                ended = true
                throw MediaError.interrupted
            }
        }
    }
}
}
