import Media
import Pipeline
import Sync

/// How the main video stream is encoded: size, bit depth, HDR metadata,
/// x265 options, the per-picture metadata carried. A transcode and every
/// chunk of a chunked one decide it here.
struct VideoPlan {
    private(set) var settings: VideoEncoderSettings
    let hdr: Bool
    let carrying: PictureMetadata.Kinds
    let dolbyVision: HDRMetadataOutcome?
    /// With `--sdr` on HDR: how the picture is tone-mapped.
    let toneMap: ToneMapSettings?
    var warnings: [String] = []

    init(_ v: InputStream, options: TranscodeOptions, globalHeader: Bool, cancellation: Cancellation) throws(MediaError) {
        // HDR stays HDR: 10-bit, and the mastering display / light levels go to x265.
        var metadata = v.hasHDRTransfer ? v.containerHDRMetadata : nil
        let fps = options.frameRate ?? v.averageFrameRate ?? v.realFrameRate
        // The first frame tells what the container may not: HDR10 metadata
        // in SEI, RPUs in a stream whose container has no Dolby Vision record.
        var record = v.dolbyVision
        if (v.hasHDRTransfer && metadata == nil) || (record == nil && v.codecName == "hevc") {
            let first = try FirstFrameFacts(v, cancellation: cancellation)
            if v.hasHDRTransfer && metadata == nil { metadata = first.hdr }
            if record == nil, let rpu = first.dolbyVisionRPU {
                let rate = (v.averageFrameRate ?? v.realFrameRate).map { Double($0.numerator) / Double($0.denominator) } ?? 30
                record = DolbyVisionConfiguration(rpu: rpu, transfer: v.colorTransfer, width: v.width, height: v.height,
                                                  framesPerSecond: rate)
                if record == nil && !options.sdr {
                    warnings.append("stream #\(v.index): its Dolby Vision RPUs are not kept: the file has no Dolby Vision configuration record and the RPUs' profile (\(rpu.profile.map(String.init) ?? "unknown")) needs one")
                }
            }
        }
        let target = outputSize(input: (v.width, v.height), requested: options.size)
        var carrying: PictureMetadata.Kinds = []
        var dolbyVision: HDRMetadataOutcome?
        var keptDV: DolbyVisionConfiguration?
        var toneMap: ToneMapSettings?
        if options.sdr {
            // An SDR rendering: the picture tone-mapped, no HDR metadata of any kind left.
            if let dv = record, dv.compatibilityID == 0 {
                throw MediaError.invalid("could not transcode", path: v.file.path, stream: v.index,
                                         message: "--sdr renders a base layer, and Dolby Vision profile \(dv.name) has no compatible one: its picture is only right with its RPUs applied")
            }
            if v.hasHDRTransfer {
                toneMap = ToneMapSettings(toneMap: options.toneMap, pixelFormat: options.tenBit ? "yuv420p10le" : "yuv420p")
                dolbyVision = record.map { HDRMetadataOutcome(action: .toneMapped, profile: $0.name, reason: "its base layer tone-mapped") }
            } else {
                warnings.append("stream #\(v.index): --sdr: the video is already SDR (transfer \(v.colorTransfer ?? "unspecified")): nothing to tone-map")
            }
            metadata = nil
        } else if let dv = record {
            let plan = DolbyVisionPlan(dv, codec: v.codecName, resized: target != (v.width, v.height),
                                       wanted: options.dolbyVision)
            switch plan {
            case .carry:
                carrying.insert(.dolbyVision)
                keptDV = dv
                // A higher constant rate (--fps) may need a higher level: the record says the output's.
                if let f = options.frameRate,
                   let level = DolbyVisionConfiguration.level(width: target.width, height: target.height,
                                                              framesPerSecond: Double(f.numerator) / Double(f.denominator)),
                   level > dv.level {
                    keptDV?.level = level
                }
                dolbyVision = HDRMetadataOutcome(action: .carried, profile: dv.name)
            case .drop(let why, let refuse):
                if refuse {
                    throw MediaError.invalid("could not transcode", path: v.file.path, stream: v.index,
                                             message: "Dolby Vision profile \(dv.name) cannot be kept: \(why); its picture has no compatible base layer, so without its RPUs its colours are wrong",
                                             hint: "keep the size, or add --no-dolby-vision to encode the picture as it is")
                }
                dolbyVision = HDRMetadataOutcome(action: .dropped, profile: dv.name, reason: why)
                if options.dolbyVision {
                    warnings.append("stream #\(v.index): Dolby Vision (profile \(dv.name)) is not kept: \(why); the output is its \(v.colorTransfer.map { DolbyVisionPlan.baseLayerName($0) } ?? "base layer") picture")
                }
            }
        }
        hdr = metadata != nil
        // HDR10+ goes wherever the HDR picture goes (one window's metadata does not depend on the size).
        if v.hasHDRTransfer && toneMap == nil { carrying.insert(.hdr10Plus) }
        self.carrying = carrying
        self.dolbyVision = dolbyVision
        self.toneMap = toneMap
        let tenBit = options.tenBit || (toneMap == nil && (v.hasHDRTransfer || keptDV != nil))
        if tenBit && !options.tenBit { warnings.append("stream #\(v.index): HDR input, encoded as Main10") }
        if let layers = v.file.sourceIndex?.track(id: v.id)?.views?.layers {
            warnings.append("stream #\(v.index): spatial video (MV-HEVC, \(layers) views) is encoded as its first view only: the output plays as flat video")
        }
        var settings = VideoEncoderSettings(width: target.width, height: target.height,
                                            pixelFormat: tenBit ? "yuv420p10le" : "yuv420p", timeBase: v.timeBase!)
        settings.frameRate = fps
        settings.sampleAspectRatio = v.sampleAspectRatio
        settings.globalHeader = globalHeader
        settings.dolbyVision = keptDV
        if toneMap != nil {
            settings.keepsHDRMetadata = false
            settings.bt709 = true
        }
        settings.options = encoderOptions(options, width: target.width, height: target.height,
                                          fps: fps.map { Double($0.numerator) / Double($0.denominator) } ?? 30,
                                          hdr: metadata)
        self.settings = settings
    }

