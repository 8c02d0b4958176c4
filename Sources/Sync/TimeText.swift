/// Durations and positions as written on the command line.

/// A duration as written on the command line: `120ms`, `-0.5s`, `1.25`
/// (seconds), `2m`, `+40us`; read as decimal digits, exactly, to the
/// microsecond (nearest), and at most a week either way.
public func parseDuration(_ text: String) -> Duration? {
    var t = Substring(String(text.filter { $0 != " " && $0 != "\t" }).lowercased())
    var negative = false
    if t.hasPrefix("-") { negative = true; t.removeFirst() } else if t.hasPrefix("+") { t.removeFirst() }
    let units: [(String, Int64)] = [("ms", 1000), ("us", 1), ("µs", 1), ("s", 1_000_000), ("m", 60_000_000),
                                    ("h", 3_600_000_000)]
    var unit: Int64 = 1_000_000
    for (suffix, micro) in units where t.hasSuffix(suffix) {
        t.removeLast(suffix.count)
        unit = micro
        break
    }
    let parts = t.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    guard !t.isEmpty, t != ".", parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
          parts[0].count <= 12 else { return nil }
    let whole = Int64(parts[0]) ?? 0
    // The fraction's first 9 digits (a microsecond of an hour is the 10th), rounded.
    let digits = parts.count > 1 ? parts[1].prefix(9) : ""
    var scale: Int64 = 1
    for _ in digits { scale *= 10 }
    let fraction = Int64(digits) ?? 0
    let (fractionMicro, overflow) = fraction.multipliedReportingOverflow(by: unit)
    guard !overflow else { return nil }
    let (wholeMicro, tooLong) = whole.multipliedReportingOverflow(by: unit)
    guard !tooLong else { return nil }
    let micro = wholeMicro + (fractionMicro + scale / 2) / scale
    guard micro < 7 * 86_400 * 1_000_000 else { return nil }
    return .microseconds(negative ? -micro : micro)
}

/// An offset between two recordings as written on the command line: a
/// duration with its unit (`120ms`, `-0.5s`, `+40us`, `1m`). A bare number
/// other than 0 is refused (`nil`): `250` could as well mean milliseconds
/// as seconds, and the wrong guess puts the audio far away.
public func parseOffset(_ text: String) -> Duration? {
    let t = text.filter { $0 != " " && $0 != "\t" }
    guard let d = parseDuration(t) else { return nil }
    guard d == .zero || t.last.map({ $0.isLetter }) == true else { return nil }
    return d
}

/// A position in a recording as written on the command line: a duration
/// (`90`, `90s`, `250ms`, `1.5m`) or clock time (`1:30`, `1:30.250`,
/// `01:02:03.5`: hours, minutes, seconds), exactly, to the microsecond.
/// Not negative.
public func parsePosition(_ text: String) -> Duration? {
    let t = String(text.filter { $0 != " " && $0 != "\t" })
    guard t.contains(":") else {
        guard let d = parseDuration(t), d >= .zero, !t.hasPrefix("-") else { return nil }
        return d
    }
    let parts = t.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count <= 3, parts.dropLast().allSatisfy({ !$0.isEmpty && $0.count <= 6 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
          let last = parts.last, !last.isEmpty, last.first!.isNumber, let seconds = parseDuration(String(last) + "s"),
          seconds < .seconds(60) || parts.count == 1 else { return nil }
    var total = seconds
    for (k, p) in parts.dropLast().reversed().enumerated() {
        let minutes = k == 0 ? Int64(p)! : Int64(p)! * 60
        if k == 0 && parts.count == 3 && Int64(p)! >= 60 { return nil }
        total += .seconds(minutes * 60)
    }
    return total
}
