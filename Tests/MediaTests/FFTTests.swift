import Media
import Sync
import Testing

/// libavutil's av_tx real FFT against a plain DFT, and the mono reader
/// against the timeline of generated files.
@Suite("FFT and mono audio reader")
struct FFTTests {
    func plainDFT(_ x: [Float]) -> [(Double, Double)] {
        let n = x.count
        return (0...n / 2).map { k in
            var re = 0.0, im = 0.0
            for (i, v) in x.enumerated() {
                let a = -2 * Double.pi * Double(k * i % n) / Double(n)
                re += Double(v) * cos(a)
                im += Double(v) * sin(a)
            }
            return (re, im)
        }
    }

    @Test(arguments: [16, 1000, 4096])
    func forwardMatchesPlainDFTAndInverseRestores(size: Int) throws {
        var state: UInt64 = 99
        var x = (0..<size).map { _ -> Float in
            state = state &* 6_364_136_223_846_793_005 &+ 1
            return Float(Int64(state >> 40) % 2001 - 1000) / 1000
        }
        let original = x
        let fft = try RealFFT(size: size)
        var spectrum: [ComplexFloat] = []
        fft.forward(&x, into: &spectrum)
        #expect(spectrum.count == size / 2 + 1)
        for (k, (re, im)) in plainDFT(original).enumerated() {
            #expect(abs(Double(spectrum[k].re) - re) < 1e-3 * Double(size) && abs(Double(spectrum[k].im) - im) < 1e-3 * Double(size),
                    "bin \(k)")
        }
        var back: [Float] = []
        fft.inverse(&spectrum, into: &back)
        for i in 0..<size { #expect(abs(back[i] / Float(size) - original[i]) < 1e-4) }
    }

    @Test func oddSizeIsRefused() {
        #expect(throws: MediaError.self) { try RealFFT(size: 15) }
    }
}

import Foundation

extension FFTTests {
    static var fixtures: String {
        ProcessInfo.processInfo.environment["AVTOOL_FIXTURES"]
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".fixtures").path
    }

    /// The click track's beeps (10 ms of 1 kHz at every whole second, AAC
    /// with priming) must start on the second at any reading rate: sample 0
    /// is the first audible sample and resampling keeps the timeline.
    @Test(arguments: [48_000, 44_100, 8000] as [Int32])
    func readerKeepsTheTimeline(rate: Int32) throws {
        let path = Self.fixtures + "/clicks_audio.m4a"
        try #require(FileManager.default.fileExists(atPath: path), "run Tests/Fixtures/make-fixtures.sh first")
        let file = try InputFile(path: path)
        let reader = try MonoAudioReader(stream: file.streams[0], sampleRate: rate)
        var samples: [Float] = []
        while true {
            let block = try reader.read(10_000)
            if block.isEmpty { break }
            samples += block
        }
        #expect(abs(samples.count - 10 * Int(rate)) <= 1024 * Int(rate) / 48_000 + 1, "\(samples.count) samples")
        var onsets: [Double] = []
        var quiet = Int.max / 2
        for (i, v) in samples.enumerated() {
            if abs(v) > 0.15 {
                if quiet > Int(rate) / 10 { onsets.append(Double(i) / Double(rate)) }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        #expect(onsets.count == 10, "\(onsets)")
        for (k, t) in onsets.enumerated() {
            // Within 0.2 ms (plus one sample at the reading rate) of the second.
            #expect(abs(t - Double(k)) < 0.0002 + 1 / Double(rate), "beep \(k) at \(t)")
        }
    }
}
