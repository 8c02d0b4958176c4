import FileNames
import FoundationEssentials
import Glibc

/// One unit of work: a verb with its inputs, output and options, as the
/// command line would run it (`avtool VERB ARGUMENTS…`).
public struct Job: Sendable, Equatable, Hashable {
    /// 1-based step number and its line in the recipe.
    public var step: Int
    public var line: Int
    public var verb: String
    /// Absolute or base-joined paths, in the verb's order (merge: video, audio).
    public var inputs: [String]
    public var output: String
    /// Defaults for the verb, then the step's own (a step's value wins).
    public var options: [OptionSetting]
    /// Whether the output is the verb's last argument (a chunk task names
    /// its chunk directory instead).
    public var passesOutput = true
    /// Whether the inputs are arguments (a join finds its source in the
    /// chunk directory; the ledger still watches it).
    public var passesInputs = true

    public init(step: Int, line: Int, verb: String, inputs: [String], output: String, options: [OptionSetting]) {
        self.step = step
        self.line = line
        self.verb = verb
        self.inputs = inputs
        self.output = output
        self.options = options
    }

    /// The file that stands for the job's output in the ledger and in the
    /// checks after a run: the output, or a split's first part (`{n}` = 1).
    public var firstOutput: String { output.replacing("{n}", with: "1") }

    /// The arguments after the verb: inputs, output, options.
    public var arguments: [String] {
        files + options.flatMap(\.arguments)
    }

    /// The file arguments: inputs, then the output where the verb takes it.
    public var files: [String] { (passesInputs ? inputs : []) + (passesOutput ? [output] : []) }

    /// What the options say, independent of file names: a stable digest of
    /// the verb and option arguments (FNV-1a, 64 bits, hex).
    public var optionsDigest: String {
        Digest.fnv1a(([verb] + options.flatMap(\.arguments)).joined(separator: "\u{0}"))
    }

    /// How people read the job: `merge rec/a.mp4 + rec/a.m4a → out/a.mp4`.
    public var title: String {
        "\(verb) \(inputs.map(Paths.display).joined(separator: " + ")) → \(Paths.display(output))"
    }
}

