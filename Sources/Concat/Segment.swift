import Media
import Pipeline
import Sync

/// One opening of a file read for several of its streams at once (a
/// segment's video and audio): packets of a stream whose reader is not
/// asking wait in that stream's queue, so the file is read once, in its own
/// order. A queue that grows past `queueLimit` bytes (a file whose streams
/// lie far apart) is dropped, and its reader opens the file on its own.
final class SharedInput {
    let file: InputFile
    /// Per stream index: the waiting packets from `heads[i]` on (`nil`: not read here).
    private var queues: [[Waiting]?]
    private var heads: [Int]
    private var queuedBytes: [Int]
    private var spare: [Waiting] = []
    private(set) var detached: Set<Int> = []
    /// Bytes a queue may hold (32 MiB by default).
    let queueLimit: Int

    /// A packet in a queue (packets are not copyable: one box each, reused).
    private final class Waiting {
        let packet: Packet
        init() throws(MediaError) { packet = try Packet() }
    }

    /// Reads `streams` of `file`; the others are discarded.
    init(file: InputFile, streams: Set<Int>, queueLimit: Int = 32 << 20) throws(MediaError) {
        self.file = file
        self.queueLimit = queueLimit
        let n = file.streams.count
        queues = (0..<n).map { streams.contains($0) ? [] : nil }
        heads = Array(repeating: 0, count: n)
        queuedBytes = Array(repeating: 0, count: n)
        file.discardAll(except: streams)
    }

    /// The next packet of `stream` into `packet`; false at the end (or once
    /// the stream is detached).
    func next(_ stream: Int, into packet: borrowing Packet) throws(MediaError) -> Bool {
        guard !detached.contains(stream), let queue = queues[stream] else { return false }
        let head = heads[stream]
        if head < queue.count {
            let waiting = queue[head]
            packet.take(from: waiting.packet)
            spare.append(waiting)
            queuedBytes[stream] -= packet.size
            if head + 1 == queue.count {
                queues[stream]!.removeAll(keepingCapacity: true)
                heads[stream] = 0
            } else {
                heads[stream] = head + 1
            }
            return true
        }
        while try file.read(into: packet) {
            let i = packet.streamIndex
            if i == stream { return true }
            guard i < queues.count, queues[i] != nil, !detached.contains(i) else { continue }
            if queuedBytes[i] + packet.size > queueLimit {
                detached.insert(i)
                queues[i] = []
                queuedBytes[i] = 0
                continue
            }
            let waiting: Waiting
            if let reused = spare.popLast() { waiting = reused } else { waiting = try Waiting() }
            waiting.packet.take(from: packet)
            queuedBytes[i] += waiting.packet.size
            queues[i]!.append(waiting)
        }
        return false
    }
}

/// One stream of one file, one packet ahead so the caller can pick the
/// earlier of two. The stream is read from its own opening of the file, or
/// from an opening shared with the file's other streams (`SharedInput`),
/// then on its own if the shared one leaves it behind.
final class StreamReader {
    private(set) var file: InputFile
    /// The opening the stream was first read from: a file changed since is
    /// told by it (an opening made later sees the changed file as it is).
    private let first: InputFile
    let stream: InputStream
    let packet: Packet
    private(set) var loaded = false
    private(set) var ended = false
    private var shared: SharedInput?
    private let reopen: (() throws(MediaError) -> InputFile)?
    /// Packets of the stream consumed so far.
    private var taken = 0

    /// Reads stream `index` of an opened file (which this reader then owns).
    init(file: InputFile, stream index: Int) throws(MediaError) {
        self.file = file
        first = file
        stream = file.streams[index]
        file.discardAll(except: [index])
        packet = try Packet()
        reopen = nil
    }

    /// Reads stream `index` through `shared`; `reopen` opens the file anew
    /// if the shared opening leaves this stream behind.
    init(shared: SharedInput, stream index: Int, reopen: @escaping () throws(MediaError) -> InputFile) throws(MediaError) {
        self.shared = shared
        file = shared.file
        first = shared.file
        stream = shared.file.streams[index]
        packet = try Packet()
        self.reopen = reopen
    }

    /// Loads the next packet of the stream if none is loaded; false at the end.
    func peek() throws(MediaError) -> Bool {
        if loaded { return true }
        if ended { return false }
        if let s = shared {
            if try s.next(stream.index, into: packet) { return try loadedPacket() }
            if !s.detached.contains(stream.index) { return try end() }
            try readAlone()
        }
        while try file.read(into: packet) {
            guard packet.streamIndex == stream.index else { continue }
            return try loadedPacket()
        }
        return try end()
    }

