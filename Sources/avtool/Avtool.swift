import FileNames
import ArgumentParser
import Glibc
import Media

@main
struct Avtool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "avtool",
        abstract: "Remux, transcode, merge and probe audio/video files, with sample-accurate A/V sync.",
        // What `--version` prints is made in `main` (it names the FFmpeg
        // libraries, which loads them): here only enough for the option to be listed.
        version: "avtool \(VersionText.version)",
        subcommands: [ProbeCommand.self, RemuxCommand.self, TranscodeCommand.self, MergeCommand.self,
                      ConcatCommand.self, FillSilenceCommand.self, AutoSyncCommand.self, CutCommand.self, SplitCommand.self, RepairCommand.self, LoudnessCommand.self, BatchCommand.self]
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
                Terminal.error("avtool: removed \(names.count) temporar\(names.count == 1 ? "y" : "ies") that killed runs left in \(quoted(dir)): \(names.joined(separator: ", "))")
            }
        }
        let arguments = ArgumentHabits.joiningNegativeValues(FileSystem.arguments())
        if !arguments.contains(where: { $0 == "--quiet" || $0 == "--json" || ($0.hasPrefix("-") && !$0.hasPrefix("--") && $0.contains("q")) }) {
            Container.misnamedReporter.withLock { $0 = { Terminal.error("avtool: warning: \($0)") } }
        }
        // `--version` asked of avtool itself (not of a verb): the whole text, FFmpeg's libraries loaded for it.
        if let first = arguments.first(where: { !$0.hasPrefix("-") || $0 == "--version" }), first == "--version" {
            Terminal.output(VersionText.text)
            Glibc.exit(0)
        }
        let json = arguments.contains("--json")
        let named = arguments.first == "help" ? arguments.dropFirst().first : arguments.first
        if let first = named, !first.hasPrefix("-"), first != "help", !verbs.contains(first) {
            let guess = VerbSuggestion.closest(to: first, among: verbs)
            usageFailure("unknown verb \(quoted(first))" + (guess.map { "; did you mean \(quoted($0))?" } ?? "; the verbs are \(verbs.joined(separator: ", "))"),
                         see: "avtool --help", json: json)
        }
        if let foreign = ArgumentHabits.foreignOptions(arguments) {
            let verb = arguments.first.flatMap { verbs.contains($0) ? $0 : nil }
            usageFailure(foreign, see: "avtool \(verb.map { "\($0) " } ?? "")--help", json: json)
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
        Terminal.error("avtool: error: \(message)\n  See \(quoted(help)) for the verbs and options.")
        if json { Terminal.output(jsonText(ErrorReport.usage(message))) }
        Glibc.exit(ExitCode.validationFailure.rawValue)
    }
}

/// Command-line habits from other tools, answered before parsing.
enum ArgumentHabits {
    /// `--offset -0.5s` as `--offset=-0.5s`: a value that starts with a
    /// minus sign and a digit is a value (a negative time), not an option.
    static func joiningNegativeValues(_ arguments: [String]) -> [String] {
        var out: [String] = []
        var k = 0
        while k < arguments.count {
            let a = arguments[k]
            if a == "--" { return out + arguments[k...] }
            if a.hasPrefix("--"), a.count > 2, !a.contains("="), k + 1 < arguments.count, isNegativeValue(arguments[k + 1]) {
                out.append(a + "=" + arguments[k + 1])
                k += 2
                continue
            }
            out.append(a)
            k += 1
        }
        return out
    }

    static func isNegativeValue(_ text: String) -> Bool {
        let rest = text.dropFirst()
        return text.hasPrefix("-") && (rest.first?.isNumber == true || (rest.first == "." && rest.dropFirst().first?.isNumber == true))
    }

    /// The short options avtool has (`-y`, `-q`, `-v`, `-h`, batch's `-j`).
    static let shortOptions: Set<Character> = ["y", "q", "v", "h", "j"]

    /// What ffmpeg's options are here.
    static let ffmpeg: [String: String] = [
        "-ss": "'--from'", "-to": "'--to'", "-t": "'--duration'", "-vn": "'--no-video'", "-an": "'--no-audio'",
        "-sn": "'--no-subtitles'", "-dn": "'--no-data'", "-f": "'--format'", "-metadata": "'--metadata'",
        "-crf": "'--crf'", "-preset": "'--preset'", "-itsoffset": "merge's '--offset'",
        "-i": "none: the input is the first argument", "-map": "none: streams are left out with '--no-audio', '--no-subtitles', '--no-data'",
        "-c": "none: remux copies every stream, transcode re-encodes the video", "-codec": "none: remux copies every stream, transcode re-encodes the video",
        "-c:v": "none: transcode re-encodes the video, remux copies it", "-c:a": "'--audio' (transcode)",
        "-movflags": "none: the index goes in front unless '--no-faststart'",
    ]

    /// A line naming the options given the way other tools take them
    /// (`-ss 1 -t 2`), which avtool does not know, with avtool's own where
    /// there is one; nil when there are none.
    static func foreignOptions(_ arguments: [String]) -> String? {
        var named: [String] = []
        for a in arguments.dropFirst() {
            if a == "--" { break }
            guard a.hasPrefix("-"), !a.hasPrefix("--"), a.count > 1, !isNegativeValue(a) else { continue }
            let letters = a.dropFirst()
            if letters.allSatisfy({ shortOptions.contains($0) }) { continue }
            named.append("\(quoted(a))" + (ffmpeg[a].map { " (avtool's: \($0))" } ?? ""))
        }
        guard !named.isEmpty else { return nil }
        return "unknown option\(named.count == 1 ? "" : "s") " + named.joined(separator: ", ")
            + "; avtool's options are long ('--from 1 --duration 2')"
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