enum Digest {
    static func fnv1a(_ text: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 {
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        let hex = String(h, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// Why a recipe cannot be expanded: each missing input or clash, with its line.
public struct ExpansionError: Error, CustomStringConvertible {
    public var problems: [RecipeError]
    /// The jobs that did expand (their options are still worth checking).
    public var jobs: [Job] = []
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

extension Recipe {
    /// Expands globs, pairs and templates into jobs, relative paths resolved
    /// against `base`. All problems are collected: inputs that match nothing,
    /// merge videos without their audio, unknown template fields, and two jobs
    /// writing one output.
    public func jobs(base: String) throws(ExpansionError) -> [Job] {
        var jobs: [Job] = []
        var problems: [RecipeError] = []
        func problem(_ line: Int, _ message: String) { problems.append(RecipeError(file: file, line: line, message)) }

        for step in steps {
            var options = Self.combine(defaults[step.verb] ?? [], step.options)
            // Files an option names are found where the recipe's inputs are.
            for k in options.indices where Self.fileOptions.contains(options[k].name) {
                options[k].values = options[k].values?.map { Paths.join(base, $0) }
            }
            func make(_ inputs: [String], _ fields: [String: String]) {
                var fields = fields
                if step.verb == "split" {
                    // The part number is the verb's to fill, one file per part.
                    guard step.output.text.contains("{n}") else {
                        problem(step.output.line, "split's output '\(step.output.text)' has no {n} for the part number")
                        return
                    }
                    fields["n"] = "{n}"
                }
                do {
                    let out = try Template.fill(step.output.text, fields)
                    jobs.append(Job(step: step.number, line: step.line, verb: step.verb, inputs: inputs,
                                    output: Paths.join(base, out), options: options))
                } catch {
                    problem(step.output.line, "\(error) in output '\(step.output.text)'")
                }
            }
            switch step.verb {
            case "merge":
                guard let video = step.video, let audio = step.audio else { continue }
                guard let pairs = pair(video: video, audio: audio, base: base, problem: problem) else { continue }
                for (name, v, a) in pairs {
                    var fields = Template.fields(of: v, base: base)
                    fields["name"] = name
                    make([v, a], fields)
                }
            case "concat":
                var segments: [String] = []
                for p in step.inputs {
                    let found = Glob.match(Paths.join(base, p.text))
                    if found.isEmpty { problem(p.line, "no file matches '\(p.text)'") }
                    segments += found
                }
                if segments.count == 1 { problem(step.line, "concat needs at least two segments; the inputs give one") }
                guard segments.count >= 2 else { continue }
                make(segments, Template.fields(of: segments[0], base: base))
            default:
                for p in step.inputs {
                    let found = Glob.match(Paths.join(base, p.text))
                    if found.isEmpty { problem(p.line, "no file matches '\(p.text)'") }
                    for f in found { make([f], Template.fields(of: f, base: base)) }
                }
            }
        }

        // One output, one job; and no job may write over another's input.
        var writer: [String: Job] = [:]
        for job in jobs {
            if let other = writer[job.output] {
                problem(job.line, "two jobs write '\(Paths.display(job.output))': \(other.title) (step \(other.step)) and \(job.title) (step \(job.step))")
            }
            writer[job.output] = job
        }
        for job in jobs {
            for input in job.inputs where writer[input] != nil {
                problem(job.line, "'\(Paths.display(input))' is both an input of \(job.title) and an output of step \(writer[input]!.step)")
            }
        }
        guard problems.isEmpty else { throw ExpansionError(problems: problems, jobs: jobs) }
        return jobs
    }

    /// For each step numbered in `numbers` (1-based), a job of its
    /// patterns as written, unexpanded: what the verb's own checks of the
    /// step's options need when its inputs match nothing yet.
    public func standIns(for numbers: Set<Int>, base: String) -> [Job] {
        steps.compactMap { step -> Job? in
            guard numbers.contains(step.number) else { return nil }
            let inputs = step.verb == "merge" ? [step.video, step.audio].compactMap { $0?.text } : step.inputs.map(\.text)
            return Job(step: step.number, line: step.line, verb: step.verb, inputs: inputs.map { Paths.join(base, $0) },
                       output: Paths.join(base, step.output.text), options: Self.combine(defaults[step.verb] ?? [], step.options))
        }
    }

    /// Defaults first, then the step's settings; a name the step sets
    /// replaces the default.
    /// Options whose values are files, resolved against the recipe's base like its inputs.
    static let fileOptions: Set<String> = ["reference"]

    static func combine(_ defaults: [OptionSetting], _ own: [OptionSetting]) -> [OptionSetting] {
        let names = Set(own.map(\.name))
        return defaults.filter { !names.contains($0.name) } + own
    }

    /// Merge pairs: every file matching `video` with `{name}` as a wildcard,
    /// and the `audio` path with the same name.
    private func pair(video: Pattern, audio: Pattern, base: String,
                      problem: (Int, String) -> Void) -> [(String, String, String)]? {
        let parts = video.text.components(separatedBy: "{name}")
        guard parts.count == 2 else {
            if parts.count == 1, audio.text.contains("{name}") {
                problem(video.line, "'video' has no {name} to pair with 'audio' (e.g. rec/{name}.mp4)")
                return nil
            }
            if parts.count == 1 {
                // One explicit pair.
                let v = Paths.join(base, video.text), a = Paths.join(base, audio.text)
                var ok = true
                if !Paths.exists(v) { problem(video.line, "no file '\(video.text)'"); ok = false }
                if !Paths.exists(a) { problem(audio.line, "no file '\(audio.text)'"); ok = false }
                return ok ? [(Template.fields(of: v, base: base)["stem"] ?? "", v, a)] : nil
            }
            problem(video.line, "'video' may hold {name} only once")
            return nil
        }
        guard audio.text.contains("{name}") else {
            problem(audio.line, "'audio' needs {name} to pair with 'video' (e.g. rec/{name}.m4a)")
            return nil
        }
        // The literal part before {name}, joined to the base but keeping a trailing slash.
        var prefix = Paths.join(base, parts[0].isEmpty ? "." : parts[0])
        if parts[0].isEmpty || parts[0].hasSuffix("/") {
            prefix = prefix == "." ? "" : prefix == "/" ? "/" : prefix + "/"
        }
        let suffix = parts[1]
        let found = Glob.match(prefix + "*" + suffix)
        if found.isEmpty { problem(video.line, "no file matches '\(video.text)'") }
        var out: [(String, String, String)] = []
        for v in found {
            // The wildcard matched exactly the name between the literal parts,
            // unless the parts hold wildcards themselves.
            guard v.hasPrefix(prefix), v.hasSuffix(suffix), v.count >= prefix.count + suffix.count else { continue }
            let name = String(v.dropFirst(prefix.count).dropLast(suffix.count))
            guard !name.isEmpty, !name.contains("/") else { continue }
            let a = Paths.join(base, audio.text.replacing("{name}", with: name))
            if Paths.exists(a) {
                out.append((name, v, a))
            } else {
                problem(audio.line, "no audio '\(Paths.display(a))' for the video '\(Paths.display(v))'")
            }
        }
        return out
    }
}

/// `{dir}`, `{stem}`, `{ext}` and `{name}` in output templates.
enum Template {
    struct UnknownField: Error, CustomStringConvertible {
        var field: String
        var description: String { "unknown field {\(field)} (known: {dir}, {stem}, {ext}, and {name} for merge)" }
    }

    /// The fields of an input: its directory as the recipe named it (relative
    /// to the base when under it), its name without extension, its extension.
    static func fields(of path: String, base: String) -> [String: String] {
        let rel = Paths.relative(path, to: base)
        let slash = rel.lastIndex(of: "/")
        let dir = slash.map { String(rel[..<$0]) } ?? "."
        let file = slash.map { String(rel[rel.index(after: $0)...]) } ?? rel
        let dot = file.lastIndex(of: ".").flatMap { $0 == file.startIndex ? nil : $0 }
        return [
            "dir": dir,
            "stem": dot.map { String(file[..<$0]) } ?? file,
            "ext": dot.map { String(file[file.index(after: $0)...]) } ?? "",
        ]
    }

    static func fill(_ template: String, _ fields: [String: String]) throws -> String {
        var out = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            out += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else { out += rest[open...]; return out }
            let field = String(rest[rest.index(after: open)..<close])
            guard let value = fields[field] else { throw UnknownField(field: field) }
            out += value
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }
}

/// Sorted glob matches (`*`, `?`, `[…]`, `{a,b}`; `**` as a whole path
/// component matches any depth of folders, none included, as bash's
/// `globstar` does); a path without wildcards matches itself if it exists.
/// Hidden files and folders (a leading dot) are matched only by a pattern
/// that names the dot.
enum Glob {
    static func match(_ pattern: String) -> [String] {
        Set(expand(pattern)).filter { Paths.isFile($0) }.sorted()
    }

    /// What `pattern` names, files and folders, `**` expanded.
    private static func expand(_ pattern: String) -> [String] {
        let parts = pattern.split(separator: "/", omittingEmptySubsequences: false)
        guard let k = parts.firstIndex(of: "**") else { return plain(pattern) }
        let head = parts[..<k].joined(separator: "/")
        let tail = k + 1 < parts.count ? parts[(k + 1)...].joined(separator: "/") : "*"
        var out: [String] = []
        for root in head.isEmpty ? ["/"] : plain(head) where Paths.isDirectory(root) {
            for folder in folders(under: root) {
                out += expand((folder.hasSuffix("/") ? folder : folder + "/") + tail)
            }
        }
        return out
    }

    /// glob(3) with braces.
    private static func plain(_ pattern: String) -> [String] {
        var g = glob_t()
        defer { globfree(&g) }
        guard pattern.withFileSystemPath({ glob($0, GLOB_BRACE, nil, &g) }) == 0 else { return [] }
        return (0..<Int(g.gl_pathc)).compactMap { i in g.gl_pathv[i].map { FileName.text(cString: $0) } }
    }

    /// How many folders a `**` walks at most, and files `filesNamed` counts.
    static let walkLimit = 100_000

    /// `root` and every folder below it (not hidden, symbolic links not
    /// followed), except those in `skipping` and what is below them.
    static func folders(under root: String, skipping: Set<String> = []) -> [String] {
        var out = [root], next = 0
        while next < out.count, out.count < walkLimit {
            out += entries(of: out[next]).filter { $0.isFolder && !skipping.contains(Paths.normalize($0.path)) }.map(\.path)
            next += 1
        }
        return out
    }

    /// Files below `root` (any depth, not hidden, not in `skipping`) whose name matches `name` (fnmatch).
    static func filesNamed(_ name: String, under root: String, skipping: Set<String>) -> Int {
        var count = 0
        for folder in folders(under: root, skipping: skipping) {
            count += entries(of: folder).filter { !$0.isFolder && fnmatch(name, $0.name, 0) == 0 && Paths.isFile($0.path) }.count
        }
        return count
    }

    private static func entries(of folder: String) -> [(path: String, name: String, isFolder: Bool)] {
        guard let dir = folder.withFileSystemPath({ opendir($0) }) else { return [] }
        defer { closedir(dir) }
        var out: [(path: String, name: String, isFolder: Bool)] = []
        while let e = readdir(dir) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { FileName.text($0.prefix { $0 != 0 }) }
            guard !name.hasPrefix(".") else { continue }
            let path = (folder.hasSuffix("/") ? folder : folder + "/") + name
            out.append((path, name, FileSystem.linkStatus(path).map { ($0.st_mode & S_IFMT) == S_IFDIR } ?? false))
        }
        return out
    }
}

extension Recipe {
    /// Warnings for input patterns that match far fewer files than lie
    /// below their folder with a name like theirs (`library/*` when the
    /// files are in subfolders): the count, and the `**` pattern that takes
    /// them. The folders `outputs` go to are not counted (a rerun's outputs
    /// are not inputs left out).
    public func sparsePatterns(base: String, outputs: [String]) -> [RecipeError] {
        let written = Set(outputs.map { Paths.normalize(Paths.directory(of: $0)) })
        var out: [RecipeError] = []
        for step in steps {
            for p in step.inputs + [step.video, step.audio].compactMap({ $0 }) where !p.text.contains("**") {
                let full = Paths.join(base, p.text)
                let parts = full.split(separator: "/", omittingEmptySubsequences: false)
                guard let last = parts.last, let wild = parts.firstIndex(where: { $0.contains(where: { "*?[{".contains($0) }) }) else { continue }
                let root = wild == 0 ? "/" : parts[..<wild].joined(separator: "/")
                let matched = Glob.match(full).count
                let named = Glob.filesNamed(String(last), under: root.isEmpty ? "/" : root, skipping: written)
                guard named > 2 * matched, named - matched >= 2 else { continue }
                let rel = Paths.relative(root, to: base)
                out.append(RecipeError(file: file, line: p.line,
                    "'\(p.text)' matches \(matched) file(s), but \(named) files named like '\(last)' lie in '\(rel)' and its subfolders: '**' takes every depth ('\(rel)/**/\(last)')"))
            }
        }
        return out
    }
}
