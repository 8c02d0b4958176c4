import CFFmpeg
import FileAccess
import Glibc
import ISOBMFF

/// The one place where the errors of the layers beside FFmpeg's become the
/// user's: a file call's `FileError` (a `MediaError` whose code is its
/// errno, so its category holds: `not-found`, `no-space`, …) and the box
/// layer's `BoxError` (said of the file or of its index, `said(of:)`, the
/// words every `MovieLayout.Refusal` and so every refusal message carries).
extension MediaError {
    /// A file call's failure: `operation 'file': the system's words`, about
    /// `path` (else the file the call was made on), its category by the code
    /// (`not-found`, `no-space`, …); a full disk in the one wording of
    /// `fullDisk`, whichever way the bytes were written.
    package init(_ error: FileError, _ operation: String, path: String? = nil, hint: String? = nil) {
        let name = path ?? error.path
        self = Self.fullDisk(avtool_averror(error.code), path: name) ?? .posix(error.code, operation, path: name, hint: hint)
    }

    /// The one wording of an output that found its disk full (ENOSPC; a full
    /// quota, EDQUOT; the largest file size, EFBIG) for every way of writing:
    /// the muxer's (an `AVERROR` from libavformat's writes, the header, the
    /// trailer), the bulk copy's and the chunk files' (a `FileError`), the
    /// index completion's and the staged output's flush. Nil for another code.
    /// `could not write to 'out.mp4': no space left on device; free some
    /// space or write the output elsewhere; nothing was written`.
    package static func fullDisk(_ code: Int32, path: String?, stream: Int? = nil) -> MediaError? {
        guard code == AVTOOL_AVERROR_ENOSPC || code == avtool_averror(EDQUOT) || code == avtool_averror(EFBIG) else { return nil }
        return MediaError(code: code, operation: "could not write to", path: path, stream: stream,
                          message: MediaError.describe(code).lowercased(),
                          hint: "free some space or write the output elsewhere; nothing was written")
    }

    /// `body`'s file calls, a failure said as `operation` (on `path`, else
    /// on the file the call was made on).
    package static func files<R>(_ operation: String, path: String? = nil,
                                 _ body: () throws(FileError) -> R) throws(MediaError) -> R {
        do throws(FileError) { return try body() } catch { throw MediaError(error, operation, path: path) }
    }

    /// An output whose index could not be completed (`IndexCompletion`),
    /// named `name`: a file call's failure keeps its code (a full disk is
    /// `no-space`, said as `fullDisk` says it), anything else is EINVAL.
    package init(_ failure: IndexCompletion.Failure, completing name: String) {
        if let file = failure.file, let full = Self.fullDisk(avtool_averror(file.code), path: name) {
            self = full
            return
        }
        self.init(code: failure.file.map { avtool_averror($0.code) } ?? AVTOOL_AVERROR_EINVAL, operation: "could not write",
                  path: name, message: "could not complete its index: \(failure.description)")
    }
}

/// Where boxes were read, for the words of their errors.
package enum BoxPlace: Sendable {
    /// A file's top-level boxes.
    case file
    /// Its index (`moov`), parsed.
    case index
}

extension BoxError {
    /// This error in the user's words, said of where the boxes were read.
    package func said(of place: BoxPlace) -> String {
        switch (place, self) {
        case (.file, .endsInsideHeader(let at)): "a box header cannot be read at \(at)"
        case (.file, .runsPastParent(let type, let at)), (.file, .tooLarge(let type, let at)):
            "the '\(type)' box at \(at) runs past the end of the file"
        case (.file, _): description
        case (.index, .endsInsideHeader): "the index ends inside a box header"
        case (.index, .runsPastParent(let type, _)): "the '\(type)' box in the index runs past its parent"
        case (.index, .tooLarge): "a box in the index is too large"
        case (.index, .tooDeep(let limit)): "boxes in the index nest more than \(limit) deep"
        case (.index, .tooMany(let limit)): "the index holds more than \(limit) boxes"
        case (.index, .fieldsCutShort), (.index, .unknownVersion), (.index, .lacksChild), (.index, .tooManyEntries):
            "in the index, \(self)"
        }
    }
}
