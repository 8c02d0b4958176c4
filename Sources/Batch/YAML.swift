import CYAML

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

/// Reads one YAML document with libyaml's event parser and builds its tree:
/// every node with the line it starts on, scalars with their style, an alias
/// read as the node its anchor names. A `!!str` tag keeps a plain value from
/// being read as a number or a boolean (it reads as quoted); other tags are
/// passed over. A text with nothing in it is nil. A second document, an alias
/// with no anchor before it, and whatever libyaml refuses (bad indentation, a
/// tab in it, an unclosed quote or bracket, a key where a value must be) are
/// errors naming their line.
enum YAML {
    static func parse(_ text: String) throws(YAMLError) -> Node? {
        var composer = Composer(events: try EventParser(text))
        return try composer.document()
    }
}

/// The tree of one document, built from libyaml's events; anchors are
/// remembered as their nodes end.
private struct Composer {
    let events: EventParser
    var anchors: [String: Node] = [:]

    mutating func document() throws(YAMLError) -> Node? {
        _ = try events.next()  // the stream's start
        let start = try events.next()
        guard case .documentStart = start.kind else { return nil }
        let root = try node(try events.next())
        _ = try events.next()  // the document's end
        let after = try events.next()
        if case .documentStart = after.kind {
            throw YAMLError(line: after.line, problem: "a second document (a recipe is one document)")
        }
        // "---" alone: a document with nothing in it, read as libyaml's empty plain scalar.
        if case .scalar(let s, _) = root, s.style == .plain, s.string.isEmpty { return nil }
        return root
    }

    private mutating func node(_ event: Event) throws(YAMLError) -> Node {
        let node: Node
        switch event.kind {
        case .alias(let name):
            guard let target = anchors[name] else {
                throw YAMLError(line: event.line, problem: "alias '*\(name)' names no anchor before it")
            }
            return target
        case .scalar(let s):
            node = .scalar(s, line: event.line)
        case .sequenceStart:
            node = .sequence(try items(), line: event.line)
        case .mappingStart:
            node = .mapping(try pairs(), line: event.line)
        default:
            // libyaml's grammar puts a node here; anything else is a bug in that reading.
            throw YAMLError(line: event.line, problem: "a value was expected")
        }
        if let anchor = event.anchor { anchors[anchor] = node }
        return node
    }

    private mutating func items() throws(YAMLError) -> [Node] {
        var items: [Node] = []
        while true {
            let event = try events.next()
            if case .sequenceEnd = event.kind { return items }
            items.append(try node(event))
        }
    }

    private mutating func pairs() throws(YAMLError) -> [(key: Node, value: Node)] {
        var pairs: [(key: Node, value: Node)] = []
        while true {
            let event = try events.next()
            if case .mappingEnd = event.kind { return pairs }
            let key = try node(event)
            pairs.append((key, try node(try events.next())))
        }
    }
}

/// One libyaml event, copied out of the C structure: what it is, its anchor,
/// and the line (1-based) it starts on.
private struct Event {
    enum Kind {
        case streamStart, streamEnd, documentStart, documentEnd
        case alias(String), scalar(Scalar)
        case sequenceStart, sequenceEnd, mappingStart, mappingEnd
    }

    let kind: Kind
    let anchor: String?
    let line: Int

    /// The libyaml tag `!!str` expands to.
    static let stringTag = "tag:yaml.org,2002:str"

