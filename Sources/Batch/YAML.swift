/// A YAML node as a recipe reads it, with the line (1-based) it starts on.
indirect enum Node {
    case scalar(Scalar, line: Int)
    case sequence([Node], line: Int)
    case mapping([(key: Node, value: Node)], line: Int)

    var line: Int {
        switch self {
        case .scalar(_, let l), .sequence(_, let l), .mapping(_, let l): l
        }
    }

    /// The text of a scalar; nil for a collection.
    var string: String? {
        if case .scalar(let s, _) = self { s.string } else { nil }
    }

    /// A plain scalar that is a whole number.
    var int: Int? {
        if case .scalar(let s, _) = self, s.style == .plain { Int(s.string) } else { nil }
    }
}

struct Scalar {
    enum Style { case plain, singleQuoted, doubleQuoted, literal, folded }
    var string: String
    var style: Style
}

/// What is wrong with a YAML text, and where.
struct YAMLError: Error {
    let line: Int
    let problem: String
}

/// Reads one YAML document: block mappings and sequences (a sequence's
/// entries may start a mapping on the dash's line), flow collections
/// (`[a, b]`, `{k: v}`, over several lines too), plain, single- and
/// double-quoted scalars (with line folding and escapes), literal and
/// folded block scalars (`|`, `>`, with chomping and indentation
/// indicators), comments, anchors and aliases, tags (`!!str` keeps a value
/// from being read as a number or a boolean; others are passed over), and
/// the `---` / `...` markers of one document. What is not YAML (bad
/// indentation, tabs in it, an unclosed quote or bracket, a second
/// document, a key where a value must be) is an error naming its line.
enum YAML {
    static func parse(_ text: String) throws(YAMLError) -> Node? {
        var parser = YAMLParser(text)
        return try parser.document()
    }
}

private struct YAMLParser {
    private var lines: [[UInt8]]
    private var row = 0
    private var col = 0
    /// The document ended at a `---` or `...` line (its row).
    private var ended = false
    private var anchors: [String: Node] = [:]

