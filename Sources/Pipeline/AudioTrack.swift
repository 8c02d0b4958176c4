import Media
import Sync

/// An audio track laid on one sample counter across segments (merge,
/// concat, fill-silence): every packet placed at the output sample position
/// its timestamp gives, gaps filled with silence, overlaps trimmed, the tail
/// cut at a limit and padded to an end. Two kinds: `AudioCopyTrack` (whole
/// packets, silence as frames of the same codec) and `AudioReencodeTrack`
/// (decoded, placed to the sample, encoded once).
public protocol AudioTrackWriter: TrackWriter {
    /// Output sample positions at or after this are cut; `nil`: none.
    var limit: Int64? { get set }
    /// Starts reading `stream`, whose packet positions (output samples, as
    /// `place` gets them) already carry the segment's shift `shift`. With
    /// `drift` (its clock rate relative to the output's, minus 1) the audio
    /// is resampled around `anchor` (re-encoding only). With `dropHidden`,
    /// packets flagged discard (audio an edit list hides) are left out, as
    /// they always are after the first segment.
    func begin(_ stream: InputStream, segment: Int, shift: Int64, drift: Double?, anchor: Int64,
               dropHidden: Bool) throws(MediaError)
    /// Takes the next packet of the current stream, which belongs at output
    /// sample `position` (`nil`: right after the one before).
    func send(_ packet: borrowing Packet, at position: Int64?) throws(MediaError)
    /// Silence from the cursor to `end`; starts the track at `start` if
    /// nothing was written yet.
    func pad(to end: Int64, startingAt start: Int64) throws(MediaError)
    /// Where the written audio starts and ends (output samples), and what
    /// was repaired on the way.
    var summary: AudioTrackSummary { get }
}

extension AudioTrackWriter {
    /// Starts reading `stream`, keeping the first segment's hidden packets (priming).
    public func begin(_ stream: InputStream, segment: Int, shift: Int64, drift: Double?, anchor: Int64) throws(MediaError) {
        try begin(stream, segment: segment, shift: shift, drift: drift, anchor: anchor, dropHidden: false)
    }

    /// A packet laid right after the one before.
    public func send(_ packet: borrowing Packet) throws(MediaError) { try send(packet, at: nil) }
}

/// What an audio track wrote, in output samples.
public struct AudioTrackSummary: Sendable {
    /// The first audible sample (after priming), and the end.
    public var start: Int64?
    public var end: Int64?
    /// Where a player stops: `end`, or before it where the last packet
    /// copied is shown in part, as the input's edit list showed it.
    public var shownEnd: Int64?
    public var silenceInserted: Int64
    public var samplesTrimmed: Int64
    public var repairs: [AudioRepair]
    /// The farthest a packet landed from where its timestamp put it (samples).
    public var largestShift: Int64 = 0
}

/// The error when the audio cannot be placed: a gap or overlap that whole
/// packets cannot fill to the sample (the plan should have chosen re-encoding).
public func misplacedAudioError(_ stream: InputStream, residual: Int64, at position: Int64, sampleRate: Int32) -> MediaError {
    MediaError.invalid("could not place audio of", path: stream.file.path, stream: stream.index,
                       message: "a gap or overlap at sample \(position) (\(sampleRate) Hz) is not a whole number of \(stream.codecName) frames (\(residual) samples off)")
}

