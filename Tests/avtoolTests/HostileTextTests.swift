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
        // Every verb's lines go through the same escaping: a summary, a cut's, an error.
        let out = s.path("out\u{1B}]0;x\u{07}\n.m4a")
        for (arguments, status) in [(["remux", path, out], Int32(0)), (["cut", path, out, "-y", "--to", "0.5"], 0), (["remux", path, out], 1)] {
            let r = try Tool.avtool(arguments)
            #expect(r.status == status, "\(arguments): \(r)")
            #expect(!r.stderr.contains("\u{1B}") && !r.stderr.contains("\u{07}"), "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains("out\\u001b]0;x\\u0007\\n.m4a'"), "\(arguments): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(arguments): \(r.stderr)")
        }
    }

    /// `script` run by /bin/sh with `arguments` as $0, $1…: a name holding
    /// the byte 0xFF cannot be a Swift `String`, so such names are made and
    /// passed by the shell (`$(printf '\377')`).
    static func sh(_ script: String, _ arguments: [String]) throws -> Run {
        try Tool.run("/bin/sh", ["-c", script] + arguments)
    }

    /// A recording named `memo<0xFF>.m4a` beside `memo<U+FFFD>.m4a` (not
    /// media): probe, remux and a batch glob open the first by its bytes
    /// (before: "No such file", or the second opened in its place; the
    /// batch matched nothing or the wrong file), and name it `memo\xff.m4a`.
    @Test func aNameThatIsNotUTF8IsOpenedAsItIs() throws {
        let s = try Scratch()
        // (FileManager, which Scratch removes with, cannot name these files.)
        defer { _ = try? Tool.run("rm", ["-rf", s.url.path]) }
        let setup = try Self.sh("""
            set -e
            ff=$(printf '\\377')
            mkdir "$1/in" "$1/out"
            cp "$0" "$1/memo$ff.m4a"
            cp "$0" "$1/in/memo$ff.m4a"
            echo 'not this one' > "$1/memo\u{FFFD}.m4a"
            printf 'version: 1\\nsteps:\\n  - verb: remux\\n    inputs: "in/*.m4a"\\n    output: "out/{stem}.m4a"\\n' > "$1/r.yaml"
            """, [try Fixtures.wild("ios_voicememos_2021.m4a"), s.url.path])
        try #require(setup.status == 0, "\(setup)")
        // What each verb does, and ffprobe's count of the output's packets (the input's: 48).
        let run = try Self.sh("""
            ff=$(printf '\\377')
            "$0" probe "$1/memo$ff.m4a"; echo "probe=$?"
            "$0" remux "$1/memo$ff.m4a" "$1/out$ff.m4a" -q; echo "remux=$?"
            "$0" batch "$1/r.yaml" -q; echo "batch=$?"
            # A named temporary's path goes to the muxer too (its faststart pass reopens it).
            AVTOOL_NAMED_TEMPORARIES=1 "$0" cut "$1/memo$ff.m4a" "$1/cut$ff.m4a" --to 0.5 -q; echo "cut=$?"
            for f in "$1/memo$ff.m4a" "$1/out$ff.m4a" "$1/out/memo$ff.m4a"; do
                echo "packets=$(ffprobe -v error -select_streams a:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$f")"
            done
            "$0" probe "$1/gone$ff.m4a" 2>&1; echo "missing=$?"
            """, [Tool.avtool, s.url.path])
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("probe=0") && lines.contains("remux=0") && lines.contains("batch=0") && lines.contains("cut=0"), "\(run)")
        #expect(run.stdout.contains("memo\\xff.m4a: mov,mp4,m4a"), "\(run.stdout)")
        #expect(lines.filter { $0 == "packets=48" }.count == 3, "\(run.stdout)")
        #expect(run.stdout.contains("could not open input '\(s.url.path)/gone\\xff.m4a': No such file or directory"), "\(run.stdout)")
        #expect(lines.contains("missing=1"), "\(run.stdout)")
        #expect(!run.data.contains(0xFF) && !run.stderr.utf8.contains(0xFF))
        // --json: the same name, its byte written \\xff (JSON holds only Unicode).
        let json = try Self.sh(#""$0" probe --json "$1/memo$(printf '\377').m4a""#, [Tool.avtool, s.url.path])
        let object = try #require(try JSONSerialization.jsonObject(with: json.data) as? [String: Any], "\(json)")
        #expect((object["file"] as? String)?.hasSuffix("/memo\\xff.m4a") == true, "\(json.stdout)")
    }
}
