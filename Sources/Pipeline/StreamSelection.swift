import Media

/// Which kinds of input streams go to the output (all by default).
public struct StreamSelection: Hashable, Sendable, Codable {
    public var video = true
    public var audio = true
    public var subtitles = true
    /// Data streams, attachments and streams of unknown type.
    public var data = true
    /// Attachments (fonts, files; Matroska), unless `data` leaves them out.
    public var attachments = true
    /// Cover art (still pictures stored as a video stream).
    public var coverArt = true

    public init() {}

    private enum CodingKeys: String, CodingKey { case video, audio, subtitles, data, attachments, coverArt }

    /// A kind left out of the data is kept.
    public init(from decoder: any Swift.Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        video = try c.decodeIfPresent(Bool.self, forKey: .video) ?? true
        audio = try c.decodeIfPresent(Bool.self, forKey: .audio) ?? true
        subtitles = try c.decodeIfPresent(Bool.self, forKey: .subtitles) ?? true
        data = try c.decodeIfPresent(Bool.self, forKey: .data) ?? true
        attachments = try c.decodeIfPresent(Bool.self, forKey: .attachments) ?? true
        coverArt = try c.decodeIfPresent(Bool.self, forKey: .coverArt) ?? true
    }

    public func keeps(_ stream: InputStream) -> Bool {
        if stream.isAttachedPicture { return coverArt }
        return switch stream.mediaType {
        case .video: video
        case .audio: audio
        case .subtitle: subtitles
        case .attachment: data && attachments
        case .data, .unknown: data
        }
    }

    /// The kind a selection counts `stream` as.
    public static func kind(of stream: InputStream) -> StreamKind {
        if stream.isAttachedPicture { return .coverArt }
        return switch stream.mediaType {
        case .video: .video
        case .audio: .audio
        case .subtitle: .subtitles
        case .data, .attachment, .unknown: .data
        }
    }
}
