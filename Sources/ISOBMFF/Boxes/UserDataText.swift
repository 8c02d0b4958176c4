/// A QuickTime user data string (`©nam`, `©xyz`…, QuickTime File Format
/// "User data text strings"): the text's length, its language (ISO 639-2
/// packed as `MediaHeader.packedLanguage` makes it, or an old Macintosh
/// code below 0x400), the text. Not registered by type: any `©` box of a
/// QuickTime user data list may hold one.
public struct UserDataText: Sendable, Equatable {
    /// The length the string declares (which a damaged box may exceed).
    public var length: UInt16
    public var language: UInt16
    /// Everything after the length and language: the text, then anything after it.
    public var bytes: [UInt8]

    /// `text` (up to 65,535 bytes of it) in `language`.
    public init(_ text: String, language: UInt16) {
        bytes = Array(text.utf8.prefix(0xffff))
        length = UInt16(bytes.count)
        self.language = language
    }

    /// The string of a `©` box's payload.
    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        length = try r.u16()
        language = try r.u16()
        bytes = r.rest()
    }

    /// The payload.
    public func encode() -> [UInt8] {
        var w = FieldWriter(capacity: 4 + bytes.count)
        w.u16(length)
        w.u16(language)
        w.append(bytes)
        return w.bytes
    }
}

extension MediaHeader {
    /// An ISO 639-2 code packed as `mdhd` (and a user data string) holds it:
    /// three lower-case letters, five bits each; nil for anything else.
    public static func packedLanguage(_ text: String) -> UInt16? {
        let b = Array(text.utf8)
        guard b.count == 3, b.allSatisfy({ $0 >= 0x61 && $0 <= 0x7a }) else { return nil }
        return UInt16(b[0] - 0x60) << 10 | UInt16(b[1] - 0x60) << 5 | UInt16(b[2] - 0x60)
    }
}
