@testable import Batch
import Foundation
import Testing

/// The recipe reader's YAML against PyYAML's (`yaml.BaseLoader`: every
/// scalar a string, as the reader keeps them): the same tree for every
/// document, and a refusal where PyYAML refuses.
@Suite("YAML reader")
struct YAMLTests {
    /// PyYAML's reading of `text` as JSON (sorted keys), or nil where it
    /// refuses the text.
    static func pyyaml(_ text: String) throws -> String? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-c", """
            import json, sys, yaml
            try:
                doc = yaml.load(sys.stdin.read(), Loader=yaml.BaseLoader)
            except yaml.YAMLError:
                sys.exit(3)
            print(json.dumps(doc, sort_keys=True, ensure_ascii=False))
            """]
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        try p.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        if p.terminationStatus == 3 { return nil }
        try #require(p.terminationStatus == 0, "python3 with PyYAML (python3-yaml) is needed")
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The reader's tree in the same JSON form.
    static func ours(_ text: String) throws(YAMLError) -> String {
        guard let node = try YAML.parse(text) else { return "null" }
        return json(node)
    }

    static func json(_ node: Node) -> String {
        switch node {
        case .scalar(let s, _):
            let data = try! JSONSerialization.data(withJSONObject: s.string, options: [.fragmentsAllowed, .withoutEscapingSlashes])
            return String(decoding: data, as: UTF8.self)
        case .sequence(let items, _):
            return "[" + items.map(json).joined(separator: ", ") + "]"
        case .mapping(let pairs, _):
            let sorted = pairs.map { (key: $0.key.string ?? json($0.key), value: json($0.value)) }.sorted { $0.key < $1.key }
            return "{" + sorted.map { p in
                String(decoding: try! JSONSerialization.data(withJSONObject: p.key, options: [.fragmentsAllowed, .withoutEscapingSlashes]),
                       as: UTF8.self) + ": " + p.value
            }.joined(separator: ", ") + "}"
        }
    }

    static let documents: [String] = [
        // Block structure, as recipes write it.
        "version: 1\nsteps:\n  - verb: remux\n    inputs: a.mkv\n    output: out/{stem}.mp4\n",
        "a:\n- x\n- y\nb: z\n",
        "- - a\n  - b\n- - c\n",
        "- a: 1\n  b: 2\n- c: 3\n",
        "outer:\n  inner:\n    deep: value\n  next: 2\n",
        "key:\n\n  # a comment between\n  value: 1\n",
        "empty:\nafter: x\n",
        "list:\n  -\n  - b\n",
        // Scalars.
        "a: plain text with  spaces\nb: 'single ''quoted'' value'\nc: \"double \\\"quoted\\\" \\t tab \\u00e9 \\x41\"\n",
        "a: this is\n  a plain scalar\n  over lines\nb: x\n",
        "a: 'folded\n  single\n\n  quoted'\n",
        "a: \"joined\\\n  without space\"\n",
        "url: http://example.com:8080/path\ntime: 12:30\nhash: a#b\n",
        "a: value # a comment\n# full line\nb: [1, 2] # another\n",
        // Block scalars.
        "a: |\n  line one\n  line two\n\n  after blank\nb: x\n",
        "a: |-\n  stripped\n\nb: x\n",
        "a: |+\n  kept\n\n\nb: x\n",
        "a: >\n  folded\n  text\n\n  new para\n    more indented\n  back\n",
        "a: >-\n  no\n  newline\n",
        "- |\n  in a list\n- after\n",
        "a: |2\n    indented by\n   two\nb: x\n",
        // Flow collections.
        "a: [1, 'two', \"three\", [4, 5], {six: 6}]\n",
        "a: {x: 1, y: [a, b], z: {w: q}}\n",
        "a: [\n  one,\n  two, # comment\n  three,\n]\n",
        "a: {k: v,\n    l: w}\n",
        "a: [b: c, d]\n",
        "a: []\nb: {}\n",
        // Anchors, aliases, tags, markers.
        "base: &b\n  crf: 20\n  preset: fast\nother: *b\n",
        "a: &x value\nb: *x\n",
        "a: !!str true\nb: !!int 5\n",
        "---\na: 1\n...\n",
        "--- \nversion: 1\n",
        "%YAML 1.1\n---\na: b\n",
        "\"quoted key\": 1\n'other key': 2\n",
        "a:    \n  - 1\n",
        "unicode: hé ☃ 𝄞\n",
        "a: b\r\nc: d\r\n",
    ]

    static let refused: [String] = [
        "a: b: c\n",
        "a: 'unclosed\n",
        "a: [1, 2\n",
        "a:\n\t- b\n",
        "version: 1\nsteps:\n  - verb: remux\n   inputs: a\n",
        "a: 1\n---\nb: 2\n",
        "a:\n  - x\n  y: 1\n",
        "a: *nowhere\n",
        "a: \"bad \\q escape\"\n",
        "a: [x] trailing\n",
        "a:\n  b: 1\n c: 2\n",
    ]

    @Test(arguments: documents)
    func readsAsPyYAMLDoes(_ text: String) throws {
        let expected = try #require(try Self.pyyaml(text), "PyYAML refuses: \(text)")
        let got: String
        do { got = try Self.ours(text) } catch { Issue.record("refused (line \(error.line): \(error.problem)): \(text)"); return }
        #expect(got == expected, "\(text)")
    }

    @Test(arguments: refused)
    func refusesWhatPyYAMLRefuses(_ text: String) throws {
        #expect(try Self.pyyaml(text) == nil, "PyYAML reads: \(text)")
        #expect(throws: YAMLError.self, "\(text)") { try Self.ours(text) }
    }

    @Test func errorsNameTheirLine() {
        let cases: [(String, Int)] = [("a: 1\nb: c: d\n", 2), ("a: 1\nb: \"open\n", 2), ("a:\n  - x\n  y: 1\n", 3),
                                      ("a: 1\n\tb: 2\n", 2)]
        for (text, line) in cases {
            do {
                _ = try YAML.parse(text)
                Issue.record("read: \(text)")
            } catch {
                #expect(error.line == line, "\(text): \(error.problem)")
            }
        }
    }

    @Test func everyNodeKeepsItsLine() throws {
        let node = try #require(try YAML.parse("a: 1\nb:\n  - x\n  - {y: 2}\nc: |\n  t\n"))
        guard case .mapping(let pairs, let line) = node else { Issue.record("not a mapping"); return }
        #expect(line == 1)
        #expect(pairs.map(\.key.line) == [1, 2, 5])
        #expect(pairs.map(\.value.line) == [1, 3, 5])
        guard case .sequence(let items, _) = pairs[1].value else { Issue.record("not a sequence"); return }
        #expect(items.map(\.line) == [3, 4])
    }

    @Test func plainStyleIsKeptApartFromQuoted() throws {
        let node = try #require(try YAML.parse("a: true\nb: 'true'\nc: !!str true\nd: 5\n"))
        guard case .mapping(let pairs, _) = node else { Issue.record("not a mapping"); return }
        let styles = pairs.map { p -> Scalar.Style? in if case .scalar(let s, _) = p.value { s.style } else { nil } }
        #expect(styles == [.plain, .singleQuoted, .doubleQuoted, .plain])
        #expect(pairs[3].value.int == 5)
        #expect(pairs[1].value.int == nil)
    }
}
