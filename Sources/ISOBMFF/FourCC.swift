/// A box's type: four bytes, most often four ASCII letters
/// (`FourCC("moov")`). QuickTime's user data strings start with 0xA9,
/// written `"©nam"` (each character one byte, as in ISO 8859-1); an item
/// of a keyed metadata list is numbered, not named (`FourCC(rawValue: 1)`).
/// Compared as the number, never as text.
public struct FourCC: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public var rawValue: UInt32

    @inlinable
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The code of four characters, each U+0000 to U+00FF (any other is
    /// taken as `?`). From the literal's UTF-8 bytes, without making a
    /// `String`: a type compared in a loop (`box.type == "trak"`) costs
    /// what comparing two numbers costs.
    @inlinable
    public init(stringLiteral text: StaticString) {
        rawValue = text.withUTF8Buffer { utf8 in
            var raw: UInt32 = 0, i = 0, n = 0
            while i < utf8.count && n < 4 {
                let lead = utf8[i]
                var scalar = UInt32(lead)
                i += 1
                if lead >= 0x80 {
                    // Two bytes for U+0080 to U+07FF (only up to U+00FF is kept), more for the rest.
                    scalar = lead & 0xe0 == 0xc0 && i < utf8.count ? UInt32(lead & 0x1f) << 6 | UInt32(utf8[i] & 0x3f) : 0x3f
                    while i < utf8.count && utf8[i] & 0xc0 == 0x80 { i += 1 }
                }
                raw = raw << 8 | (scalar <= 0xff ? scalar : 0x3f)
                n += 1
            }
            return raw
        }
    }

    /// The four bytes, first first.
    public var bytes: [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: rawValue >> (24 - 8 * UInt32($0))) } }

    /// The code as text for messages: bytes outside printable ASCII shown as `?`.
    public var description: String {
        String(decoding: bytes.map { $0 >= 32 && $0 < 127 ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}
