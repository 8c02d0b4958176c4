import CFFmpeg
import Filters
import Glibc
import Media
import Sync

/// One audio stream's measured loudness.
public struct StreamLoudness: Sendable, Codable, Equatable {
    /// The stream's index in its file.
    public var stream: Int
    public var figures: LoudnessFigures
}

/// Measures every audio stream of `path` (cover art and other streams are
/// not read, let alone decoded): BS.1770-4 / EBU R128 by libavfilter's
/// `ebur128`, over each whole stream, with true and sample peaks. An empty
/// result when the file has no audio.
public func measureLoudness(path: String, cancellation: Cancellation = .shared) throws(MediaError) -> [StreamLoudness] {
    let input = try InputFile(path: path, cancellation: cancellation)
    let audio = input.streams.filter { $0.mediaType == .audio }
    guard !audio.isEmpty else { return [] }
    input.discardAll(except: Set(audio.map(\.index)))
    var meters: [Int: StreamMeter] = [:]
    for s in audio { meters[s.index] = try StreamMeter(stream: s) }

    let packet = try Packet()
    while try input.read(into: packet) {
        try cancellation.check()
        guard let meter = meters[packet.streamIndex] else { continue }
        if packet.isCorrupt { throw input.corruptPacketError(stream: packet.streamIndex) }
        try meter.send(packet)
    }
    return try audio.map { s throws(MediaError) in
        StreamLoudness(stream: s.index, figures: try meters[s.index]!.finish())
    }
}

/// Decoder → `ebur128` for one stream. The filter annotates each frame it
/// passes with the figures so far (`metadata=1`); the last frame's are the
/// whole stream's. Peaks come from a second graph that measures the samples
/// 40 dB up (in doubles, nothing clips): the annotation has three decimals of
/// the linear peak, which leaves a -33 dBTP peak ±0.2 dB, and 40 dB up ±0.002.
final class StreamMeter {
    private let stream: InputStream
    private let decoder: Decoder
    private let decoded: Frame
    private let filtered: Frame
    private var graph: FilterGraph?
    private var peakGraph: FilterGraph?
    private var latest = Figures()
    private var peaks = Figures()
    /// The peak graph's gain, linear (+40 dB).
    private static let peakGain = 100.0
    /// The highest sample seen, exact (the filter's annotation has three decimals).
    private var samplePeak = 0.0

    init(stream: InputStream) throws(MediaError) {
        self.stream = stream
        decoder = try Decoder(stream: stream, threads: 1)
        decoded = try Frame()
        filtered = try Frame()
    }

    func send(_ packet: borrowing Packet) throws(MediaError) {
        while try !decoder.send(packet) { try drainDecoder() }
        try drainDecoder()
    }

    /// Flushes decoder and filter; the stream's figures.
    func finish() throws(MediaError) -> LoudnessFigures {
        try decoder.sendEnd()
        try drainDecoder()
        if let graph, let peakGraph {
            try graph.sendEnd()
            try peakGraph.sendEnd()
            try drainGraphs()
        }
        guard let integrated = latest.integrated else {
            throw MediaError.invalid("could not measure the loudness of", path: stream.file.path, stream: stream.index,
                                     message: "the stream has no decodable audio")
        }
        let truePeak = max((peaks.truePeak ?? 0) / Self.peakGain, samplePeak)
        return LoudnessFigures(integratedLUFS: integrated, rangeLU: latest.range ?? 0,
                               truePeakDBTP: decibels(truePeak), samplePeakDBFS: decibels(samplePeak))
    }

    private func drainDecoder() throws(MediaError) {
        while case .ready = try decoder.receive(into: decoded) {
            if graph == nil {
                guard let tb = stream.timeBase else {
                    throw MediaError.invalid("could not measure the loudness of", path: stream.file.path,
                                             stream: stream.index, message: "the stream has no valid time base")
                }
                graph = try FilterGraph("ebur128=metadata=1", shapedLike: decoded,
                                             timeBase: tb, path: stream.file.path, stream: stream.index)
                peakGraph = try FilterGraph("volume=40dB:precision=double,ebur128=peak=true:metadata=1",
                                                 shapedLike: decoded, timeBase: tb, path: stream.file.path,
                                                 stream: stream.index)
            }
            try graph!.send(decoded)
            try peakGraph!.send(decoded)
            decoded.unref()
            try drainGraphs()
        }
    }

    private func drainGraphs() throws(MediaError) {
        guard let graph, let peakGraph else { return }
        while case .ready = try graph.receive(into: filtered) {
            latest.update(from: filtered.pointer.pointee.metadata)
            samplePeak = max(samplePeak, Self.peak(of: filtered))
            filtered.unref()
        }
        while case .ready = try peakGraph.receive(into: filtered) {
            peaks.update(from: filtered.pointer.pointee.metadata)
            filtered.unref()
        }
    }

    /// The largest magnitude in a frame the filter passed on (`ebur128`
    /// works on packed doubles, and hands its input on as it is).
    private static func peak(of frame: borrowing Frame) -> Double {
        let f = frame.pointer.pointee
        guard f.format == doubleFormat, let data = f.data.0 else { return 0 }
        let count = Int(f.nb_samples) * Int(f.ch_layout.nb_channels)
        var top = 0.0
        data.withMemoryRebound(to: Double.self, capacity: count) { p in
            for i in 0..<count { top = max(top, abs(p[i])) }
        }
        return top
    }
}

/// Packed doubles, what `ebur128` works on.
private let doubleFormat = av_get_sample_fmt("dbl").rawValue

/// The figures `ebur128` writes into a frame's metadata.
private struct Figures {
    var integrated: Double?
    var range: Double?
    /// Linear, the highest of the channels'.
    var truePeak: Double?

    mutating func update(from metadata: OpaquePointer?) {
        guard let metadata else { return }
        func value(_ key: String) -> Double? {
            guard let e = av_dict_get(metadata, key, nil, 0), let v = e.pointee.value else { return nil }
            return Double(String(cString: v))
        }
        integrated = value("lavfi.r128.I") ?? integrated
        range = value("lavfi.r128.LRA") ?? range
        truePeak = value("lavfi.r128.true_peak") ?? truePeak
    }
}

private func decibels(_ linear: Double) -> Double { linear > 0 ? 20 * log10(linear) : -.infinity }