    /// The same plan at another CRF (`--quality`'s choice).
    func encoding(crf: Double) -> VideoPlan {
        var v = self
        v.settings = settings.encoding(crf: crf)
        return v
    }

    /// The filter the video's frames go through before they are encoded.
    func filter(for v: InputStream) -> (any FrameFilter)? {
        toneMap.map { ToneMapper($0, stream: v) }
    }
}

/// Whether a re-encode keeps a stream's Dolby Vision: each picture's RPU
/// goes with it into the new stream, which stays valid while the picture
/// keeps its size (the RPU's active area is in pixels) and its HEVC
/// coding (10-bit: the encode is Main10 when it carries them). What
/// cannot be kept is dropped with the reason — refused for a stream
/// without a compatible base layer (profile 5), whose colours are wrong
/// without its RPUs, unless the user drops it.
enum DolbyVisionPlan: Equatable {
    case carry
    case drop(reason: String, refuse: Bool)

    init(_ dv: DolbyVisionConfiguration, codec: String, resized: Bool, wanted: Bool) {
        let why: String?
        if !wanted { why = "--no-dolby-vision" }
        else if codec != "hevc" { why = "its base layer is \(codec), and the output HEVC" }
        else if dv.hasEnhancementLayer || dv.profile == 7 { why = "its enhancement layer is not decoded" }
        else if !dv.hasRPU { why = "the stream has no RPUs" }
        else if resized { why = "the picture is resized (--size) and its RPUs describe the source's picture" }
        else { why = nil }
        guard let why else { self = .carry; return }
        self = .drop(reason: why, refuse: wanted && dv.compatibilityID == 0 && dv.profile == 5)
    }

    /// What a player without Dolby Vision shows of a base layer with this transfer.
    static func baseLayerName(_ transfer: String) -> String {
        switch transfer {
        case "arib-std-b67": "HLG"
        case "smpte2084": "HDR10 (PQ)"
        default: "SDR"
        }
    }
}

/// What a re-encode did with one kind of HDR metadata.
public struct HDRMetadataOutcome: Sendable, Codable, Equatable {
    public enum Action: String, Sendable, Codable {
        /// Carried to every output picture that had it in the source.
        case carried
        /// Not in the output (`reason` says why).
        case dropped
        /// Applied to the picture, then left out (`--sdr`).
        case toneMapped = "tone-mapped"
    }
    public var action: Action
    /// Dolby Vision's profile (`8.4`).
    public var profile: String?
    public var reason: String?
    /// Output pictures given the metadata.
    public var frames: Int?

    public init(action: Action, profile: String? = nil, reason: String? = nil, frames: Int? = nil) {
        self.action = action
        self.profile = profile
        self.reason = reason
        self.frames = frames
    }
}

