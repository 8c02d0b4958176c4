import Media

/// Which kinds of input streams go to the output (all by default).
public struct StreamSelection: Hashable, Sendable {
    public var video = true
    public var audio = true
    public var subtitles = true
    /// Data streams, attachments and streams of unknown type.
    public var data = true

    public init() {}

    public func keeps(_ type: MediaType) -> Bool {
        switch type {
        case .video: video
        case .audio: audio
        case .subtitle: subtitles
        case .data, .attachment, .unknown: data
        }
    }

    /// The flag that drops a stream of this type, for hints.
    static func dropFlag(_ type: MediaType) -> String {
        switch type {
        case .video: "--no-video"
        case .audio: "--no-audio"
        case .subtitle: "--no-subtitles"
        case .data, .attachment, .unknown: "--no-data"
        }
    }
}