    /// The end of the stream, unless the fragments read list packets the
    /// file does not hold (a fragmented recording cut off).
    private func end() throws(MediaError) -> Bool {
        if let changed = first.changedError() { throw changed }
        if let cut = file.cutOffError("could not read", soFar: true) { throw cut }
        ended = true
        return false
    }

    private func loadedPacket() throws(MediaError) -> Bool {
        if packet.isCorrupt { throw file.corruptPacketError(stream: stream.index) }
        loaded = true
        return true
    }

    /// Continues on an opening of its own, past the packets already taken.
    private func readAlone() throws(MediaError) {
        shared = nil
        file = try reopen!()
        file.discardAll(except: [stream.index])
        var skipped = 0
        while skipped < taken, try file.read(into: packet) {
            if packet.streamIndex == stream.index { skipped += 1 }
        }
    }

    /// Reads on from where the file now is (after a seek of its own file).
    func restart() {
        loaded = false
        ended = false
    }

    /// Marks the loaded packet as used.
    func consume() {
        loaded = false
        taken += 1
    }
}

/// Finds the stream a verb needs, or says clearly that the file has none.
func mainStream(_ file: InputFile, _ type: MediaType, role: String, hint: String? = nil) throws(MediaError) -> InputStream {
    guard let s = file.streams.first(where: { $0.mediaType == type && !$0.isAttachedPicture }) else {
        throw MediaError.invalid("could not use \(role)", path: file.path,
                                 message: "it has no \(type.rawValue) stream", hint: hint, category: .missingStream)
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
    /// `nil` only for audio alone (`SegmentSpec.allowsAudioOnly`).
    let video: StreamReader?
    let audio: StreamReader?
    /// The video file's own audio, copied beside (`keepOriginalAudio`).
    let original: StreamReader?
    /// The video file's data tracks the container holds (`DataTrackFate`),
    /// read with its video; warnings for those it cannot hold.
    let data: [StreamReader]
    let dataWarnings: [String]
    /// Its trimmed start is re-encoded (`spliceCoding`).
    var spliced = false
    /// Its last group is re-encoded up to this presentation time (its shown
    /// end, stream ticks), for frames it hides there are references
    /// (`spliceCodings`).
    var splicedUntil: Int64?

    /// The stream the segment's timeline and metadata come from: its video, else its audio.
    var main: StreamReader { video ?? audio! }

    /// Whether `packet` is a video frame the input's edit list hides after
    /// its shown ones (an iPhone's or a camera's last frame, flagged
    /// discard): it must not lengthen the segment, and at a joint it would
    /// be shown.
    func hiddenAtEnd(_ packet: borrowing Packet) -> Bool {
        guard packet.isDiscard, let s = video?.stream, packet.streamIndex == s.index, let start = s.startTime,
              let length = s.duration, let pts = packet.timing.pts else { return false }
        return pts >= start.value &+ length.value
    }

    /// A video packet's timing, with the frame period as duration where the
    /// demuxer gives none (so the segment's video end counts the last frame).
    func videoTiming(_ timing: PacketTiming) -> PacketTiming {
        guard let s = video?.stream, let tb = s.timeBase else { return timing }
        return timing.orDuration(PacketTiming.framePeriod(frameRate: s.averageFrameRate ?? s.realFrameRate, timeBase: tb))
    }

    /// `container`: the output's, whose data tracks are kept; nil keeps none.
    init(_ spec: SegmentSpec, open: InputOpener, container: Container?, cancellation: Cancellation) throws(MediaError) {
        self.spec = spec
        let vf = try open(spec.videoPath, cancellation)
        // A file cut off is refused before anything is written (its index or
        // Matroska segment says so); 'avtool repair' keeps what it holds.
        if let cut = vf.cutOffError("could not use \(spec.name)") { throw cut }
        let audioOnly = spec.allowsAudioOnly && spec.audioPath == spec.videoPath
            && !vf.streams.contains { $0.mediaType == .video && !$0.isAttachedPicture }
        let vs = audioOnly ? nil : try mainStream(vf, .video, role: spec.name)
        if spec.keepOriginalAudio {
            let s = try mainStream(vf, .audio, role: spec.name)
            original = try StreamReader(file: try InputFile(path: vf.path, cancellation: cancellation, sameAs: vf), stream: s.index)
        } else {
            original = nil
        }
        var audioStream: InputStream?
        if let ap = spec.audioPath {
            let af = ap == spec.videoPath ? vf : try open(ap, cancellation)
            if af !== vf, let cut = af.cutOffError("could not use \(spec.name == "VIDEO" ? "AUDIO" : spec.name)") { throw cut }
            if spec.requiresAudio || audioOnly || af.streams.contains(where: { $0.mediaType == .audio }) {
                let role = spec.name == "VIDEO" ? "AUDIO" : spec.name
                // (fill-silence's one input: there is no audio to fill.)
                let s = try mainStream(af, .audio, role: role, hint: role == "input"
                    ? "there is no audio to fill; 'avtool merge VIDEO AUDIO OUT' gives a video its sound" : nil)
                guard s.sampleRate > 0 else {
                    throw MediaError.invalid("could not use \(role)", path: ap, stream: s.index,
                                             message: "the audio stream has no sample rate")
                }
                audioStream = s
            }
        }
        var dataStreams: [InputStream] = []
        var warnings: [String] = []
        // The tracks beside the main stream (the video, or the audio alone): data, subtitles, cover art.
        let lead = vs ?? (audioOnly ? audioStream : nil)
        if let container, lead != nil {
            // Subtitle tracks (a podcast's chapter titles and links as `tx3g`) go the data tracks' way.
            // (Of a file of audio alone, its cover art only: its chapter track is written again from its chapters.)
            for s in vf.streams where vs != nil && [.data, .subtitles].contains(StreamSelection.kind(of: s)) && s.mediaType != .attachment {
                switch DataTrackFate(s, container: container, videoKept: { $0.index == vs?.index }) {
                case .kept: if s.timeBase != nil { dataStreams.append(s) }
                case .notHeld(_, let warning): warnings.append("\(spec.name): \(warning)")
                case .writtenAgain: break
                }
            }
            for s in vf.streams where s.isAttachedPicture {
                if container.canHold(s) == true, s.timeBase != nil {
                    dataStreams.append(s)
                } else {
                    warnings.append("\(spec.name): stream #\(s.index): cover art is not kept (\(container.name) cannot hold it; mp4, m4a and mkv can)")
                }
            }
        }
        dataWarnings = warnings
        // Streams of one file share its opening: it is read once.
        let sameFile = audioStream.map { $0.file === vf } ?? false
        if let lead, sameFile || !dataStreams.isEmpty {
            let indices = [lead.index] + (sameFile ? [audioStream!.index] : []) + dataStreams.map(\.index)
            let shared = try SharedInput(file: vf, streams: Set(indices))
            let reopen = { () throws(MediaError) -> InputFile in try open(spec.videoPath, cancellation) }
            video = try vs.map { s throws(MediaError) in try StreamReader(shared: shared, stream: s.index, reopen: reopen) }
            audio = try audioStream.map { s throws(MediaError) in
                sameFile ? try StreamReader(shared: shared, stream: s.index, reopen: reopen)
                         : try StreamReader(file: s.file, stream: s.index)
            }
            var readers: [StreamReader] = []
            for d in dataStreams { readers.append(try StreamReader(shared: shared, stream: d.index, reopen: reopen)) }
            data = readers
        } else {
            video = try vs.map { s throws(MediaError) in try StreamReader(file: vf, stream: s.index) }
            audio = try audioStream.map { s throws(MediaError) in try StreamReader(file: s.file, stream: s.index) }
            data = []
        }
    }
}

/// The first segment's video must be one the container holds (audio it
/// cannot hold is re-encoded; video is always copied).
func checkVideoHeld(_ first: Segment, container: Container) throws(MediaError) {
    if let s = first.video?.stream, container.canHold(s) == false {
        throw MediaError.invalid("could not write", path: s.file.path, stream: s.index,
                                 message: "\(container.name) cannot hold video codec '\(s.codecName)'",
                                 hint: container.muxer == "ipod" ? "write .mp4 or .mov, which hold it (an .m4a holds audio only)"
                                     : "choose a container that holds it (mov, mkv) or convert it with 'avtool transcode'")
    }
}

/// A later segment must match the first where stream copy puts them into one track.
func checkCompatible(_ seg: Segment, with first: Segment) throws(MediaError) {
    func mismatch(_ s: InputStream, _ what: String, _ a: String, _ b: String) -> MediaError {
        MediaError.invalid("could not concatenate", path: s.file.path, stream: s.index,
                           message: "\(what) differs from the first segment's (\(b), not \(a))",
                           hint: "segments must share codec parameters to be joined without re-encoding")
    }
    // Segments of audio alone are joined as such; audio alone and video do not mix.
    guard let a = first.video?.stream, let b = seg.video?.stream else {
        if let v = first.video?.stream ?? seg.video?.stream {
            let alone = first.video == nil ? first.main.stream : seg.main.stream
            throw MediaError.invalid("could not concatenate", path: alone.file.path, stream: alone.index,
                                     message: "it has audio only but '\(v.file.path)' has video",
                                     hint: "join files of audio alone, or files with video, in one concat")
        }
        try checkAudioCompatible(first, seg, mismatch)
        return
    }
    if a.codecName != b.codecName { throw mismatch(b, "video codec", a.codecName, b.codecName) }
    if a.width != b.width || a.height != b.height {
        throw mismatch(b, "video size", "\(a.width)x\(a.height)", "\(b.width)x\(b.height)")
    }
    if a.pixelFormat != b.pixelFormat { throw mismatch(b, "pixel format", a.pixelFormat ?? "?", b.pixelFormat ?? "?") }
    if a.extradata != b.extradata {
        throw mismatch(b, "video codec configuration (SPS/PPS)", "\(a.extradata.count) bytes", "\(b.extradata.count) bytes")
    }
    try checkAudioCompatible(first, seg, mismatch)
}

/// A later segment's audio against the first's: both or neither, of one
/// codec, rate and channel count (the packets go into one track).
private func checkAudioCompatible(_ first: Segment, _ seg: Segment,
                                  _ mismatch: (InputStream, String, String, String) -> MediaError) throws(MediaError) {
    switch (first.audio?.stream, seg.audio?.stream) {
    case (nil, nil): break
    case (let x?, nil):
        throw MediaError.invalid("could not concatenate", path: seg.main.stream.file.path,
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

/// A segment whose video edit list starts after the keyframe its first
/// shown frame needs (a trim made in Photos, or by `ffmpeg -ss … -c copy`)
/// begins with frames it decodes but does not show (flagged discard). An
/// MP4/MOV output hides them at its start (its edit list starts the track
/// at the first shown frame); in the middle of an output, or in a container
/// without edit lists, they would be shown again, the trim undone. There the
/// segment starts as `cut --mode exact` starts a part: the frames from its
/// first shown one to the next clean start are decoded from the keyframe
/// and encoded again, the rest copied (`Splicer`). Likewise a segment that
/// another follows, whose edit list ends before frames its shown ones are
/// decoded from (a trim's end inside a group of B-frames, `tail`): it ends
/// as a part ends, its last group re-encoded up to its shown end. The
/// coding of segment `k`'s trimmed start (`head`, `showsTrimmedStart`) or
/// end, nil where it has neither (`Segments` holds every such segment to
/// one codec record, the output's).
func spliceCoding(_ seg: Segment, index k: Int, head: Bool, tail: Bool, container: Container,
                  verb: String) throws(MediaError) -> StretchCoding? {
    guard let v = seg.video, head || tail else { return nil }
    let why: String
    if head {
        let place = k > 0 ? "after the first segment" : "in \(container.name), which has no edit lists,"
        why = "its edit list starts after a keyframe (a trim) and \(place) the frames before the trim would be shown again"
    } else {
        why = "its edit list ends before frames its shown ones are decoded from (a trim), which at the joint would be shown"
    }
    return try StretchCoding(stream: v.stream, container: container, operation: "could not \(verb)", otherwise: why)
}

/// Whether segment `k` starts with frames its edit list hides (flagged
/// discard, from a keyframe) where the output would show them: after the
/// first segment, or in a container without edit lists.
func showsTrimmedStart(_ seg: Segment, index k: Int, container: Container) throws(MediaError) -> Bool {
    guard let v = seg.video, k > 0 || !container.isISOBMFF else { return false }
    return try v.peek() && v.packet.isDiscard && v.packet.isKeyframe
}

extension Segment {
    /// Where the video's first shown frame is (the edit's start), in its
    /// stream's time base: the stream's start time, else 0.
    var shownStart: Int64 {
        guard let s = video?.stream, let tb = s.timeBase else { return 0 }
        return s.startTime?.rescaled(to: tb)?.value ?? 0
    }

    /// Where the video's last shown frame ends (the edit's end), in its
    /// stream's time base, as `hiddenAtEnd` takes it.
    var shownEnd: Int64? {
        guard let s = video?.stream, let start = s.startTime, let length = s.duration else { return nil }
        return start.value &+ length.value
    }

    /// Where an MP4/MOV input's edit list ends (`shownEnd`): it may end
    /// inside the last frame shown (an iPhone's, 6.7 ms into it), which is
    /// then shown only up to there. Nil for other inputs, whose stream
    /// duration is no edit's (Matroska's rounded, MPEG-TS's estimated).
    var editEnd: Int64? {
        guard video?.stream.file.formatName.hasPrefix("mov") == true else { return nil }
        return shownEnd
    }

    /// Where an MP4/MOV input's audio edit list ends, in its stream's time
    /// base: it may end inside the last packet (an iPhone's, 425 samples
    /// before that packet's end), whose samples after it are not played.
    var audioEditEnd: Int64? {
        guard let s = audio?.stream, s.file.formatName.hasPrefix("mov"), let start = s.startTime, let length = s.duration
        else { return nil }
        return start.value &+ length.value
    }
}
