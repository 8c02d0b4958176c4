import Media
import Sync

/// How an exact-mode cut codes the frames it re-encodes so that they sit
/// in the source's stream: the source's codec (libx264 for H.264, libx265
/// for HEVC), size, pixel format, colour, profile and level, no B-frames.
/// H.264: the new frames' SPS and PPS get an id the source does not use
/// (x264's `sps-id`) and sit beside the source's in `avcC`, so the sample
/// entry stays `avc1`; their VUI timing is the stream's frame rate
/// (`force-cfr`), which demuxers take each frame's duration from. HEVC: x265 cannot number its parameter sets, so
/// each stretch carries its own VPS/SPS/PPS in band, the first copied
/// picture after it the source's, and the sample entry is `hev1` (which
/// allows parameter sets in band) except in MP4/MOV, where the stretches
/// get a sample description of their own: the track's first is the
/// source's `hvc1` (its `hvcC`), a second `hvc1` holds the encoder's
/// VPS/SPS/PPS, and the re-encoded samples point at it (as editors'
/// QuickTime files do; added to the index after the muxer's trailer,
/// `IndexCompletion.Descriptions`), so the sample entry stays `hvc1` and no
/// parameter set is in band.
/// A codec whose every frame is a keyframe needs no coding: see `forExactCut`.
public final class StretchCoding {
    public let stream: InputStream
    public let nal: NALStream
    public let settings: VideoEncoderSettings
    /// The output's codec record and sample-entry tag.
    public let record: [UInt8]
    public let tag: String?
    /// HEVC in MP4/MOV: the `hvcC` record of the re-encoded stretches'
    /// sample description (the encoder's parameter sets); nil where they
    /// are in band.
    public let stretchRecord: [UInt8]?
    /// Where the new parameter sets are, for the report.
    public let parameterSets: String
    /// The encoder's parameter sets (NAL units) as the output holds them,
    /// and as the encoder made them.
    public let encoderSets: [[UInt8]]
    private let rawSets: [[UInt8]]
    private var spare: Encoder?
    private let operation: String

