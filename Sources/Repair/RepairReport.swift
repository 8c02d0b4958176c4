import Media
import Pipeline
import Sync

public struct RepairOptions: Sendable, Equatable {
    /// The output container; `nil` means from the output's extension.
    public var container: Container?
    /// A whole recording made by the same device with the same settings:
    /// its codec settings and timing stand in for a lost index.
    public var reference: String?
    /// Tag, creation-time and rotation changes made as the output is written.
    public var edits = MetadataEdits()
    public var faststart = true
    public var overwrite = false

    public init() {}
}

/// Options as data (a request body, a recipe): keys are the properties'
/// names; a key left out keeps its default. Metadata edits are not carried.
extension RepairOptions: Codable {
    private enum CodingKeys: String, CodingKey { case container, reference, faststart, overwrite }

    public init(from decoder: any Swift.Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        container = try c.decodeIfPresent(Container.self, forKey: .container)
        reference = try c.decodeIfPresent(String.self, forKey: .reference)
        faststart = try c.decodeIfPresent(Bool.self, forKey: .faststart) ?? faststart
        overwrite = try c.decodeIfPresent(Bool.self, forKey: .overwrite) ?? overwrite
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(container, forKey: .container)
        try c.encodeIfPresent(reference, forKey: .reference)
        try c.encode(faststart, forKey: .faststart)
        try c.encode(overwrite, forKey: .overwrite)
    }
}

/// Progress of a running repair: the share of the input scanned or copied.
public struct RepairProgress: Sendable {
    public let fraction: Double

    /// A progress value (what a test or a client's own reporting makes).
    public init(fraction: Double) { self.fraction = fraction }
}

public struct RepairStreamReport: Sendable, Codable {
    public let type: MediaType
    /// The codec; for a data track, its sample entry's type (`tmcd`, `gpmd`, `mebx`).
    public let codec: String
    public var packets: Int
    public var bytes: Int64
    /// The reference's stream the track was rebuilt as (rebuilt).
    public var referenceStream: Int?

    public init(type: MediaType, codec: String, packets: Int, bytes: Int64, referenceStream: Int? = nil) {
        self.type = type
        self.codec = codec
        self.packets = packets
        self.bytes = bytes
        self.referenceStream = referenceStream
    }
}

/// What a rebuild left out: a track of the reference it could not rebuild,
/// or bytes of media data in which no sample was proven.
public struct RepairLeftOut: Sendable, Codable, Equatable {
    /// The reference's streams it is of; empty when no track is known.
    public var streams: [Int]
    /// The codec or data track's kind (`mebx 'Core Media Metadata'`); `media data` for bytes of no known track.
    public var kind: String
    public var reason: String
    /// The bytes of the input left out, when it is a place in it.
    public var offset: Int64?
    public var bytes: Int64?
    /// Samples of a track left out that the walk passed over.
    public var samples: Int?
}

public struct RepairReport: Sendable, Codable {
    public enum Method: String, Sendable, Codable {
        /// The input's own index (or fragments) read, every complete packet kept.
        case salvaged
        /// No index: samples found in the media data, codec settings and
        /// timing from the reference.
        case rebuilt
    }

    public let input: String
    public let output: String
    public let container: String
    public let method: Method
    public var reference: String?
    public var streams: [RepairStreamReport]
    /// What the salvaging read kept (salvaged).
    public var salvage: SalvageReport?
    /// Bytes of media data no sample could be found in (rebuilt): what a
    /// crash left half-written, or data of a track that cannot be read.
    public var unplacedBytes: Int64 = 0
    /// Tracks of the reference not rebuilt and bytes of media data left out (rebuilt).
    public var leftOut: [RepairLeftOut] = []
    /// Seconds of each stream recovered (rebuilt).
    public var seconds: [Double] = []
    /// Where the audio starts after the video, in milliseconds (rebuilt):
    /// the reference's alignment, which the rebuilt tracks take.
    public var audioOffsetMilliseconds: Double?
    public var warnings: [String] = []
    public var outputBytes: Int64 = 0
    public var elapsedSeconds: Double = 0
}