/// Audio packets copied whole; silence made as frames of the stream's own
/// codec (`SilentAudio`), laid by `AudioAssembler` in whole-packet mode.
/// Packets the plan re-encodes (`ReencodedPackets`: runs on another frame
/// grid than the copied ones, after a gap or overlap that is not whole
/// frames) go through a `JointRegion` onto the copied frames' grid.
public final class AudioCopyTrack: AudioTrackWriter {
    public let track: Int
    public var limit: Int64? {
        didSet { region?.limit = limit }
    }
    private let session: MuxSession
    private let silence: SilentAudio
    private let fill: Bool
    private let longestFillSeconds: Int64
    private let toleranceSamples: Int64
    private var assembler: AudioAssembler
    private let silentPacket: Packet
    private var stream: InputStream?
    private var segment = 0
    private var dropHidden = false
    private var shift: Int64 = 0
    private var audibleStart: Int64?
    /// The end of the samples the first packets' decoder skips (`noteSkip`).
    private var skipEnd: Int64?
    /// The end of the last copied packet where the input showed it in part (`summary.shownEnd`).
    private var partlyShownEnd: Int64?
    private let reencoded: ReencodedPackets?
    /// The packet's order in the current segment's audio.
    private var ordinal = 0
    private var region: JointRegion?
    /// The last copied packets (a region's look-back), and the input they are from.
    private var recent: [HeldPacket] = []
    private var recentInput: (stream: InputStream, shift: Int64)?
    /// Silent frames written (frame codecs), and what the regions did.
    public private(set) var silentFrames = 0
    public private(set) var framesReencoded = 0
    public private(set) var regionsReencoded = 0
    private var regionSilence: Int64 = 0
    private var regionTrim: Int64 = 0
    private var regionRepairs: [AudioRepair] = []

    /// `fill` false keeps gaps as gaps (packets keep their own times).
    public init(track: Int, session: MuxSession, silence: SilentAudio, sampleRate: Int32, toleranceSamples: Int64,
                fill: Bool, longestFillSeconds: Int64, reencoded: ReencodedPackets? = nil) throws(MediaError) {
        self.track = track
        self.session = session
        self.silence = silence
        self.fill = fill
        self.longestFillSeconds = longestFillSeconds
        self.toleranceSamples = toleranceSamples
        self.reencoded = fill && reencoded?.isEmpty == false ? reencoded : nil
        assembler = AudioAssembler(sampleRate: sampleRate, frameSize: silence.quantum,
                                   toleranceSamples: fill ? toleranceSamples : Int64.max / 4)
        silentPacket = try Packet()
    }

    public func begin(_ stream: InputStream, segment: Int, shift: Int64, drift: Double?, anchor: Int64,
                      dropHidden: Bool) throws(MediaError) {
        self.stream = stream
        self.segment = segment
        self.dropHidden = dropHidden || segment > 0
        self.shift = shift
        ordinal = 0
        try region?.switchInput(stream, shift: shift)
    }

    public func send(_ packet: borrowing Packet, at position: Int64?) throws(MediaError) {
        guard let stream else { return }
        let n = ordinal
        ordinal += 1
        // A re-encoded stretch decodes priming too (and drops what it decodes).
        if let reencoded, reencoded.contains(segment: segment, ordinal: n) {
            // A stretch at the output's start: its first sample is the first heard.
            if let position { noteSkip(packet, at: position) }
            if audibleStart == nil && assembler.cursor == nil && !packet.isDiscard { audibleStart = heard(from: position) }
            if let region {
                // A copied run too short to rejoin: its packets are in the stretch already.
                region.absorbHeld()
            } else {
                try openRegion(stream, at: position, reencoded)
            }
            try region!.send(packet)
            return
        }
        // Later segments' priming is not replayed at the joint, nor a trim's hidden audio.
        if dropHidden && packet.isDiscard { return }
        if let region {
            try region.hold(packet, at: position)
            if region.held.count >= 3 { try closeRegion() }
            return
        }
        guard reencoded != nil else {
            try copy(packet, at: position)
            return
        }
        // Kept (for a stretch's look-back) before the write, which takes the
        // packet's reference and retimes it.
        let kept = try HeldPacket(packet)
        try copy(packet, at: position)
        remember(kept)
    }

    /// Where the samples a decoder is told to skip end (MP3's encoder delay,
    /// AAC's priming: side data on the first packet, which may reach into
    /// the packets after it), so the first heard sample is reported as the
    /// track's start, as a player and ffprobe see it.
    private func noteSkip(_ packet: borrowing Packet, at position: Int64) {
        let skip = packet.skipSamplesAtStart
        if skip > 0 && audibleStart == nil { skipEnd = position + skip }
    }

    private func heard(from position: Int64?) -> Int64? {
        guard let position else { return nil }
        return max(position, skipEnd ?? position)
    }

    /// Keeps the last two copied packets of the current input.
    private func remember(_ p: HeldPacket) {
        if recentInput?.stream.file !== stream?.file || recentInput?.stream.index != stream?.index {
            recent.removeAll()
        }
        recentInput = stream.map { ($0, shift) }
        recent.append(p)
        if recent.count > 2 { recent.removeFirst() }
    }

