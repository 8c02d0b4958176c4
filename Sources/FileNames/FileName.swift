/// File names as the system has them: bytes, which need not be UTF-8 (a
/// name written by an old camera, a Latin-1 shell, another user). A Swift
/// `String` cannot hold a byte that is not UTF-8, so such a byte stands in a
/// name's text as one scalar of Plane 16's private use area, U+10FF80 +
/// (byte − 0x80), and goes back to the byte on its way to the system
/// (`withFileSystemPath`): the round trip argv → text → `open` is exact,
/// where `String(cString:)`'s U+FFFD names another file or none. (Python's
/// "surrogateescape" does the same with lone surrogates, which Swift refuses.)
/// A name that really holds one of those 128 scalars has its UTF-8 bytes
/// stand for themselves the same way, so every byte string has one text.
public enum FileName {
    /// The scalar byte `b` (0x80…0xFF) stands as when it is not UTF-8.
    static let base: UInt32 = 0x10FF00

    /// The text of `bytes` (no NUL), exact for every byte string.
    public static func text<C: Collection<UInt8>>(_ bytes: C) -> String {
        let b = Array(bytes)
        guard b.contains(where: { $0 >= 0x80 }) else { return String(decoding: b, as: UTF8.self) }
        var out = String.UnicodeScalarView()
        var i = 0
        while i < b.count {
            let n = validSequenceLength(b, at: i)
            if n > 0, let scalar = decode(b[i..<(i + n)]), !(base + 0x80...base + 0xFF).contains(scalar.value) {
                out.append(scalar)
                i += n
            } else {
                out.append(Unicode.Scalar(base + UInt32(b[i]))!)
                i += 1
            }
        }
        return String(out)
    }

    /// The text of a NUL-terminated name, as the system gives it.
    public static func text(cString: UnsafePointer<CChar>) -> String {
        var bytes: [UInt8] = []
        var p = cString
        while p.pointee != 0 {
            bytes.append(UInt8(bitPattern: p.pointee))
            p += 1
        }
        return text(bytes)
    }

    /// The bytes `text` stands for (no NUL).
    public static func bytes(_ text: String) -> [UInt8] {
        guard holdsBytes(text) else { return Array(text.utf8) }
        var out: [UInt8] = []
        for s in text.unicodeScalars {
            if (base + 0x80...base + 0xFF).contains(s.value) {
                out.append(UInt8(s.value - base))
            } else {
                out.append(contentsOf: String(s).utf8)
            }
        }
        return out
    }

    /// `text` as it is shown: each byte that is not UTF-8 as `\xHH` (as
    /// `ls --quoting-style=escape` and Python show it), the rest as it is.
    /// `backslash`: how the backslash is written (`\\` inside JSON text,
    /// which can hold no such byte: a name there reads `memo\\xff.m4a`).
    public static func shown(_ text: String, backslash: String = "\\") -> String {
        guard holdsBytes(text) else { return text }
        var out = ""
        for s in text.unicodeScalars {
            if (base + 0x80...base + 0xFF).contains(s.value) {
                out += backslash + "x" + String(s.value - base, radix: 16)
            } else {
                out.unicodeScalars.append(s)
            }
        }
        return out
    }

    /// Whether `text` holds a byte that is not UTF-8 (all such scalars start with the byte 0xF4).
    static func holdsBytes(_ text: String) -> Bool {
        text.utf8.contains(0xF4) && text.unicodeScalars.contains { (base + 0x80...base + 0xFF).contains($0.value) }
    }

    /// The length of the well-formed UTF-8 sequence at `i` (RFC 3629's table), 0 if there is none.
    static func validSequenceLength(_ b: [UInt8], at i: Int) -> Int {
        func within(_ k: Int, _ r: ClosedRange<UInt8>) -> Bool { i + k < b.count && r.contains(b[i + k]) }
        let c: ClosedRange<UInt8> = 0x80...0xBF
        switch b[i] {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: return within(1, c) ? 2 : 0
        case 0xE0: return within(1, 0xA0...0xBF) && within(2, c) ? 3 : 0
        case 0xE1...0xEC, 0xEE...0xEF: return within(1, c) && within(2, c) ? 3 : 0
        case 0xED: return within(1, 0x80...0x9F) && within(2, c) ? 3 : 0
        case 0xF0: return within(1, 0x90...0xBF) && within(2, c) && within(3, c) ? 4 : 0
        case 0xF1...0xF3: return within(1, c) && within(2, c) && within(3, c) ? 4 : 0
        case 0xF4: return within(1, 0x80...0x8F) && within(2, c) && within(3, c) ? 4 : 0
        default: return 0
        }
    }

    private static func decode(_ bytes: ArraySlice<UInt8>) -> Unicode.Scalar? {
        String(decoding: bytes, as: UTF8.self).unicodeScalars.first
    }
}

extension String {
    /// Calls `body` with the path this text names, as the system takes it
    /// (NUL-terminated bytes, each byte that is not UTF-8 restored).
    public func withFileSystemPath<R, E: Error>(_ body: (UnsafePointer<CChar>) throws(E) -> R) throws(E) -> R {
        guard FileName.holdsBytes(self) else {
            var bytes = Array(utf8CString)
            return try bytes.withUnsafeMutableBufferPointer { (p) throws(E) -> R in try body(p.baseAddress!) }
        }
        var bytes = FileName.bytes(self).map { CChar(bitPattern: $0) } + [0]
        return try bytes.withUnsafeMutableBufferPointer { (p) throws(E) -> R in try body(p.baseAddress!) }
    }

    /// The path as the system takes it: NUL-terminated bytes.
    public var fileSystemPath: [CChar] { FileName.bytes(self).map { CChar(bitPattern: $0) } + [0] }
}
