import Foundation
import Testing

/// The verbs that write a file, with arguments for the fault tests.
enum WritingVerb: String, CaseIterable, CustomTestStringConvertible {
    case remux, transcode, merge, concat, fillSilence = "fill-silence"

    var testDescription: String { rawValue }

    /// The output's extension.
    var outputExtension: String { self == .merge ? "mp4" : "mkv" }

    /// Command-line arguments for `inputs` (from `FaultInputs.copies`) into `output`.
    func arguments(_ inputs: [String], output: String) -> [String] {
        switch self {
        case .transcode: ["transcode", inputs[0], output, "--preset", "ultrafast", "--size", "160x-1"]
        default: [rawValue] + inputs + [output]
        }
    }
}

/// Inputs large enough that a run lasts a while (a 40 s 640x360 lossless
/// H.264 + AAC Matroska file, ~20 MB, and a 40 s AAC .m4a), generated once
/// per test process with the `ffmpeg` program, then copied for each test
/// (tests truncate and replace them).
enum FaultInputs {
    private static let made: Result<URL, FixtureError> = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("avtool-fault-inputs-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let ff = ["-hide_banner", "-loglevel", "error", "-nostdin", "-y"]
        let video = try? Tool.run("ffmpeg", ff + [
            "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration=40",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=40",
            "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", "-g", "50", "-c:a", "aac", "-b:a", "128k",
            dir.appendingPathComponent("big.mkv").path])
        let audio = try? Tool.run("ffmpeg", ff + [
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=40", "-c:a", "aac", "-b:a", "128k",
            dir.appendingPathComponent("big.m4a").path])
        guard video?.status == 0, audio?.status == 0 else {
            return .failure(FixtureError(message: "could not generate the fault inputs: \(video?.stderr ?? "") \(audio?.stderr ?? "")"))
        }
        return .success(dir)
    }()

    /// Fresh copies of the inputs `verb` needs, in `scratch`.
    static func copies(for verb: WritingVerb, in scratch: Scratch) throws -> [String] {
        let dir = try made.get()
        func copy(_ name: String, as target: String) throws -> String {
            let to = scratch.path(target)
            try FileManager.default.copyItem(atPath: dir.appendingPathComponent(name).path, toPath: to)
            return to
        }
        switch verb {
        case .merge: return [try copy("big.mkv", as: "video.mkv"), try copy("big.m4a", as: "audio.m4a")]
        case .concat: return [try copy("big.mkv", as: "part1.mkv"), try copy("big.mkv", as: "part2.mkv")]
        default: return [try copy("big.mkv", as: "input.mkv")]
        }
    }

    /// The input a fault is applied to while it is being read: the last one
    /// (read last, so never finished before the fault).
    static func victim(_ inputs: [String], verb: WritingVerb) -> String {
        verb == .merge ? inputs[0] : inputs[inputs.count - 1]
    }
}

/// A running avtool.
final class Running {
    let process = Process()
    private let errPipe = Pipe()
    private let outPipe = Pipe()

    /// With named temporaries (the fallback for filesystems without unnamed
    /// files), so a test can see the output staged and stop it there.
    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: Tool.avtool)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["AVTOOL_NAMED_TEMPORARIES": "1"]) { $1 }
        process.standardError = errPipe
        process.standardOutput = outPipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// Waits until a staged temporary (`.NAME.avtool-XXXXXX`) appears in
    /// `directory`, then stops the process (SIGSTOP) so a fault can be
    /// applied at that point: inputs open, output staged, reading under way.
    /// Returns false if the process ended first.
    func stopWhenStaged(in directory: String, output: String) -> Bool {
        let prefix = "." + (output as NSString).lastPathComponent + ".avtool-"
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let names = try? FileManager.default.contentsOfDirectory(atPath: directory),
               names.contains(where: { $0.hasPrefix(prefix) }) {
                kill(pid, SIGSTOP)
                return true
            }
            if !process.isRunning { return false }
            usleep(500)
        }
        return false
    }

    func resume() { kill(pid, SIGCONT) }

    /// Waits for the end; returns status and stderr.
    func finish() -> (status: Int32, stderr: String) {
        let err = errPipe.fileHandleForReading.readDataToEndOfFile()
        _ = outPipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: err, as: UTF8.self))
    }
}

/// A size-limited tmpfs mounted for one test (needs root and mount(8));
/// unmounted when dropped.
final class SmallFilesystem {
    let path: String
    /// Kept so the directory holding the mount point outlives the mount.
    private let scratch: Scratch

    /// Mounts a tmpfs of `size` (mount's syntax: 256k, 2m) at a new
    /// directory inside `scratch`, read-only if asked; skips the test with the
    /// reason when that is impossible here.
    init(size: String, readOnly: Bool = false, in scratch: Scratch, name: String = "fs") throws {
        path = scratch.path(name)
        self.scratch = scratch
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard getuid() == 0 else { try Test.cancel("needs root to mount a size-limited tmpfs") }
        let r = try Tool.run("mount", ["-t", "tmpfs", "-o", "size=\(size),mode=0755" + (readOnly ? ",ro" : ""), "tmpfs", path])
        guard r.status == 0 else { try Test.cancel("could not mount a tmpfs here: \(r.stderr)") }
    }

    deinit { _ = try? Tool.run("umount", ["-l", path]) }

    func file(_ name: String) -> String { path + "/" + name }

    var contents: [String] { (try? FileManager.default.contentsOfDirectory(atPath: path))?.sorted() ?? [] }
}
