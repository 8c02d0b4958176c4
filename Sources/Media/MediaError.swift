import FileNames
import CFFmpeg
import Glibc

/// The one error type of the FFmpeg boundary: an `AVERROR` code, the
/// operation that failed, the file and stream it concerns, and a message
/// (FFmpeg's own `av_strerror` text, or ours for checks made before FFmpeg).
///
/// Its `description` is the single line the user sees:
/// `could not open input 'a.mkv': Invalid data found when processing input`.
public struct MediaError: Error, Sendable, CustomStringConvertible {
    public let code: Int32
    public let operation: String
    public let path: String?
    public let stream: Int?
    public let message: String
    /// A suggestion shown after the message, e.g. "use 'avtool transcode'".
    public let hint: String?
    /// What the user can do, as data: each client words it its own way (the
    /// command line names its flags).
    public let remedy: Remedy?
    /// The options the message quotes (as `'name'`), by the names recipes
    /// and the command line share, without dashes: `audio-bitrate`.
    public let options: [String]
    /// The kind of failure where the code alone would misname it (a muxer's
    /// EPERM is no permission problem; recordings that do not match are no
    /// unsupported input): `category` reads it first.
    public let assigned: Category?

    public init(code: Int32, operation: String, path: String? = nil, stream: Int? = nil,
                message: String? = nil, hint: String? = nil, remedy: Remedy? = nil, options: [String] = [],
                category: Category? = nil) {
        self.assigned = category
        self.code = code
        self.operation = operation
        self.path = path
        self.stream = stream
        self.message = message ?? MediaError.describe(code)
        self.hint = hint
        self.remedy = remedy
        self.options = options
    }

