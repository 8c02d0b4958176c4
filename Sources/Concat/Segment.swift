import Media
import Sync

/// One stream of one file, read on its own (the file's other streams are
/// discarded), one packet ahead so the caller can pick the earlier of two.
final class StreamReader {
    let file: InputFile
    let stream: InputStream
    let packet: Packet
    private(set) var loaded = false
    private(set) var ended = false

    /// Reads stream `index` of an opened file (which this reader then owns).
    init(file: InputFile, stream index: Int) throws(MediaError) {
        self.file = file
        stream = file.streams[index]
        file.discardAll(except: [index])
        packet = try Packet()
    }

    /// Loads the next packet of the stream if none is loaded; false at the end.
    func peek() throws(MediaError) -> Bool {
        if loaded { return true }
        if ended { return false }
        while try file.read(into: packet) {
            guard packet.streamIndex == stream.index else { continue }
            if packet.isCorrupt { throw file.corruptPacketError(stream: stream.index) }
            loaded = true
            return true
        }
        ended = true
        return false
    }

    /// Marks the loaded packet as used.
    func consume() { loaded = false }
}

/// Finds the stream a verb needs, or says clearly that the file has none.
func mainStream(_ file: InputFile, _ type: MediaType, role: String) throws(MediaError) -> InputStream {
    guard let s = file.streams.first(where: { $0.mediaType == type && !$0.isAttachedPicture }) else {
        throw MediaError.invalid("could not use \(role)", path: file.path,
                                 message: "it has no \(type.rawValue) stream")
    }
    guard s.timeBase != nil else {
        throw MediaError.invalid("could not use \(role)", path: file.path, stream: s.index,
                                 message: "the stream has no valid time base")
    }
    return s
}

/// Opened readers for one segment.
struct Segment {
    let spec: SegmentSpec
    let video: StreamReader
    let audio: StreamReader?
    /// The video file's own audio, copied beside (`keepOriginalAudio`).
    let original: StreamReader?

    init(_ spec: SegmentSpec, open: InputOpener, cancellation: Cancellation) throws(MediaError) {
        self.spec = spec
        let vf = try open(spec.videoPath, cancellation)
        let vs = try mainStream(vf, .video, role: spec.name)
        if spec.keepOriginalAudio {
            let s = try mainStream(vf, .audio, role: spec.name)
            original = try StreamReader(file: try InputFile(path: vf.path, cancellation: cancellation), stream: s.index)
        } else {
            original = nil
        }
        var audioStream: InputStream?
        if let ap = spec.audioPath {
            let af = ap == spec.videoPath ? vf : try open(ap, cancellation)
            if spec.requiresAudio || af.streams.contains(where: { $0.mediaType == .audio }) {
                let role = spec.name == "VIDEO" ? "AUDIO" : spec.name
                let s = try mainStream(af, .audio, role: role)
                guard s.sampleRate > 0 else {
                    throw MediaError.invalid("could not use \(role)", path: ap, stream: s.index,
                                             message: "the audio stream has no sample rate")
                }
                audioStream = s
            }
        }
        // Each reader has its own opening of the file, so the two streams
        // are read independently, each in its own time order.
        video = try StreamReader(file: vf, stream: vs.index)
        if let s = audioStream {
            let file = s.file === vf ? try open(spec.videoPath, cancellation) : s.file
            audio = try StreamReader(file: file, stream: s.index)
        } else {
            audio = nil
        }
    }
}

/// Segments must match where stream copy puts them into one track.
func checkCompatible(_ segments: [Segment], container: Container) throws(MediaError) {
    let first = segments[0]
    // Audio the container cannot hold is re-encoded; video is always copied.
    let s = first.video.stream
    if container.canHold(s) == false {
        throw MediaError.invalid("could not write", path: s.file.path, stream: s.index,
                                 message: "\(container.name) cannot hold video codec '\(s.codecName)'",
                                 hint: "choose a container that holds it (mov, mkv) or convert it with 'avtool transcode'")
    }
    for seg in segments.dropFirst() {
        func mismatch(_ s: InputStream, _ what: String, _ a: String, _ b: String) -> MediaError {
            MediaError.invalid("could not concatenate", path: s.file.path, stream: s.index,
                               message: "\(what) differs from the first segment's (\(b), not \(a))",
                               hint: "segments must share codec parameters to be joined without re-encoding")
        }
        let a = first.video.stream, b = seg.video.stream
        if a.codecName != b.codecName { throw mismatch(b, "video codec", a.codecName, b.codecName) }
        if a.width != b.width || a.height != b.height {
            throw mismatch(b, "video size", "\(a.width)x\(a.height)", "\(b.width)x\(b.height)")
        }
        if a.pixelFormat != b.pixelFormat { throw mismatch(b, "pixel format", a.pixelFormat ?? "?", b.pixelFormat ?? "?") }
        if a.extradata != b.extradata {
            throw mismatch(b, "video codec configuration (SPS/PPS)", "\(a.extradata.count) bytes", "\(b.extradata.count) bytes")
        }
        switch (first.audio?.stream, seg.audio?.stream) {
        case (nil, nil): break
        case (let x?, nil):
            throw MediaError.invalid("could not concatenate", path: seg.video.stream.file.path,
                                     message: "it has no audio but the first segment has \(x.codecName) audio")
        case (nil, let y?):
            throw MediaError.invalid("could not concatenate", path: y.file.path, stream: y.index,
                                     message: "it has audio but the first segment has none")
        case (let x?, let y?):
            if x.codecName != y.codecName { throw mismatch(y, "audio codec", x.codecName, y.codecName) }
            if x.sampleRate != y.sampleRate { throw mismatch(y, "sample rate", "\(x.sampleRate)", "\(y.sampleRate)") }
            if x.channelCount != y.channelCount {
                throw mismatch(y, "channel count", "\(x.channelCount)", "\(y.channelCount)")
            }
        }
    }
}