    /// The copy path: the packet laid whole at `position`, silence before it.
    private func copy(_ packet: borrowing Packet, at position: Int64?) throws(MediaError) {
        guard let stream else { return }
        let counted = stream.samples(in: packet)
        let samples = counted > 0 ? counted
            : Timestamp(packet.timing.duration, stream.timeBase!).rescaled(to: assembler.timeBase)?.value ?? 0
        let step = assembler.place(at: position, samples: samples, limit: limit)
        // A packet left out past the limit may land anywhere.
        if step.residual != 0 && step.writes {
            throw misplacedAudioError(stream, residual: step.residual, at: step.position, sampleRate: assembler.sampleRate)
        }
        try writeSilence(step.silence, at: step.position - step.silence)
        guard step.writes else { return }
        // Without filling, the packet keeps its own time (gaps stay gaps).
        let at = fill ? step.position : (position ?? step.position)
        noteSkip(packet, at: at)
        if audibleStart == nil && !packet.isDiscard { audibleStart = heard(from: at) }
        // The demuxer shortens the packet an input's edit list ends inside
        // to the part shown: the output shows no more of it than the input did.
        let shown = packet.timing.duration > 0
            ? Timestamp(packet.timing.duration, stream.timeBase!).rescaled(to: assembler.timeBase)?.value : nil
        let duration = min(samples, shown ?? samples)
        packet.timing = PacketTiming(pts: at, dts: at, duration: duration)
        try session.write(packet, track: track)
        partlyShownEnd = duration < samples ? at + duration : nil
    }

    private func openRegion(_ stream: InputStream, at position: Int64?, _ plan: ReencodedPackets) throws(MediaError) {
        // On the copied frames' grid: after copied frames, the grid's frame
        // nearest where they end (a run is copied when within the tolerance
        // of the grid, so two copied runs may be twice that apart: the
        // stretch between them starts and ends on the grid, each run within
        // the tolerance of it); at the start, the grid's frame before the first sample.
        let start = assembler.cursor.map { FrameGridPlan.nearestFrame(to: $0, from: plan.phase, frameSize: plan.frameSize) }
            ?? plan.gridStart(atOrBefore: position ?? 0)
        // The look-back is decoded from its own input (the segment before, at a joint).
        let lookback = assembler.cursor == nil ? nil : recentInput
        let r = try JointRegion(start: start, settings: plan.settings, stream: lookback?.stream ?? stream,
                                shift: lookback?.shift ?? shift, toleranceSamples: toleranceSamples,
                                longestFillSeconds: longestFillSeconds, limit: limit,
                                lookback: lookback == nil ? [] : recent,
                                session: session, track: track, frameSize: plan.frameSize)
        if let lookback, lookback.stream.file !== stream.file || lookback.stream.index != stream.index {
            try r.switchInput(stream, shift: shift)
        }
        region = r
        recent.removeAll()
        recentInput = nil
    }

    /// Ends the open stretch where the first held copied packet's frame
    /// goes (whole frames from the stretch's start), then copies the held packets.
    private func closeRegion() throws(MediaError) {
        guard let r = region else { return }
        region = nil
        let end = r.held.first?.position.map { FrameGridPlan.nearestFrame(to: $0, from: r.start, frameSize: silence.quantum) }
        try r.finish(before: end)
        framesReencoded += r.written
        regionsReencoded += 1
        regionSilence = regionSilence.addingReportingOverflow(r.silenceInserted).partialValue
        regionTrim = regionTrim.addingReportingOverflow(r.samplesTrimmed).partialValue
        regionRepairs += r.repairs
        if audibleStart == nil { audibleStart = r.start }
        assembler.rebase(at: max(end ?? r.writtenEnd, r.writtenEnd))
        for h in r.held {
            let kept = try HeldPacket(h.packet)
            try copy(h.packet, at: h.position)
            remember(kept)
        }
    }

    public func endSegment() throws(MediaError) {
        // Copied packets after a stretch: it ends before them.
        if let region, !region.held.isEmpty { try closeRegion() }
    }

