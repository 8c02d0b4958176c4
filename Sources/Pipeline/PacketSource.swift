import Media

/// The read loop every single-input verb runs: each packet of a kept stream,
/// in file order, to `take` with its output track. Damage is an error, or
/// with `salvage` left out and counted: a packet flagged corrupt is
/// dropped, reads that fail are passed over until they keep failing (the
/// cut). A file that changes while it is read is an error either way.
/// A cut-off MP4/MOV (its index, or a fragmented file's fragments, list
/// packets beyond the end of the file) is refused before anything is read,
/// unless salvaging; where only the demuxer's index can tell (a fragment the
/// boxes cannot be read of), once it is read.
public struct PacketSource {
    public let input: InputFile
    /// Input stream index → output track.
    private let track: [Int?]
    private let kept: [InputStream]
    public private(set) var salvage: SalvageReport?
    /// Per track, the video packets left out at the end: flagged discard
    /// by the demuxer (shown after the input's edit list ends) with no
    /// packet of the track decoded after them.
    public private(set) var discardedAtEnd: [Int]
    /// Those packets read last instead of left out: for an output whose edit
    /// list hides them as the input's did (MP4/MOV, `MuxSession`), so that
    /// it holds every packet.
    public var keepsHiddenEnd = false

    private let operation: String

    public init(_ input: InputFile, kept: [InputStream], salvage: Bool, operation: String) throws(MediaError) {
        self.input = input
        self.operation = operation
        var track = [Int?](repeating: nil, count: input.streams.count)
        for (j, s) in kept.enumerated() { track[s.index] = j }
        self.track = track
        self.kept = kept
        discardedAtEnd = [Int](repeating: 0, count: kept.count)
        if salvage {
            let coverage = input.indexCoverage ?? []
            self.salvage = SalvageReport(types: kept.map(\.mediaType),
                                         listed: kept.map { s in coverage.first { $0.stream == s.index }?.listed })
            self.salvage!.missingBytes = input.matroskaMissingBytes ?? 0
        } else if let cut = input.cutOffError(operation) {
            throw cut
        }
    }

    /// Failed reads in a row that end a salvaging read.
    static let failuresToEnd = 64

    /// Reads every packet; `take(packet, track)` for those of kept streams.
    public mutating func run(_ take: (borrowing Packet, Int) throws(MediaError) -> Void) throws(MediaError) {
        try readWhile({ (packet, track) throws(MediaError) -> Bool in
            try take(packet, track)
            return true
        })
    }

    /// The same, until `take` returns false (the rest is not read, so the
    /// end-of-file checks do not apply).
    public mutating func readWhile(_ take: (borrowing Packet, Int) throws(MediaError) -> Bool) throws(MediaError) {
        var stopped = false
        let packet = try Packet()
        // Salvaging, a read that fails (or ends) may be one packet past the
        // cut while packets of another track, in the file, come later in time
        // order: read on until reads keep failing.
        var failures = 0
        // Video packets flagged discard after the track's first shown one:
        // held until a packet of the track follows (then they go first), or
        // left out at the end. Frames past the end of the input's edit list
        // are not shown by it, and no packet decoded after them is left to
        // need them; copied, the output would show them (a frame more).
        let video = kept.map { $0.mediaType == .video && !$0.isAttachedPicture }
        var shown = [Bool](repeating: false, count: kept.count)
        var held = [[HeldPacket]](repeating: [], count: kept.count)
        while true {
            do {
                guard try input.read(into: packet) else {
                    guard salvage != nil, failures < Self.failuresToEnd else { break }
                    failures += 1
                    continue
                }
            } catch {
                guard salvage != nil, !(MediaError.interrupted ~= error), input.changedError() == nil else { throw error }
                guard failures < Self.failuresToEnd else {
                    salvage!.stoppedEarly = true
                    break
                }
                failures += 1
                continue
            }
            failures = 0
            let i = packet.streamIndex
            guard i < track.count, let j = track[i] else { continue }
            if packet.isCorrupt {
                guard salvage != nil else { throw input.corruptPacketError(stream: i) }
                salvage!.damagedPackets += 1
                continue
            }
            if video[j] {
                if packet.isDiscard && shown[j] {
                    held[j].append(try HeldPacket(packet))
                    continue
                }
                shown[j] = shown[j] || !packet.isDiscard
                var stop = false
                for h in held[j] where !stop {
                    stop = try !take(h.packet, j)
                    salvage?.kept[j] += 1
                }
                held[j].removeAll()
                if stop {
                    stopped = true
                    break
                }
            }
            let more = try take(packet, j)
            salvage?.kept[j] += 1
            if !more {
                stopped = true
                break
            }
        }
        if stopped { return }
        for j in held.indices {
            if keepsHiddenEnd {
                for h in held[j] {
                    guard try take(h.packet, j) else { return }
                    salvage?.kept[j] += 1
                }
            } else {
                discardedAtEnd[j] = held[j].count
            }
        }
        // Fragments the demuxer parsed while reading can list packets the file does not hold.
        if salvage == nil, let cut = input.cutOffError(operation, soFar: true) { throw cut }
        if salvage != nil, let so = input.coverageSoFar {
            for (j, s) in kept.enumerated() {
                if let c = so.first(where: { $0.stream == s.index }) { salvage!.listed[j] = max(salvage!.listed[j] ?? 0, c.listed) }
            }
        }
        if let s = salvage, s.kept.allSatisfy({ $0 == 0 }) {
            throw MediaError.invalid("could not salvage", path: input.path,
                                     message: "no complete packet of the streams kept could be read")
        }
    }
}
