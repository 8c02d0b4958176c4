import AVToolKit
import Glibc

// merge-pair VIDEO AUDIO OUTPUT: the video and the audio recorded beside it,
// in one file, in sync; the progress on stderr, the sync report on stdout.
/// A line on stderr (write(2): Glibc's `stderr` is not concurrency-safe in Swift 6).
func warn(_ text: String) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments
guard arguments.count == 4 else {
    warn("usage: merge-pair VIDEO AUDIO OUTPUT")
    exit(2)
}
let (video, audio, output) = (arguments[1], arguments[2], arguments[3])
// FFmpeg's own messages off: failures come back as MediaError.
AVTool.setLibraryLogLevel(.quiet)
var options = AssemblyOptions()
options.overwrite = true
let settings = options

do throws(MediaError) {
    for try await event in AVTool.events({ progress throws(MediaError) in
        try await AVTool.merge(video: video, audio: audio, output: output, options: settings, progress: progress)
    }) {
        switch event {
        case .progress(let p):
            if let f = p.fraction { warn("\(Int(f * 100))%") }
        case .finished(let report):
            print("merged '\(video)' and '\(audio)' into '\(report.output)' (\(report.container))")
            print("audio: \(report.audioCodec ?? "none"), \(report.audioMode ?? "")")
            if let ms = report.offsetMilliseconds { print("offset: \(ms) ms (\(report.offsetSamples ?? 0) samples)") }
            print("silence inserted: \(report.silenceInsertedSamples) samples; trimmed: \(report.samplesTrimmed) samples")
            if let skew = report.skew { print("start skew: \(skew)") }
        }
    }
} catch {
    warn("merge-pair: \(error) [\(error.category.rawValue)]")
    exit(1)
}
