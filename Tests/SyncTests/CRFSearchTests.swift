import Foundation
import Sync
import Testing

@Suite("CRFSearch")
struct CRFSearchTests {
    /// A made-up encoder whose samples lose `slope` dB of SSIM's linear
    /// scale per CRF step, each from its own start (a hard sample starts lower).
    struct Samples {
        var starts: [Double] = [36, 30, 33]
        var slope = 0.4
        func scores(_ crf: Double) -> [Double] {
            starts.map { QualityMetric.ssim.score(fromLinear: $0 - slope * crf) }
        }
        func probe(_ crf: Double) -> CRFSearch.Probe {
            CRFSearch.Probe(crf: crf, scores: scores(crf), bytes: Int64(1_000_000 * pow(0.89, crf)), seconds: 10 - crf / 10)
        }
    }

    /// Runs the search to its end; the CRFs probed, and the last step.
    func run(_ target: QualityTarget, _ samples: Samples) -> ([Double], CRFSearch.Step) {
        var search = CRFSearch(target: target)
        var probed: [Double] = []
        while case .probe(let c) = search.next() {
            #expect(!probed.contains(c), "\(c) probed twice")
            probed.append(c)
            search.add(samples.probe(c))
        }
        return (probed, search.next())
    }

    @Test("the weakest sample meets the target at the chosen CRF, within a tenth of a CRF, in few probes")
    func choosesTheWeakest() throws {
        let samples = Samples()
        let (probed, step) = run(QualityTarget(value: 0.985), samples)
        guard case .chosen(let choice) = step else { Issue.record("\(step)"); return }
        // The weakest starts at 30 dB: 30 - 0.4 c = linear(0.985) = 18.24 → c = 29.4.
        #expect(abs(choice.crf - 29.4) <= 0.1)
        #expect(samples.scores(choice.crf).min()! >= 0.985)
        #expect(samples.scores(choice.crf + 0.2).min()! < 0.985)
        #expect(abs(choice.weakest - 0.985) < 0.0005)
        #expect(choice.mean > choice.weakest)
        #expect(probed.count <= 6, "\(probed)")
        #expect(choice.bytes > Double(samples.probe(30).bytes) && choice.bytes < Double(samples.probe(29).bytes))
    }

    @Test("bounded: a search never leaves min-crf…max-crf")
    func bounded() {
        let (probed, step) = run(QualityTarget(value: 0.97, minCRF: 18, maxCRF: 26), Samples())
        #expect(probed.allSatisfy { (18...26).contains($0) }, "\(probed)")
        guard case .unreachable(let best, let crf, let tooHigh) = step else { Issue.record("\(step)"); return }
        // 0.97 is below what CRF 26 gives (the floor): refused, naming the lowest reachable.
        #expect(!tooHigh && crf == 26)
        #expect(abs(best - Samples().scores(26).min()!) < 1e-12)
    }

    @Test("a target above what the lowest CRF reaches is unreachable, naming the best score")
    func aboveTheCeiling() {
        let (probed, step) = run(QualityTarget(value: 0.9995, minCRF: 10, maxCRF: 40), Samples())
        guard case .unreachable(let best, let crf, let tooHigh) = step else { Issue.record("\(step)"); return }
        #expect(tooHigh && crf == 10 && probed.contains(10))
        #expect(abs(best - Samples().scores(10).min()!) < 1e-12)
        #expect(probed.count <= CRFSearch.maximumProbes)
    }

    @Test("PSNR targets, and a rerun from cached probes asks for no encode already made")
    func psnrAndCache() {
        var target = QualityTarget(metric: .psnr, value: 40)
        let psnr = { (crf: Double) in CRFSearch.Probe(crf: crf, scores: [55 - 0.5 * crf, 52 - 0.5 * crf], bytes: 1000, seconds: 1) }
        var search = CRFSearch(target: target)
        var made: [CRFSearch.Probe] = []
        while case .probe(let c) = search.next() { made.append(psnr(c)); search.add(psnr(c)) }
        guard case .chosen(let a) = search.next() else { Issue.record("\(search.next())"); return }
        #expect(abs(a.crf - 24) <= 0.1)
        // Another target from the same probes: only new CRFs are asked for.
        target.value = 38
        var again = CRFSearch(target: target, probes: made)
        while case .probe(let c) = again.next() {
            #expect(!made.contains { $0.crf == c })
            again.add(psnr(c))
        }
        guard case .chosen(let b) = again.next() else { Issue.record("\(again.next())"); return }
        #expect(abs(b.crf - 28) <= 0.1)
    }

