import ISOBMFF

/// What a decoder takes from an audio stream's codec record (its global
/// header): two streams whose records agree on it decode each other's
/// frames, whatever bytes each encoder chose to write. Apple's, Android's,
/// fdk's and libavcodec's AAC encoders write AudioSpecificConfigs that
/// differ in bytes (libavcodec adds an explicit "no SBR" extension, others
/// do not) and not in anything a decoder uses; comparing bytes would take
/// them for different codecs.
public enum AudioCodecRecord: Equatable, Sendable {
    /// An AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1), the fields an AAC decoder uses.
    case aac(AudioSpecificConfig)
    /// ALAC's magic cookie, the fields the decoder uses.
    case alac(ALACCookie)
    /// FLAC's STREAMINFO, the fields the decoder uses (its frame sizes,
    /// sample count and MD5 describe one encoding and are not read to decode).
    case flac(FLACStreamInfo)
    /// No global header: every frame carries what the decoder needs (AC-3,
    /// E-AC-3, MP3, MP2, PCM).
    case none
    /// A record this program does not read: only the same bytes match.
    case bytes([UInt8])

    /// The record of codec `codec` (libavcodec's name) from its global header.
    public init(codec: String, extradata: [UInt8]) {
        if extradata.isEmpty {
            self = .none
        } else if codec == "aac", let asc = AudioSpecificConfig(extradata), !asc.hasProgramConfig {
            self = .aac(asc)
        } else if codec == "alac", let cookie = ALACCookie(extradata) {
            self = .alac(cookie)
        } else if codec == "flac", let info = FLACStreamInfo(extradata) {
            self = .flac(info)
        } else {
            self = .bytes(extradata)
        }
    }

    /// Whether frames made under `other` decode as part of a stream with this record.
    public func accepts(_ other: AudioCodecRecord) -> Bool { self == other }
}

/// The decoder's fields of an MPEG-4 AudioSpecificConfig.
public struct AudioSpecificConfig: Equatable, Sendable {
    /// The core's audio object type (2: AAC-LC), after any SBR/PS wrapper.
    public var objectType: Int
    /// The core's sampling rate in Hz.
    public var sampleRate: Int
    /// 1–7: the standard element layouts; 0: a program config element follows.
    public var channelConfiguration: Int
    /// 960 or 1024 samples per frame (`frameLengthFlag`).
    public var frameLength: Int
    public var dependsOnCoreCoder: Bool
    public var coreCoderDelay: Int
    public var extensionFlag: Bool
    /// Spectral band replication (HE-AAC), signalled explicitly (object type
    /// 5 or 29, or the backward-compatible sync extension); `false` when
    /// absent or marked absent.
    public var sbr: Bool
    /// Parametric stereo (HE-AACv2).
    public var parametricStereo: Bool

    public var hasProgramConfig: Bool { channelConfiguration == 0 }

    static let sampleRates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

    public init?(_ bytes: [UInt8]) {
        var r = BitReader(bytes)
        guard var aot = Self.objectType(&r), let rate = Self.rate(&r), let channels = r.bits(4) else { return nil }
        sbr = false
        parametricStereo = false
        if aot == 5 || aot == 29 {
            // Explicit hierarchical signalling: the extension's rate, then the core.
            sbr = true
            parametricStereo = aot == 29
            guard Self.rate(&r) != nil, let core = Self.objectType(&r) else { return nil }
            aot = core
        }
        objectType = aot
        sampleRate = rate
        channelConfiguration = channels
        // GASpecificConfig, for the object types that have one.
        guard [1, 2, 3, 4, 6, 7, 17, 19, 20, 21, 22, 23].contains(aot),
              let frame = r.bits(1), let depends = r.bits(1) else { return nil }
        frameLength = frame == 1 ? 960 : 1024
        dependsOnCoreCoder = depends == 1
        coreCoderDelay = 0
        if dependsOnCoreCoder {
            guard let d = r.bits(14) else { return nil }
            coreCoderDelay = d
        }
        guard let ext = r.bits(1) else { return nil }
        extensionFlag = ext == 1
        // A program config element is not read: the caller compares bytes.
        if channels == 0 { return }
        if [6, 20].contains(aot) { _ = r.bits(3) }
        if extensionFlag {
            if aot == 22 { _ = r.bits(5); _ = r.bits(11) }
            if [17, 19, 20, 23].contains(aot) { _ = r.bits(3) }
            _ = r.bits(1)
        }
        // Backward-compatible signalling of SBR/PS after the core's config.
        if !sbr, r.remaining >= 16, r.bits(11) == 0x2b7, let ext = Self.objectType(&r), ext == 5 {
            if r.bits(1) == 1 {
                sbr = true
                _ = Self.rate(&r)
                if r.remaining >= 12, r.bits(11) == 0x548, r.bits(1) == 1 { parametricStereo = true }
            }
        }
    }

