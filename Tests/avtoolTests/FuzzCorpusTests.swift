import Foundation
import Testing

/// Inputs the fuzzer made (Tests/Fuzz): `crashes/` holds every reproducer of
/// a crash, hang or leak it found (each fixed), `corpus/` a sample of the
/// mutated inputs that reach deep into the demuxers and the core. Each must
/// give a result or one clean error line, from the fuzz target's replayer
/// (the same code the fuzzer runs, without sanitizers) and from avtool itself.
@Suite("fuzz corpus")
struct FuzzCorpusTests {
    static let directory = Tool.repo.appendingPathComponent("Tests/Fuzz")

    static var inputs: [String] {
        ["crashes", "corpus"].flatMap { sub -> [String] in
            let dir = directory.appendingPathComponent(sub)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            return names.filter { !$0.hasPrefix(".") && $0 != "README.md" }.sorted()
                .map { dir.appendingPathComponent($0).path }
        }
    }

    /// The replayer built beside avtool (`avtool-fuzz FILE…`).
    static var replayer: String {
        URL(fileURLWithPath: Tool.avtool).deletingLastPathComponent().appendingPathComponent("avtool-fuzz").path
    }

    @Test func replayEveryInput() throws {
        let inputs = Self.inputs
        try #require(inputs.count >= 10, "Tests/Fuzz holds its inputs")
        let r = try Tool.run(Self.replayer, inputs)
        #expect(r.status == 0, "\(r)")
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == inputs.count, "one outcome per input: \(r)")
        #expect(!r.stderr.contains("Fatal error"), "\(r.stderr)")
    }

    @Test(arguments: ["probe", "remux", "fill-silence"])
    func avtoolOnEveryInput(verb: String) throws {
        let scratch = try Scratch()
        for input in Self.inputs {
            let before = try sha256(input)
            let args = verb == "probe" ? ["probe", input] : [verb, input, scratch.path("out.mkv"), "-y", "-q"]
            let r = try Tool.avtool(args)
            #expect(r.status == 0 || r.status == 1, "\(input): \(r)")
            if r.status == 1 {
                #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.hasPrefix("avtool: error: "),
                        "\(input): \(r.stderr)")
            }
            #expect(!scratch.contents.contains { $0.hasPrefix(".") }, "temporary left by \(input)")
            #expect(try sha256(input) == before)
            try? FileManager.default.removeItem(atPath: scratch.path("out.mkv"))
        }
    }
}