    init(_ text: String) {
        var bytes = Array(text.utf8)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? Array(line.dropLast()) : Array(line)
        }
    }

    // MARK: document

    mutating func document() throws(YAMLError) -> Node? {
        // Directives, then an optional start marker (content may follow it).
        while row < lines.count {
            let l = lines[row]
            if l.first == UInt8(ascii: "%") || isBlankOrComment(l, from: 0) {
                row += 1
            } else if isMarker(l, "---") {
                col = 3
                break
            } else {
                break
            }
        }
        guard try skipToContent() else { return nil }
        let node = try blockNode(minIndent: 0, compact: true)
        if try skipToContent() {
            throw YAMLError(line: row + 1, problem: "content where none was expected (check the indentation)")
        }
        if ended && row < lines.count && isMarker(lines[row], "---") {
            row += 1
            col = 0
            ended = false
            if try skipToContent() {
                throw YAMLError(line: row + 1, problem: "a second document (a recipe is one document)")
            }
        }
        return node
    }

    // MARK: positions

    private func isMarker(_ l: [UInt8], _ marker: String) -> Bool {
        let m = Array(marker.utf8)
        return l.starts(with: m) && (l.count == 3 || l[3] == UInt8(ascii: " ") || l[3] == UInt8(ascii: "\t"))
    }

    private func isSpace(_ b: UInt8) -> Bool { b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") }

    /// Nothing but spaces, or a comment, from `start`.
    private func isBlankOrComment(_ l: [UInt8], from start: Int) -> Bool {
        var i = start
        while i < l.count, isSpace(l[i]) { i += 1 }
        return i == l.count || l[i] == UInt8(ascii: "#")
    }

    private func indent(_ r: Int) -> Int {
        var i = 0
        while i < lines[r].count, lines[r][i] == UInt8(ascii: " ") { i += 1 }
        return i
    }

    /// Moves to the next content: the rest of this line if it has any, else
    /// the first line after it that has. False at the end of the document.
    /// A tab in a content line's indentation is an error.
    private mutating func skipToContent() throws(YAMLError) -> Bool {
        if ended { return false }
        while row < lines.count {
            let l = lines[row]
            if col == 0 && (isMarker(l, "---") || isMarker(l, "...")) {
                ended = true
                return false
            }
            if !isBlankOrComment(l, from: col) {
                if col == 0 {
                    let n = indent(row)
                    if n < l.count && l[n] == UInt8(ascii: "\t") {
                        throw YAMLError(line: row + 1, problem: "a tab in the indentation (YAML indents with spaces)")
                    }
                }
                while col < l.count, isSpace(l[col]) { col += 1 }
                return true
            }
            row += 1
            col = 0
        }
        return false
    }

    private var byte: UInt8? { col < lines[row].count ? lines[row][col] : nil }

    private func byte(at i: Int) -> UInt8? { i < lines[row].count ? lines[row][i] : nil }

    /// Past the end of the current line, or at a comment.
    private func restIsBlank() -> Bool { isBlankOrComment(lines[row], from: col) }

    private func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    // MARK: block structure

    /// The node at the cursor. `compact`: a block collection may start on
    /// this line (the document's start, a sequence entry's dash); after a
    /// key it may not. A node that does not start on this line must be
    /// indented at least `minIndent`; otherwise it is empty (null).
    private mutating func blockNode(minIndent: Int, compact: Bool) throws(YAMLError) -> Node {
        let startRow = row
        guard try skipToContent(), row == startRow || indent(row) >= minIndent else {
            return .scalar(Scalar(string: "", style: .plain), line: startRow + 1)
        }
        let sameLine = row == startRow
        // Anchor and tag first; the node itself may then be on later lines.
        var anchor: String?
        var keepString = false
        while let b = byte, b == UInt8(ascii: "&") || b == UInt8(ascii: "!") {
            let start = col
            while col < lines[row].count, !isSpace(lines[row][col]) { col += 1 }
            let token = text(lines[row][(start + 1)..<col])
            if b == UInt8(ascii: "&") {
                guard !token.isEmpty else { throw YAMLError(line: row + 1, problem: "an anchor without a name") }
                anchor = token
            } else if token == "!str" {
                keepString = true
            }
            if restIsBlank() {
                let node = try blockNode(minIndent: minIndent, compact: false)
                if let anchor { anchors[anchor] = node }
                return node
            }
            _ = try skipToContent()
        }
        if byte == UInt8(ascii: "*") {
            let start = col
            while col < lines[row].count, !isSpace(lines[row][col]), lines[row][col] != UInt8(ascii: ",") { col += 1 }
            let name = text(lines[row][(start + 1)..<col])
            guard let node = anchors[name] else {
                throw YAMLError(line: row + 1, problem: "alias '*\(name)' names no anchor before it")
            }
            try expectLineEnd()
            return node
        }
        let c = col
        let node: Node
        if byte == UInt8(ascii: "-") && (byte(at: c + 1).map(isSpace) ?? true) {
            guard !sameLine || compact else {
                throw YAMLError(line: row + 1, problem: "a list entry ('- ') where a value was expected")
            }
            node = try sequence(indent: c)
        } else if keyEnd(at: c) != nil {
            guard !sameLine || compact else {
                throw YAMLError(line: row + 1, problem: "a mapping ('key: value') where a single value was expected")
            }
            node = try mapping(indent: c)
        } else {
            node = try valueNode(minIndent: minIndent, keepString: keepString)
        }
        if let anchor { anchors[anchor] = node }
        return node
    }

    /// `indentless`: the value of a key at the key's own indentation, which
    /// the mapping's next key ends.
    private mutating func sequence(indent n: Int, indentless: Bool = false) throws(YAMLError) -> Node {
        let line = row + 1
        var items: [Node] = []
        while try skipToContent() {
            // The first entry may start after an outer dash (compact); the
            // others start their lines.
            guard col == n, indent(row) == n || items.isEmpty else {
                if indent(row) > n && col == indent(row) {
                    throw YAMLError(line: row + 1, problem: "bad indentation of a list entry")
                }
                break
            }
            guard byte == UInt8(ascii: "-"), byte(at: n + 1).map(isSpace) ?? true else {
                if items.isEmpty || indentless { break }
                throw YAMLError(line: row + 1, problem: "expected a list entry ('- ') at this indentation")
            }
            // The dash becomes indentation: what follows it on the line is
            // the entry, indented like a line of its own.
            lines[row][n] = UInt8(ascii: " ")
            col = n + 1
            items.append(try blockNode(minIndent: n + 1, compact: true))
        }
        return .sequence(items, line: line)
    }

    /// Where a key ends (the ':' of "key:" followed by a space or the line's
    /// end) when a block mapping entry starts at `c`; nil otherwise.
    private func keyEnd(at c: Int) -> Int? {
        let l = lines[row]
        guard c < l.count else { return nil }
        var i = c
        if l[i] == UInt8(ascii: "\"") || l[i] == UInt8(ascii: "'") {
            let quote = l[i]
            i += 1
            while i < l.count {
                if l[i] == UInt8(ascii: "\\") && quote == UInt8(ascii: "\"") { i += 2; continue }
                if l[i] == quote {
                    if quote == UInt8(ascii: "'") && i + 1 < l.count && l[i + 1] == quote { i += 2; continue }
                    break
                }
                i += 1
            }
            guard i < l.count else { return nil }
            i += 1
            while i < l.count, isSpace(l[i]) { i += 1 }
            return i < l.count && l[i] == UInt8(ascii: ":") && (i + 1 == l.count || isSpace(l[i + 1])) ? i : nil
        }
        if "[{#&*!|>%@`?".utf8.contains(l[i]) { return nil }
        while i < l.count {
            if l[i] == UInt8(ascii: "#") && i > c && isSpace(l[i - 1]) { return nil }
            if l[i] == UInt8(ascii: ":") && (i + 1 == l.count || isSpace(l[i + 1])) { return i }
            i += 1
        }
        return nil
    }

    private mutating func mapping(indent n: Int) throws(YAMLError) -> Node {
        let line = row + 1
        var pairs: [(key: Node, value: Node)] = []
        while try skipToContent() {
            let at = indent(row)
            if at < n { break }
            guard at == n, col == n else {
                throw YAMLError(line: row + 1, problem: "bad indentation of a mapping entry")
            }
            guard let end = keyEnd(at: n) else {
                if byte == UInt8(ascii: "-") && byte(at: n + 1).map(isSpace) ?? true {
                    throw YAMLError(line: row + 1, problem: "a list entry ('- ') among the keys of a mapping")
                }
                throw YAMLError(line: row + 1, problem: "expected 'key: value' (no ':' after a key on this line)")
            }
            let key: Node
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                key = try quoted()
            } else {
                var e = end
                while e > n, isSpace(lines[row][e - 1]) { e -= 1 }
                key = .scalar(Scalar(string: text(lines[row][n..<e]), style: .plain), line: row + 1)
            }
            col = end + 1
            let value: Node
            let keyRow = row
            if restIsBlank(), try nextLineStartsEntry(indent: n, after: keyRow) {
                // "key:" then "- a" at the key's own indentation.
                row = keyRow + 1
                col = 0
                _ = try skipToContent()
                value = try sequence(indent: n, indentless: true)
            } else {
                value = try blockNode(minIndent: n + 1, compact: false)
            }
            pairs.append((key, value))
        }
        return .mapping(pairs, line: line)
    }

    /// Whether the next content line after `r` is a list entry at `indent`.
    private func nextLineStartsEntry(indent n: Int, after r: Int) throws(YAMLError) -> Bool {
        var i = r + 1
        while i < lines.count {
            let l = lines[i]
            if isMarker(l, "---") || isMarker(l, "...") { return false }
            if !isBlankOrComment(l, from: 0) {
                let k = indent(i)
                return k == n && k < l.count && l[k] == UInt8(ascii: "-") && (k + 1 == l.count || isSpace(l[k + 1]))
            }
            i += 1
        }
        return false
    }

    // MARK: values

    /// A flow collection, a quoted, block or plain scalar at the cursor.
    private mutating func valueNode(minIndent: Int, keepString: Bool) throws(YAMLError) -> Node {
        switch byte {
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            let node = try flowNode()
            try expectLineEnd()
            return node
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            let node = try quoted()
            try expectLineEnd()
            return node
        case UInt8(ascii: "|"), UInt8(ascii: ">"):
            return try blockScalar(parentIndent: minIndent - 1)
        default:
            return try plain(minIndent: minIndent, keepString: keepString)
        }
    }

    /// Only spaces or a comment may follow a value on its line.
    private mutating func expectLineEnd() throws(YAMLError) {
        guard restIsBlank() else {
            throw YAMLError(line: row + 1, problem: "unexpected '\(text(lines[row][col...]))' after a value")
        }
        col = lines[row].count
    }

    /// A plain scalar in block context: this line's text up to a comment,
    /// then the more-indented lines that continue it, folded.
    private mutating func plain(minIndent: Int, keepString: Bool) throws(YAMLError) -> Node {
        let line = row + 1
        var parts: [String] = [try plainLine()]
        var blankRun = 0
        var r = row + 1
        while r < lines.count {
            let l = lines[r]
            if isMarker(l, "---") || isMarker(l, "...") { break }
            if l.allSatisfy(isSpace) { blankRun += 1; r += 1; continue }
            let n = indent(r)
            if n < minIndent || l[n] == UInt8(ascii: "#") { break }
            row = r
            col = n
            let next = try plainLine()
            parts.append(blankRun > 0 ? String(repeating: "\n", count: blankRun) + next : " " + next)
            blankRun = 0
            r += 1
        }
        col = lines[row].count
        return .scalar(Scalar(string: parts.joined(), style: keepString ? .doubleQuoted : .plain), line: line)
    }

    /// The plain text from the cursor to a comment or the line's end; a
    /// ": " in it would make it a key, which is not allowed here.
    private mutating func plainLine() throws(YAMLError) -> String {
        let l = lines[row]
        var i = col
        var end = col
        while i < l.count {
            if l[i] == UInt8(ascii: "#") && i > col && isSpace(l[i - 1]) { break }
            if l[i] == UInt8(ascii: ":") && (i + 1 == l.count || isSpace(l[i + 1])) {
                throw YAMLError(line: row + 1, problem: "a ': ' inside a value (quote the value, or check the indentation)")
            }
            if !isSpace(l[i]) { end = i + 1 }
            i += 1
        }
        let s = text(l[col..<end])
        col = l.count
        return s
    }

    /// A single- or double-quoted scalar from the cursor, over as many lines
    /// as it takes; the cursor ends after the closing quote.
    private mutating func quoted() throws(YAMLError) -> Node {
        let line = row + 1
        let quote = lines[row][col]
        let double = quote == UInt8(ascii: "\"")
        col += 1
        var out: [UInt8] = []
        var pendingBreaks = 0
        var atLineStart = false
        while true {
            guard row < lines.count else {
                throw YAMLError(line: line, problem: "a quoted value that is never closed")
            }
            let l = lines[row]
            if col >= l.count {
                // Line folding: trailing spaces dropped, the break becomes a
                // space, or each blank line a newline.
                while let last = out.last, isSpace(last), !atLineStart { out.removeLast() }
                row += 1
                col = 0
                guard row < lines.count else { continue }
                while col < lines[row].count, isSpace(lines[row][col]) { col += 1 }
                if col >= lines[row].count { pendingBreaks += 1; continue }
                if pendingBreaks == 0 && !atLineStart { out.append(UInt8(ascii: " ")) }
                out.append(contentsOf: repeatElement(UInt8(ascii: "\n"), count: pendingBreaks))
                pendingBreaks = 0
                atLineStart = false
                continue
            }
            let b = l[col]
            if b == quote {
                if !double && col + 1 < l.count && l[col + 1] == quote {
                    out.append(quote)
                    col += 2
                    continue
                }
                col += 1
                break
            }
            if double && b == UInt8(ascii: "\\") {
                guard col + 1 < l.count else {
                    // An escaped line break: the lines join with nothing between.
                    row += 1
                    col = 0
                    guard row < lines.count else { continue }
                    while col < lines[row].count, isSpace(lines[row][col]) { col += 1 }
                    atLineStart = true
                    continue
                }
                col += 1
                try escape(into: &out)
                atLineStart = false
                continue
            }
            out.append(b)
            atLineStart = false
            col += 1
        }
        return .scalar(Scalar(string: String(decoding: out, as: UTF8.self), style: double ? .doubleQuoted : .singleQuoted),
                       line: line)
    }

    /// The escape after a backslash in a double-quoted scalar.
    private mutating func escape(into out: inout [UInt8]) throws(YAMLError) {
        let l = lines[row]
        let e = l[col]
        col += 1
        let simple: [UInt8: String] = [
            UInt8(ascii: "0"): "\0", UInt8(ascii: "a"): "\u{07}", UInt8(ascii: "b"): "\u{08}", UInt8(ascii: "t"): "\t",
            UInt8(ascii: "\t"): "\t", UInt8(ascii: "n"): "\n", UInt8(ascii: "v"): "\u{0B}", UInt8(ascii: "f"): "\u{0C}",
            UInt8(ascii: "r"): "\r", UInt8(ascii: "e"): "\u{1B}", UInt8(ascii: " "): " ", UInt8(ascii: "\""): "\"",
            UInt8(ascii: "/"): "/", UInt8(ascii: "\\"): "\\", UInt8(ascii: "N"): "\u{85}", UInt8(ascii: "_"): "\u{A0}",
            UInt8(ascii: "L"): "\u{2028}", UInt8(ascii: "P"): "\u{2029}",
        ]
        if let s = simple[e] {
            out.append(contentsOf: Array(s.utf8))
            return
        }
        let digits: Int
        switch e {
        case UInt8(ascii: "x"): digits = 2
        case UInt8(ascii: "u"): digits = 4
        case UInt8(ascii: "U"): digits = 8
        default: throw YAMLError(line: row + 1, problem: "unknown escape '\\\(text([e][...]))' in a double-quoted value")
        }
        guard col + digits <= l.count, let v = UInt32(text(l[col..<(col + digits)]), radix: 16),
              let scalar = Unicode.Scalar(v) else {
            throw YAMLError(line: row + 1, problem: "a bad '\\\(text([e][...]))' escape in a double-quoted value")
        }
        col += digits
        out.append(contentsOf: Array(String(Character(scalar)).utf8))
    }

    /// A literal (`|`) or folded (`>`) block scalar: its header at the
    /// cursor, its lines after it.
    private mutating func blockScalar(parentIndent: Int) throws(YAMLError) -> Node {
        let line = row + 1
        let literal = byte == UInt8(ascii: "|")
        col += 1
        var chomp: UInt8? = nil
        var explicit: Int? = nil
        while let b = byte, !isSpace(b) {
            if b == UInt8(ascii: "+") || b == UInt8(ascii: "-") {
                chomp = b
            } else if b >= UInt8(ascii: "1") && b <= UInt8(ascii: "9") {
                explicit = Int(b - UInt8(ascii: "0"))
            } else if b == UInt8(ascii: "#") {
                break
            } else {
                throw YAMLError(line: row + 1, problem: "a bad block scalar header")
            }
            col += 1
        }
        try expectLineEnd()
        // The content's indentation: given, else that of its first non-blank line.
        var contentIndent = explicit.map { max(parentIndent, 0) + $0 }
        var collected: [ArraySlice<UInt8>?] = []  // nil: an empty line
        var r = row + 1
        while r < lines.count {
            let l = lines[r]
            if isMarker(l, "---") || isMarker(l, "...") { break }
            let n = indent(r)
            if n == l.count {
                collected.append(nil)
                r += 1
                continue
            }
            if contentIndent == nil {
                guard n > parentIndent else { break }
                contentIndent = n
            }
            guard n >= contentIndent! else { break }
            collected.append(l[contentIndent!...])
            r += 1
        }
        var trailing = 0
        while let last = collected.last, last == nil { collected.removeLast(); trailing += 1 }
        row = r - 1
        col = lines[row].count
        // Literal: the lines as they are. Folded: a line break between two
        // lines of text becomes a space; blank lines between them stand for
        // the breaks; more-indented lines keep theirs.
        var out = ""
        var previousNormal: Bool? = nil
        var blanks = 0
        for piece in collected {
            guard let piece else {
                blanks += 1
                continue
            }
            let normal = !(piece.first.map(isSpace) ?? false)
            if let previous = previousNormal {
                if !literal && previous && normal {
                    out += blanks == 0 ? " " : String(repeating: "\n", count: blanks)
                } else {
                    out += String(repeating: "\n", count: blanks + 1)
                }
            } else {
                out += String(repeating: "\n", count: blanks)
            }
            blanks = 0
            out += text(piece)
            previousNormal = normal
        }
        switch chomp {
        case UInt8(ascii: "-"): break
        case UInt8(ascii: "+"): out += String(repeating: "\n", count: trailing + (collected.isEmpty ? 0 : 1))
        default: if !collected.isEmpty { out += "\n" }
        }
        return .scalar(Scalar(string: out, style: literal ? .literal : .folded), line: line)
    }

    // MARK: flow collections

    /// Moves past spaces, line ends and comments inside a flow collection.
    private mutating func flowSkip(opened: Int) throws(YAMLError) {
        while true {
            guard row < lines.count else {
                throw YAMLError(line: opened, problem: "a '[' or '{' that is never closed")
            }
            let l = lines[row]
            while col < l.count, isSpace(l[col]) { col += 1 }
            if col < l.count && l[col] != UInt8(ascii: "#") { return }
            row += 1
            col = 0
        }
    }

    private mutating func flowNode() throws(YAMLError) -> Node {
        let line = row + 1
        let open = lines[row][col]
        let isMap = open == UInt8(ascii: "{")
        let close = isMap ? UInt8(ascii: "}") : UInt8(ascii: "]")
        col += 1
        var items: [Node] = []
        var pairs: [(key: Node, value: Node)] = []
        while true {
            try flowSkip(opened: line)
            if lines[row][col] == close {
                col += 1
                break
            }
            let first = try flowItem(opened: line)
            try flowSkip(opened: line)
            var value: Node? = nil
            if lines[row][col] == UInt8(ascii: ":") {
                col += 1
                try flowSkip(opened: line)
                let b = lines[row][col]
                value = b == UInt8(ascii: ",") || b == close
                    ? .scalar(Scalar(string: "", style: .plain), line: row + 1) : try flowItem(opened: line)
                try flowSkip(opened: line)
            }
            if isMap {
                pairs.append((first, value ?? .scalar(Scalar(string: "", style: .plain), line: first.line)))
            } else if let value {
                items.append(.mapping([(first, value)], line: first.line))
            } else {
                items.append(first)
            }
            let b = lines[row][col]
            if b == UInt8(ascii: ",") {
                col += 1
            } else if b != close {
                throw YAMLError(line: row + 1, problem: "expected ',' or '\(text([close][...]))' in a flow collection")
            }
        }
        return isMap ? .mapping(pairs, line: line) : .sequence(items, line: line)
    }

    private mutating func flowItem(opened: Int) throws(YAMLError) -> Node {
        let b = lines[row][col]
        if b == UInt8(ascii: "[") || b == UInt8(ascii: "{") { return try flowNode() }
        if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") { return try quoted() }
        if b == UInt8(ascii: "*") {
            let start = col
            let l = lines[row]
            while col < l.count, !isSpace(l[col]), !",]}".utf8.contains(l[col]) { col += 1 }
            let name = text(l[(start + 1)..<col])
            guard let node = anchors[name] else {
                throw YAMLError(line: row + 1, problem: "alias '*\(name)' names no anchor before it")
            }
            return node
        }
        // A plain scalar ends at a flow indicator, a ": " or a comment; it
        // may go on over lines.
        let line = row + 1
        var words: [String] = []
        while true {
            let l = lines[row]
            var i = col
            var end = col
            while i < l.count {
                let c = l[i]
                if ",[]{}".utf8.contains(c) { break }
                if c == UInt8(ascii: ":") && (i + 1 == l.count || isSpace(l[i + 1]) || ",[]{}".utf8.contains(l[i + 1])) { break }
                if c == UInt8(ascii: "#") && i > col && isSpace(l[i - 1]) { break }
                if !isSpace(c) { end = i + 1 }
                i += 1
            }
            if end > col { words.append(text(l[col..<end])) }
            col = i
            if i < l.count && l[i] != UInt8(ascii: "#") { break }
            // The line ended inside the scalar (or at a comment): it may go on.
            row += 1
            col = 0
            try flowSkip(opened: opened)
            let c = lines[row][col]
            if ",[]{}:".utf8.contains(c) { break }
        }
        guard !words.isEmpty else {
            throw YAMLError(line: line, problem: "an empty entry in a flow collection")
        }
        return .scalar(Scalar(string: words.joined(separator: " "), style: .plain), line: line)
    }
}
