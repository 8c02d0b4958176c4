#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a picture's quality is measured against its source, as libavfilter's
/// `ssim` and `psnr` filters measure it.
public enum QualityMetric: String, Sendable, Hashable, Codable, CaseIterable {
    /// Structural similarity, 0…1 (1: identical), all planes weighted by their size.
    case ssim
    /// Peak signal-to-noise ratio in dB, from the mean squared error of all planes.
    case psnr

    /// The named levels' values on this metric's scale.
    public func value(of level: QualityTarget.Level) -> Double {
        switch (self, level) {
        case (.ssim, .archive): 0.99
        case (.ssim, .high): 0.985
        case (.ssim, .share): 0.97
        case (.psnr, .archive): 45
        case (.psnr, .high): 42
        case (.psnr, .share): 38
        }
    }

    /// A score on a scale that moves about linearly with x265's CRF:
    /// SSIM as decibels of its distance from 1 (`-10 log10(1 - ssim)`),
    /// PSNR as it is. Interpolation between sample encodes is done here.
    public func linear(_ score: Double) -> Double {
        switch self {
        case .ssim: -10 * log10(max(1 - score, 1e-9))
        case .psnr: score
        }
    }

    /// `linear`'s inverse.
    public func score(fromLinear v: Double) -> Double {
        switch self {
        case .ssim: 1 - pow(10, -v / 10)
        case .psnr: v
        }
    }

    /// The values a target may take.
    public var range: ClosedRange<Double> {
        switch self {
        case .ssim: 0.5...0.99999
        case .psnr: 15...99
        }
    }
}

/// `transcode --quality`: the quality the output's weakest sample must
/// reach, and the CRFs the search may choose from.
public struct QualityTarget: Sendable, Hashable, Codable {
    /// Named targets, for people who do not think in SSIM.
    public enum Level: String, Sendable, Hashable, Codable, CaseIterable {
        /// No visible loss on a close look (SSIM 0.99, PSNR 45 dB).
        case archive
        /// Visually transparent at normal viewing (SSIM 0.985, PSNR 42 dB).
        case high
        /// Good for sending and the web (SSIM 0.97, PSNR 38 dB).
        case share
    }

    public var metric: QualityMetric
    public var value: Double
    /// The CRFs the search stays within (x265's 0…51).
    public var minCRF: Double
    public var maxCRF: Double

    public static let defaultMinCRF = 10.0
    public static let defaultMaxCRF = 40.0

    public init(metric: QualityMetric = .ssim, value: Double, minCRF: Double = defaultMinCRF,
                maxCRF: Double = defaultMaxCRF) {
        self.metric = metric
        self.value = value
        self.minCRF = minCRF
        self.maxCRF = maxCRF
    }

    /// `0.985`, or a level's name (its value on `metric`'s scale).
    public init?(_ text: String, metric: QualityMetric = .ssim) {
        if let level = Level(rawValue: text) {
            self.init(metric: metric, value: metric.value(of: level))
        } else if let v = Double(text), v.isFinite {
            self.init(metric: metric, value: v)
        } else {
            return nil
        }
    }

    /// What is wrong with the values, in the options' words; nil when nothing is.
    public var problem: String? {
        if !metric.range.contains(value) {
            return "'quality' \(value) is not \(metric == .ssim ? "an" : "a") \(metric.rawValue.uppercased()) target: it must be between \(metric.range.lowerBound) and \(metric.range.upperBound)"
        }
        if !(0...51).contains(minCRF) || !(0...51).contains(maxCRF) { return "'min-crf' and 'max-crf' must be between 0 and 51" }
        if minCRF >= maxCRF { return "'min-crf' must be below 'max-crf'" }
        return nil
    }
}