    /// Errors say `operation` ("could not cut exactly") and what does
    /// without re-encoding (`otherwise`).
    public init(stream s: InputStream, container: Container, operation: String = "could not cut exactly",
                otherwise: String = "--mode keyframe cuts it without re-encoding") throws(MediaError) {
        stream = s
        self.operation = operation
        func refuse(_ why: String) -> MediaError {
            MediaError.invalid(operation, path: s.file.path, stream: s.index, message: "\(why); \(otherwise)")
        }
        guard s.codecName == "h264" || s.codecName == "hevc" else {
            throw refuse("exact mode re-encodes H.264 and HEVC only (video whose every frame is a keyframe, such as MJPEG or ProRes, it copies), not \(s.codecName)")
        }
        guard let nal = NALStream(codecName: s.codecName, extradata: s.extradata) else {
            throw refuse("its \(s.codecName) is not stored with a codec record (avcC/hvcC) as in MP4, MOV or Matroska (MPEG-TS input: remux it to MP4 first)")
        }
        self.nal = nal
        guard !s.isInterlaced else { throw refuse("it is interlaced") }
        guard let format = s.pixelFormat, let tb = s.timeBase, s.width > 0, s.height > 0 else {
            throw refuse("its size, pixel format or time base is unknown")
        }
        var settings = VideoEncoderSettings(width: s.width, height: s.height, pixelFormat: format, timeBase: tb)
        settings.frameRate = s.averageFrameRate ?? s.realFrameRate
        settings.sampleAspectRatio = s.sampleAspectRatio
        switch nal.codec {
        case .h264:
            let used = nal.h264IDs
            guard let id = (1...31).first(where: { !used.sps.contains($0) && !used.pps.contains($0) }) else {
                throw refuse("its codec record uses every parameter set id")
            }
            settings.codec = "libx264"
            settings.options = [("preset", "medium"), ("crf", "14"),
                                ("x264-params", "sps-id=\(id):bframes=0:scenecut=0:open-gop=0:keyint=infinite:force-cfr=1")]
            if let profile = Self.x264Profile(s.profile) { settings.options.append(("profile", profile)) }
            if let level = s.level { settings.options.append(("level", level == 9 ? "1b" : "\(level / 10).\(level % 10)")) }
            parameterSets = "a second SPS and PPS (id \(id)) beside the source's in avcC"
            tag = nil
        case .hevc:
            guard container.muxer != "mpegts" else {
                throw refuse("HEVC re-encoded frames carry their own parameter sets in band, which an MPEG-TS output loses when its muxer repeats the source's; cut into MP4, MOV or MKV")
            }
            settings.codec = "libx265"
            var params = "bframes=0:scenecut=0:open-gop=0:repeat-headers=0:log-level=error"
            if let level = s.level { params += ":level-idc=\(level / 30).\((level % 30) / 3)" }
            settings.options = [("preset", "fast"), ("crf", "14"), ("x265-params", params)]
            parameterSets = container.isISOBMFF ? "in a second hvc1 sample description (hvcC) that the re-encoded stretches use"
                : "in band in each re-encoded stretch and the picture after it"
            tag = container.isISOBMFF ? "hvc1" : nil
        }
        self.settings = settings
        let encoder: Encoder
        do {
            encoder = try Encoder(video: settings, source: s)
        } catch {
            throw refuse("its coding cannot be reproduced: \(error.message)")
        }
        rawSets = encoder.extradata.withUnsafeBytes { NALStream.annexBUnits($0) }.filter {
            let t = $0.withUnsafeBytes { nal.type($0) }
            return nal.codec == .h264 ? (t == 7 || t == 8) : (32...34).contains(t)
        }
        // The new SPS announces the source's reorder depth (see `NALStream.h264SPS`).
        encoderSets = rawSets.map { u in
            nal.codec == .h264 && u.first.map({ $0 & 0x1f == 7 }) == true
                ? NALStream.h264SPS(u, reorder: s.reorderDelay) ?? u : u
        }
        guard !encoderSets.isEmpty else { throw refuse("\(settings.codec) gave no parameter sets") }
        switch nal.codec {
        case .h264:
            guard let r = nal.h264Record(adding: encoderSets) else { throw refuse("its codec record cannot take another parameter set") }
            record = r
            stretchRecord = nil
        case .hevc:
            record = nal.record
            if container.isISOBMFF {
                guard let r = nal.hevcRecord(with: encoderSets) else { throw refuse("\(settings.codec)'s parameter sets make no hvcC record") }
                stretchRecord = r
            } else {
                stretchRecord = nil
            }
        }
        spare = encoder
    }

    /// The coding of an exact cut's re-encoded stretches; nil for video
    /// whose every frame is a keyframe (MJPEG, ProRes, DNxHD, PNG…): any
    /// frame starts a cut, which copies it and needs no re-encoding.
    public static func forExactCut(_ s: InputStream, container: Container) throws(MediaError) -> StretchCoding? {
        s.isIntraOnly ? nil : try StretchCoding(stream: s, container: container)
    }

    /// Whether the stretches' parameter sets are in band (not in a sample description of their own).
    var inBand: Bool { nal.codec == .hevc && stretchRecord == nil }

    /// An encoder for one stretch; its parameter sets must be those in the record.
    func encoder() throws(MediaError) -> Encoder {
        if let e = spare {
            spare = nil
            return e
        }
        let e = try Encoder(video: settings, source: stream)
        let sets = e.extradata.withUnsafeBytes { NALStream.annexBUnits($0) }.filter { u in rawSets.contains(u) }
        guard sets.count == rawSets.count else {
            throw MediaError.invalid(operation, path: stream.file.path, stream: stream.index,
                                     message: "\(settings.codec) gave other parameter sets for the second stretch")
        }
        return e
    }

    /// A re-encoded packet (Annex B) as the source stores its packets:
    /// length-prefixed, without parameter sets or delimiters, HEVC's
    /// parameter sets in band at the stretch's start (where they are).
    func payload(encoded b: UnsafeRawBufferPointer, first: Bool) -> [UInt8] {
        let units = NALStream.annexBUnits(b).filter { u in
            let t = u.withUnsafeBytes { nal.type($0) }
            switch nal.codec {
            case .h264: return ![7, 8, 9, 12].contains(t)
            case .hevc: return ![32, 33, 34, 35, 38].contains(t)
            }
        }
        return nal.lengthPrefixed((first && inBand ? encoderSets : []) + units)
    }

