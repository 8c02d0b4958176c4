import Media
import Pipeline
import Sync

/// Starts a cut's audio at `from` to the sample in a container without
/// edit lists, following the core's `AudioHeadPlan`: the frames around
/// `from` decoded and encoded again with the source's codec and settings on
/// its frame grid (silent before `from`), the source's packets copied from
/// the rejoin on. AAC-LC (libavcodec's encoder writes an AudioSpecificConfig
/// a decoder reads as the source's, so the copied and re-encoded frames share
/// one codec record) and PCM; other codecs keep the whole packet holding `from`.
final class AudioHead {
    let track: Int
    let stream: InputStream
    private var plan: AudioHeadPlan
    private let session: MuxSession
    private let reencoder: AudioReencoder
    private let clock: SampleClock
    private let frameTicks: Int64
    private let to: Int64?
    private var preroll: HeldPacket?
    private var held: [HeldPacket] = []
    private var started = false
    private var finished = false
    /// Re-encoded packets written.
    private(set) var frames = 0

    /// Why a stream's start cannot be re-encoded, or nil when it can.
    static func refusal(_ s: InputStream) -> String? {
        if s.codecName.hasPrefix("pcm_") { return nil }
        guard s.codecName == "aac" else { return "\(s.codecName) is not re-encoded" }
        // FF_PROFILE_AAC_LOW: HE-AAC's SBR and PS are not what libavcodec encodes.
        guard s.profile == nil || s.profile == 1 else { return "\(s.profileName ?? "this AAC profile") is not re-encoded" }
        return nil
    }

    /// `from`/`to`: the cut's ticks in the stream's time base. Nil when the
    /// encoder cannot write frames the source's codec record describes.
    init?(track: Int, stream s: InputStream, from: Int64, to: Int64?, session: MuxSession) throws(MediaError) {
        guard Self.refusal(s) == nil, let tb = s.timeBase, let clock = SampleClock(timeBase: tb, sampleRate: s.sampleRate),
              s.channelCount > 0 else { return nil }
        var settings = AudioEncoderSettings(codec: s.codecName, sampleRate: s.sampleRate, channels: s.channelCount)
        let pcm = s.codecName.hasPrefix("pcm_")
        if !pcm {
            // A few frames at a rate that keeps them transparent, every band
            // coded (noise substitution would leave the transform's aliasing
            // at the rejoin uncancelled).
            settings.bitRate = max(s.bitRate ?? 0, Int64(s.channelCount) * 96_000)
            settings.options = [("aac_pns", "0")]
        }
        let reencoder = try AudioReencoder(settings: settings, source: s)
        if !pcm {
            // What a decoder reads of the codec record must be the source's.
            let mine = AudioCodecRecord(codec: s.codecName, extradata: reencoder.encoder.extradata)
            guard AudioCodecRecord(codec: s.codecName, extradata: s.extradata).accepts(mine) else { return nil }
        }
        let frameSamples = pcm ? 0 : Int64(max(reencoder.encoder.frameSize, s.frameSize, 1024))
        guard let frameTicks = clock.ticks(frameSamples) else { return nil }
        self.track = track
        stream = s
        self.session = session
        self.reencoder = reencoder
        self.clock = clock
        self.frameTicks = frameTicks
        self.to = to
        plan = AudioHeadPlan(from: from, overlapping: !pcm)
    }

    /// Whether anything before `from` was silenced and re-encoded.
    var reencoded: Bool { frames > 0 }
    /// Where copying resumed (stream ticks), if it did after a run.
    var rejoin: Int64? { plan.rejoin }

    /// Takes the next packet of the track (one the cut keeps, pre-roll included).
    func offer(_ packet: borrowing Packet) throws(MediaError) {
        let t = packet.timing
        guard let pts = t.pts ?? t.dts else { return }
        switch plan.offer(pts: pts, duration: t.duration) {
        case .drop: break
        case .preroll:
            preroll = try HeldPacket(packet)
        case .decode:
            try decode(packet)
        case .decodeAndCopy:
            try decode(packet)
            held.append(try HeldPacket(packet))
        case .copy:
            try finish()
            try session.write(packet, track: track)
        }
    }

    private func decode(_ packet: borrowing Packet) throws(MediaError) {
        if !started {
            started = true
            guard let runStart = plan.runStart.flatMap(clock.samples), let from = clock.samples(plan.from) else { return }
            try reencoder.begin(stream)
            reencoder.start(at: runStart)
            try reencoder.pad(to: from, emit: write)
            if let p = preroll { try reencoder.send(p.packet, emit: write) }
            preroll = nil
        }
        try reencoder.send(packet, emit: write)
    }

    /// Writes a re-encoded packet inside the run, on the stream's time base.
    private func write(_ packet: borrowing Packet) throws(MediaError) {
        guard let t = clock.timing(packet.timing, from: reencoder.encoder.timeBase), let pts = t.pts,
              plan.keepsEncoded(pts: pts, frame: frameTicks, to: to) else { return }
        packet.timing = t
        frames += 1
        try session.write(packet, track: track)
    }

    /// Ends the run: the encoder flushed, its packets and the held copies
    /// written. Called at the first copied packet and when the track ends.
    func finish() throws(MediaError) {
        guard !finished else { return }
        finished = true
        if started { try reencoder.finish(emit: write) }
        for p in held { try session.write(p.packet, track: track) }
        held.removeAll()
        preroll = nil
    }
}
