import Media
import Pipeline
import Sync

/// A verb's output brought to a loudness target (`--loudness` on merge,
/// concat, fill-silence, cut): `write` writes the verb's output into the
/// staged file it is given — unnamed, beside `output`, whose checks (its
/// directory, `overwrite`, not one of `inputs`) are made before any work —
/// which is then measured as the listener will hear it and normalized into
/// `output` (`normalizeLoudness`: the audio re-encoded with the plan's
/// gain, and the true-peak limiter where the plan needs one; every other
/// stream copied; the audio's start and length kept). Nothing is written
/// when the target cannot be reached; errors about the staged file name
/// `output`. `named`: a hidden named file, for a writer that stages its own
/// output and replaces this one by its name.
public func writeNormalized<R>(output: String, target: LoudnessTarget, overwrite: Bool, inputs: [String],
                               audioBitRate: Int64?, named: Bool = false, cancellation: Cancellation,
                               progress: ((LoudnessProgress) -> Void)?,
                               write: (StagedOutput) throws(MediaError) -> R) throws(MediaError) -> (R, LoudnessReport) {
    let staged = try StagedOutput(target: output, overwrite: overwrite, inputs: inputs, named: named, counted: false)
    defer { staged.discard() }
    let written = try write(staged)
    var options = LoudnessOptions()
    options.target = target
    options.overwrite = overwrite
    options.audioBitRate = audioBitRate
    do {
        return (written, try normalizeLoudness(input: staged.temporary, output: output, options: options,
                                               cancellation: cancellation, progress: progress))
    } catch {
        throw error.path == staged.temporary ? error.about(path: output) : error
    }
}

extension LoudnessTarget {
    /// "-16.0 LUFS, true peak at most -1.0 dBTP".
    public var summary: String {
        "\(fixed(integratedLUFS, 1)) LUFS, true peak at most \(fixed(truePeakDBTP, 1)) dBTP"
    }
}
