import Media

/// Which kinds of input streams go to the output (all by default).
public struct StreamSelection: Hashable, Sendable {
    public var video = true
    public var audio = true
    public var subtitles = true
    /// Data streams, attachments and streams of unknown type.
    public var data = true
    /// Cover art (still pictures stored as a video stream).
    public var coverArt = true

    public init() {}

    public func keeps(_ stream: InputStream) -> Bool {
        if stream.isAttachedPicture { return coverArt }
        return switch stream.mediaType {
        case .video: video
        case .audio: audio
        case .subtitle: subtitles
        case .data, .attachment, .unknown: data
        }
    }

    /// The flag that drops a stream like this one, for hints.
    static func dropFlag(_ stream: InputStream) -> String {
        if stream.isAttachedPicture { return "--no-cover-art" }
        return switch stream.mediaType {
        case .video: "--no-video"
        case .audio: "--no-audio"
        case .subtitle: "--no-subtitles"
        case .data, .attachment, .unknown: "--no-data"
        }
    }
}
