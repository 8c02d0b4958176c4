import ArgumentParser
import Glibc
import Media

@main
struct Avtool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "avtool",
        abstract: "Remux, transcode, merge and probe audio/video files, with sample-accurate A/V sync.",
        version: VersionText.text,
        subcommands: [ProbeCommand.self, RemuxCommand.self, TranscodeCommand.self, MergeCommand.self,
                      ConcatCommand.self, FillSilenceCommand.self, AutoSyncCommand.self, CutCommand.self, SplitCommand.self, RepairCommand.self, BatchCommand.self]
    )

    /// The verbs' names, as typed.
    static var verbs: [String] { configuration.subcommands.compactMap { $0.configuration.commandName } }

    /// Parses and runs, with usage errors in the runtime errors' form
    /// (`avtool: error: …`, exit status 64; a JSON object on stdout with
    /// `--json`) and a mistyped verb answered with the verb meant.
    static func main() {
        useOwnPagesForLargeBlocks()
        StagedOutput.sweptReporter.withLock {
            $0 = { dir, names in
                Terminal.error("avtool: removed \(names.count) temporar\(names.count == 1 ? "y" : "ies") that killed runs left in '\(dir)': \(names.joined(separator: ", "))")
            }
        }
        let arguments = Array(CommandLine.arguments.dropFirst())
        let json = arguments.contains("--json")
        if let first = arguments.first, !first.hasPrefix("-"), first != "help", !verbs.contains(first) {
            let guess = VerbSuggestion.closest(to: first, among: verbs)
            usageFailure("unknown verb '\(first)'" + (guess.map { "; did you mean '\($0)'?" } ?? "; the verbs are \(verbs.joined(separator: ", "))"),
                         see: "avtool --help", json: json)
        }
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            if exitCode(for: error) == .validationFailure {
                let verb = arguments.first.flatMap { verbs.contains($0) ? $0 : nil }
                usageFailure(message(for: error), see: "avtool \(verb.map { "\($0) " } ?? "")--help", json: json)
            }
            exit(withError: error)
        }
    }

    private static func usageFailure(_ message: String, see help: String, json: Bool) -> Never {
        Terminal.error("avtool: error: \(message)\n  See '\(help)' for the verbs and options.")
        if json { Terminal.output(jsonText(ErrorReport.usage(message))) }
        Glibc.exit(ExitCode.validationFailure.rawValue)
    }
}

/// The verb a mistyped one most likely meant.
enum VerbSuggestion {
    /// The nearest name by edit distance (at most 2, or a unique prefix).
    static func closest(to word: String, among names: [String]) -> String? {
        let prefixed = names.filter { $0.hasPrefix(word) }
        if prefixed.count == 1 { return prefixed[0] }
        let scored = names.map { ($0, distance(word, $0)) }.filter { $0.1 <= 2 }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return scored.filter { $0.1 == best.1 }.count == 1 ? best.0 : nil
    }

    /// Levenshtein distance, with a swap of two neighbours counted as one.
    static func distance(_ a: String, _ b: String) -> Int {
        let x = Array(a), y = Array(b)
        guard !x.isEmpty, !y.isEmpty else { return max(x.count, y.count) }
        var d = [[Int]](repeating: [Int](repeating: 0, count: y.count + 1), count: x.count + 1)
        for i in 0...x.count { d[i][0] = i }
        for j in 0...y.count { d[0][j] = j }
        for i in 1...x.count {
            for j in 1...y.count {
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1))
                if i > 1, j > 1, x[i - 1] == y[j - 2], x[i - 2] == y[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[x.count][y.count]
    }
}
