import Sync
import Testing

private func measured(_ i: Double, peak: Double) -> LoudnessFigures {
    LoudnessFigures(integratedLUFS: i, rangeLU: 5, truePeakDBTP: peak, samplePeakDBFS: peak - 0.2)
}

@Suite("loudness plan")
struct LoudnessPlanTests {
    @Test(arguments: [
        ("podcast", nil, -16.0, -1.0),
        ("streaming", nil, -14.0, -1.0),
        ("ebu", -2.0, -23.0, -2.0),
        ("-18", -1.5, -18.0, -1.5),
        ("-18.5", nil, -18.5, -1.0),
    ] as [(String, Double?, Double, Double)])
    func targets(_ text: String, _ peak: Double?, _ lufs: Double, _ ceiling: Double) throws {
        let t = try #require(LoudnessTarget(text, truePeak: peak))
        #expect(t.integratedLUFS == lufs && t.truePeakDBTP == ceiling)
    }

    @Test(arguments: [("loud", nil), ("0", nil), ("-80", nil), ("-16", 1.0), ("nan", nil)] as [(String, Double?)])
    func targetsRefused(_ text: String, _ peak: Double?) {
        #expect(LoudnessTarget(text, truePeak: peak) == nil)
    }

    /// Linear exactly while the gain keeps the true peak at or under the ceiling.
    @Test(arguments: [
        (-30.0, -15.0, LoudnessMode.linear, 14.0, -1.0),   // lands on the ceiling: still linear
        (-30.0, -14.9, LoudnessMode.limited, 14.0, -0.9),
        (-10.0, -0.5, LoudnessMode.linear, -6.0, -6.5),   // too loud: turned down
        (-39.3, -24.0, LoudnessMode.limited, 23.3, -0.7),
    ])
    func mode(_ i: Double, _ peak: Double, _ mode: LoudnessMode, _ gain: Double, _ after: Double) throws {
        let plan = try LoudnessStreamPlan.make(stream: 1, before: measured(i, peak: peak), target: .podcast).get()
        #expect(plan.mode == mode)
        #expect(abs(plan.gainDB - gain) < 1e-9)
        #expect(abs(plan.peakAfterGainDBTP - after) < 1e-9)
        #expect(abs(plan.overCeilingDB - max(0, after + 1)) < 1e-9)
    }

    @Test func refusals() {
        #expect(LoudnessStreamPlan.make(stream: 0, before: measured(-70, peak: -60), target: .podcast)
            == .failure(.gatedOut))
        #expect(LoudnessStreamPlan.make(stream: 0, before: measured(-60, peak: -50), target: .podcast)
            == .failure(.gainTooLarge(gainDB: 44)))
        #expect(LoudnessStreamPlan.make(stream: 0, before: measured(-30, peak: -2), target: .podcast, maxLimitingDB: 12)
            == .failure(.peaksTooHigh(reductionDB: 13, maxLimitingDB: 12)))
        // No cap unless asked: 13 dB (or 30) off the peaks is a limited plan.
        for peak in [-2.0, 15] {
            let plan = try? LoudnessStreamPlan.make(stream: 0, before: measured(-30, peak: peak), target: .podcast).get()
            #expect(plan?.mode == .limited && plan?.gainDB == 14)
        }
    }
}