    init(_ e: yaml_event_t) {
        line = Int(e.start_mark.line) + 1  // libyaml counts lines from 0
        switch e.type {
        case YAML_ALIAS_EVENT:
            (kind, anchor) = (.alias(Self.text(e.data.alias.anchor) ?? ""), nil)
        case YAML_SCALAR_EVENT:
            let s = e.data.scalar
            let value = String(decoding: UnsafeBufferPointer(start: s.value, count: s.length), as: UTF8.self)
            (kind, anchor) = (.scalar(Scalar(string: value, style: Self.style(s.style, tag: s.tag))), Self.text(s.anchor))
        case YAML_SEQUENCE_START_EVENT: (kind, anchor) = (.sequenceStart, Self.text(e.data.sequence_start.anchor))
        case YAML_MAPPING_START_EVENT: (kind, anchor) = (.mappingStart, Self.text(e.data.mapping_start.anchor))
        case YAML_SEQUENCE_END_EVENT: (kind, anchor) = (.sequenceEnd, nil)
        case YAML_MAPPING_END_EVENT: (kind, anchor) = (.mappingEnd, nil)
        case YAML_DOCUMENT_START_EVENT: (kind, anchor) = (.documentStart, nil)
        case YAML_DOCUMENT_END_EVENT: (kind, anchor) = (.documentEnd, nil)
        case YAML_STREAM_END_EVENT: (kind, anchor) = (.streamEnd, nil)
        default: (kind, anchor) = (.streamStart, nil)
        }
    }

    private static func style(_ style: yaml_scalar_style_t, tag: UnsafeMutablePointer<yaml_char_t>?) -> Scalar.Style {
        switch style {
        case YAML_SINGLE_QUOTED_SCALAR_STYLE: .singleQuoted
        case YAML_DOUBLE_QUOTED_SCALAR_STYLE: .doubleQuoted
        case YAML_LITERAL_SCALAR_STYLE: .literal
        case YAML_FOLDED_SCALAR_STYLE: .folded
        default: text(tag) == stringTag ? .doubleQuoted : .plain
        }
    }

    private static func text(_ p: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        p.map { String(cString: $0) }
    }
}

/// libyaml's parser (`yaml_parser_t`) over its own copy of the text, which it
/// reads as it goes; `yaml_parser_delete` when done.
private final class EventParser {
    private let parser: UnsafeMutablePointer<yaml_parser_t>
    private let input: UnsafeMutableBufferPointer<UInt8>

    init(_ text: String) throws(YAMLError) {
        let input = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: text.utf8.count)
        _ = input.initialize(from: text.utf8)
        let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
        guard yaml_parser_initialize(parser) != 0 else {
            parser.deallocate()
            input.deallocate()
            throw YAMLError(line: 1, problem: "out of memory")
        }
        yaml_parser_set_input_string(parser, input.baseAddress, input.count)
        (self.parser, self.input) = (parser, input)
    }

    deinit {
        yaml_parser_delete(parser)
        parser.deallocate()
        input.deallocate()
    }

    /// The next event (`yaml_parser_parse`), copied; libyaml's is deleted here.
    func next() throws(YAMLError) -> Event {
        var event = yaml_event_t()
        guard yaml_parser_parse(parser, &event) != 0 else { throw error() }
        defer { yaml_event_delete(&event) }
        return Event(event)
    }

    /// The parser's error: its problem and where. A problem found at the end
    /// of the text (an unclosed quote or bracket) names the line where what
    /// it is about starts.
    private func error() -> YAMLError {
        let p = parser.pointee
        var problem = p.problem.map { String(cString: $0) } ?? "not readable"
        switch p.error {
        case YAML_MEMORY_ERROR:
            return YAMLError(line: 1, problem: "out of memory")
        case YAML_READER_ERROR:
            if p.problem_value != -1 { problem += " (#x\(String(p.problem_value, radix: 16)))" }
            return YAMLError(line: line(atByte: p.problem_offset), problem: problem)
        default:
            break
        }
        var line = Int(p.problem_mark.line) + 1
        if let context = p.context {
            let contextLine = Int(p.context_mark.line) + 1
            problem += " (\(String(cString: context)) that starts on line \(contextLine))"
            if line > lastLine { line = contextLine }
        }
        return YAMLError(line: line, problem: problem)
    }

    /// The line (1-based) a byte of the text is on.
    private func line(atByte offset: Int) -> Int {
        input.prefix(offset).reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
    }

    /// The text's last line (1-based) with anything on it; libyaml puts the
    /// end of the text on the line after it.
    private var lastLine: Int {
        let breaks = input.reduce(0) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
        return input.last == UInt8(ascii: "\n") ? breaks : breaks + 1
    }
}
