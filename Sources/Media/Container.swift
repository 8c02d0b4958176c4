import CFFmpeg
import Sync

/// An output container: which libavformat muxer writes it and what it demands.
public struct Container: Hashable, Sendable, CustomStringConvertible {
    /// The libavformat muxer name (`mp4`, `mov`, `ipod`, `3gp`, `3g2`, `matroska`, `mpegts`).
    public let muxer: String
    /// What the user called it (`mp4`, `m4a`, `mkv`, `ts`, …).
    public let name: String

    /// The containers avtool writes, by the names users type (file extensions).
    public static let known: [String: String] = [
        "mp4": "mp4", "m4v": "mp4", "mov": "mov", "m4a": "ipod", "mkv": "matroska", "mka": "matroska",
        "webm": "webm", "ts": "mpegts", "m2ts": "mpegts", "mts": "mpegts", "3gp": "3gp", "3g2": "3g2",
    ]

    /// By a name as a user gives it to `--format` (`mp4`, `mkv`, …) or a muxer name (`matroska`).
    public init?(named name: String) {
        let key = name.lowercased()
        if let muxer = Self.known[key] {
            self.muxer = muxer
            self.name = key
        } else if Self.known.values.contains(key) {
            self.muxer = key
            self.name = key
        } else {
            return nil
        }
    }

    /// From a path's extension.
    public init?(path: String) {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        self.init(named: String(path[path.index(after: dot)...]))
    }

    public static var knownNames: String { known.keys.sorted().joined(separator: ", ") }

    /// The format libavformat names by `path`'s extension when it is not
    /// one avtool writes (`AVI` for `.avi`); nil for ours or none.
    public static func otherFormat(of path: String) -> String? {
        guard let f = av_guess_format(nil, path, nil), Container(path: path) == nil else { return nil }
        let name = String(cString: f.pointee.name)
        return name == "avi" ? "AVI" : name
    }

    /// Told when an output is given a container its name's extension
    /// contradicts (the CLI prints it as a warning).
    public static let misnamedReporter = Locked<(@Sendable (String) -> Void)?>(nil)

    /// A warning when `path`'s extension names another format than this
    /// container (`--format mkv` into `x.avi`): the file is this one's
    /// under a name that says otherwise.
    public func extensionMismatch(_ path: String) -> String? {
        if let named = Container(path: path) {
            return named.demuxer == demuxer ? nil
                : "'\(path)' will be a \(name) file (--format), not the \(named.name) its extension says"
        }
        return Self.otherFormat(of: path).map { "'\(path)' will be a \(name) file (--format), not the \($0) its extension says" }
    }

    public var description: String { name }

    /// The demuxer that reads what this container's muxer writes.
    public var demuxer: String { isISOBMFF ? "mov" : muxer }

    /// MP4, MOV, M4A, 3GP and 3G2: ISO base media files, written by movenc.
    public var isISOBMFF: Bool { ["mp4", "mov", "ipod", "3gp", "3g2"].contains(muxer) }

    /// The DTS order the muxer accepts: movenc needs strictly increasing DTS;
    /// Matroska and MPEG-TS accept repeats.
    public var dtsOrder: DTSOrder { isISOBMFF ? .strictlyIncreasing : .nonDecreasing }

    /// libavformat's output format; `nil` when this build lacks the muxer.
    var outputFormat: UnsafePointer<AVOutputFormat>? { av_guess_format(muxer, nil, nil) }

    /// Whether the container can hold what the encoder named `encoder` makes
    /// (`false` when this build has no such encoder).
    public func canHold(encoder name: String) -> Bool? {
        guard let codec = avcodec_find_encoder_by_name(name) else { return false }
        return canHold(codec.pointee.id)
    }

    /// Whether the container can hold `codec`: `true`/`false` when libavformat
    /// knows (`avformat_query_codec`), `nil` when it cannot tell.
    /// The same for a codec by its FFmpeg name (`hevc`, `aac`); nil when unknown.
    public func canHold(codecNamed name: String) -> Bool? {
        guard let descriptor = avcodec_descriptor_get_by_name(name) else { return nil }
        return canHold(descriptor.pointee.id)
    }

    func canHold(_ codec: AVCodecID) -> Bool? {
        guard let listed = listed(codec) else { return nil }
        return listed ? setUpAccepts(codec) ?? true : false
    }

    /// Whether the muxer's tables name `codec`: `avformat_query_codec`, or a
    /// tag in the muxer's tag tables. Matroska's query answers from its own
    /// codec IDs, yet its muxer writes any video that has a VfW (BMP) tag and
    /// any audio that has an ACM (WAV) tag, as `ffmpeg -c copy` does (H.263
    /// as `V_MS/VFW/FOURCC` `H263`). Some muxers refuse at set-up what their
    /// tables name (`setUpAccepts`).
    func listed(_ codec: AVCodecID) -> Bool? {
        guard let format = outputFormat else { return false }
        let r = avformat_query_codec(format, codec, FF_COMPLIANCE_NORMAL)
        if r == 1 { return true }
        var tag: UInt32 = 0
        if let tables = format.pointee.codec_tag, av_codec_get_tag2(tables, codec, &tag) != 0 { return true }
        return r < 0 ? nil : false
    }
}

/// A container as data is its name (`"mp4"`, `"mkv"`), as a user gives it.
extension Container: Codable {
    public init(from decoder: any Swift.Decoder) throws {
        let c = try decoder.singleValueContainer()
        let name = try c.decode(String.self)
        guard let container = Container(named: name) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "unknown container '\(name)'; one of \(Self.knownNames)")
        }
        self = container
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(name)
    }
}
