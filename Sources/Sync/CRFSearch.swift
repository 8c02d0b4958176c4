#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The search for the highest CRF (the smallest output) whose weakest
/// sample still reaches a quality target: sample encodes ("probes") are
/// added one by one, and `next` says which CRF to encode next, or what
/// was chosen. Quality is taken to fall as the CRF rises, about linearly
/// on the metric's `linear` scale; the crossing of the target is
/// interpolated between the closest probes on either side of it (whole
/// CRFs while they are 2 or more apart, then tenths), and the search ends
/// when those are a tenth apart (or after `maximumProbes`) on the highest
/// CRF measured to pass.
public struct CRFSearch: Sendable {
    /// One CRF's sample encodes, measured.
    public struct Probe: Sendable, Codable, Equatable {
        public var crf: Double
        /// Each 2-second run's score (SSIM, or PSNR in dB), in the samples'
        /// order: one for a 2-second sample, several for a longer one.
        public var scores: [Double]
        /// The samples' encoded bytes, all together.
        public var bytes: Int64
        /// Seconds the samples' encodes took, all together.
        public var seconds: Double

        public init(crf: Double, scores: [Double], bytes: Int64, seconds: Double) {
            self.crf = crf
            self.scores = scores
            self.bytes = bytes
            self.seconds = seconds
        }

        /// The weakest sample's score (the promise is on it).
        public var weakest: Double { scores.min() ?? -.infinity }
        public var mean: Double { scores.isEmpty ? -.infinity : scores.reduce(0, +) / Double(scores.count) }
    }

    /// The CRF chosen, and what its probe measured.
    public struct Choice: Sendable, Codable, Equatable {
        public var crf: Double
        public var weakest: Double
        public var mean: Double
        /// The samples' bytes and encode seconds at `crf`.
        public var bytes: Double
        public var seconds: Double
    }

    public enum Step: Sendable, Equatable {
        /// Encode the samples at this CRF, then `add` the result.
        case probe(Double)
        case chosen(Choice)
        /// No CRF within the bounds gives the target: `best` is the closest
        /// score reached (at `crf`); `tooHigh` when the target is above
        /// what the lowest CRF gives, false when even the highest CRF
        /// gives more than it.
        case unreachable(best: Double, crf: Double, tooHigh: Bool)
    }

    /// Probes made by one search at most.
    public static let maximumProbes = 8
    /// Where the search starts, within the bounds.
    public static let firstCRF = 25.0

    public let target: QualityTarget
    /// The probes so far, by CRF.
    public private(set) var probes: [Probe] = []

    /// Probes added since the search began (not those it began with: a cache's).
    public private(set) var made = 0

    public init(target: QualityTarget, probes: [Probe] = []) {
        self.target = target
        for p in probes { keep(p) }
    }

    /// A probe's result (one already made at the same CRF is replaced).
    public mutating func add(_ probe: Probe) {
        made += 1
        keep(probe)
    }

    private mutating func keep(_ probe: Probe) {
        probes.removeAll { $0.crf == probe.crf }
        probes.append(probe)
        probes.sort { $0.crf < $1.crf }
    }

    /// The probes within the bounds (a cache may hold others, from a search with other bounds).
    private var considered: [Probe] { probes.filter { (target.minCRF...target.maxCRF).contains($0.crf) } }

    private func passes(_ p: Probe) -> Bool { p.weakest >= target.value }
    private func linear(_ v: Double) -> Double { target.metric.linear(v) }

    public func next() -> Step {
        let bounds = target.minCRF...target.maxCRF
        let probes = considered
        guard !probes.isEmpty else { return .probe(Self.firstCRF.clamped(to: bounds)) }
        // The highest passing CRF, and the lowest failing one above it.
        let pass = probes.last(where: passes)
        let fail = probes.first { !passes($0) && $0.crf > (pass?.crf ?? -1) }
        switch (pass, fail) {
        case let (p?, f?):
            // x265's quality moves in steps between whole CRFs (its QPs are
            // whole): the choice is a CRF measured, not one interpolated.
            if f.crf - p.crf < 0.15 || made >= Self.maximumProbes { return .chosen(choice(at: p)) }
            let c = f.crf - p.crf >= 2 ? crossing(p, f).rounded().clamped(to: (p.crf + 1)...(f.crf - 1))
                                       : tenth(crossing(p, f)).clamped(to: tenth(p.crf + 0.1)...tenth(f.crf - 0.1))
            return .probe(tenth(c))
        case let (nil, f?):
            // Every probe is below the target: lower CRFs, down to the bound.
            if f.crf <= bounds.lowerBound || made >= Self.maximumProbes {
                let best = probes.max { $0.weakest < $1.weakest }!
                return .unreachable(best: best.weakest, crf: best.crf, tooHigh: true)
            }
            return .probe(extrapolated(from: f, towards: -1).clamped(to: bounds.lowerBound...max(bounds.lowerBound, f.crf - 1)))
        case let (p?, nil):
            // Every probe is above the target: higher CRFs, up to the bound.
            if p.crf >= bounds.upperBound {
                return .unreachable(best: p.weakest, crf: p.crf, tooHigh: false)
            }
            if made >= Self.maximumProbes { return .chosen(choice(at: p)) }
            return .probe(extrapolated(from: p, towards: 1).clamped(to: min(p.crf + 1, bounds.upperBound)...bounds.upperBound))
        case (nil, nil):
            return .probe(Self.firstCRF.clamped(to: bounds))
        }
    }

    /// The CRF where the weakest sample's score meets the target, on the
    /// line through `a` and `b`.
    private func crossing(_ a: Probe, _ b: Probe) -> Double {
        let (la, lb) = (linear(a.weakest), linear(b.weakest))
        guard la != lb else { return (a.crf + b.crf) / 2 }
        return a.crf + (linear(target.value) - la) * (b.crf - a.crf) / (lb - la)
    }

    /// The next CRF to try from the probe nearest the target in `direction`
    /// (+1: higher CRFs): through the line of the two nearest probes when
    /// there are two, else with a typical slope (x265: about 0.35 dB of SSIM's
    /// scale, 0.5 dB of PSNR, per CRF step), at most 8 steps away.
    private func extrapolated(from p: Probe, towards direction: Double) -> Double {
        let typical = target.metric == .ssim ? -0.35 : -0.5
        var slope = typical
        let others = considered.filter { $0.crf != p.crf }
        if let q = others.min(by: { abs($0.crf - p.crf) < abs($1.crf - p.crf) }) {
            let s = (linear(q.weakest) - linear(p.weakest)) / (q.crf - p.crf)
            if s < 0 { slope = s }
        }
        let step = (linear(target.value) - linear(p.weakest)) / slope
        return p.crf + (abs(step).clamped(to: 1...8) * direction).rounded()
    }

    private func tenth(_ v: Double) -> Double { (v * 10).rounded() / 10 }

    /// What probe `p` measured, as a choice of its CRF.
    public func choice(at p: Probe) -> Choice {
        Choice(crf: p.crf, weakest: p.weakest, mean: p.mean, bytes: Double(p.bytes), seconds: p.seconds)
    }
}

extension Double {
    fileprivate func clamped(to r: ClosedRange<Double>) -> Double { Swift.min(Swift.max(self, r.lowerBound), r.upperBound) }
}
