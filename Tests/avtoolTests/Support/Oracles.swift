import Foundation
import Testing

/// `ffprobe -of json` output, read with JSONSerialization.
struct FFprobe {
    let format: [String: Any]
    let streams: [[String: Any]]

    init(_ path: String, countPackets: Bool = false) throws {
        var args = ["-v", "error", "-of", "json", "-show_format", "-show_streams"]
        if countPackets { args.append("-count_packets") }
        let r = try Tool.run("ffprobe", args + [path])
        guard r.status == 0,
              let obj = try JSONSerialization.jsonObject(with: r.data) as? [String: Any] else {
            throw FixtureError(message: "ffprobe failed on \(path): \(r.stderr)")
        }
        format = obj["format"] as? [String: Any] ?? [:]
        streams = obj["streams"] as? [[String: Any]] ?? []
    }

    func stream(_ i: Int) -> [String: Any] { streams[i] }

    static func string(_ s: [String: Any], _ key: String) -> String? { s[key] as? String }
    static func int(_ s: [String: Any], _ key: String) -> Int? {
        if let v = s[key] as? Int { return v }
        return (s[key] as? String).flatMap { Int($0) }
    }
    static func double(_ s: [String: Any], _ key: String) -> Double? {
        if let v = s[key] as? Double { return v }
        return (s[key] as? String).flatMap { Double($0) }
    }
    static func tag(_ s: [String: Any], _ key: String) -> String? { (s["tags"] as? [String: Any])?[key] as? String }

    static func isCoverArt(_ s: [String: Any]) -> Bool {
        ((s["disposition"] as? [String: Any])?["attached_pic"] as? Int) == 1
    }

    /// Rotation from the display-matrix side data, as ffprobe prints it.
    static func rotation(_ s: [String: Any]) -> Int? {
        for sd in s["side_data_list"] as? [[String: Any]] ?? [] {
            if let r = sd["rotation"] as? Int { return r }
        }
        return nil
    }
}

/// One packet as ffprobe demuxes it.
struct ProbedPacket: Equatable {
    let stream: Int
    let pts: Int64?
    let dts: Int64?
    let size: Int
    let hash: String
    let discard: Bool
}

/// `ffprobe -show_packets -show_data_hash MD5`: every packet libavformat
/// demuxes (including those flagged DISCARD, such as AAC priming, which
/// `ffmpeg -c copy` drops), with its payload hash and stream time base.
struct PacketList {
    var timeBases: [Int: (Int64, Int64)] = [:]
    var packets: [ProbedPacket] = []

    init(_ path: String) throws {
        let r = try Tool.run("ffprobe", ["-v", "error", "-of", "json", "-show_data_hash", "MD5",
                                         "-show_entries", "packet=stream_index,pts,dts,size,flags,data_hash:stream=index,time_base",
                                         path])
        guard r.status == 0, let obj = try JSONSerialization.jsonObject(with: r.data) as? [String: Any] else {
            throw FixtureError(message: "ffprobe packets failed on \(path): \(r.stderr)")
        }
        for s in obj["streams"] as? [[String: Any]] ?? [] {
            let f = (s["time_base"] as? String ?? "1/1").split(separator: "/")
            timeBases[s["index"] as? Int ?? 0] = (Int64(f[0]) ?? 1, Int64(f[1]) ?? 1)
        }
        for p in obj["packets"] as? [[String: Any]] ?? [] {
            packets.append(ProbedPacket(
                stream: p["stream_index"] as? Int ?? -1, pts: (p["pts"] as? NSNumber)?.int64Value,
                dts: (p["dts"] as? NSNumber)?.int64Value, size: Int(p["size"] as? String ?? "") ?? -1,
                hash: p["data_hash"] as? String ?? "", discard: (p["flags"] as? String ?? "").contains("D")))
        }
    }

    /// Per stream: the sequence of "size:hash".
    var payloads: [Int: [String]] {
        var r: [Int: [String]] = [:]
        for p in packets { r[p.stream, default: []].append("\(p.size):\(p.hash)") }
        return r
    }

    func seconds(_ ticks: Int64, stream: Int) -> Double {
        let (n, d) = timeBases[stream] ?? (1, 1)
        return Double(ticks) * Double(n) / Double(d)
    }

    /// Every PTS in seconds relative to the earliest PTS of the file, per stream.
    var relativePTS: [Int: [Double]] {
        let origin = packets.compactMap { p in p.pts.map { seconds($0, stream: p.stream) } }.min() ?? 0
        var r: [Int: [Double]] = [:]
        for p in packets { r[p.stream, default: []].append(p.pts.map { seconds($0, stream: p.stream) - origin } ?? .nan) }
        return r
    }

    /// The coarsest tick among the streams, in seconds.
    var coarsestTick: Double {
        timeBases.values.map { Double($0.0) / Double($0.1) }.max() ?? 0
    }
}

/// GStreamer as a second, independent demuxer: `gst-discoverer-1.0` must read
/// the file and report its duration and streams.
struct GstDiscoverer {
    let ok: Bool
    let output: String

    init(_ path: String) throws {
        let r = try Tool.run("gst-discoverer-1.0", ["-v", path])
        output = r.stdout + r.stderr
        ok = r.status == 0 && output.contains("Duration:") && !output.contains("An error was encountered")
    }

