import Foundation
import Testing

/// `scripts/install.sh` into a temporary prefix: the installed binary runs
/// (and says which libraries it runs on), `man -l` renders its manual, the
/// bash completion completes verbs, file names and `--preset` values, and
/// `--uninstall` removes every file it put there.
@Suite("install")
struct InstallTests {
    /// COMPREPLY for `line` (completing its last word), from the installed bash completion.
    static func complete(_ line: String, prefix: String, in directory: String) throws -> [String] {
        let words = line.split(separator: " ", omittingEmptySubsequences: false).map { "'\($0)'" }
        let script = """
            cd '\(directory)'
            source '\(prefix)/share/bash-completion/completions/avtool'
            COMP_WORDS=(\(words.joined(separator: " "))); COMP_CWORD=\(words.count - 1)
            COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}
            _avtool avtool "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        var env = ProcessInfo.processInfo.environment
        env["PATH"] = "\(prefix)/bin:" + (env["PATH"] ?? "/usr/bin:/bin")
        let r = try Tool.run("/bin/bash", ["-c", script], environment: env)
        try #require(r.status == 0, "\(r)")
        return r.stdout.split(separator: "\n").map(String.init)
    }

    @Test func installRunUninstall() throws {
        let scratch = try Scratch()
        let prefix = scratch.path("prefix")
        let install = try Tool.run(Tool.repo.appendingPathComponent("scripts/install.sh").path, [prefix])
        try #require(install.status == 0, "\(install)")
        let bin = prefix + "/bin/avtool"

        // The installed binary: its version names the libraries and the commit, and it works.
        let version = try Tool.run(bin, ["--version"])
        #expect(version.status == 0)
        for text in ["avtool ", "commit ", "FFmpeg ", "libavformat ", "libavcodec ", "x265 ", "Swift "] {
            #expect(version.stdout.contains(text), "\(version.stdout)")
        }
        let out = scratch.path("out.mkv")
        let remux = try Tool.run(bin, ["remux", try Fixtures.path("h264_bframes_2997_aac48_stereo.mp4"), out])
        #expect(remux.status == 0, "\(remux)")
        #expect(try FFprobe(out).streams.count == 2)
        // It needs no Swift runtime from the toolchain.
        let ldd = try Tool.run("ldd", [bin])
        #expect(!ldd.stdout.contains("libswiftCore"), "\(ldd.stdout)")

        // The manual renders, and documents the verbs.
        let man = try Tool.run("man", ["-l", "-P", "cat", prefix + "/share/man/man1/avtool.1"],
                               environment: ["MANWIDTH": "100", "PATH": "/usr/bin:/bin"])
        #expect(man.status == 0, "\(man)")
        for verb in ["SYNOPSIS", "remux", "transcode", "merge", "cut", "batch"] {
            #expect(man.stdout.contains(verb), "manual lacks \(verb)")
        }

        // Completion: verbs, enumerated values, file names.
        let files = scratch.path("clips")
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: files + "/clip-one.mov", contents: Data()))
        let verbs = try Self.complete("avtool re", prefix: prefix, in: files)
        #expect(Set(verbs) == ["remux", "repair"], "\(verbs)")
        #expect(try Self.complete("avtool transcode --preset ultra", prefix: prefix, in: files) == ["ultrafast"])
        #expect(try Self.complete("avtool merge --end sh", prefix: prefix, in: files) == ["shortest"])
        #expect(try Self.complete("avtool remux clip", prefix: prefix, in: files).contains("clip-one.mov"))
        for path in ["share/zsh/site-functions/_avtool", "share/fish/vendor_completions.d/avtool.fish"] {
            #expect(FileManager.default.fileExists(atPath: prefix + "/" + path), "\(path)")
        }

        let uninstall = try Tool.run(Tool.repo.appendingPathComponent("scripts/install.sh").path, ["--uninstall", prefix])
        #expect(uninstall.status == 0, "\(uninstall)")
        let left = FileManager.default.enumerator(atPath: prefix)?.compactMap { $0 as? String }
            .filter { !FileManager.default.isDirectory(prefix + "/" + $0) } ?? []
        #expect(left.isEmpty, "left behind: \(left)")
    }
}
