/// `text` with its control characters escaped as JSON escapes them (`\n`,
/// `\u001b`), C1 controls and DEL too, and a file name's bytes that are not
/// UTF-8 as `\xHH`: a tag, a track's name or a file's cannot move the cursor,
/// retitle the terminal or forge a line of a report or an error. Every verb's
/// text output and every error line goes through this one function.
public func escapedForTerminal(_ text: String) -> String {
    let shown = FileName.shown(text)
    guard shown.unicodeScalars.contains(where: isControl) else { return shown }
    var out = ""
    for c in shown.unicodeScalars {
        switch c {
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where isControl(c):
            let hex = String(c.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        default: out.unicodeScalars.append(c)
        }
    }
    return out
}

private func isControl(_ c: Unicode.Scalar) -> Bool { c.value < 0x20 || (0x7F...0x9F).contains(c.value) }

/// A name (a file's, a track's, a tag's) quoted for a line of text: `'…'`,
/// escaped (`escapedForTerminal`), so a newline in it cannot end the line.
public func quoted(_ name: String) -> String { "'" + escapedForTerminal(name) + "'" }

/// `text` line by line through `escapedForTerminal`: the line breaks the
/// text was written with are kept, any other control character is escaped.
public func escapedLines(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { escapedForTerminal(String($0)) }.joined(separator: "\n")
}
