/// What a video picture is to a cut, from its NAL unit types.
public enum PictureKind: Sendable, Equatable {
    /// Decoding can start here without anything before: H.264 IDR; HEVC
    /// IDR, CRA, BLA.
    case cleanStart
    /// HEVC RASL: shown before the clean start it follows in decode order,
    /// and refers to pictures before that start.
    case skippableLeading
    /// HEVC RADL: shown before its clean start, refers only to it and to
    /// other RADL pictures of it.
    case decodableLeading
    case other
}

/// One video packet as an exact-mode cut sees it, in the stream's time base.
public struct SmartCutPacket: Sendable, Equatable {
    public var pts: Int64
    public var dts: Int64?
    public var duration: Int64
    public var keyframe: Bool
    public var kind: PictureKind

    public init(pts: Int64, dts: Int64?, duration: Int64, keyframe: Bool, kind: PictureKind) {
        self.pts = pts
        self.dts = dts
        self.duration = duration
        self.keyframe = keyframe
        self.kind = kind
    }
}

/// Frames to decode from the source and encode again: those shown in
/// `[from, until)`. `after` and `before` are the DTS of the copied packets
/// written just before and just after the stretch (nil: none).
public struct ReencodedStretch: Sendable, Equatable {
    public var from: Int64
    public var until: Int64
    public var after: Int64?
    public var before: Int64?
    /// The PTS−DTS distance the stretch keeps when nothing follows it: the
    /// source's at the stretch's first packet.
    public var shift: Int64

    public init(from: Int64, until: Int64, after: Int64?, before: Int64?, shift: Int64 = 0) {
        self.from = from
        self.until = until
        self.after = after
        self.before = before
        self.shift = shift
    }

    /// DTS for the re-encoded frames (no reordering: shown in decode order)
    /// shown at `pts` (ascending), lasting `durations`: each PTS moved back
    /// by one shift, the least that ends the stretch by `before` (the
    /// copied packets keep their DTS; with nothing after, `shift`), so the
    /// stretch keeps the source's frame spacing and the DTS never pass the PTS. When the stretch
    /// cannot also start after `after`, each DTS is instead the latest
    /// that keeps the order.
    public func decodeTimes(pts: [Int64], durations: [Int64]) -> [Int64] {
        guard let last = pts.last, let first = pts.first else { return [] }
        let lastDuration = max(durations.last ?? 1, 1)
        let lower = max(0, before.map { last.plus(lastDuration).minus($0) } ?? shift)
        let upper = after.map { first.minus($0).minus(1) } ?? .max
        if lower <= upper { return pts.map { $0.minus(lower) } }
        var dts = pts
        var limit = before.map { $0.minus(1) } ?? .max
        for i in pts.indices.reversed() {
            dts[i] = min(pts[i], limit)
            limit = dts[i].minus(1)
        }
        return dts
    }
}

/// The packet-by-packet plan of an exact-mode ("smart") cut of one video
/// track, fed the track's packets in decode order from a keyframe at or
/// before the cut's start (the reader seeks there).
///
/// The frames from `from` (the PTS of the frame shown at the cut's start)
/// to the first clean start after it are decoded from that keyframe and
/// encoded again; from the clean start on, packets are copied. An HEVC
/// CRA's RASL pictures refer to pictures before it, which the output does
/// not hold: they are decoded for the re-encoded stretch and not copied,
/// so the stretch ends where the first copied picture is shown. At `to`,
/// when a frame shown before it refers to one shown after it (an open GOP
/// at the end), the last GOP is re-encoded from its clean start to `to`.
///
/// Every packet offered gets exactly one `write` or `discard`, maybe after
/// a `decode`; `encode` asks for the decoded frames shown in a stretch.
public struct SmartCutPlan: Sendable {
    public enum Action: Sendable, Equatable {
        /// Send packet `n` (the n-th offered, from 0) to the stretch's decoder.
        case decode(Int)
        /// Copy packet `n` to the output.
        case write(Int)
        /// Packet `n` is not written.
        case discard(Int)
        /// Drain the decoder; encode its frames shown in the stretch and write them.
        case encode(ReencodedStretch)
    }

