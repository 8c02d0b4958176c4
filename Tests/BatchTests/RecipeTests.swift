import Batch
import Foundation
import Testing

/// A scratch directory of empty files laid out for expansion tests.
struct Tree {
    let root: String

    init(_ files: [String]) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("batch-\(UUID().uuidString)").path
        for f in files {
            let p = root + "/" + f
            try FileManager.default.createDirectory(atPath: (p as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: p, contents: Data(f.utf8)))
        }
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }
}

@Suite("recipe parsing")
struct RecipeParsingTests {
    func error(_ yaml: String) -> RecipeError? {
        do {
            _ = try Recipe(yaml: yaml, file: "r.yaml")
            return nil
        } catch {
            return error
        }
    }

    @Test func readsAllParts() throws {
        let r = try Recipe(yaml: """
            version: 1
            ledger: state/ledger.jsonl
            defaults:
              transcode: {crf: 24, preset: fast, no-faststart: true, ten-bit: false}
            steps:
              - verb: merge
                video: rec/{name}.mp4
                audio: rec/{name}.m4a
                output: out/{name}.mp4
              - verb: concat
                inputs: [a.mp4, "parts/*.mp4"]
                output: out/joined.mp4
                options:
                  --tolerance: 11ms
                  x265-params: [a=1, b=2]
            """, file: "r.yaml")
        #expect(r.version == 1)
        #expect(r.ledger == "state/ledger.jsonl")
        #expect(r.defaults["transcode"]?.map(\.arguments) == [["--crf", "24"], ["--preset", "fast"], ["--no-faststart"]])
        #expect(r.steps.count == 2)
        #expect(r.steps[0].video == Recipe.Pattern("rec/{name}.mp4", line: 7))
        #expect(r.steps[0].line == 6)
        #expect(r.steps[1].inputs.map(\.text) == ["a.mp4", "parts/*.mp4"])
        #expect(r.steps[1].options.flatMap(\.arguments) == ["--tolerance", "11ms", "--x265-params", "a=1", "--x265-params", "b=2"])
        #expect(r.steps[1].options.map(\.line) == [14, 15])
    }

    @Test(arguments: [
        ("version: 1\nsteps:\n  - verb: remux\n    inptus: a.mkv\n    output: x.mp4\n", 4, "unknown key 'inptus' in step 1"),
        ("version: 2\nsteps: []\n", 1, "unsupported version 2"),
        ("steps:\n  - verb: remux\n", 1, "missing 'version'"),
        ("version: 1\nsteps:\n  - verb: remuxx\n    inputs: a\n    output: b\n", 3, "unknown verb 'remuxx'"),
        ("version: 1\nsteps:\n  - verb: remux\n    inputs: a\n", 3, "has no 'output'"),
        ("version: 1\nsteps:\n  - verb: merge\n    inputs: a\n    output: b\n", 4, "merge takes 'video' and 'audio'"),
        ("version: 1\nsteps:\n  - verb: remux\n    inputs: a\n    output: b\n    options:\n      crf: {x: 1}\n", 7, "must be a value"),
        ("version: 1\nsteps:\n  - verb: remux\n    inputs: a\n    output: b\n    options:\n      json: true\n", 7, "set by 'avtool batch' itself"),
        ("version: 1\nsteps:\n  - verb: remux\n   inputs: a\n", 4, "not valid YAML"),
        ("version: 1\ndefaults:\n  probe: {x: 1}\nsteps:\n  - verb: remux\n", 3, "unknown key 'probe' in 'defaults'"),
        ("version: 1\nsteps:\n  - verb: remux\n    inputs: a\n    inputs: b\n    output: c\n", 5, "'inputs' given twice in step 1 (first on line 4)"),
        ("version: 1\nsteps: {}\n", 2, "'steps' must be a list"),
    ])
    func errorsNameTheLine(yaml: String, line: Int, message: String) throws {
        let e = try #require(error(yaml))
        #expect(e.line == line, "\(e)")
        #expect(e.description.contains(message), "\(e)")
        #expect(e.description.hasPrefix("r.yaml:\(line): "), "\(e)")
    }

    @Test func exampleRecipesParse() throws {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("recipes")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".yaml") }
        #expect(names.count >= 3)
        for n in names {
            let text = try String(contentsOf: dir.appendingPathComponent(n), encoding: .utf8)
            let r = try Recipe(yaml: text, file: n)
            #expect(!r.steps.isEmpty)
        }
    }
}

