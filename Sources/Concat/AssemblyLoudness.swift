import Loudness
import Media
import Pipeline
import Sync

/// An assembly brought to a loudness target (`--loudness`): written whole
/// into an unnamed file beside the output (the output's own checks made
/// first), measured there as the listener will hear it — every segment,
/// the silence between them, the cuts at the video's ends — then its audio
/// re-encoded with the plan's gain (and the true-peak limiter where the
/// plan needs one) into the output by `normalizeLoudness`, every other
/// stream copied. The audio keeps its start and length, so the sync the
/// assembly made holds. Nothing is written when the target cannot be reached.
func assembleWithLoudness(_ specs: [SegmentSpec], output outputPath: String, options: AssemblyOptions, verb: String,
                          cancellation: Cancellation,
                          progress: ((AssemblyProgress) -> Void)?) throws(MediaError) -> AssemblyReport {
    let began = ContinuousClock.now
    guard let target = options.loudness else {
        return try assemble(specs, to: .file(outputPath), options: options, verb: verb, open: .files,
                            cancellation: cancellation, progress: progress)
    }
    let inputs = SegmentSpec.inputs(of: specs)
    var duration: Double?
    let written = try writeNormalized(
        output: outputPath, target: target, overwrite: options.overwrite, inputs: inputs, audioBitRate: options.audioBitRate,
        cancellation: cancellation, progress: progress.map { progress in { p in progress(AssemblyProgress(position: p.position, duration: duration)) } }
    ) { staged throws(MediaError) in
        let r = try assemble(specs, to: .part(staged), options: options, verb: verb, open: .files,
                             cancellation: cancellation, progress: progress)
        duration = r.durationSeconds
        return r
    }
    var report = written.0
    let normalized = written.1
    report.loudness = normalized.streams
    report.audioCodec = normalized.streams.first.map { AudioEncoderCapabilities(codec: $0.encoder)?.codecName ?? $0.encoder }
        ?? report.audioCodec
    report.audioMode = "re-encoded"
    report.reencodeReason = "--loudness: brought to \(target.summary), measured on the assembly"
        + (report.reencodeReason.map { " (the assembly re-encoded it first: \($0))" } ?? "")
    report.outputBytes = normalized.outputBytes
    report.warnings += normalized.warnings
    report.elapsedSeconds = (ContinuousClock.now - began).seconds
    return report
}
