/// Which runs of copied audio packets keep their frames when joints that
/// are not a whole number of frames put them on different frame grids.
///
/// Frames of a fixed length N (AAC 1024, AC-3 1536, MP3 1152 samples)
/// decode back to back: a copied run puts its samples where its first
/// frame lands, plus multiples of N. A gap or overlap of G samples between
/// two runs puts the second on another grid when G is not a multiple of N
/// (its phase differs by G mod N): no number of whole frames between them
/// fills G, so the two cannot both be copied and both stay in place — not
/// by frames around the joint alone either, since those are whole frames
/// too. So the runs on one grid are copied, and every other run (with the
/// silence next to it) is decoded and encoded onto that grid, its samples
/// placed exactly; the first frame of the output may then start up to a
/// frame early with silence and the last end up to a frame late. The grid
/// chosen is the one that the most packets are on (ties: the earliest run's).
///
/// Runs are numbered as they are started; their phases compare within the
/// tolerance, around the frame (a phase of N − 1 is next to 0).
public struct FrameGridPlan: Sendable, Equatable {
    public struct Run: Sendable, Equatable {
        /// Where the run's first sample belongs, modulo the frame size.
        public var phase: Int64
        public var packets: Int
    }

    public let frameSize: Int64
    public let toleranceSamples: Int64
    public private(set) var runs: [Run] = []

    public init(frameSize: Int64, toleranceSamples: Int64) {
        self.frameSize = max(frameSize, 1)
        self.toleranceSamples = max(toleranceSamples, 0)
    }

    /// Starts a run whose first sample belongs at output sample `position`.
    public mutating func startRun(at position: Int64) {
        runs.append(Run(phase: phase(of: position), packets: 0))
    }

    /// Counts a packet in the current run (starting one at 0 if none).
    public mutating func addPacket() {
        if runs.isEmpty { startRun(at: 0) }
        runs[runs.count - 1].packets += 1
    }

    /// `position` modulo the frame size, in `0..<frameSize`.
    public func phase(of position: Int64) -> Int64 {
        let r = position % frameSize
        return r < 0 ? r + frameSize : r
    }

    /// Whether two phases are the same grid, within the tolerance.
    public func sameGrid(_ a: Int64, _ b: Int64) -> Bool {
        let d = phase(of: a &- b)
        return d <= toleranceSamples || frameSize - d <= toleranceSamples
    }

    /// The phase of the grid most packets are on; `nil` without runs.
    public var chosenPhase: Int64? {
        var best: (phase: Int64, packets: Int)?
        for candidate in runs {
            let n = runs.reduce(0) { $0 + (sameGrid($1.phase, candidate.phase) ? $1.packets : 0) }
            if best == nil || n > best!.packets { best = (candidate.phase, n) }
        }
        return best?.phase
    }

    /// For each run, whether it is copied (on the chosen grid).
    public var copied: [Bool] {
        guard let p = chosenPhase else { return [] }
        return runs.map { sameGrid($0.phase, p) }
    }

    /// Packets copied and packets re-encoded.
    public var counts: (copied: Int, reencoded: Int) {
        zip(runs, copied).reduce((0, 0)) { acc, e in e.1 ? (acc.0 + e.0.packets, acc.1) : (acc.0, acc.1 + e.0.packets) }
    }

    /// The first grid position at or before `position` (on the chosen grid).
    public func gridStart(atOrBefore position: Int64) -> Int64 {
        guard let p = chosenPhase else { return position }
        return Self.gridStart(atOrBefore: position, phase: p, frameSize: frameSize)
    }

    /// The first position at or before `position` on the grid of `phase` plus whole frames.
    public static func gridStart(atOrBefore position: Int64, phase: Int64, frameSize: Int64) -> Int64 {
        let n = max(frameSize, 1)
        var r = (position &- phase) % n
        if r < 0 { r += n }
        return position &- r
    }

    /// The grid position nearest `position`, counting whole frames from `origin`
    /// (a position on the grid).
    public static func nearestFrame(to position: Int64, from origin: Int64, frameSize: Int64) -> Int64 {
        let n = max(frameSize, 1)
        let d = position.minus(origin)
        let frames = d >= 0 ? d.plus(n / 2) / n : -(d.negated.plus(n / 2 - 1) / n)
        return origin.plus(frames.times(n))
    }
}