    /// The first copied packet after a stretch: for HEVC with the sets in
    /// band, the source's parameter sets before it (the stretch's replaced them).
    func resumePayload(_ b: UnsafeRawBufferPointer) -> [UInt8]? {
        guard inBand else { return nil }
        let sets = nal.parameterSets.filter { (32...34).contains($0.withUnsafeBytes { nal.type($0) }) }
        return nal.lengthPrefixed(sets) + Array(b)
    }

    static func x264Profile(_ p: Int32?) -> String? {
        guard let p else { return nil }
        switch p & 0xff {
        case 66, 88: return "baseline"
        case 77: return "main"
        case 100: return "high"
        case 110: return "high10"
        case 122: return "high422"
        case 244, 44: return "high444"
        default: return nil
        }
    }
}

/// Decodes the source from a stretch's first packet and encodes the frames
/// shown in its window, holding only the encoded packets until the
/// stretch's end is known.
final class StretchRun {
    private let coding: StretchCoding
    private let decoder: Decoder
    private let encoder: Encoder
    private let frame: Frame
    private let out: Packet
    /// HEVC: each frame's Dolby Vision RPU and HDR10+ metadata, carried to its new picture as the copied ones have theirs.
    private let metadata: PictureMetadataCarrier?
    private(set) var encoded: [(pts: Int64, bytes: [UInt8], keyframe: Bool)] = []

    init(coding: StretchCoding) throws(MediaError) {
        self.coding = coding
        decoder = try Decoder(stream: coding.stream)
        encoder = try coding.encoder()
        frame = try Frame()
        out = try Packet()
        metadata = coding.nal.codec == .hevc ? PictureMetadataCarrier(kinds: [.dolbyVision, .hdr10Plus]) : nil
    }

    /// Pictures of the stretch given an RPU, HDR10+ metadata.
    var carried: (rpus: Int, hdr10Plus: Int) { (metadata?.carriedRPUs ?? 0, metadata?.carriedHDR10Plus ?? 0) }

    func decode(_ packet: borrowing Packet, window: Range<Int64>) throws(MediaError) {
        while try !decoder.send(packet) { try drain(window) }
        try drain(window)
    }

    /// Drains both codecs; the encoded packets, in order.
    func finish(window: Range<Int64>) throws(MediaError) -> [(pts: Int64, bytes: [UInt8], keyframe: Bool)] {
        try decoder.sendEnd()
        try drain(window)
        try encoder.sendEnd()
        try drainEncoder()
        return encoded
    }

    private func drain(_ window: Range<Int64>) throws(MediaError) {
        while case .ready = try decoder.receive(into: frame) {
            defer { frame.unref() }
            guard let pts = frame.bestEffortTimestamp, window.contains(pts) else { continue }
            frame.pts = pts
            frame.clearPictureType()
            metadata?.note(frame, pts: pts)
            while try !encoder.send(frame) { try drainEncoder() }
            try drainEncoder()
        }
    }

    private func drainEncoder() throws(MediaError) {
        while case .ready = try encoder.receive(into: out) {
            try metadata?.apply(to: out)
            let first = encoded.isEmpty
            let bytes = out.withData { coding.payload(encoded: $0, first: first) }
            encoded.append((out.timing.pts ?? 0, bytes, out.isKeyframe))
        }
    }
}

/// Carries out a `SmartCutPlan`'s actions for one video track: holds each
/// offered packet (by reference) until it is written or discarded, runs
/// the stretches, and writes their packets with the plan's DTS.
public final class Splicer: TrackWriter {
    public let coding: StretchCoding
    private let session: MuxSession
    public let track: Int
    private typealias Held = (kept: HeldPacket, info: SmartCutPacket)
    private var plan: SmartCutPlan
    private var held: [Int: Held] = [:]
    private var offered = 0
    private var run: StretchRun?
    /// The next copied packet follows a stretch.
    private var resuming = false
    /// The last copied packet, held back until it is known whether a
    /// stretch follows it (with the payload to write instead, if rebuilt).
    private var pending: (Held, [UInt8]?)?
    private let scratch: Packet
    public private(set) var stretches: [(from: Int64, until: Int64, frames: Int)] = []

