import CFFmpeg
import ISOBMFF

extension IndexDamage {
    /// What is damaged in the index of the MP4/MOV file at `path`, or nil
    /// (also for a file that is not MP4/MOV, or cannot be mapped).
    public static func find(path: String) -> String? {
        guard let file = try? MappedFile(path: path) else { return nil }
        return file.withBytes { find(in: $0) }
    }
}

extension InputFile {
    /// The error for an MP4/MOV input whose index is damaged (`IndexDamage`), or nil.
    static func indexDamageError(_ path: String) -> MediaError? {
        guard let damage = IndexDamage.find(path: path) else { return nil }
        return MediaError(code: AVTOOL_AVERROR_INVALIDDATA, operation: "could not open input", path: path,
                          message: "its index is damaged: \(damage)")
    }
}
