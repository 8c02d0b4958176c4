/// Where `avtool loudness` brings a recording: an integrated loudness and a
/// true-peak ceiling.
public struct LoudnessTarget: Sendable, Codable, Equatable {
    /// The preset's name (`podcast`), nil for a number.
    public var name: String?
    public var integratedLUFS: Double
    public var truePeakDBTP: Double

    public init(name: String? = nil, integratedLUFS: Double, truePeakDBTP: Double) {
        self.name = name
        self.integratedLUFS = integratedLUFS
        self.truePeakDBTP = truePeakDBTP
    }

    /// Apple Podcasts: −16 LUFS, −1 dBTP.
    public static let podcast = LoudnessTarget(name: "podcast", integratedLUFS: -16, truePeakDBTP: -1)
    /// Spotify, YouTube: −14 LUFS, −1 dBTP.
    public static let streaming = LoudnessTarget(name: "streaming", integratedLUFS: -14, truePeakDBTP: -1)
    /// EBU R128 broadcast: −23 LUFS, −1 dBTP.
    public static let ebu = LoudnessTarget(name: "ebu", integratedLUFS: -23, truePeakDBTP: -1)
    public static let presets = [podcast, streaming, ebu]

    /// A preset's name or a loudness in LUFS (`-18`), with `truePeak`
    /// replacing the ceiling when given; nil when `text` is neither, or the
    /// numbers are out of the meter's range.
    public init?(_ text: String, truePeak: Double? = nil) {
        if let preset = Self.presets.first(where: { $0.name == text }) {
            self = preset
        } else if let lufs = Double(text), lufs.isFinite {
            self.init(integratedLUFS: lufs, truePeakDBTP: -1)
        } else {
            return nil
        }
        if let truePeak { truePeakDBTP = truePeak }
        guard integratedLUFS > -70, integratedLUFS < 0, truePeakDBTP.isFinite, truePeakDBTP <= 0 else { return nil }
    }
}

/// How one stream is brought to the target.
public enum LoudnessMode: String, Sendable, Codable {
    /// One gain for every sample: the waveform unchanged but for its level.
    case linear
    /// The gain, then a true-peak limiter at the ceiling: the peaks the gain
    /// would push over it are held down.
    case limited
}

/// One stream's plan, made from its measurement before anything is written.
public struct LoudnessStreamPlan: Sendable, Codable, Equatable {
    public var stream: Int
    public var before: LoudnessFigures
    public var mode: LoudnessMode
    /// The gain every sample gets, dB.
    public var gainDB: Double
    /// Where the gain alone would put the true peak, dBTP.
    public var peakAfterGainDBTP: Double
    /// How far over the ceiling the gain alone puts the true peak (dB, 0 when linear).
    public var overCeilingDB: Double { max(0, peakAfterGainDBTP - ceilingDBTP) }
    public var ceilingDBTP: Double
}

/// Why a stream cannot be brought to its target.
public enum LoudnessPlanFailure: Error, Sendable, Equatable {
    /// Every block is under the absolute gate (-70 LUFS): silence.
    case gatedOut
    /// The limiter would have to take more off the peaks than the caller's
    /// cap (`maxLimitingDB`) allows.
    case peaksTooHigh(reductionDB: Double, maxLimitingDB: Double)
    /// A gain beyond `largestGainDB`: the noise floor would become the programme.
    case gainTooLarge(gainDB: Double)
}

extension LoudnessStreamPlan {
    /// The largest gain applied.
    public static let largestGainDB = 40.0

    /// The plan for a stream measured as `before`: the gain that moves its
    /// integrated loudness onto the target; linear when the true peak then
    /// stays at or under the ceiling, else limited — however much the
    /// limiter takes off the peaks, unless that is more than `maxLimitingDB`.
    public static func make(stream: Int, before: LoudnessFigures, target: LoudnessTarget,
                            maxLimitingDB: Double? = nil) -> Result<LoudnessStreamPlan, LoudnessPlanFailure> {
        guard !before.isGatedOut else { return .failure(.gatedOut) }
        let gain = target.integratedLUFS - before.integratedLUFS
        guard gain <= largestGainDB else { return .failure(.gainTooLarge(gainDB: gain)) }
        let peak = before.truePeakDBTP + gain
        let over = peak - target.truePeakDBTP
        if over <= 0 {
            return .success(LoudnessStreamPlan(stream: stream, before: before, mode: .linear, gainDB: gain,
                                               peakAfterGainDBTP: peak, ceilingDBTP: target.truePeakDBTP))
        }
        if let cap = maxLimitingDB, over > cap { return .failure(.peaksTooHigh(reductionDB: over, maxLimitingDB: cap)) }
        return .success(LoudnessStreamPlan(stream: stream, before: before, mode: .limited, gainDB: gain,
                                           peakAfterGainDBTP: peak, ceilingDBTP: target.truePeakDBTP))
    }
}