    /// The "Missing plugins" lines, if GStreamer could not handle a codec.
    var missingPlugins: String? {
        guard let r = output.range(of: "Missing plugins") else { return nil }
        return output[r.lowerBound...].split(separator: "\n").prefix(3).joined(separator: "\n")
            .replacingOccurrences(of: #"file://\S+"#, with: "", options: .regularExpression)
    }

    var videoStreams: Int { output.components(separatedBy: "video #").count - 1 }
    var audioStreams: Int { output.components(separatedBy: "audio #").count - 1 }
}

/// Sync measured from decoded output: the times of bright video frames
/// (ffmpeg's signalstats, YAVG > 128) and of beep onsets in the decoded
/// audio (ffmpeg decodes to 16-bit mono; an onset is the first sample above
/// 15 % of full scale after at least 100 ms of quiet), on the file's own
/// timeline (the audio stream's start time plus the sample index).
struct ClickTrack {
    let flashes: [Double]
    let beeps: [Double]
    /// Decoded audio length in seconds.
    let audioSeconds: Double
    let sampleRate: Double

    /// The flashes of `path`'s video and the beeps of its audio; with
    /// `audioOnly`, the beeps alone (no flashes).
    init(_ path: String, audioOnly: Bool = false) throws {
        flashes = audioOnly ? [] : try Self.flashes(path)
        let probe = try FFprobe(path)
        let audio = try #require(probe.streams.first { FFprobe.string($0, "codec_type") == "audio" })
        let start = FFprobe.double(audio, "start_time") ?? 0
        sampleRate = FFprobe.double(audio, "sample_rate") ?? 48_000
        let a = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-ac", "1",
                                        "-f", "s16le", "-"])
        let data = a.data
        let count = data.count / 2
        var onsets: [Double] = []
        var quiet = Int.max / 2
        let threshold = Int32(0.15 * 32768)
        let rate = sampleRate
        let minimumQuiet = Int(rate / 10)
        data.withUnsafeBytes { raw in
            for i in 0..<count {
                let v = Int32(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: 2 * i, as: Int16.self)))
                if abs(v) > threshold {
                    if quiet >= minimumQuiet { onsets.append(start + Double(i) / rate) }
                    quiet = 0
                } else {
                    quiet += 1
                }
            }
        }
        beeps = onsets
        audioSeconds = Double(count) / sampleRate
    }

    /// The times of the video's white frames (luma average above half).
    static func flashes(_ path: String) throws -> [Double] {
        let v = try Tool.run("ffprobe", ["-v", "error", "-f", "lavfi", "-i", "movie=\(path),signalstats",
                                         "-show_entries", "frame=pts_time:frame_tags=lavfi.signalstats.YAVG",
                                         "-of", "csv=p=0"])
        return v.stdout.split(separator: "\n").compactMap { line -> Double? in
            let f = line.split(separator: ",")
            guard f.count >= 2, let t = Double(f[0]), let y = Double(f[1]), y > 128 else { return nil }
            return t
        }
    }

    /// For each beep, its distance (s) to the nearest flash.
    var beepErrors: [Double] {
        beeps.map { b in flashes.map { abs($0 - b) }.min() ?? .infinity }
    }
}

/// The loudness figures of one audio stream by the `ffmpeg` program's
/// `ebur128` filter (`-af ebur128=peak=true+sample`), from its summary.
struct Ebur128 {
    let integrated: Double
    let range: Double
    let samplePeak: Double
    let truePeak: Double

    init(_ path: String, stream: Int = 0) throws {
        let r = try Tool.run("ffmpeg", ["-nostats", "-hide_banner", "-i", path, "-map", "0:a:\(stream)",
                                        "-af", "ebur128=peak=true+sample", "-f", "null", "-"])
        guard r.status == 0, let summary = r.stderr.range(of: "Summary:") else {
            throw FixtureError(message: "ebur128 failed on \(path): \(r.stderr.suffix(500))")
        }
        // "    I:         -34.0 LUFS", "    LRA:         3.1 LU", then "Peak:" for sample, then true.
        var values: [String: [Double]] = [:]
        for line in r.stderr[summary.upperBound...].split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count >= 2, let v = Double(parts[1]) else { continue }
            values[String(parts[0]), default: []].append(v)
        }
        guard let i = values["I:"]?.first, let lra = values["LRA:"]?.first,
              let peaks = values["Peak:"], peaks.count == 2 else {
            throw FixtureError(message: "no ebur128 summary for \(path): \(r.stderr[summary.upperBound...])")
        }
        integrated = i
        range = lra
        samplePeak = peaks[0]
        truePeak = peaks[1]
    }
}

/// Decoded pictures compared by ffmpeg's own filters.
enum PictureCheck {
    /// The lowest PSNR (dB, Y/U/V average) of `frames` decoded frames of
    /// `path` from `firstFrame` on against the first of `reference`, by
    /// ffmpeg's psnr filter (both timed as 24 fps, so frames pair by order).
    static func worstPSNR(_ path: String, firstFrame: Int, against reference: String, frames: Int) throws -> Double {
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "info", "-i", path, "-i", reference, "-lavfi",
                                        "[0:v]trim=start_frame=\(firstFrame):end_frame=\(firstFrame + frames),setpts=N/24/TB[a];[1:v]trim=end_frame=\(frames),setpts=N/24/TB[b];[a][b]psnr",
                                        "-f", "null", "-"])
        try #require(r.status == 0, "\(r)")
        let line = try #require(r.stderr.split(separator: "\n").first { $0.contains("PSNR y:") })
        let min = try #require(line.split(separator: " ").first { $0.hasPrefix("min:") })
        return try #require(Double(min.dropFirst(4)))
    }

    /// The MD5 of every picture `path`'s first video stream decodes to, in
    /// presentation order, each once (`-f framemd5`, no frame rate imposed).
    static func frameHashes(_ path: String) throws -> [String] {
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough",
                                        "-f", "framemd5", "-"])
        try #require(r.status == 0, "\(r)")
        return r.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
    }
}
