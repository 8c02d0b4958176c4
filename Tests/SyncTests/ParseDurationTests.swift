import Sync
import Testing

/// Durations from the command line (`--offset`, `--tolerance`, `--timeout`)
/// are read as decimals, exactly, to the microsecond.
@Suite("parseDuration")
struct ParseDurationTests {
    @Test(arguments: [
        ("250ms", Int64(250_000)), ("-0.5s", -500_000), ("1.25", 1_250_000), ("2m", 120_000_000), ("+40us", 40),
        ("0.0000015", 2), ("-0.0000015", -2), ("1h", 3_600_000_000), (".5", 500_000), ("3.", 3_000_000),
        ("0.1ms", 100), ("1 s", 1_000_000), ("0.333333333333h", 1_199_999_999), ("100µs", 100),
    ])
    func reads(text: String, micro: Int64) {
        #expect(parseDuration(text) == .microseconds(micro))
    }

    @Test(arguments: ["", ".", "abc", "1e3", "inf", "nan", "1..2", "--1", "8d", "169h", "99999999999999999999h", "0x10",
                      "١٢"])
    func refuses(text: String) {
        #expect(parseDuration(text) == nil)
    }
}

/// Positions for `cut` (`--from`, `--to`): durations or clock time.
@Suite("parsePosition")
struct ParsePositionTests {
    @Test(arguments: [
        ("90", Int64(90_000_000)), ("1:30", 90_000_000), ("1:30.250", 90_250_000), ("90s", 90_000_000),
        ("250ms", 250_000), ("01:02:03.5", 3_723_500_000), ("0:00.040", 40_000), ("1.5m", 90_000_000), ("0", 0),
        ("125:00", 7_500_000_000),
    ])
    func reads(_ text: String, _ micro: Int64) {
        #expect(parsePosition(text) == .microseconds(micro), "\(text)")
    }

    @Test(arguments: ["", "-5", "1:75", "1:60", "1:2:3:4", "a:30", ":30", "1:", "1:-3", "1:60:00", "1:30x"])
    func refuses(_ text: String) {
        #expect(parsePosition(text) == nil, "\(text)")
    }
}

@Suite("parseOffset")
struct ParseOffsetTests {
    @Test func unitsAreRequired() {
        #expect(parseOffset("250ms") == .milliseconds(250))
        #expect(parseOffset("-0.5s") == .milliseconds(-500))
        #expect(parseOffset("+40us") == .microseconds(40))
        #expect(parseOffset("0") == .zero)
        #expect(parseOffset("250") == nil)
        #expect(parseOffset("-1.5") == nil)
        #expect(parseOffset("abc") == nil)
    }
}
