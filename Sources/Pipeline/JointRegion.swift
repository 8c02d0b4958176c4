import Media
import Sync

/// Which audio packets of an assembly are re-encoded onto the grid of the
/// copied frames (the core's `FrameGridPlan`), by segment and by their
/// order in the segment's audio (every packet its reader gives, discarded
/// ones included).
public struct ReencodedPackets: Sendable {
    /// Per segment, the ranges of packet ordinals re-encoded, in order.
    public var ranges: [[Range<Int>]]
    /// The copied frames' grid: their positions are `phase` plus whole frames.
    public var phase: Int64
    public var frameSize: Int64
    /// An encoder whose frames decode as part of the stream.
    public var settings: AudioEncoderSettings

    public init(ranges: [[Range<Int>]], phase: Int64, frameSize: Int64, settings: AudioEncoderSettings) {
        self.ranges = ranges
        self.phase = phase
        self.frameSize = frameSize
        self.settings = settings
    }

    public func contains(segment: Int, ordinal: Int) -> Bool {
        guard segment >= 0, segment < ranges.count else { return false }
        return ranges[segment].contains { $0.contains(ordinal) }
    }

    /// Whether no packet is re-encoded. (A range may run to `Int.max`: to the segment's end.)
    public var isEmpty: Bool { ranges.allSatisfy { $0.allSatisfy(\.isEmpty) } }

    /// The first position on the grid at or before `position`.
    public func gridStart(atOrBefore position: Int64) -> Int64 {
        FrameGridPlan.gridStart(atOrBefore: position, phase: phase, frameSize: frameSize)
    }
}

/// One stretch of a copied audio track re-encoded onto the copied frames'
/// grid: from `start` (where the copied frames before it end, or a grid
/// position before its first sample), its packets decoded and laid to the
/// sample by the re-encoder's own assembler (silence where they leave gaps,
/// overlaps trimmed), encoded by an encoder whose frames decode as part of
/// the stream, and cut where the next copied frame starts. The encoder also
/// hears the copied frame before the stretch and the first copied ones after
/// it, so the frames at both seams overlap their copied neighbours as the
/// source's frames did.
final class JointRegion {
    let start: Int64
    private let reencoder: AudioReencoder
    private let session: MuxSession
    private let track: Int
    private let frameSize: Int64
    /// Encoded frames not written yet: the stretch's end is not known until
    /// the next copied packet comes.
    private var pending: [HeldPacket] = []
    /// Copied packets after the stretch: decoded for its last frames, written after them.
    private(set) var held: [HeldPacket] = []
    /// Frames written, and where the last one ends.
    private(set) var written = 0
    private(set) var writtenEnd: Int64
    /// Frames kept back before writing, so the cut at the end can still drop them.
    private static let margin = 4

    /// `lookback`: the copied packets just before `start` in the same input
    /// (the last is decoded for the encoder, the one before only warms the decoder).
    init(start: Int64, settings: AudioEncoderSettings, stream: InputStream, shift: Int64, toleranceSamples: Int64,
         longestFillSeconds: Int64, limit: Int64?, lookback: [HeldPacket], session: MuxSession, track: Int,
         frameSize: Int64) throws(MediaError) {
        self.start = start
        self.session = session
        self.track = track
        self.frameSize = frameSize
        writtenEnd = start
        reencoder = try AudioReencoder(settings: settings, source: stream, toleranceSamples: toleranceSamples)
        reencoder.longestFillSeconds = longestFillSeconds
        reencoder.limit = limit
        try reencoder.begin(stream, shift: shift)
        // An encoder's packets come `initialPadding` samples before the input
        // they code; so they land on the grid, its input starts `lead` samples
        // of silence before a grid position (AAC: none, its padding is a frame;
        // AC-3: 1280 of 1536).
        let padding = Int64(reencoder.encoder.initialPadding) % frameSize
        let lead = padding == 0 ? 0 : frameSize - padding
        let heard = lookback.isEmpty ? start : start &- frameSize
        reencoder.start(at: heard &- lead)
        try reencoder.pad(to: heard, emit: take)
        baseline = (reencoder.silenceInserted, reencoder.samplesTrimmed, reencoder.repairs.count)
        if let last = lookback.last {
            if lookback.count >= 2 { try reencoder.warm(lookback[lookback.count - 2].packet) }
            try reencoder.send(last.packet, emit: take)
        }
    }

    /// The re-encoder's counts before the stretch's own audio (the lead's silence).
    private var baseline: (silence: Int64, trim: Int64, repairs: Int) = (0, 0, 0)

    var limit: Int64? {
        get { reencoder.limit }
        set { reencoder.limit = newValue }
    }

    /// A packet of the stretch.
    func send(_ packet: borrowing Packet) throws(MediaError) {
        try reencoder.send(packet, emit: take)
    }

    /// A copied packet after the stretch (at output sample `position`):
    /// decoded so the stretch's last frames hear it, written after them.
    func hold(_ packet: borrowing Packet, at position: Int64?) throws(MediaError) {
        try reencoder.send(packet, emit: take)
        held.append(try HeldPacket(packet, position: position))
    }

    /// The held packets belong to the stretch after all (another stretch
    /// follows them at once): they were decoded into it already.
    func absorbHeld() { held.removeAll() }

    /// Goes on with the next segment's audio.
    func switchInput(_ stream: InputStream, shift: Int64) throws(MediaError) {
        try reencoder.endInput(emit: take)
        try reencoder.begin(stream, shift: shift)
    }

    /// Silence to `end` (output samples).
    func pad(to end: Int64) throws(MediaError) {
        try reencoder.pad(to: end, emit: take)
    }

    /// Flushes the encoder and writes its frames that start before `end`
    /// (where the next copied frame goes; `nil`: all of them).
    func finish(before end: Int64?) throws(MediaError) {
        try reencoder.finish(emit: take)
        for p in pending where end.map({ p.position! < $0 }) ?? true { try write(p) }
        pending.removeAll()
    }

    var silenceInserted: Int64 { reencoder.silenceInserted &- baseline.silence }
    var samplesTrimmed: Int64 { reencoder.samplesTrimmed &- baseline.trim }
    var repairs: [AudioRepair] { Array(reencoder.repairs.dropFirst(baseline.repairs)) }
    /// The first sample laid (after the look-back), for a track that starts here.
    var cursor: Int64? { reencoder.cursor }

    private func take(_ packet: borrowing Packet) throws(MediaError) {
        guard let pts = packet.timing.pts, pts >= start else { return }
        pending.append(try HeldPacket(packet, position: pts))
        while pending.count > Self.margin { try write(pending.removeFirst()) }
    }

    private func write(_ p: HeldPacket) throws(MediaError) {
        let pts = p.position!
        let duration = p.packet.timing.duration > 0 ? p.packet.timing.duration : frameSize
        p.packet.timing = PacketTiming(pts: pts, dts: pts, duration: duration)
        try session.write(p.packet, track: track)
        written += 1
        writtenEnd = pts &+ duration
    }
}
