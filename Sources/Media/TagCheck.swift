import CFFmpeg
import Sync

/// A tag the sources gave an output that the written output does not hold
/// as it was: gone, or with another value.
public struct TagLoss: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The output stream it belonged to; `nil` for the file's own tags.
    public var stream: Int?
    public var key: String
    public var value: String
    /// The output's value when it holds the key with another value.
    public var now: String?

    /// `stream #N ` for a stream's tag, else empty.
    public var place: String { stream.map { "stream #\($0) " } ?? "" }

    public var description: String {
        "\(place)\(key)=\(Self.quoted(value))" + (now.map { " (now \(Self.quoted($0)))" } ?? "")
    }

    private static func quoted(_ s: String) -> String {
        let short = s.count > 40 ? String(s.prefix(37)) + "…" : s
        return "'\(short)'"
    }
}

/// The tags an output is given, to be checked against what it holds once
/// written (`TagCheck.losses`).
public struct IntendedTags: Sendable, Equatable {
    public var format: [(key: String, value: String)]
    public var streams: [[(key: String, value: String)]]

    public init(format: [(key: String, value: String)], streams: [[(key: String, value: String)]]) {
        self.format = format
        self.streams = streams
    }

    public static func == (a: IntendedTags, b: IntendedTags) -> Bool {
        a.format.elementsEqual(b.format, by: ==)
            && a.streams.elementsEqual(b.streams) { $0.elementsEqual($1, by: ==) }
    }
}

public enum TagCheck {
    /// Keys that describe the writer rather than the recording, which every
    /// muxer sets anew: the file's brands and writing program, the track's
    /// vendor and codec library, and the statistics mkvmerge writes (with
    /// or without a language suffix). They are not reported as lost.
    public static func describesWriter(_ key: String, stream: Bool) -> Bool {
        let k = key.lowercased()
        if stream {
            if ["vendor_id", "encoder"].contains(k) { return true }
            let base = k.split(separator: "-").first.map(String.init) ?? k
            return ["duration", "bps", "number_of_frames", "number_of_bytes"].contains(base)
                || base.hasPrefix("_statistics_")
        }
        return ["major_brand", "minor_version", "compatible_brands", "encoder"].contains(k)
    }

    /// What of `intended` the output `written` (opened again after writing)
    /// does not hold. Keys match without regard to case (Matroska writes
    /// them in capitals); times match to the second (`creation_time` comes
    /// back with microseconds). Output stream `j` holds intended stream `j`.
    public static func losses(_ intended: IntendedTags, in written: InputFile) -> [TagLoss] {
        var lost = compare(intended.format, written.context.pointee.metadata, stream: nil)
        let n = Int(written.context.pointee.nb_streams)
        for (j, tags) in intended.streams.enumerated() {
            let dict = j < n ? written.context.pointee.streams[j]!.pointee.metadata : nil
            lost += compare(tags, dict, stream: j)
        }
        return lost
    }

    private static func compare(_ tags: [(key: String, value: String)], _ dict: OpaquePointer?,
                                stream: Int?) -> [TagLoss] {
        var lost: [TagLoss] = []
        for (key, value) in tags where !describesWriter(key, stream: stream != nil) {
            guard let e = av_dict_get(dict, key, nil, 0) else {
                // "und" (undetermined) says nothing; containers store it as no language.
                if key.lowercased() == "language" && value == "und" { continue }
                // A zero date (1970-01-01 00:00:00) is no date: MP4/MOV store it as none.
                if key.lowercased() == "creation_time" && value.hasPrefix("1970-01-01T00:00:00") { continue }
                lost.append(TagLoss(stream: stream, key: key, value: value))
                continue
            }
            let now = String(cString: e.pointee.value)
            if !same(key, value, now) { lost.append(TagLoss(stream: stream, key: key, value: value, now: now)) }
        }
        return lost
    }

