
/// A batch recipe (`version: 1`), as read from YAML, before its globs are
/// expanded. Every value keeps the line it came from so that errors can name it.
///
/// ```yaml
/// version: 1
/// defaults:                 # options per verb, for every step of that verb
///   transcode: {crf: 24, preset: fast}
/// steps:
///   - verb: merge
///     video: rec/{name}.mp4 # pairs by the shared {name}
///     audio: rec/{name}.m4a
///     output: out/{name}.mp4
///   - verb: transcode
///     inputs: archive/*.mp4 # one job per match
///     output: hevc/{stem}.mov
///     options: {audio: copy}
///   - verb: concat
///     inputs: [intro.mp4, "parts/*.mp4"]   # one job; each glob sorted
///     output: out/joined.mp4
/// ```
public struct Recipe: Sendable, Equatable {
    public static let verbs = ["remux", "transcode", "merge", "concat", "loudness", "fill-silence", "repair", "cut", "split"]

    /// The recipe file's path, for messages.
    public var file: String
    public var version: Int
    /// The `ledger:` key: where the ledger goes (relative to the base), if set.
    public var ledger: String?
    /// Options per verb, applied before a step's own.
    public var defaults: [String: [OptionSetting]]
    public var steps: [Step]
    /// What was wrong with the steps and defaults left out of `steps` and
    /// `defaults` (`read`); empty for a recipe `init` returns.
    public var problems: [RecipeError] = []

    public struct Step: Sendable, Equatable {
        /// 1-based, as the recipe lists it.
        public var number = 0
        public var verb: String
        public var line: Int
        public var inputs: [Pattern]
        /// Merge only: the video and audio patterns, paired by `{name}`.
        public var video: Pattern?
        public var audio: Pattern?
        public var output: Pattern
        public var options: [OptionSetting]
    }

    /// A path, glob or template, with its line.
    public struct Pattern: Sendable, Equatable {
        public var text: String
        public var line: Int
        public init(_ text: String, line: Int) {
            self.text = text
            self.line = line
        }
    }
}

/// One option as the command line spells it (`crf` is `--crf`): a flag
/// (`true`), one value, or a list given as the option repeated.
public struct OptionSetting: Sendable, Equatable, Hashable {
    public var name: String
    /// nil for a flag that is on.
    public var values: [String]?
    public var line: Int

    public init(name: String, values: [String]?, line: Int) {
        self.name = name
        self.values = values
        self.line = line
    }

    /// As command-line arguments.
    public var arguments: [String] {
        let flag = "--" + name
        guard let values else { return [flag] }
        return values.flatMap { [flag, $0] }
    }
}

/// A recipe that cannot be used: the file, the line and what is wrong.
public struct RecipeError: Error, CustomStringConvertible, Equatable {
    public var file: String
    public var line: Int?
    public var message: String
    /// Problems found with this one (a recipe's are all listed at once).
    public var others: [RecipeError] = []

    /// This problem and the others, in the order of their lines.
    public var all: [RecipeError] {
        ([self] + others).enumerated().sorted { ($0.element.line ?? 0, $0.offset) < ($1.element.line ?? 0, $1.offset) }.map(\.element)
    }

    /// The first of `problems` carrying the rest; nil when there are none.
    public static func collected(_ problems: [RecipeError]) -> RecipeError? {
        guard var first = problems.first else { return nil }
        first.others = Array(problems.dropFirst())
        return first
    }

