import Media
import Sync

/// The presentation times of one video stream's frames, from a read of its
/// packets only (nothing decoded), on the stream's own time base: what cut,
/// split and chunked transcodes place their boundaries on.
public struct PresentationTimes: Sendable {
    /// The keyframes' times (or every frame's, when asked), sorted.
    public var times: [Int64]
    /// The earliest frame's time and the latest frame's end; `nil` without frames.
    public var start: Int64?
    public var end: Int64?
    /// Every frame's time and coded size, in file order, when asked (`sizes`).
    public var frames: [QualitySamples.Frame] = []

    /// Reads `stream` of the file `stream.file` opened anew (`sameAs` that
    /// opening, so a file changed since is told), keyframes only unless
    /// `everyFrame`; each frame's packet size too with `sizes`.
    public init(of stream: InputStream, everyFrame: Bool = false, sizes: Bool = false,
                cancellation: Cancellation) throws(MediaError) {
        let source = stream.file
        let file = try InputFile(path: source.path, cancellation: cancellation,
                                 packetsOnly: source.timingsNeedNoProbe, sameAs: source)
        file.discardAll(except: [stream.index])
        let packet = try Packet()
        var times: [Int64] = []
        var start: Int64?, end: Int64?
        var frames: [QualitySamples.Frame] = []
        while try file.read(into: packet) {
            guard packet.streamIndex == stream.index, let pts = packet.timing.pts ?? packet.timing.dts else { continue }
            start = min(start ?? pts, pts)
            end = max(end ?? pts, pts.addingReportingOverflow(max(packet.timing.duration, 0)).overflow ? .max : pts + max(packet.timing.duration, 0))
            if packet.isKeyframe || everyFrame { times.append(pts) }
            if sizes { frames.append(QualitySamples.Frame(pts: pts, bytes: packet.size)) }
        }
        self.times = times.sorted()
        self.start = start
        self.end = end
        self.frames = frames
    }
}