@Suite("recipe expansion")
struct ExpansionTests {
    @Test func globsTemplatesAndPairs() throws {
        let t = try Tree(["rec/b.mp4", "rec/b.m4a", "rec/a.mp4", "rec/a.m4a", "rec/notes.txt",
                          "arch/2019/x.mp4", "arch/2020/y.mp4", "parts/2.mp4", "parts/10.mp4", "parts/1.mp4"])
        defer { t.remove() }
        let r = try Recipe(yaml: """
            version: 1
            defaults:
              transcode: {crf: 24, preset: fast}
            steps:
              - verb: merge
                video: rec/{name}.mp4
                audio: rec/{name}.m4a
                output: out/{name}-merged.mp4
              - verb: transcode
                inputs: arch/*/*.mp4
                output: hevc/{dir}/{stem}.{ext}.mov
                options: {crf: 20}
              - verb: concat
                inputs: [rec/a.mp4, "parts/*.mp4"]
                output: out/all.mkv
            """, file: "r.yaml")
        let jobs = try r.jobs(base: t.root)
        #expect(jobs.map(\.verb) == ["merge", "merge", "transcode", "transcode", "concat"])
        // Pairs sorted by video name.
        #expect(jobs[0].inputs == [t.root + "/rec/a.mp4", t.root + "/rec/a.m4a"])
        #expect(jobs[0].output == t.root + "/out/a-merged.mp4")
        #expect(jobs[1].output == t.root + "/out/b-merged.mp4")
        #expect(jobs[2].output == t.root + "/hevc/arch/2019/x.mp4.mov")
        // The step's crf replaces the default, the default preset stays.
        #expect(jobs[2].options.flatMap(\.arguments) == ["--preset", "fast", "--crf", "20"])
        // A list keeps its order; a glob inside it is sorted (by bytes).
        #expect(jobs[4].inputs.map { String($0.dropFirst(t.root.count + 1)) }
                == ["rec/a.mp4", "parts/1.mp4", "parts/10.mp4", "parts/2.mp4"])
        #expect(jobs[4].arguments.last == t.root + "/out/all.mkv")
    }

    @Test func problemsAreCollected() throws {
        let t = try Tree(["rec/a.mp4", "rec/a.m4a", "rec/b.mp4", "in/x.mkv", "in/x.ts"])
        defer { t.remove() }
        let r = try Recipe(yaml: """
            version: 1
            steps:
              - verb: merge
                video: rec/{name}.mp4
                audio: rec/{name}.m4a
                output: out/{name}.mp4
              - verb: remux
                inputs: ["in/*.mkv", "in/*.ts", "missing/*.mov"]
                output: out/{stem}.mp4
              - verb: remux
                inputs: in/x.mkv
                output: out/{nme}.mp4
            """, file: "r.yaml")
        do {
            _ = try r.jobs(base: t.root)
            Issue.record("expected problems")
        } catch {
            let text = error.description
            #expect(text.contains("r.yaml:5: no audio"), "\(text)")
            #expect(text.contains("rec/b.m4a"), "\(text)")
            #expect(text.contains("r.yaml:8: no file matches 'missing/*.mov'"), "\(text)")
            #expect(text.contains("two jobs write"), "\(text)")
            #expect(text.contains("out/x.mp4"), "\(text)")
            #expect(text.contains("r.yaml:12: unknown field {nme}"), "\(text)")
            #expect(error.problems.count == 4, "\(text)")
        }
    }

    @Test func outputOfOneJobAsInputOfAnotherIsRefused() throws {
        let t = try Tree(["a.mkv", "a.mp4"])
        defer { t.remove() }
        let r = try Recipe(yaml: """
            version: 1
            steps:
              - verb: remux
                inputs: a.mkv
                output: a.mp4
            """, file: "r.yaml")
        // a.mp4 exists but is only an output here: fine.
        #expect(try r.jobs(base: t.root).count == 1)
        let r2 = try Recipe(yaml: """
            version: 1
            steps:
              - verb: remux
                inputs: a.mkv
                output: b.mp4
              - verb: remux
                inputs: b.mp4
                output: c.mkv
            """, file: "r.yaml")
        // b.mp4 does not exist yet: reported as missing, not run out of order.
        #expect(throws: ExpansionError.self) { try r2.jobs(base: t.root) }
    }
}
