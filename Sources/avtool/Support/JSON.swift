import FileNames
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one JSON encoding of everything avtool writes as JSON (reports,
/// failures, `--progress json` lines): snake_case keys in sorted order,
/// slashes as they are, and a number that is not finite as the string
/// "inf", "-inf" or "nan". Sorted, because an object's keys otherwise come
/// out in a different order from one run to the next.
private func encoder(pretty: Bool) -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                                      : [.sortedKeys, .withoutEscapingSlashes]
    encoder.keyEncodingStrategy = .convertToSnakeCase
    encoder.nonConformingFloatEncodingStrategy = .convertToString(
        positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
    return encoder
}

/// Stable JSON: sorted snake_case keys, pretty-printed. A file name's
/// bytes that are not UTF-8 are written `\\xHH` (JSON holds only Unicode).
func jsonText<T: Encodable>(_ value: T) -> String {
    guard let data = try? encoder(pretty: true).encode(value) else { return "{}" }
    return FileName.shown(String(decoding: data, as: UTF8.self), backslash: "\\\\")
}

/// One line of JSON Lines, its newline included: the same encoding on one line.
func jsonLine<T: Encodable>(_ value: T) -> String {
    guard let data = try? encoder(pretty: false).encode(value) else { return "{}\n" }
    return FileName.shown(String(decoding: data, as: UTF8.self), backslash: "\\\\") + "\n"
}