    @Test("named levels and refused values")
    func levels() {
        #expect(QualityTarget("high")?.value == 0.985)
        #expect(QualityTarget("archive", metric: .psnr)?.value == 45)
        #expect(QualityTarget("0.97")?.value == 0.97)
        #expect(QualityTarget("best") == nil)
        #expect(QualityTarget(value: 1.5).problem != nil)
        #expect(QualityTarget(value: 0.98, minCRF: 30, maxCRF: 20).problem != nil)
        #expect(QualityTarget(value: 0.98).problem == nil)
    }
}

@Suite("QualitySamples")
struct QualitySamplesTests {
    let ms = Rational(1, 1000)!

    @Test("three 2 s stretches centred on each third of a minute, on the stream's clock")
    func spread() {
        let s = QualitySamples(start: 0, end: 60_000, timeBase: ms)
        #expect(s.windows.map(\.lower) == [9_000, 29_000, 49_000])
        #expect(s.windows.map(\.upper) == [11_000, 31_000, 51_000])
        #expect(s.windows.map(\.number) == [1, 2, 3])
        #expect(abs(s.seconds(start: 0, end: 60_000, timeBase: ms) - 6) < 1e-9)
        // 90 kHz, starting late: the same places relative to the range.
        let t = QualitySamples(start: 900_000, end: 6_300_000, timeBase: Rational(1, 90_000)!)
        let lowers: [Int64?] = [1_710_000, 3_510_000, 5_310_000]
        #expect(t.windows.map(\.lower) == lowers)
    }

    @Test("the stretch the source spent the most bytes on (a scene change at 40.5 s) takes the place of the even stretch nearest it")
    func hardest() {
        // A minute at 25 fps, 1000 bytes a frame, but 40 000 from 40.5 s to 42 s.
        let frames = (0..<1500).map { i in
            QualitySamples.Frame(pts: Int64(i) * 40, bytes: (40_500..<42_000).contains(i * 40) ? 40_000 : 1_000)
        }
        let s = QualitySamples(start: 0, end: 60_000, timeBase: ms, frames: frames.reversed())
        // The first 2 s holding all of the burst start at 40 s; the even stretch at 49 s moved there.
        #expect(s.windows.map(\.lower) == [9_000, 29_000, 40_000])
        #expect(s.windows.map(\.upper) == [11_000, 31_000, 42_000])
        #expect(s.windows.map(\.number) == [1, 2, 3])
        // Even bytes everywhere: the first stretch of the most (any) is at the start, nearest the first even one.
        let flat = QualitySamples(start: 0, end: 60_000, timeBase: ms, frames: frames.map { .init(pts: $0.pts, bytes: 1) })
        #expect(flat.windows.map(\.lower) == [0, 29_000, 49_000])
        // A burst in the last 2 s: a stretch that would run past the end is not taken.
        let late = (0..<1500).map { i in QualitySamples.Frame(pts: Int64(i) * 40, bytes: i >= 1490 ? 90_000 : 1_000) }
        #expect(QualitySamples(start: 0, end: 60_000, timeBase: ms, frames: late).windows.map(\.lower) == [9_000, 29_000, 58_000])
    }

    @Test("a range not much longer than the samples is one window: all of it, a chunk's bounds kept")
    func short() {
        let whole = QualitySamples(start: 0, end: 12_000, timeBase: ms)
        #expect(whole.windows == [ChunkPlan.Chunk(number: 1, lower: nil, upper: nil)])
        #expect(abs(whole.seconds(start: 0, end: 12_000, timeBase: ms) - 12) < 1e-9)
        let chunk = QualitySamples(start: 4_000, end: 8_000, timeBase: ms, lower: 4_000, upper: 8_000)
        #expect(chunk.windows == [ChunkPlan.Chunk(number: 1, lower: 4_000, upper: 8_000)])
        // A chunk of a minute gets its own three stretches inside it.
        let long = QualitySamples(start: 60_000, end: 120_000, timeBase: ms, lower: 60_000, upper: 120_000)
        #expect(long.windows.allSatisfy { $0.lower! >= 60_000 && $0.upper! <= 120_000 })
    }
}
