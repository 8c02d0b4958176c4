// AVToolKit: avtool's verbs as a Swift library, the same functions the
// `avtool` command line calls.
//
// Each verb is a throwing function with an options struct, an optional
// progress callback and a `Cancellation`; it throws `MediaError` (typed
// throws), whose `category` is a stable name for the kind of failure:
//
// | verb         | function                                   | options              | report            |
// |--------------|--------------------------------------------|----------------------|-------------------|
// | probe        | `probe(path:gapTolerance:)`                | —                    | `ProbeReport`     |
// | remux        | `remux(input:output:options:…)`            | `RemuxOptions`       | `RemuxReport`     |
// | transcode    | `transcode(input:output:options:…)`        | `TranscodeOptions`   | `TranscodeReport` |
// | merge        | `merge(video:audio:output:…options:…)`     | `AssemblyOptions`    | `AssemblyReport`  |
// | concat       | `concat(_:output:options:…)`               | `AssemblyOptions`    | `AssemblyReport`  |
// | fill-silence | `fillSilence(input:output:toVideoEnd:…)`   | `AssemblyOptions`    | `AssemblyReport`  |
// | sync         | `estimateSync(video:audio:…)`              | —                    | `AudioSyncReport` |
// | cut          | `cut(input:output:options:…)`              | `CutOptions`         | `CutReport`       |
// | split        | `split(input:pattern:options:…)`           | `SplitOptions`       | `SplitReport`     |
// | repair       | `repair(input:output:options:…)`           | `RepairOptions`      | `RepairReport`    |
// | probe --loudness | `measureLoudness(path:)`               | —                    | `[StreamLoudness]` |
//
// `AVTool.events` turns any of them into an `AsyncThrowingStream` of
// progress events ending with the report; ending the stream early cancels
// the work.

@_exported import Concat
@_exported import Cut
@_exported import Loudness
@_exported import Media
@_exported import Probe
@_exported import Remux
@_exported import Repair
@_exported import Sync
@_exported import Transcode

import Dispatch

/// Helpers over the verbs for callers that want Swift concurrency.
public enum AVTool {
    /// An event of a running verb: progress, then its report.
    public enum Event<Progress: Sendable, Report: Sendable>: Sendable {
        case progress(Progress)
        case finished(Report)
    }

    /// Runs `work` (one verb call) on a thread of its own and yields its
    /// progress, then its report. A `MediaError` ends the stream with that
    /// error. Ending the iteration early (or cancelling its task) cancels
    /// the work through the `Cancellation` it is given; the output is then
    /// not written.
    ///
    ///     for try await event in AVTool.events({ cancellation, progress in
    ///         try merge(video: v, audio: a, output: o, options: AssemblyOptions(),
    ///                   cancellation: cancellation, progress: progress)
    ///     }) { … }
    public static func events<Progress: Sendable, Report: Sendable>(
        _ work: @escaping @Sendable (Cancellation, @escaping @Sendable (Progress) -> Void) throws -> Report
    ) -> AsyncThrowingStream<Event<Progress, Report>, any Error> {
        AsyncThrowingStream { continuation in
            let cancellation = Cancellation()
            continuation.onTermination = { reason in
                if case .cancelled = reason { cancellation.cancel() }
            }
            DispatchQueue.global().async {
                do {
                    let report = try work(cancellation) { continuation.yield(.progress($0)) }
                    continuation.yield(.finished(report))
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
        }
    }

    /// The versions of avtool's libraries as loaded: FFmpeg's and each of its libraries', x265's.
    public static var libraryVersions: String {
        "FFmpeg \(LibraryVersions.ffmpeg): " + LibraryVersions.libraries.map { "\($0.name) \($0.version)" }.joined(separator: ", ")
            + "; x265 " + (LibraryVersions.x265 ?? "not available")
    }
}