    public init(file: String, line: Int?, _ message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}

extension Recipe {
    /// Reads a recipe from YAML text. Unknown keys, wrong types and bad
    /// values are errors naming the line.
    private init(reading text: String, file: String) throws(RecipeError) {
        self.file = file
        let root: Node?
        do {
            root = try YAML.parse(text)
        } catch {
            throw RecipeError(file: file, line: error.line, "not valid YAML: \(error.problem)")
        }
        guard let root else { throw RecipeError(file: file, line: nil, "the recipe is empty") }
        let r = Reader(file: file)
        let top = try r.mapping(root, "the recipe", known: ["version", "ledger", "defaults", "steps"])

        guard let v = top["version"] else { throw RecipeError(file: file, line: root.line, "missing 'version' (this avtool reads version 1)") }
        guard let n = v.int, n == 1 else {
            throw RecipeError(file: file, line: v.line, "unsupported version \(v.string ?? "?") (this avtool reads version 1)")
        }
        version = n
        if let l = top["ledger"] { ledger = try r.string(l, "'ledger'") } else { ledger = nil }

        // Every problem of the defaults and the steps is found before any is reported.
        var problems: [RecipeError] = []
        defaults = [:]
        if let d = top["defaults"] {
            do {
                let m = try r.mapping(d, "'defaults'", known: Self.verbs)
                for (verb, node) in m.pairs {
                    do { defaults[verb] = try r.options(node, "'defaults.\(verb)'") } catch { problems.append(error) }
                }
            } catch {
                problems.append(error)
            }
        }

        guard let s = top["steps"] else {
            throw RecipeError.collected(problems + [RecipeError(file: file, line: root.line, "missing 'steps'")])!
        }
        guard case .sequence(let seq, _) = s, !seq.isEmpty else {
            throw RecipeError.collected(problems + [RecipeError(file: file, line: s.line, "'steps' must be a list of steps")])!
        }
        var read: [Step] = []
        for (i, node) in seq.enumerated() {
            do { read.append(try r.step(node, number: i + 1)) } catch { problems.append(error) }
        }
        steps = read
        self.problems = problems
    }

    /// Reads a recipe, keeping the steps that are right when others are not:
    /// nil only when nothing can be read (not YAML, no version, no steps);
    /// otherwise the good steps, with every other problem in `problems`.
    public static func read(yaml text: String, file: String) -> (recipe: Recipe?, problems: [RecipeError]) {
        do {
            let r = try Recipe(reading: text, file: file)
            return (r, r.problems)
        } catch {
            return (nil, error.all)
        }
    }

    /// Reads a recipe; any problem is an error, carrying every other one found.
    public init(yaml text: String, file: String) throws(RecipeError) {
        self = try Recipe(reading: text, file: file)
        if let all = RecipeError.collected(problems) { throw all }
    }
}

/// Typed reads of YAML nodes that fail with the node's line.
private struct Reader {
    let file: String

    struct Mapping {
        var pairs: [(String, Node)]
        subscript(key: String) -> Node? { pairs.first { $0.0 == key }?.1 }
    }

    func fail(_ node: Node?, _ message: String) -> RecipeError {
        RecipeError(file: file, line: node?.line, message)
    }

    func mapping(_ node: Node, _ what: String, known: [String]?) throws(RecipeError) -> Mapping {
        guard case .mapping(let m, _) = node else { throw fail(node, "\(what) must be a mapping of keys to values") }
        var out = Mapping(pairs: [])
        for (k, v) in m {
            guard case .scalar(let s, _) = k else { throw fail(k, "a key in \(what) must be a plain name") }
            let key = s.string
            if let known, !known.contains(key) {
                throw fail(k, "unknown key '\(key)' in \(what) (known: \(known.joined(separator: ", ")))")
            }
            if let first = out[key] { throw fail(k, "'\(key)' given twice in \(what) (first on line \(first.line))") }
            out.pairs.append((key, v))
        }
        return out
    }

    func string(_ node: Node, _ what: String) throws(RecipeError) -> String {
        guard case .scalar(let s, _) = node, !s.string.isEmpty else { throw fail(node, "\(what) must be a non-empty string") }
        return s.string
    }

    func pattern(_ node: Node, _ what: String) throws(RecipeError) -> Recipe.Pattern {
        Recipe.Pattern(try string(node, what), line: node.line)
    }