    public init(coding: StretchCoding, plan: SmartCutPlan, session: MuxSession, track: Int) throws(MediaError) {
        self.coding = coding
        self.plan = plan
        self.session = session
        self.track = track
        scratch = try Packet()
    }

    /// Whether the plan has ended the track (nothing more is needed).
    public var ended: Bool { plan.ended }

    /// Takes the track's next packet in decode order: held (numbered as the
    /// plan numbers them), offered to the plan, and the plan's actions done.
    public func send(_ packet: borrowing Packet) throws(MediaError) {
        let t = packet.timing
        let info = SmartCutPacket(pts: t.pts ?? t.dts ?? 0, dts: t.dts, duration: t.duration, keyframe: packet.isKeyframe,
                                  kind: packet.withData { coding.nal.pictureKind($0) })
        held[offered] = (try HeldPacket(packet), info)
        offered += 1
        try perform(plan.offer(info), window: plan.window)
    }

    /// Ends the track: the plan's last actions, the packet held back written.
    public func finish() throws(MediaError) {
        try perform(plan.finish(), window: plan.window)
        try flush()
    }

    private func perform(_ actions: [SmartCutPlan.Action], window: Range<Int64>) throws(MediaError) {
        // Decodes followed by their stretch in one batch (the end's GOP) use its range.
        let batchWindow = actions.lazy.compactMap { a -> Range<Int64>? in
            if case .encode(let s) = a { s.from..<max(s.until, s.from) } else { nil }
        }.first ?? window
        for action in actions {
            switch action {
            case .decode(let n):
                guard let h = held[n] else { continue }
                if run == nil { run = try StretchRun(coding: coding) }
                try run!.decode(h.kept.packet, window: batchWindow)
            case .encode(let stretch):
                try encode(stretch)
            case .write(let n):
                guard let h = held.removeValue(forKey: n) else { continue }
                try flush()
                var bytes: [UInt8]? = nil
                if resuming {
                    resuming = false
                    bytes = h.kept.packet.withData { coding.resumePayload($0) }
                }
                pending = (h, bytes)
            case .discard(let n):
                held.removeValue(forKey: n)
            }
        }
    }

    /// Writes the copied packet held back (rebuilt when it follows a stretch).
    private func flush() throws(MediaError) {
        guard let (h, rebuilt) = pending else { return }
        pending = nil
        guard let bytes = rebuilt else {
            try session.write(h.kept.packet, track: track)
            return
        }
        let timing = h.kept.packet.timing
        try scratch.fill(bytes, keyframe: h.kept.packet.isKeyframe)
        scratch.timing = timing
        try session.write(scratch, track: track)
    }

    private func encode(_ stretch: ReencodedStretch) throws(MediaError) {
        try flush()
        let range = stretch.from..<max(stretch.until, stretch.from)
        guard let current = run else {
            stretches.append((stretch.from, stretch.until, 0))
            return
        }
        run = nil
        let packets = try current.finish(window: range)
        let firstSample = session.packetCount(track: track)
        var durations: [Int64: Int64] = [:]
        for h in held.values { durations[h.info.pts] = h.info.duration }
        let pts = packets.map(\.pts)
        let dts = stretch.decodeTimes(pts: pts, durations: pts.map { durations[$0] ?? 0 })
        for (i, p) in packets.enumerated() {
            try scratch.fill(p.bytes, keyframe: p.keyframe)
            scratch.timing = PacketTiming(pts: p.pts, dts: dts[i], duration: durations[p.pts] ?? 0)
            try session.write(scratch, track: track)
        }
        if let r = coding.stretchRecord, !packets.isEmpty {
            try session.describe(track: track, samples: firstSample..<session.packetCount(track: track), record: r)
        }
        // A stretch open at the end (no clean keyframe after the start) ends where its frames do.
        let end = stretch.until < .max ? stretch.until : packets.map { $0.pts &+ (durations[$0.pts] ?? 0) }.max() ?? stretch.from
        stretches.append((stretch.from, end, packets.count))
        resuming = !packets.isEmpty
    }
}
