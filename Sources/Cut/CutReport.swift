import Loudness
import Media
import Pipeline
import Sync

public struct CutOptions: Sendable, Equatable {
    /// The output container; `nil` means from the output's extension.
    public var container: Container?
    /// Where the kept part starts, from the start of the recording.
    public var from: Duration = .zero
    /// Where it ends (exclusive); `nil` is the end of the recording.
    public var to: Duration?
    public var streams = StreamSelection()
    /// Tag, creation-time and rotation changes made as the output is written.
    public var edits = MetadataEdits()
    public var faststart = true
    public var overwrite = false
    /// Keyframe (copy only) or exact (re-encode the partial GOPs).
    public var mode = CutMode.keyframe
    /// Several ranges joined into one output (instead of `from`/`to`).
    public var keep: [CutRange] = []
    /// Only find where each range will start (keyframes, and in exact mode
    /// where copying resumes); write nothing.
    public var dryRun = false
    /// Bring the output's audio to this loudness (`--loudness`): the cut is
    /// measured once written, and its audio re-encoded with the plan's gain.
    public var loudness: LoudnessTarget?

    public init() {}
}

/// Options as data (a request body, a recipe): keys are the properties'
/// names, times in seconds (`keep`: `[{"from": 10, "to": 25}]`); a key left
/// out keeps its default. Metadata edits are not carried.
extension CutOptions: Codable {
    private enum CodingKeys: String, CodingKey {
        case container, from, to, streams, faststart, overwrite, mode, keep, dryRun, loudness
    }

    private struct Range: Codable {
        var from: Double
        var to: Double
    }

    public init(from decoder: any Swift.Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        container = try c.decodeIfPresent(Container.self, forKey: .container)
        from = try c.decodeIfPresent(Double.self, forKey: .from).map { Duration.seconds($0) } ?? from
        to = try c.decodeIfPresent(Double.self, forKey: .to).map { Duration.seconds($0) }
        streams = try c.decodeIfPresent(StreamSelection.self, forKey: .streams) ?? streams
        faststart = try c.decodeIfPresent(Bool.self, forKey: .faststart) ?? faststart
        overwrite = try c.decodeIfPresent(Bool.self, forKey: .overwrite) ?? overwrite
        mode = try c.decodeIfPresent(CutMode.self, forKey: .mode) ?? mode
        keep = try c.decodeIfPresent([Range].self, forKey: .keep)?
            .map { CutRange(from: .seconds($0.from), to: .seconds($0.to)) } ?? keep
        dryRun = try c.decodeIfPresent(Bool.self, forKey: .dryRun) ?? dryRun
        loudness = try c.decodeIfPresent(LoudnessTarget.self, forKey: .loudness)
    }

    public func encode(to encoder: any Swift.Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(container, forKey: .container)
        try c.encode(from.seconds, forKey: .from)
        try c.encodeIfPresent(to?.seconds, forKey: .to)
        try c.encode(streams, forKey: .streams)
        try c.encode(faststart, forKey: .faststart)
        try c.encode(overwrite, forKey: .overwrite)
        try c.encode(mode, forKey: .mode)
        if !keep.isEmpty { try c.encode(keep.map { Range(from: $0.from.seconds, to: $0.to.seconds) }, forKey: .keep) }
        try c.encode(dryRun, forKey: .dryRun)
        try c.encodeIfPresent(loudness, forKey: .loudness)
    }
}

/// Progress of a running cut: the output position against the part's length.
public struct CutProgress: Sendable {
    public let fraction: Double?
    public let position: Double

    /// A progress value (what a test or a client's own reporting makes).
    public init(fraction: Double?, position: Double) {
        self.fraction = fraction
        self.position = position
    }
}

public struct CutReport: Sendable, Codable {
    public let input: String
    public var output: String
    public let container: String
    /// The range asked for, in seconds from the recording's start.
    public var from: Double
    public var to: Double?
    /// Where the video's first kept keyframe is shown, in seconds from the
    /// recording's start (at or before `from`).
    public var keyframe: Double?
    /// Whether an edit list (MP4/MOV) hides the frames from the keyframe to
    /// `start`; otherwise the output starts at the keyframe.
    public var startsAtFrom: Bool
    /// Where the output starts, in seconds from the recording's start: the
    /// start of the frame shown at `from` (MP4/MOV; `from` itself without
    /// video), or the keyframe.
    public var start: Double
    public var streams: [RemuxStreamReport]
    public var dropped: [DroppedStream]
    public var mode = CutMode.keyframe
    /// Exact mode: the frames re-encoded, and where their parameter sets are.
    public var reencoded: [ReencodedStretchReport] = []
    public var parameterSets: String?
    /// With several ranges kept (`keep`): each range, where the parts join on the output timeline,
    /// and how the audio was laid at the joints.
    public var ranges: [KeptRangeReport]?
    public var joints: [Double]?
    /// With several ranges kept (`keep`): the seconds the ranges asked for, and the output's.
    public var askedSeconds: Double?
    public var outputSeconds: Double?
    public var audio: String?
    /// How the audio starts at `from`: trimmed by the edit list (MP4/MOV),
    /// or its first frames re-encoded (Matroska, MPEG-TS), and where copying resumed.
    public var audioStart: String?
    public var packets: Int?
    public var dryRun = false
    /// `--loudness`: the audio's plan, and its figures before and after.
    public var loudness: [LoudnessStreamReport]?
    public var warnings: [String] = []
    public var outputBytes: Int64 = 0
    public var elapsedSeconds: Double = 0
}
