import Foundation
import Testing

/// The result of running a program.
struct Run: CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String
    let data: Data

    var description: String { "exit \(status)\nstdout: \(stdout.prefix(2000))\nstderr: \(stderr.prefix(2000))" }
}

enum Tool {
    static let repo: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The avtool binary beside this test bundle (same build), or `AVTOOL_BIN`.
    static let avtool: String = {
        if let p = ProcessInfo.processInfo.environment["AVTOOL_BIN"] { return p }
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        // The test bundle is `<build>/avtoolPackageTests.xctest` (a file) on Linux.
        for _ in 0..<3 {
            let candidate = dir.appendingPathComponent("avtool").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return repo.appendingPathComponent(".build/debug/avtool").path
    }()

    /// Whether avtool runs under AddressSanitizer (scripts/sanitize.sh): its
    /// quarantine keeps freed memory and its shadow adds more, so a peak
    /// resident size then says nothing about the program's own memory.
    static let peakMemoryIsMeaningful: Bool = ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil

    @discardableResult
    static func run(_ executable: String, _ arguments: [String], stdin: FileHandle? = nil,
                    environment: [String: String]? = nil) throws -> Run {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : "/usr/bin/env")
        p.arguments = executable.hasPrefix("/") ? arguments : [executable] + arguments
        if let environment { p.environment = environment }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = stdin ?? FileHandle.nullDevice
        try p.run()
        // Read both pipes concurrently so a chatty child cannot block.
        nonisolated(unsafe) var errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        p.waitUntilExit()
        return Run(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                   stderr: String(decoding: errData, as: UTF8.self), data: outData)
    }

    static func avtool(_ arguments: String...) throws -> Run { try run(avtool, arguments) }
    static func avtool(_ arguments: [String]) throws -> Run { try run(avtool, arguments) }
}

/// A fresh directory per test, removed afterwards.
final class Scratch {
    let url: URL
    /// In the temporary directory, or under `base` (a tmpfs, say).
    init(under base: URL? = nil) throws {
        url = (base ?? FileManager.default.temporaryDirectory).appendingPathComponent("avtool-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    /// Everything in the directory, hidden files included (temporaries).
    var contents: [String] { (try? FileManager.default.contentsOfDirectory(atPath: url.path))?.sorted() ?? [] }
}

func sha256(_ path: String) throws -> String {
    try Tool.run("sha256sum", [path]).stdout.split(separator: " ").first.map(String.init) ?? ""
}

func fileExists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

extension FileManager {
    func isDirectory(_ path: String) -> Bool {
        var isDir: ObjCBool = false
        return fileExists(atPath: path, isDirectory: &isDir) && isDir.boolValue
    }
}