    public let from: Int64
    public let to: Int64?
    /// Frames held past `to` before the track is ended regardless.
    public static let holdLimit = 64

    private enum Phase: Sendable { case waiting, head, copying, ended }
    private var phase = Phase.waiting
    private var count = 0
    /// Head: packets decoded and not to be written.
    private var decodedOnly: [Int] = []
    /// Head: the first clean start after `from`, and the packets to copy once the stretch is out.
    private var copyStart: (n: Int, packet: SmartCutPacket)?
    private var pending: [(n: Int, packet: SmartCutPacket)] = []
    private var stretchEnd = Int64.max
    private var beyond = 0
    /// Copying with an end: the packets not yet written, in GOPs from each clean start.
    private var gops: [[(n: Int, packet: SmartCutPacket)]] = []
    private var lastWrittenDTS: Int64?
    /// Copying has begun and no trailing picture has come yet: RASL
    /// pictures now belong to the first copied keyframe and refer to
    /// pictures the output does not hold.
    private var leadingOfFirst = true

    public init(from: Int64, to: Int64?) {
        self.from = from
        self.to = to
    }

    public var ended: Bool { phase == .ended }

    /// While the head is being decoded: the frames shown in this window go
    /// to the encoder as the decoder gives them (the decoder gives them in
    /// display order, and none shown before a clean start comes after it).
    public var window: Range<Int64> {
        let end = min(stretchEnd, to ?? .max)
        return from..<max(end, from)
    }

    /// The actions for the next packet in decode order.
    public mutating func offer(_ p: SmartCutPacket) -> [Action] {
        let n = count
        count += 1
        switch phase {
        case .ended:
            return [.discard(n)]
        case .waiting:
            guard p.keyframe else { return [.discard(n)] }
            if p.kind == .cleanStart, p.pts >= from {
                phase = .copying
                return copy(n, p)
            }
            phase = .head
            return head(n, p)
        case .head:
            return head(n, p)
        case .copying:
            return copy(n, p)
        }
    }

    /// The actions at the end of the input.
    public mutating func finish() -> [Action] {
        switch phase {
        case .waiting, .ended:
            phase = .ended
            return []
        case .head:
            var actions = endHead()
            if to != nil {
                actions += endCopy()
            } else {
                phase = .ended
            }
            return actions
        case .copying:
            return endCopy()
        }
    }

    private mutating func head(_ n: Int, _ p: SmartCutPacket) -> [Action] {
        if let start = copyStart {
            switch p.kind {
            case .skippableLeading:
                decodedOnly.append(n)
                return [.decode(n)]
            case .decodableLeading where p.pts < start.packet.pts:
                pending.append((n, p))
                stretchEnd = min(stretchEnd, p.pts)
                return []
            default:
                var actions = endHead()
                actions += copy(n, p)
                return actions
            }
        }
        if let to, p.pts >= to {
            if p.keyframe || beyond >= Self.holdLimit {
                var actions = endHead()
                actions.append(.discard(n))
                phase = .ended
                return actions
            }
            beyond += 1
        } else {
            beyond = 0
        }
        if p.keyframe, p.kind == .cleanStart, p.pts > from, to.map({ p.pts < $0 }) ?? true {
            copyStart = (n, p)
            pending = [(n, p)]
            stretchEnd = p.pts
            return [.decode(n)]
        }
        decodedOnly.append(n)
        return [.decode(n)]
    }

