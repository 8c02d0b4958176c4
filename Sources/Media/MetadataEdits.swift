import CFFmpeg
import Glibc
import Sync

/// Changes to an output's tags and display matrix, made as it is written
/// (nothing is re-encoded for them).
public struct MetadataEdits: Sendable, Equatable {
    /// Which output streams a stream tag edit applies to.
    public enum Streams: Sendable, Equatable, CustomStringConvertible {
        case video, audio, subtitles
        /// The output stream with this index.
        case index(Int)

        public var description: String {
            switch self {
            case .video: "s:v"
            case .audio: "s:a"
            case .subtitles: "s:s"
            case .index(let i): "s:\(i)"
            }
        }
    }

    /// One tag set (`value`) or removed (`nil`), on the file or on streams.
    public struct Tag: Sendable, Equatable {
        public var streams: Streams?
        public var key: String
        public var value: String?

        public init(streams: Streams? = nil, key: String, value: String?) {
            self.streams = streams
            self.key = key
            self.value = value
        }

        /// Parses `KEY=VALUE`, `s:v:KEY=VALUE` (also `s:a`, `s:s`, `s:N`); an
        /// empty value removes the key.
        public init(parsing text: String) throws(MediaError) {
            guard let eq = text.firstIndex(of: "="), eq != text.startIndex else {
                throw MediaError.invalidOption("'metadata' takes KEY=VALUE (or s:v:KEY=VALUE for video streams), not '\(text)'",
                                               options: ["metadata"])
            }
            var key = String(text[..<eq])
            let value = String(text[text.index(after: eq)...])
            if key.hasPrefix("s:") {
                let parts = key.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
                guard parts.count == 3, !parts[2].isEmpty else {
                    throw MediaError.invalidOption("'metadata' stream tags are s:v:KEY=VALUE, s:a:…, s:s:… or s:N:… (output stream N), not '\(text)'",
                                                   options: ["metadata"])
                }
                switch parts[1] {
                case "v": streams = .video
                case "a": streams = .audio
                case "s": streams = .subtitles
                default:
                    guard let i = Int(parts[1]), i >= 0 else {
                        throw MediaError.invalidOption("'metadata' stream '\(parts[1])' is not v, a, s or a stream number in '\(text)'",
                                                       options: ["metadata"])
                    }
                    streams = .index(i)
                }
                key = String(parts[2])
            } else {
                streams = nil
            }
            self.key = key
            self.value = value.isEmpty ? nil : value
        }
    }

    public var tags: [Tag] = []
    /// Degrees the picture is turned clockwise when shown (0, 90, 180,
    /// 270), written as each video stream's display matrix; 0 removes the turn.
    public var rotation: Int?
    /// The recording's creation time (ISO 8601, UTC), for the file and every stream.
    public var creationTime: String?
    /// Chapters kept only where they overlap this part of the input, moved
    /// to its start (a cut or split part); nil keeps them as they are.
    public var chapterWindow: ChapterWindow?

    public init() {}

    public var isEmpty: Bool { tags.isEmpty && rotation == nil && creationTime == nil && chapterWindow == nil }

    /// Checks `--rotate` and `--creation-time`; returns the creation time as
    /// it will be written (`YYYY-MM-DDTHH:MM:SS.ffffffZ`).
    public static func creationTime(parsing text: String) throws(MediaError) -> String {
        if text == "now" {
            var t = timespec()
            clock_gettime(CLOCK_REALTIME, &t)
            var tm = tm()
            var seconds = t.tv_sec
            gmtime_r(&seconds, &tm)
            return isoTime(tm, micros: Int(t.tv_nsec / 1000))
        }
        let (tm, micros) = try time(parsing: text)
        return isoTime(tm, micros: micros)
    }

    /// A creation time given as text: the UTC calendar time and the microseconds.
    private static func time(parsing text: String) throws(MediaError) -> (tm, micros: Int) {
        var tm = tm()
        let bytes = Array(text.utf8)
        // YYYY-MM-DD[THH:MM:SS[.ffffff]][Z]: UTC only, as containers store it.
        func digits(_ at: Int, _ n: Int) -> Int? {
            guard at + n <= bytes.count else { return nil }
            var v = 0
            for b in bytes[at..<(at + n)] {
                guard b >= 48 && b <= 57 else { return nil }
                v = v * 10 + Int(b - 48)
            }
            return v
        }
        func at(_ i: Int, _ c: Character) -> Bool { i < bytes.count && bytes[i] == c.asciiValue! }
        guard let y = digits(0, 4), at(4, "-"), let mo = digits(5, 2), at(7, "-"), let d = digits(8, 2),
              (1...12).contains(mo), (1...31).contains(d) else { throw badTime(text) }
        var h = 0, mi = 0, s = 0, micros = 0, i = 10
        if at(10, "T") || at(10, " ") {
            guard let hh = digits(11, 2), at(13, ":"), let mm = digits(14, 2), at(16, ":"), let ss = digits(17, 2),
                  hh < 24, mm < 60, ss < 61 else { throw badTime(text) }
            (h, mi, s, i) = (hh, mm, ss, 19)
            if at(19, ".") {
                var n = 0
                i = 20
                while i < bytes.count, let v = digits(i, 1) {
                    if n < 6 { micros = micros * 10 + v; n += 1 }
                    i += 1
                }
                while n < 6 { micros *= 10; n += 1 }
            }
        }
        if at(i, "Z") { i += 1 }
        guard i == bytes.count else { throw badTime(text) }
        tm.tm_year = Int32(y - 1900); tm.tm_mon = Int32(mo - 1); tm.tm_mday = Int32(d)
        tm.tm_hour = Int32(h); tm.tm_min = Int32(mi); tm.tm_sec = Int32(s)
        return (tm, micros)
    }