    /// The configuration an ADTS frame header gives (ISO/IEC 14496-3
    /// 1.A.2.2.1): object type (profile + 1), rate and channel
    /// configuration, 1024-sample frames; SBR is not signalled there (an
    /// HE-AAC stream in ADTS says so by its frames alone). `nil` when the
    /// bytes do not start with an ADTS header.
    public init?(adtsHeader bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 7, bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0 else { return nil }
        let objectType = Int(bytes[2] >> 6) + 1
        let rateIndex = Int(bytes[2] >> 2) & 0x0F
        let channels = Int(bytes[2] & 1) << 2 | Int(bytes[3] >> 6)
        // The same fields as an AudioSpecificConfig: 5 + 4 + 4 bits, then a GASpecificConfig of zeros.
        let fields = objectType << 11 | rateIndex << 7 | channels << 3
        self.init([UInt8(fields >> 8), UInt8(fields & 0xFF)])
    }

    private static func objectType(_ r: inout BitReader) -> Int? {
        guard let t = r.bits(5) else { return nil }
        if t != 31 { return t }
        return r.bits(6).map { 32 + $0 }
    }

    private static func rate(_ r: inout BitReader) -> Int? {
        guard let index = r.bits(4) else { return nil }
        if index == 15 { return r.bits(24) }
        return index < sampleRates.count ? sampleRates[index] : nil
    }
}

/// The decoder's fields of an ALAC magic cookie (`ALACSpecificConfig`),
/// found with or without the `alac` atom header before it.
public struct ALACCookie: Equatable, Sendable {
    public var frameLength: UInt32
    public var bitDepth: UInt8
    /// The Rice coder's parameters (`pb`, `mb`, `kb`): the decoder's starting state.
    public var riceHistoryMultiplier: UInt8
    public var riceInitialHistory: UInt8
    public var riceLimit: UInt8
    public var channels: UInt8
    public var sampleRate: UInt32

    public init?(_ bytes: [UInt8]) {
        var b = bytes[...]
        // 'alac' atom: size (4), type (4), version and flags (4).
        if b.count >= 36, Array(b.dropFirst(4).prefix(4)) == Array("alac".utf8) { b = b.dropFirst(12) }
        let c = BigEndianReader(b)
        guard let frameLength = c.u32(at: 0), let bitDepth = c.u8(at: 5), let pb = c.u8(at: 6), let mb = c.u8(at: 7),
              let kb = c.u8(at: 8), let channels = c.u8(at: 9), let sampleRate = c.u32(at: 20) else { return nil }
        self.frameLength = frameLength
        self.bitDepth = bitDepth
        riceHistoryMultiplier = pb
        riceInitialHistory = mb
        riceLimit = kb
        self.channels = channels
        self.sampleRate = sampleRate
    }
}

/// The decoder's fields of a FLAC STREAMINFO block (RFC 9639 8.2), as
/// libavcodec keeps it as extradata: the 34 bytes, or after `fLaC` and a
/// metadata block header.
public struct FLACStreamInfo: Equatable, Sendable {
    public var maxBlockSize: Int
    public var sampleRate: Int
    public var channels: Int
    public var bitsPerSample: Int

    public init?(_ bytes: [UInt8]) {
        let info = bytes.starts(with: Array("fLaC".utf8)) ? Array(bytes.dropFirst(8)) : bytes
        guard info.count >= 34 else { return nil }
        var r = BitReader(info)
        guard r.bits(16) != nil, let maxBlock = r.bits(16), r.bits(24) != nil, r.bits(24) != nil,
              let rate = r.bits(20), let channels = r.bits(3), let bps = r.bits(5) else { return nil }
        maxBlockSize = maxBlock
        sampleRate = rate
        self.channels = channels + 1
        bitsPerSample = bps + 1
    }
}

extension BitReader {
    var remaining: Int { bytes.count * 8 - position }
}