    /// Encodes the head's stretch, then hands its held packets to the copy phase.
    private mutating func endHead() -> [Action] {
        var actions: [Action] = [.encode(ReencodedStretch(from: from, until: window.upperBound, after: nil,
                                                          before: copyStart.map { $0.packet.dts ?? $0.packet.pts }))]
        actions += decodedOnly.map { .discard($0) }
        decodedOnly = []
        phase = .copying
        let held = pending
        pending = []
        copyStart = nil
        for (m, q) in held { actions += copy(m, q) }
        return actions
    }

    private mutating func copy(_ n: Int, _ p: SmartCutPacket) -> [Action] {
        // Leading pictures of the first copied keyframe: shown before the
        // cut, or (RASL) referring to what is not copied.
        if p.pts < from { return [.discard(n)] }
        if leadingOfFirst, gops.count <= 1, lastWrittenDTS != nil || !gops.isEmpty {
            if p.kind == .skippableLeading { return [.discard(n)] }
            if p.kind == .other { leadingOfFirst = false }
        }
        guard let to else {
            lastWrittenDTS = p.dts ?? p.pts
            return [.write(n)]
        }
        if p.pts >= to {
            if p.keyframe || beyond >= Self.holdLimit {
                var actions = endCopy()
                actions.append(.discard(n))
                return actions
            }
            beyond += 1
        } else {
            beyond = 0
        }
        var actions: [Action] = []
        if p.keyframe, p.kind == .cleanStart, p.pts < to {
            // Everything before the latest GOP is settled: only it can be re-encoded at the end.
            if gops.count > 1 {
                for gop in gops.dropLast() { actions += gop.map { write($0.n, $0.packet) } }
                gops.removeFirst(gops.count - 1)
            }
            gops.append([(n, p)])
        } else if p.kind == .skippableLeading, gops.count > 1, gops[gops.count - 1].count == 1 ||
                    gops[gops.count - 1].dropFirst().allSatisfy({ $0.packet.kind != .other }) {
            // A CRA whose RASL pictures refer to the GOP before: not a place the end's stretch can start.
            let cra = gops.removeLast()
            gops[gops.count - 1] += cra
            gops[gops.count - 1].append((n, p))
        } else if gops.isEmpty {
            gops.append([(n, p)])
        } else {
            gops[gops.count - 1].append((n, p))
        }
        return actions
    }

    private mutating func write(_ n: Int, _ p: SmartCutPacket) -> Action {
        lastWrittenDTS = p.dts ?? p.pts
        return .write(n)
    }

    /// The end of the range: copy the packets up to the last frame shown
    /// before `to`, unless one shown after it is among them (then the last
    /// GOP is re-encoded).
    private mutating func endCopy() -> [Action] {
        phase = .ended
        guard let to else { return [] }
        let all = gops.flatMap { $0 }
        let lastGOP = gops.last
        gops = []
        guard let last = all.lastIndex(where: { $0.packet.pts < to }) else {
            return all.map { .discard($0.n) }
        }
        let needed = all[...last]
        if needed.allSatisfy({ $0.packet.pts < to }) {
            var actions = needed.map { write($0.n, $0.packet) }
            actions += all[(last + 1)...].map { .discard($0.n) }
            return actions
        }
        // The last GOP (from the last clean start whose pictures need
        // nothing before it) is re-encoded up to `to`.
        var start = all.count - (lastGOP?.count ?? all.count)
        if start > last {
            start = all[...last].lastIndex { $0.packet.keyframe && $0.packet.kind == .cleanStart } ?? 0
        }
        let tail = all[start...]
        var actions = all[..<tail.startIndex].map { write($0.n, $0.packet) }
        actions += tail.prefix(through: last).map { .decode($0.n) }
        let shown = tail.map(\.packet.pts).filter { $0 >= from }.min() ?? from
        let first = tail[tail.startIndex].packet
        actions.append(.encode(ReencodedStretch(from: shown, until: to, after: lastWrittenDTS, before: nil,
                                                shift: max(0, first.pts.minus(first.dts ?? first.pts)))))
        actions += tail.map { .discard($0.n) }
        return actions
    }
}
