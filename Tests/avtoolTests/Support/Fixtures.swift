import Foundation
import Testing

/// The generated sample files (`Tests/Fixtures/make-fixtures.sh`, cached in
/// `.fixtures/`) and the real recordings (`get-real-media.sh`, cached in
/// `.real-media/`). Both are made on first use.
enum Fixtures {
    static let directory: URL = {
        if let d = ProcessInfo.processInfo.environment["AVTOOL_FIXTURES"] { return URL(fileURLWithPath: d) }
        return Tool.repo.appendingPathComponent(".fixtures")
    }()

    /// Runs the generator once per test process (it returns at once when cached).
    private static let generated: Result<Void, FixtureError> = {
        let script = Tool.repo.appendingPathComponent("Tests/Fixtures/make-fixtures.sh").path
        guard let r = try? Tool.run(script, [directory.path]), r.status == 0 else {
            return .failure(FixtureError(message: "make-fixtures.sh failed"))
        }
        return .success(())
    }()

    static func path(_ name: String) throws -> String {
        try generated.get()
        let p = directory.appendingPathComponent(name).path
        guard fileExists(p) else { throw FixtureError(message: "fixture \(name) missing") }
        return p
    }

    static let realDirectory: URL = {
        if let d = ProcessInfo.processInfo.environment["AVTOOL_REAL_MEDIA"] { return URL(fileURLWithPath: d) }
        return Tool.repo.appendingPathComponent(".real-media")
    }()

    private static let fetchedReal: Result<Void, FixtureError> = {
        if fileExists(realDirectory.appendingPathComponent(".complete").path) { return .success(()) }
        let script = Tool.repo.deletingLastPathComponent().appendingPathComponent("shared/media/get-real-media.sh").path
        let local = Tool.repo.appendingPathComponent("Tests/Fixtures/get-real-media.sh").path
        let use = fileExists(local) ? local : script
        guard let r = try? Tool.run(use, [realDirectory.path]), r.status == 0 else {
            return .failure(FixtureError(message: "could not fetch real media into \(realDirectory.path)"))
        }
        return .success(())
    }()

    /// The sample folders the example recipes expect (`recipes/make-samples.sh`), in `scratch`.
    static func batchSamples(in scratch: Scratch) throws {
        _ = try path("clicks_video.mp4")
        let r = try Tool.run(Tool.repo.appendingPathComponent("recipes/make-samples.sh").path,
                             [scratch.url.path, directory.path])
        try #require(r.status == 0, "\(r)")
    }

    /// A device recording kept in the repository (`Tests/Fixtures/devices`, with its licence).
    static func device(_ name: String) throws -> String {
        let p = Tool.repo.appendingPathComponent("Tests/Fixtures/devices").appendingPathComponent(name).path
        guard fileExists(p) else { throw FixtureError(message: "device recording \(name) missing") }
        return p
    }

    /// A real recording from a phone, camera, browser or app kept in the repository
    /// (`Tests/Fixtures/wild`, with its source and licence).
    static func wild(_ name: String) throws -> String {
        let p = Tool.repo.appendingPathComponent("Tests/Fixtures/wild").appendingPathComponent(name).path
        guard fileExists(p) else { throw FixtureError(message: "real recording \(name) missing") }
        return p
    }

    static func real(_ name: String) throws -> String {
        try fetchedReal.get()
        let p = realDirectory.appendingPathComponent(name).path
        guard fileExists(p) else { throw FixtureError(message: "real media \(name) missing") }
        return p
    }
}

struct FixtureError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
