import ArgumentParser
import Cut
import Sync
import Transcode

/// An option's value as typed, parsed once as the command line (or a
/// recipe's step) is read: the text, for messages, and the value, nil when
/// the text is not one. `validate()` words what is wrong; the options
/// built afterwards take `value` as it is.
struct Parsed<Kind: ArgumentKind>: ExpressibleByArgument, Sendable {
    let text: String
    let value: Kind.Value?

    init(argument: String) {
        text = argument
        value = Kind.parse(argument)
    }
}

/// How one kind of option value is read.
protocol ArgumentKind {
    associatedtype Value: Sendable
    static func parse(_ text: String) -> Value?
}

/// A time from the recording's start (`90`, `1:30.250`, `90s`, `250ms`).
enum TimeKind: ArgumentKind {
    static func parse(_ text: String) -> Duration? { text.hasPrefix("-") ? nil : parsePosition(text) }
}

/// Times from the recording's start, comma-separated; nil if one is not.
enum TimeListKind: ArgumentKind {
    static func parse(_ text: String) -> [Duration]? {
        let times = text.split(separator: ",", omittingEmptySubsequences: false).map { TimeKind.parse(String($0)) }
        return times.contains { $0 == nil } ? nil : times.compactMap { $0 }
    }
}

/// A duration with or without its unit (`2ms`, `0.01s`, `90s`, `10m`).
enum DurationKind: ArgumentKind {
    static func parse(_ text: String) -> Duration? { parseDuration(text) }
}

/// A signed offset with its unit (`120ms`, `-0.5s`).
enum OffsetKind: ArgumentKind {
    static func parse(_ text: String) -> Duration? { parseOffset(text) }
}

/// A size in bytes (`2GB`, `700MB`, `4GiB`).
enum ByteCountKind: ArgumentKind {
    static func parse(_ text: String) -> Int64? { parseByteCount(text) }
}

/// A bit rate (`128k`).
enum BitRateKind: ArgumentKind {
    static func parse(_ text: String) -> Int64? { TranscodeOptions.parseBitRate(text) }
}

/// `--keep`'s ranges (`0:10-0:25,1:00-1:30`).
enum RangesKind: ArgumentKind {
    static func parse(_ text: String) -> [CutRange]? { CutRange.parseList(text) }
}
