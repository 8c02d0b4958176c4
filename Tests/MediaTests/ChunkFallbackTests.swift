import Foundation
import Testing
import Transcode

/// A chunk whose keyframe is no clean entry point: an old x264 4:4:4 camera
/// file decodes damaged from its second IDR on unless the decoder has seen
/// the stream's first packet (x264's version SEI). Without that priming,
/// the damaged pictures after the seek must send the chunk back to a decode
/// from the file's start, and the chunk must come out as the single pass's.
@Suite("chunked transcode: a chunk decoded from the start")
struct ChunkFallbackTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func psnr(_ a: String, _ b: String) throws -> Double {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        p.arguments = ["-nostdin", "-i", a, "-i", b, "-lavfi", "[0:v]setpts=N/TB/25[x];[1:v]setpts=N/TB/25[y];[x][y]psnr",
                       "-f", "null", "-"]
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard let r = text.range(of: #"average:[0-9.]+"#, options: .regularExpression) else { return -1 }
        return Double(text[r].dropFirst("average:".count)) ?? -1
    }

    @Test(arguments: [true, false])
    func aDamagedStartIsDecodedFromTheFileStart(primed: Bool) throws {
        let source = Self.repo.appendingPathComponent(".real-media/cockatoo_yuv444_mp3.mp4").path
        guard FileManager.default.fileExists(atPath: source) else { try Test.cancel("real media missing") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("avtool-chunks-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = TranscodeOptions()
        options.preset = .ultrafast
        options.primeChunkDecoder = primed
        for k in 1...3 {
            let report = try transcodeChunk(input: source, number: k, of: 3, directory: dir, options: options)
            // Chunk 1 needs no seek; the others seek, and only unprimed do they decode damaged.
            #expect(report.decodedFromStart == (k > 1 && !primed), "chunk \(k)")
        }
        let out = dir + "/joined.mp4", single = dir + "/single.mp4"
        _ = try joinChunks(directory: dir, output: out, options: options)
        _ = try transcode(input: source, output: single, options: options)
        let a = try psnr(out, source), b = try psnr(single, source)
        #expect(abs(a - b) <= 0.2, "joined \(a) dB, single pass \(b) dB")
    }
}