    func patterns(_ node: Node, _ what: String) throws(RecipeError) -> [Recipe.Pattern] {
        if case .sequence(let seq, _) = node {
            guard !seq.isEmpty else { throw fail(node, "\(what) is an empty list") }
            return try seq.map { (n) throws(RecipeError) in try pattern(n, "each entry of \(what)") }
        }
        return [try pattern(node, what)]
    }

    /// Options as the CLI spells them, with or without the leading dashes.
    func options(_ node: Node, _ what: String) throws(RecipeError) -> [OptionSetting] {
        let m = try mapping(node, what, known: nil)
        var out: [OptionSetting] = []
        for (key, value) in m.pairs {
            let name = key.hasPrefix("--") ? String(key.dropFirst(2)) : key
            let line = value.line
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }), name.first != "-" else {
                throw fail(value, "'\(key)' in \(what) is not an option name")
            }
            if name == "timeout" {
                throw fail(value, "'timeout' stops a whole process, so it cannot be set per job in a recipe")
            }
            if ["help", "version", "json", "quiet", "verbose"].contains(name) {
                throw fail(value, "'\(key)' in \(what) is set by 'avtool batch' itself, not per job")
            }
            switch value {
            case .scalar(let s, _):
                let plain = s.style == .plain
                if plain, let b = Bool(s.string.lowercased()) {
                    if b { out.append(OptionSetting(name: name, values: nil, line: line)) }
                } else if s.string.isEmpty || (plain && ["~", "null"].contains(s.string)) {
                    throw fail(value, "'\(key)' in \(what) has no value")
                } else {
                    out.append(OptionSetting(name: name, values: [s.string], line: line))
                }
            case .sequence(let seq, _):
                let values = try seq.map { (n) throws(RecipeError) -> String in
                    guard case .scalar(let s, _) = n else { throw fail(n, "each value of '\(key)' must be a plain value") }
                    return s.string
                }
                guard !values.isEmpty else { throw fail(value, "'\(key)' in \(what) is an empty list") }
                out.append(OptionSetting(name: name, values: values, line: line))
            default:
                throw fail(value, "'\(key)' in \(what) must be a value, true, or a list of values")
            }
        }
        return out
    }

    func step(_ node: Node, number: Int) throws(RecipeError) -> Recipe.Step {
        let what = "step \(number)"
        let m = try mapping(node, what, known: ["verb", "inputs", "video", "audio", "output", "options"])
        guard let v = m["verb"] else { throw fail(node, "\(what) has no 'verb' (one of \(Recipe.verbs.joined(separator: ", ")))") }
        let verb = try string(v, "'verb'")
        guard Recipe.verbs.contains(verb) else {
            throw fail(v, "unknown verb '\(verb)' in \(what) (known: \(Recipe.verbs.joined(separator: ", ")))")
        }
        guard let o = m["output"] else { throw fail(node, "\(what) (\(verb)) has no 'output'") }
        var step = Recipe.Step(number: number, verb: verb, line: node.line, inputs: [], video: nil, audio: nil,
                               output: try pattern(o, "'output'"),
                               options: [])
        if let o = m["options"] { step.options = try options(o, "the options of \(what)") }
        if verb == "merge" {
            if let i = m["inputs"] { throw fail(i, "merge takes 'video' and 'audio', not 'inputs'") }
            guard let vn = m["video"], let an = m["audio"] else {
                throw fail(node, "\(what) (merge) needs 'video' and 'audio' patterns, e.g. rec/{name}.mp4 and rec/{name}.m4a")
            }
            step.video = try pattern(vn, "'video'")
            step.audio = try pattern(an, "'audio'")
        } else {
            if let x = m["video"] ?? m["audio"] { throw fail(x, "'video' and 'audio' are for merge; \(verb) takes 'inputs'") }
            guard let i = m["inputs"] else { throw fail(node, "\(what) (\(verb)) has no 'inputs'") }
            step.inputs = try patterns(i, "'inputs'")
        }
        return step
    }
}
