import FileNames
import ArgumentParser
import Media
import Pipeline
import Probe
import Repair
import Sync

struct RepairCommand: WritingVerb {
    static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract: "Recover what a crash or a stopped copy left of a recording, without re-encoding.",
        discussion: """
            A file cut off after its index (an MP4/MOV with the index at the front, a fragmented \
            MP4 as phones and 'ffmpeg -movflags frag_keyframe' write) is remuxed keeping every \
            complete packet, byte for byte, as 'remux --salvage' does; the report says how many \
            of how many were kept.

            An MP4/MOV whose index (moov) was never written — the app or camera stopped while \
            recording — cannot be opened by any demuxer. Give --reference a whole recording made by \
            the same device with the same settings: its codec settings (avcC/hvcC, the AAC \
            configuration) let the media data be walked sample by sample (H.264 and HEVC access \
            units, AAC frames as the decoder finds them), and its frame and sample durations time \
            them (frame order from decoding, when the reference reorders frames). Audio is timed \
            to the sample from the first frame; video on the reference's average frame duration \
            (a variable frame rate becomes constant). Data no sample fits (what the crash left \
            half-written, or a track of another codec) is left out and counted.

            The output is written beside the target and renamed only when complete; the input is \
            never changed.
            """
    )

    @Argument(help: "The damaged recording.", completion: .file())
    var input: String

    @Argument(help: "The output file; its extension picks the container.", completion: .file())
    var output: String

    @Option(help: "A whole recording from the same device and settings, for an input without its index.", completion: .file())
    var reference: String?

    @OptionGroup var containerOptions: ContainerOptions
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var reporting: ReportingOptions

    var options: RepairOptions {
        var o = RepairOptions()
        o.container = containerOptions.container
        o.reference = reference
        o.faststart = !containerOptions.noFaststart
        o.edits = (try? containerOptions.tagging.edits()) ?? MetadataEdits()  // checked by validate()
        o.overwrite = outputOptions.overwrite
        return o
    }

    func work(_ line: any ProgressSink) throws(MediaError) -> any VerbReport {
        try repair(input: input, output: output, options: options) { p in
            line.update(fraction: p.fraction, position: nil, detail: "")
        }
    }
}

extension RepairReport: VerbReport {
    var summary: String {
        let packets = streams.map { "\($0.packets) \($0.type == .data || $0.type == .unknown ? $0.codec : $0.type.rawValue)" }
            .joined(separator: ", ")
        var s = "repaired \(quoted(input)) → \(quoted(output)) (\(container)): "
        switch method {
        case .salvaged: s += "kept \(packets) packets from its own index"
        case .rebuilt:
            s += "rebuilt \(packets) packets from its media data"
            let lengths = zip(streams, seconds).filter { $0.0.type == .video || $0.0.type == .audio }.map { "\($0.type.rawValue) \(fixed($1, 3)) s" }
            if !lengths.isEmpty { s += " (" + lengths.joined(separator: ", ") + ")" }
            if let ms = audioOffsetMilliseconds { s += ", audio \(fixed(ms, 1)) ms after video as in the reference" }
        }
        if !leftOut.isEmpty {
            let bytes = leftOut.compactMap(\.bytes).reduce(0, +)
            let tracks = leftOut.filter { $0.offset == nil }.map(\.kind)
            s += "; left out: " + (tracks + (bytes > 0 ? ["\(bytes) bytes of media data"] : [])).joined(separator: ", ")
        }
        s += ", \(formatBytes(outputBytes)) in \(fixed(elapsedSeconds, 2)) s"
        return s
    }
}
