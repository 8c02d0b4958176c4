import Media
import Sync

/// What a session wrote, per output track and in all.
public struct MuxResult: Sendable {
    public var packets: [Int]
    /// Payload bytes per track.
    public var payloadBytes: [Int64]
    public var corrections: [TimelineCorrections]
    /// The finished output's size.
    public var outputBytes: Int64
    public var elapsed: Duration
    /// Tags of the sources the output does not hold (read back from it).
    public var tagLosses: [TagLoss] = []
    /// Why the output's tags could not be read back, if they could not.
    public var tagCheckFailure: String?

    /// The warning for `tagLosses` (and a failed check), or nil.
    public func tagWarning(container: Container) -> String? {
        if let tagCheckFailure { return "could not check which tags the output kept: \(tagCheckFailure)" }
        guard !tagLosses.isEmpty else { return nil }
        // Every one is named; past the first few, without its value.
        let named = tagLosses.enumerated().map { $0 < 8 ? $1.description : $1.place + $1.key }
        return "\(tagLosses.count) tag(s) not kept (\(container.name) cannot hold them as they were): "
            + named.joined(separator: ", ")
    }

    /// The warning for tracks nothing was written to, which an MP4/MOV
    /// output does not hold (its muxer leaves a track without samples out),
    /// naming each by the stream `names` gives; nil when there are none.
    public func emptyTrackWarning(container: Container, names: (Int) -> String) -> String? {
        guard container.isISOBMFF else { return nil }
        let empty = packets.indices.filter { packets[$0] == 0 }
        guard !empty.isEmpty else { return nil }
        return empty.map(names).joined(separator: ", ") + ": no packet of it to write, and \(container.name) holds no empty track: the output has none"
    }

    public var totalCorrections: TimelineCorrections { corrections.reduce(TimelineCorrections(), +) }
}
