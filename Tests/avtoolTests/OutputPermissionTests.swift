import Foundation
import Testing

/// The finished output gets ordinary permissions (the umask's), not the
/// private mode of its temporary; a replaced file keeps its own mode.
@Suite("output permissions")
struct OutputPermissionTests {
    func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    @Test func newAndReplacedOutputs() throws {
        let scratch = try Scratch()
        let input = try Fixtures.path("aac48_stereo.m4a")
        let out = scratch.path("out.mkv")
        let mask = umask(0)
        umask(mask)
        #expect(try Tool.avtool("remux", input, out, "-q").status == 0)
        #expect(try mode(out) == 0o666 & ~Int(mask))
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: out)
        #expect(try Tool.avtool("remux", input, out, "-q", "-y").status == 0)
        #expect(try mode(out) == 0o640)
    }
}