    /// Whether two sets of tags are the same: the same keys without regard
    /// to case, each with the same value (`same`); a language "und" is no language.
    public static func sameTags(_ a: [(key: String, value: String)], _ b: [(key: String, value: String)]) -> Bool {
        func kept(_ t: [(key: String, value: String)]) -> [(key: String, value: String)] {
            t.filter { !($0.key.lowercased() == "language" && $0.value == "und") }
        }
        let x = kept(a), y = kept(b)
        return x.count == y.count && x.allSatisfy { e in
            y.contains { $0.key.lowercased() == e.key.lowercased() && same(e.key, e.value, $0.value) }
        }
    }

    /// Whether `now` is `value` as written back: the same, or for
    /// `creation_time` the same instant to the second.
    static func same(_ key: String, _ value: String, _ now: String) -> Bool {
        if value == now { return true }
        if key.lowercased().hasPrefix("location") { return samePlace(value, now) }
        guard key.lowercased() == "creation_time" else { return false }
        let a = Array(value.utf8), b = Array(now.utf8)
        guard a.count >= 19, b.count >= 19, a[..<19] == b[..<19] else { return false }
        // What follows the seconds may only be a fraction of zeros and a Z.
        func rest(_ s: [UInt8]) -> Bool { s[19...].allSatisfy { $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "Z") } }
        return rest(a) && rest(b)
    }
}

extension TagCheck {
    /// Whether two ISO 6709 locations (`+51.5334-000.1255+081.120/`) are
    /// the same place as MP4's `loci` box stores it: each number to 1/65536
    /// (16.16 fixed point), so `081.120` written back as `81.119995` is kept.
    static func samePlace(_ a: String, _ b: String) -> Bool {
        guard let x = iso6709(a), let y = iso6709(b), x.count == y.count else { return false }
        return zip(x, y).allSatisfy { abs($0 - $1) <= 2.0 / 65536 }
    }

    /// The signed numbers of an ISO 6709 point, nil when it is not one.
    static func iso6709(_ text: String) -> [Double]? {
        var numbers: [Double] = []
        var current = ""
        for c in text {
            if c == "+" || c == "-" || c == "/" {
                if !current.isEmpty {
                    guard let v = Double(current) else { return nil }
                    numbers.append(v)
                }
                current = c == "/" ? "" : String(c)
                if c == "/" { break }
            } else if c.isNumber || c == "." {
                guard !current.isEmpty else { return nil }
                current.append(c)
            } else {
                return nil
            }
        }
        if !current.isEmpty, let v = Double(current) { numbers.append(v) }
        return (2...3).contains(numbers.count) ? numbers : nil
    }
}

extension OutputFile {
    /// The tags (the file's and each stream's) an MP4/MOV output with
    /// `streams`, the tags of `metadataSource`, `edits` and `options` would
    /// not keep: found by writing one in memory (one keyframe of 16 zero bytes per track:
    /// movenc leaves out a track without samples) and reading it back — the
    /// same muxer with the same tags, without the output's size. `nil` when
    /// that trial cannot be made.
    public static func trialTagLosses(container: Container, streams: [OutputStreamSource],
                                            metadataSource: InputFile?, edits: MetadataEdits,
                                            options: [(String, String)]) -> [TagLoss]? {
        guard let memory = try? MemoryOutput(limit: 1 << 24),
              let out = try? OutputFile(memory: memory, name: "trial", container: container, streams: streams,
                                        metadataSource: metadataSource, edits: edits, options: options),
              let packet = try? Packet() else { return nil }
        for i in streams.indices {
            // Zeros: the muxer looks at some payloads (an AAC packet that
            // starts like an ADTS header is refused), and a fresh payload
            // holds whatever the heap held.
            guard (try? packet.zeroed(count: 16)) != nil else { return nil }
            packet.streamIndex = i
            packet.timing = PacketTiming(pts: 0, dts: 0, duration: 1)
            guard (try? out.write(packet)) != nil else { return nil }
        }
        guard (try? out.finish()) != nil, let input = try? MemoryInput(memory.bytes),
              let back = try? InputFile(memory: input, name: "trial", packetsOnly: true) else { return nil }
        return TagCheck.losses(out.intendedTags, in: back)
    }
}