    public func pad(to end: Int64, startingAt start: Int64) throws(MediaError) {
        if let region {
            try region.pad(to: end)
            return
        }
        assembler.start(at: start)
        let from = assembler.cursor!
        // Without silence to make, an end short by less than one frame stays
        // short (the copied-audio scan re-encodes where it is short by more).
        if silence.unavailable != nil, case let (short, false) = end.subtractingReportingOverflow(from),
           short < silence.quantum { return }
        try writeSilence(assembler.pad(to: end), at: from)
    }

    public func finish() throws(MediaError) {
        try closeRegion()
    }

    public var summary: AudioTrackSummary {
        let end = region?.cursor ?? assembler.cursor
        return AudioTrackSummary(start: audibleStart ?? assembler.origin, end: end,
                          shownEnd: region == nil ? partlyShownEnd ?? end : end,
                          silenceInserted: assembler.silenceInserted.addingReportingOverflow(regionSilence).partialValue,
                          samplesTrimmed: assembler.samplesTrimmed.addingReportingOverflow(regionTrim).partialValue,
                          repairs: (assembler.repairs + regionRepairs).sorted { $0.position < $1.position },
                          largestShift: assembler.largestShift)
    }

    /// Silent packets covering `count` samples from `position`.
    private func writeSilence(_ count: Int64, at position: Int64) throws(MediaError) {
        guard count > 0 else { return }
        partlyShownEnd = nil
        if AudioAssembler.exceedsFillLimit(count, sampleRate: assembler.sampleRate, seconds: longestFillSeconds) {
            throw fillLimitError(samples: count, at: position, sampleRate: assembler.sampleRate,
                                 limitSeconds: longestFillSeconds, path: stream?.file.path, stream: stream?.index)
        }
        var left = count, at = position
        while left > 0 {
            let n = min(left, silence.packetSamples)
            try silence.packet(samples: n, into: silentPacket)
            silentPacket.timing = PacketTiming(pts: at, dts: at, duration: n)
            try session.write(silentPacket, track: track)
            if silence.quantum > 1 { silentFrames += 1 }
            left -= n
            at = at.addingReportingOverflow(n).partialValue
        }
    }
}

/// Audio decoded, placed to the sample and encoded once (`AudioReencoder`).
public final class AudioReencodeTrack: AudioTrackWriter {
    public var track: Int { writer.track }
    private let writer: ReencodeWriter<AudioReencoder>
    private var reencoder: AudioReencoder { writer.reencoder }
    private let session: MuxSession
    private var dropHidden = false

    public init(_ reencoder: AudioReencoder, track: Int, session: MuxSession) {
        writer = ReencodeWriter(reencoder, track: track, session: session)
        self.session = session
    }

    public var limit: Int64? {
        get { reencoder.limit }
        set { reencoder.limit = newValue }
    }

    public func begin(_ stream: InputStream, segment: Int, shift: Int64, drift: Double?, anchor: Int64,
                      dropHidden: Bool) throws(MediaError) {
        self.dropHidden = dropHidden
        reencoder.limit = nil
        try reencoder.begin(stream, shift: shift, drift: drift, anchor: anchor)
    }

    /// The decoder's own timestamps place the samples; `position` is not needed.
    public func send(_ packet: borrowing Packet, at position: Int64?) throws(MediaError) {
        if dropHidden && packet.isDiscard { return }
        try writer.send(packet)
    }

    public func endSegment() throws(MediaError) {
        try reencoder.endInput { p throws(MediaError) in try session.write(p, track: track) }
    }

    public func pad(to end: Int64, startingAt start: Int64) throws(MediaError) {
        reencoder.start(at: start)
        try reencoder.pad(to: end) { p throws(MediaError) in try session.write(p, track: track) }
    }

    public func finish() throws(MediaError) { try writer.finish() }

    public var summary: AudioTrackSummary {
        AudioTrackSummary(start: reencoder.origin, end: reencoder.cursor, silenceInserted: reencoder.silenceInserted,
                          samplesTrimmed: reencoder.samplesTrimmed, repairs: reencoder.repairs,
                          largestShift: reencoder.largestShift)
    }
}