    private static func badTime(_ text: String) -> MediaError {
        MediaError.invalidOption("'creation-time' takes a UTC time as YYYY-MM-DDTHH:MM:SS[.ffffff][Z] or 'now', not '\(text)'",
                                 options: ["creation-time"])
    }

    private static func isoTime(_ tm: tm, micros: Int) -> String {
        func pad(_ v: Int32, _ n: Int) -> String { let s = String(v); return String(repeating: "0", count: max(0, n - s.count)) + s }
        let us = String(micros)
        return "\(pad(tm.tm_year + 1900, 4))-\(pad(tm.tm_mon + 1, 2))-\(pad(tm.tm_mday, 2))T\(pad(tm.tm_hour, 2)):\(pad(tm.tm_min, 2)):\(pad(tm.tm_sec, 2))."
            + String(repeating: "0", count: 6 - us.count) + us + "Z"
    }

    /// Seconds since 1970 of a creation time (as `creationTime(parsing:)`
    /// reads it, UTC), the fraction dropped as MP4 drops it.
    public static func epochSeconds(_ text: String) -> Int64? {
        guard var tm = try? time(parsing: text).0 else { return nil }
        return Int64(timegm(&tm))
    }

    /// The display matrix that shows a picture turned `degrees` clockwise
    /// (ffprobe's `rotation` then reads the negative), as `tkhd` holds it.
    public static func displayMatrix(_ degrees: Int) -> [Int32] {
        var m = [Int32](repeating: 0, count: 9)
        m.withUnsafeMutableBufferPointer { av_display_rotation_set($0.baseAddress, Double(degrees)) }
        return m
    }

    public static func checkRotation(_ degrees: Int) throws(MediaError) {
        guard [0, 90, 180, 270].contains(degrees) else {
            throw MediaError.invalidOption("'rotate' takes 0, 90, 180 or 270 (degrees clockwise), not \(degrees)",
                                           options: ["rotate"])
        }
    }
}

/// What an output stream is, for the edits that name streams by kind
/// (`s:v` reaches video that is not cover art).
public enum EditedStream: Sendable, Equatable {
    case video, picture, audio, subtitle, other

    public init(_ type: MediaType, attachedPicture: Bool) {
        switch type {
        case .video: self = attachedPicture ? .picture : .video
        case .audio: self = .audio
        case .subtitle: self = .subtitle
        default: self = .other
        }
    }
}

extension MetadataEdits.Tag {
    /// The output streams (of `streams`, in output order) this tag reaches;
    /// naming a stream the output does not have is an error.
    public func targets(_ streams: [EditedStream]) throws(MediaError) -> [Int] {
        guard let which = self.streams else { return [] }
        let all = streams.indices.filter { j in
            switch which {
            case .video: streams[j] == .video
            case .audio: streams[j] == .audio
            case .subtitles: streams[j] == .subtitle
            case .index(let i): j == i
            }
        }
        if case .index(let i) = which, all.isEmpty {
            throw MediaError.invalidOption("'metadata' names output stream \(i), but the output has \(streams.count) stream(s) (0…\(max(streams.count - 1, 0)))",
                                           options: ["metadata"])
        }
        return all
    }
}

extension MetadataEdits {
    /// `tags` (the file's, then each output stream's, of the kinds in
    /// `streams`) as these edits leave them: the creation time on the file
    /// and every stream, then each tag set or removed, keys matched without
    /// regard to case as FFmpeg's dictionaries match them. The one account
    /// of what the edits do to tags: `OutputFile` writes it, and the bulk
    /// remux checks the index it made against it.
    public func applied(to tags: IntendedTags, streams: [EditedStream]) throws(MediaError) -> IntendedTags {
        var result = tags
        func set(_ list: inout [(key: String, value: String)], _ key: String, _ value: String?) {
            let k = key.lowercased()
            let at = list.firstIndex { $0.key.lowercased() == k }
            list.removeAll { $0.key.lowercased() == k }
            guard let value else { return }
            list.insert((key, value), at: min(at ?? list.count, list.count))
        }
        if let t = creationTime {
            set(&result.format, "creation_time", t)
            for j in result.streams.indices { set(&result.streams[j], "creation_time", t) }
        }
        for tag in self.tags {
            guard tag.streams != nil else {
                set(&result.format, tag.key, tag.value)
                continue
            }
            for j in try tag.targets(streams) where j < result.streams.count { set(&result.streams[j], tag.key, tag.value) }
        }
        return result
    }
}
