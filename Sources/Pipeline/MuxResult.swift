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

    /// The tracks nothing was written to, each named by the stream it is
    /// made from (`MuxSession.finish`).
    public var emptyTracks: [String] = []

    /// The warning for `emptyTracks`, or nil: an MP4/MOV output holds no
    /// such track (its muxer leaves a track without samples out), others
    /// hold it empty.
    public func emptyTrackWarning(container: Container) -> String? {
        Self.emptyTrackWarning(emptyTracks, container: container)
    }

    /// The warning for tracks nothing was written to (named as in
    /// `emptyTracks`), or nil for none.
    public static func emptyTrackWarning(_ tracks: [String], container: Container) -> String? {
        guard !tracks.isEmpty else { return nil }
        let outcome = container.isISOBMFF ? ", and \(container.name) holds no empty track: the output has none"
                                          : ": its track in the output is empty"
        return tracks.joined(separator: ", ") + ": no packet of it to write" + outcome
    }

    /// What the output does not hold of what its sources gave it, said:
    /// tags (`tagWarning`) and tracks (`emptyTrackWarning`).
    public func warnings(container: Container) -> [String] {
        [tagWarning(container: container), emptyTrackWarning(container: container)].compactMap { $0 }
    }

    public var totalCorrections: TimelineCorrections { corrections.reduce(TimelineCorrections(), +) }
}
