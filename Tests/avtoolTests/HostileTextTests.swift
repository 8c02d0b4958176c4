import Foundation
import Testing

/// Tags and file names that hold control characters — an escape sequence
/// that retitles the terminal or clears it, a newline that forges a line of
/// the report — are printed escaped, as `--json` escapes them (issue 47).
@Suite("hostile text")
struct HostileTextTests {
    @Test func probeEscapesControlCharactersInTagsAndNames() throws {
        let s = try Scratch()
        let title = "\u{1B}]0;owned\u{07}\u{1B}[2J\nforged: line"
        let path = s.path("memo\u{1B}[31m.m4a")
        let made = try Tool.run("ffmpeg", ["-v", "error", "-i", try Fixtures.wild("ios_voicememos_2021.m4a"), "-c", "copy",
                                           "-metadata", "title=\(title)", path])
        try #require(made.status == 0, "\(made)")
        let r = try Tool.avtool("probe", path)
        #expect(r.status == 0, "\(r)")
        #expect(!r.data.contains(0x1B) && !r.data.contains(0x07), "\(r.stdout)")
        #expect(r.stdout.contains("title: \\u001b]0;owned\\u0007\\u001b[2J\\nforged: line"), "\(r.stdout)")
        #expect(r.stdout.contains("memo\\u001b[31m.m4a: "), "\(r.stdout)")
        #expect(!r.stdout.split(separator: "\n").contains { $0.hasPrefix("forged") })
        // --json has the same text, escaped by JSON.
        let json = try Tool.avtool("probe", path, "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: json.data) as? [String: Any])
        #expect((object["tags"] as? [String: String])?["title"] == title)
    }
}
