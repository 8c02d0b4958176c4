/// One audio stream's loudness, measured over the whole stream by ITU-R
/// BS.1770-4 with EBU R128's gating.
public struct LoudnessFigures: Sendable, Codable, Equatable {
    /// Integrated (programme) loudness, LUFS; -70 when every block is gated out.
    public var integratedLUFS: Double
    /// Loudness range, LU.
    public var rangeLU: Double
    /// The highest inter-sample peak (4× oversampled), dBTP.
    public var truePeakDBTP: Double
    /// The highest sample, dBFS.
    public var samplePeakDBFS: Double

    public init(integratedLUFS: Double, rangeLU: Double, truePeakDBTP: Double, samplePeakDBFS: Double) {
        self.integratedLUFS = integratedLUFS
        self.rangeLU = rangeLU
        self.truePeakDBTP = truePeakDBTP
        self.samplePeakDBFS = samplePeakDBFS
    }

    /// The absolute gate (-70 LUFS) left no block to measure: silence, or
    /// nearly so.
    public var isGatedOut: Bool { integratedLUFS <= -70 }
}
