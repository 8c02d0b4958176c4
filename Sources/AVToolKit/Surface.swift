import Concat
import Cut
import Loudness
import Media
import Pipeline
import Probe
import Remux
import Repair
import Sync
import Transcode

// The names a caller of the verbs needs: their options and the values those
// hold, their progress and reports, the error. Only these are visible with
// `import AVToolKit`; the bridge over FFmpeg (packets, frames, decoders,
// streams of a file) and the timestamp core stay inside.

// MARK: Errors

/// A failure of a verb: the operation, the file, FFmpeg's or the library's
/// message, and a `MediaError.Category` to switch on.
public typealias MediaError = Media.MediaError
/// What can be done about an error.
public typealias Remedy = Media.Remedy
/// The kinds of streams: video, audio, subtitles, data, cover art.
public typealias StreamKind = Media.StreamKind

// MARK: Options and their values

/// A container format (`Container(named: "mp4")`).
public typealias Container = Media.Container
/// Tag, creation-time and rotation changes made as the output is written.
public typealias MetadataEdits = Media.MetadataEdits
/// Which kinds of streams an output keeps.
public typealias StreamSelection = Pipeline.StreamSelection
/// Where an output's timeline starts.
public typealias StartPolicy = Sync.StartPolicy
/// What is done with timestamps that go backwards or repeat.
public typealias TimestampRepair = Sync.TimestampRepair
/// A ratio of two integers: frame rates, time bases.
public typealias Rational = Sync.Rational
/// A loudness target: integrated loudness and true-peak ceiling.
public typealias LoudnessTarget = Sync.LoudnessTarget
/// How a merge places the audio against the video.
public typealias MergeAlignment = Sync.MergeAlignment
/// Where an assembled output ends.
public typealias EndPolicy = Sync.EndPolicy
/// How FFmpeg's own log is shown (``AVTool/setLibraryLogLevel(_:)``).
public typealias LibraryLogLevel = Media.LibraryLogLevel
/// A line of FFmpeg's own log (``AVTool/setLibraryLogHandler(upTo:_:)``).
public typealias LibraryLogMessage = Media.LibraryLogMessage

/// The options of ``AVTool/remux(input:output:options:progress:)``.
public typealias RemuxOptions = Remux.RemuxOptions
/// The options of ``AVTool/transcode(input:output:options:chunks:progress:)``.
public typealias TranscodeOptions = Transcode.TranscodeOptions
/// How the encoder spends bits: constant quality, bit rate, or bits per pixel.
public typealias RateControl = Transcode.RateControl
/// `TranscodeOptions.quality`: the SSIM or PSNR the output's weakest sample must reach, and the CRFs allowed.
public typealias QualityTarget = Sync.QualityTarget
/// SSIM or PSNR.
public typealias QualityMetric = Sync.QualityMetric
/// What a `--quality` search found (`TranscodeReport.quality`).
public typealias QualityReport = Transcode.QualityReport
/// An output picture size.
public typealias FrameSize = Transcode.FrameSize
/// How a transcode writes audio: copied, AAC, PCM, or copied when it can be.
public typealias AudioMode = Transcode.AudioMode
/// The curve an SDR copy of HDR video (`TranscodeOptions.sdr`) brings highlights down with.
public typealias ToneMapOperator = Transcode.ToneMapOperator
/// The options of merge, concat and fill-silence.
public typealias AssemblyOptions = Concat.AssemblyOptions
/// The settings of ``AVTool/estimateSync(video:audio:settings:progress:)``.
public typealias WaveformSyncSettings = Sync.WaveformSyncSettings
/// The options of ``AVTool/cut(input:output:options:progress:)``.
public typealias CutOptions = Cut.CutOptions
/// Keyframe cuts, or cuts that re-encode the frames around the cut points.
public typealias CutMode = Cut.CutMode
/// A time range that a cut keeps.
public typealias CutRange = Cut.CutRange
/// The options of ``AVTool/split(input:pattern:options:progress:)``.
public typealias SplitOptions = Cut.SplitOptions
/// Where a split cuts: every so long, at times, or by size.
public typealias SplitPoints = Cut.SplitPoints
/// The options of ``AVTool/repair(input:output:options:progress:)``.
public typealias RepairOptions = Repair.RepairOptions
/// The options of ``AVTool/normalizeLoudness(input:output:options:progress:)``.
public typealias LoudnessOptions = Loudness.LoudnessOptions

// MARK: Progress

/// A remux's progress.
public typealias RemuxProgress = Remux.RemuxProgress
/// A transcode's progress.
public typealias TranscodeProgress = Transcode.TranscodeProgress
/// The progress of merge, concat and fill-silence.
public typealias AssemblyProgress = Concat.AssemblyProgress
/// The progress of cut and split.
public typealias CutProgress = Cut.CutProgress
/// A repair's progress.
public typealias RepairProgress = Repair.RepairProgress
/// A loudness normalisation's progress.
public typealias LoudnessProgress = Loudness.LoudnessProgress

// MARK: Reports

/// What ``AVTool/probe(_:gapTolerance:)`` finds in a file.
public typealias ProbeReport = Probe.ProbeReport
/// What a remux wrote.
public typealias RemuxReport = Remux.RemuxReport
/// What a transcode encoded and copied.
public typealias TranscodeReport = Transcode.TranscodeReport
/// What a transcode did with the source's Dolby Vision or HDR10+ metadata: carried, dropped or tone-mapped.
public typealias HDRMetadataOutcome = Transcode.HDRMetadataOutcome
/// What merge, concat or fill-silence wrote.
public typealias AssemblyReport = Concat.AssemblyReport
/// The offset and drift ``AVTool/estimateSync(video:audio:settings:progress:)`` found.
public typealias AudioSyncReport = Concat.AudioSyncReport
/// What a cut wrote.
public typealias CutReport = Cut.CutReport
/// The parts a split wrote.
public typealias SplitReport = Cut.SplitReport
/// What a repair kept and left out.
public typealias RepairReport = Repair.RepairReport
/// One audio stream's loudness.
public typealias StreamLoudness = Loudness.StreamLoudness
/// What a loudness normalisation did.
public typealias LoudnessReport = Loudness.LoudnessReport