/// What the first decoded frame of `stream` says that the container may
/// not: its HDR10 metadata (x265 and other encoders put it in SEI) and its
/// Dolby Vision RPU's header. Read through a second, short-lived opening of
/// the file (stopped by the same cancellation); a file that cannot be read
/// here fails as the transcode itself would.
struct FirstFrameFacts {
    var hdr: HDRMetadata?
    var dolbyVisionRPU: DolbyVisionRPUHeader?

    init(_ stream: InputStream, cancellation: Cancellation) throws(MediaError) {
        let file = try InputFile(path: stream.file.path, cancellation: cancellation)
        let s = file.streams[stream.index]
        let decoder = try Decoder(stream: s)
        let packet = try Packet(), frame = try Frame()
        var packets = 0
        func take() { (hdr, dolbyVisionRPU) = (frame.hdrMetadata, frame.dolbyVisionRPUHeader) }
        while packets < 500, try file.read(into: packet) {
            guard packet.streamIndex == s.index else { continue }
            packets += 1
            while try !decoder.send(packet) {
                if case .ready = try decoder.receive(into: frame) { take(); return }
            }
            if case .ready = try decoder.receive(into: frame) { take(); return }
        }
        try decoder.sendEnd()
        if case .ready = try decoder.receive(into: frame) { take() }
    }
}

/// libx265 options from the user's choices: rate control, preset, tune,
/// keyframe interval (3 s of frames by default), x265 parameters (quiet
/// unless the user sets a log level).
func encoderOptions(_ o: TranscodeOptions, width: Int, height: Int, fps: Double,
                    hdr: HDRMetadata? = nil) -> [(String, String)] {
    var opts: [(String, String)] = [("preset", o.preset.rawValue)]
    switch o.rate {
    case .crf(let c): opts.append(("crf", String(c)))
    case .bitrate(let b): opts.append(("b", String(b)))
    case .bitsPerPixel(let bpp): opts.append(("b", String(wholeClamped(bpp * Double(width) * Double(height) * fps))))
    }
    if let t = o.tune { opts.append(("tune", t.rawValue)) }
    // A file's frame rate may be anything (1/1000 … 2^31): keep the interval a sane integer.
    opts.append(("g", String(o.keyframeInterval ?? Int(wholeClamped(3 * fps, to: 1...100_000)))))
    var params = o.x265Params ?? ""
    // HDR10 metadata from the input, unless the user gave their own.
    for (k, v) in hdr?.x265Parameters ?? [] where !params.contains(k + "=") {
        params += (params.isEmpty ? "" : ":") + k + "=" + v
    }
    if !params.contains("log-level") { params += (params.isEmpty ? "" : ":") + "log-level=error" }
    // With --quality, x265's info SEI (in the parameter sets the chunks of a
    // join must share) would name each chunk's own CRF: it is left out.
    if o.quality != nil && !params.contains("info=") { params += ":info=0" }
    opts.append(("x265-params", params))
    return opts
}

/// The output size: the requested one, where a side of -1 (or 0) keeps the
/// aspect ratio; rounded down to even numbers, which 4:2:0 needs.
package func outputSize(input: (Int, Int), requested: FrameSize?) -> (width: Int, height: Int) {
    func even(_ v: Double) -> Int { max(2, Int(v / 2) * 2) }
    guard let r = requested else { return (even(Double(input.0)), even(Double(input.1))) }
    let (iw, ih) = (Double(input.0), Double(input.1))
    switch (r.width > 0, r.height > 0) {
    case (true, true): return (even(Double(r.width)), even(Double(r.height)))
    case (true, false): return (even(Double(r.width)), even(Double(r.width) * ih / iw))
    case (false, true): return (even(Double(r.height) * iw / ih), even(Double(r.height)))
    case (false, false): return (even(iw), even(ih))
    }
}

/// `v` rounded, within `range` (NaN and infinities included): Int64(v)
/// would trap on a value from a broken file.
func wholeClamped(_ v: Double, to range: ClosedRange<Int64> = 1...Int64(Int32.max)) -> Int64 {
    guard v.isFinite else { return v > 0 ? range.upperBound : range.lowerBound }
    let r = v.rounded()
    if r <= Double(range.lowerBound) { return range.lowerBound }
    if r >= Double(range.upperBound) { return range.upperBound }
    return Int64(r)
}