    /// `av_strerror` into a temporary buffer; what `av_err2str` does in C.
    public static func describe(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        if av_strerror(code, &buffer, buffer.count) < 0 {
            return "error \(code)"
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public var description: String { line(message: message, hint: hint ?? remedy?.description) }

    /// The error's one line with `message` and `hint` (a client's own
    /// wording of them): operation, file, stream, message; hint.
    public func line(message: String, hint: String?) -> String {
        var s = operation
        if let path { s += " \(quoted(path))" }
        if let stream { s += " (stream #\(stream))" }
        s += ": " + message
        if let hint { s += "; " + hint }
        return s
    }

    /// The same error about another file or stream.
    public func about(path: String? = nil, stream: Int? = nil) -> MediaError {
        MediaError(code: code, operation: operation, path: path ?? self.path, stream: stream ?? self.stream,
                   message: message, hint: hint, remedy: remedy, options: options, category: assigned)
    }

    // Codes usable in `catch` patterns: `catch MediaError.endOfFile`.
    /// This FFmpeg build lacks the encoder `name`.
    public static func missingEncoder(_ name: String, operation: String) -> MediaError {
        MediaError(code: AVTOOL_AVERROR_ENCODER_NOT_FOUND, operation: operation,
                   message: "this FFmpeg build has no \(name) encoder")
    }

    public static let endOfFile = MediaError(code: AVTOOL_AVERROR_EOF, operation: "end of file")
    public static let tryAgain = MediaError(code: AVTOOL_AVERROR_EAGAIN, operation: "try again")
    public static let invalidData = MediaError(code: AVTOOL_AVERROR_INVALIDDATA, operation: "invalid data")
    /// An interrupt callback stopped the operation (cancellation).
    public static let interrupted = MediaError(code: AVTOOL_AVERROR_EXIT, operation: "interrupted")
    public static let noSpace = MediaError(code: AVTOOL_AVERROR_ENOSPC, operation: "no space")

    /// FFmpeg's EINVAL: an argument (or a muxer option) that cannot work.
    public var isInvalidArgument: Bool { code == AVTOOL_AVERROR_EINVAL }

    /// Matches on the code only.
    public static func ~= (pattern: MediaError, error: any Error) -> Bool {
        (error as? MediaError)?.code == pattern.code
    }

    /// A problem avtool finds itself (bad option, unsupported stream), with
    /// the code of EINVAL.
    public static func invalid(_ operation: String, path: String? = nil, stream: Int? = nil,
                               message: String, hint: String? = nil, remedy: Remedy? = nil,
                               category: Category? = nil) -> MediaError {
        MediaError(code: AVTOOL_AVERROR_EINVAL, operation: operation, path: path, stream: stream,
                   message: message, hint: hint, remedy: remedy, category: category)
    }

    /// An option value that cannot work: `message` quotes the `options` it
    /// is about as `'name'` ("'audio-bitrate' must be at least 8k").
    public static func invalidOption(_ message: String, options: [String]) -> MediaError {
        MediaError(code: AVTOOL_AVERROR_EINVAL, operation: "invalid option", message: message, options: options)
    }

    /// Throws a `MediaError` for a negative FFmpeg return value.
    @discardableResult
    static func check(_ result: Int32, _ operation: @autoclosure () -> String, path: String? = nil,
                      stream: Int? = nil) throws(MediaError) -> Int32 {
        if result < 0 { throw MediaError(code: result, operation: operation(), path: path, stream: stream) }
        return result
    }

    /// A POSIX `errno` as an FFmpeg-style error.
    package static func posix(_ errnoValue: Int32, _ operation: String, path: String?, hint: String? = nil) -> MediaError {
        MediaError(code: avtool_averror(errnoValue), operation: operation, path: path, hint: hint)
    }
}

/// What the user can do about an error.
public enum Remedy: Sendable, Hashable, CustomStringConvertible {
    /// Allow the existing output to be replaced.
    case overwrite
    /// Leave out streams of this kind.
    case drop(StreamKind)
    /// Convert (re-encode) the stream, or leave out streams of this kind.
    case convertOrDrop(StreamKind)
    /// Write a container that holds the stream (no encoder here makes what this one holds), or leave it out.
    case otherContainerOrDrop(StreamKind)
    /// Name the output's container.
    case nameContainer
    /// Let the timeline fix timestamps instead of refusing them.
    case repairTimestamps
    /// Encode the audio to AAC, or leave it out.
    case encodeAudioOrDrop
    /// PCM goes into MOV; elsewhere encode AAC.
    case pcmNeedsMOV
    /// The video file's own audio needs a container that holds it.
    case originalAudioContainer
    /// The audio's offset or alignment puts it where it cannot be.
    case checkOffset
    /// Keep what is readable of a damaged or cut-off input.
    case salvage
    /// Rebuild an unfinished recording's index from its media data.
    case repair
    /// Name a whole recording made with the same settings.
    case reference
    /// Allow replacing another user's file with one of the caller's.
    case replaceOthersFiles
    /// The muxer refuses the stream's packets as they are: another container, or a re-encode.
    case otherContainerOrConvert(StreamKind)
    /// M4A holds audio only; MP4 (or MOV) holds the same tracks and this one.
    case mp4HoldsIt(StreamKind)

    /// In library terms (the command line words it with its flags).
    public var description: String {
        switch self {
        case .overwrite: "allow overwriting to replace it"
        case .drop(let k): "leave out the \(k.rawValue) streams"
        case .convertOrDrop(let k): "convert it (transcode) or leave out the \(k.rawValue) streams"
        case .otherContainerOrDrop(let k): "write Matroska (.mkv), which holds it, or leave out the \(k.rawValue) streams"
        case .nameContainer: "name the output container"
        case .repairTimestamps: "let the timestamps be fixed"
        case .encodeAudioOrDrop: "encode it to AAC, or leave out the audio"
        case .pcmNeedsMOV: "write PCM into a MOV output, or encode AAC"
        case .originalAudioContainer: "choose a container that holds it (mov, mkv) or do not keep the original audio"
        case .checkOffset: "check the offset and the alignment"
        case .salvage: "salvage it to keep the complete packets"
        case .repair: "repair it with a whole recording made by the same device with the same settings as reference"
        case .reference: "name a whole recording made by the same device with the same settings as reference"
        case .replaceOthersFiles: "allow replacing other users' files to replace it anyway"
        case .otherContainerOrConvert(let k): "write Matroska (.mkv), which holds it as it is, convert it (transcode), or leave out the \(k.rawValue) streams"
        case .mp4HoldsIt(let k): "write MP4 (.mp4) or MOV, which hold it (M4A holds audio only), or leave out the \(k.rawValue) streams"
        }
    }
}

/// Kinds of streams, as a selection names them.
public enum StreamKind: String, Sendable, Hashable {
    case video, audio, subtitles, data
    case coverArt = "cover art"
}

extension MediaError {
    /// The kind of a failure. Its raw values are stable names that programs
    /// read (the command line's `--json` errors carry them as `code`).
    public enum Category: String, Sendable, Hashable, CaseIterable, Codable {
        /// The input (or a directory on the way) does not exist.
        case notFound = "not-found"
        /// The file or directory may not be read or written.
        case permissionDenied = "permission-denied"
        /// The disk (or the quota, or the largest file size) is full.
        case noSpace = "no-space"
        /// The output exists and replacing it was not allowed.
        case outputExists = "output-exists"
        /// This FFmpeg build has no encoder or decoder for the codec.
        case codecUnavailable = "codec-unavailable"
        /// An option's value cannot work.
        case invalidOption = "invalid-option"
        /// The input is cut off or damaged; salvage or repair may keep what is readable.
        case damagedInput = "damaged-input"
        /// The input's data is not what its format says.
        case invalidData = "invalid-data"
        /// The input asks for something this program does not do, or the
        /// output's container (its FFmpeg muxer) cannot hold a stream as it is.
        case unsupported
        /// The input lacks the stream the verb needs (no audio to align, no video to merge onto).
        case missingStream = "missing-stream"
        /// A recording is shorter than the work needs (sync: the overlap it measures on).
        case tooShort = "too-short"
        /// The recordings could not be aligned: too little overlap, one silent, or no offset stands out.
        case noMatch = "no-match"
        /// The work was cancelled.
        case interrupted
        /// Any other failure to read or write.
        case ioError = "io-error"
        /// The written output is not what was planned (a fault of this
        /// program's, caught before the output got its name).
        case internalMismatch = "internal-mismatch"
    }

    /// The code of an output that does not hold what was planned: FFmpeg's
    /// `AVERROR_BUG` ("Internal bug, should not have happened").
    public static let mismatchCode: Int32 = -(0x42 | 0x55 << 8 | 0x47 << 16 | 0x21 << 24)

    /// The kind of failure; its `rawValue` is the stable name (`not-found`, …).
    public var category: Category {
        if let assigned { return assigned }
        switch code {
        case avtool_averror(ENOENT), avtool_averror(ENOTDIR): return .notFound
        case avtool_averror(EACCES), avtool_averror(EPERM), avtool_averror(EROFS): return .permissionDenied
        case avtool_averror(ENOSPC), avtool_averror(EDQUOT), avtool_averror(EFBIG): return .noSpace
        case avtool_averror(EEXIST): return .outputExists
        case AVTOOL_AVERROR_ENCODER_NOT_FOUND, AVTOOL_AVERROR_DECODER_NOT_FOUND: return .codecUnavailable
        case AVTOOL_AVERROR_EXIT: return .interrupted
        case AVTOOL_AVERROR_PATCHWELCOME: return .unsupported
        case MediaError.mismatchCode: return .internalMismatch
        default: break
        }
        if remedy == .overwrite { return .outputExists }
        if operation == "invalid option" { return .invalidOption }
        switch remedy {
        case .salvage, .repair, .reference: return .damagedInput
        default: break
        }
        if code == AVTOOL_AVERROR_INVALIDDATA { return .invalidData }
        if code == AVTOOL_AVERROR_EINVAL { return .unsupported }
        return .ioError
    }
}
