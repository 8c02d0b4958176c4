import FileAccess
import Foundation
import Glibc
import Testing

/// The file-access seam on real files: a recording read, copied by the
/// kernel in pieces and reserved; failures typed by errno, call and the
/// name the caller reports; a link never followed below a held directory;
/// an unnamed file linked under its name.
@Suite("FileAccess")
struct OpenFileTests {
    /// The repository, from this file's place in it (Tests/FileAccessTests/OpenFileTests.swift).
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let recording = repo.appendingPathComponent("Tests/Fixtures/wild/ios_voicememos_2021.m4a").path

    /// A new directory of this test's own, removed by `body`'s end.
    static func inScratch(_ body: (String) throws -> Void) throws {
        let dir = NSTemporaryDirectory() + "avtool-fileaccess-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try body(dir)
    }

    @Test func aRecordingIsReadAndCopiedWhole() throws {
        let expected = try #require(FileManager.default.contents(atPath: Self.recording))
        let source = try OpenFile(path: Self.recording, O_RDONLY)
        let size = try source.size()
        #expect(size == Int64(expected.count))
        // Asked past the end: what there is.
        #expect(try Data(source.read(Int(size) + 100, at: 0)) == expected)
        #expect(try source.read(8, at: size).isEmpty)
        try Self.inScratch { dir in
            let out = try OpenFile(path: dir + "/copy.m4a", O_RDWR | O_CREAT | O_EXCL, mode: 0o600)
            // Reserved, the size kept (where the filesystem reserves at all).
            do throws(FileError) { try out.reserve(size) } catch { #expect(error.code == EOPNOTSUPP, "\(error)") }
            #expect(try out.size() == 0)
            // In pieces of an odd length, each at its place; none past the end.
            var at: Int64 = 0
            while at < size {
                let n = try source.copy(Int(min(size - at, 3001)), at: at, to: out, at: at)
                #expect(n > 0)
                at += Int64(n)
            }
            #expect(try source.copy(10, at: size, to: out, at: size) == 0)
            #expect(try Data(out.read(Int(size), at: 0)) == expected)
            // Appended at the position, after a truncation.
            try out.truncate(to: 0)
            try out.append(Array(expected))
            try out.close()
            #expect(FileManager.default.contents(atPath: dir + "/copy.m4a") == expected)
            #expect(try OpenFile.contents(of: dir + "/copy.m4a") == Array(expected))
        }
    }

    @Test func failuresNameTheCallTheFileAndTheErrno() throws {
        do throws(FileError) {
            _ = try OpenFile(path: "/nonexistent-avtool/in.mp4", O_RDONLY, reportingAs: "out.mp4")
            Issue.record("a missing file opened")
        } catch {
            #expect(error == FileError(code: ENOENT, call: "open", path: "out.mp4"))
            #expect(error.description == "open 'out.mp4': No such file or directory")
            #expect(FileError.noSuchFile ~= error)
        }
        try Self.inScratch { dir in
            let written = try OpenFile(path: dir + "/w", O_WRONLY | O_CREAT, mode: 0o600)
            #expect(throws: FileError(code: EBADF, call: "pread", path: dir + "/w")) { try written.read(4, at: 0) }
            // Below a held directory a link is never followed.
            #expect(symlink(Self.recording, dir + "/link") == 0)
            guard let folder = Directory(path: dir) else {
                Issue.record("the directory did not open")
                return
            }
            do throws(FileError) {
                _ = try folder.open(Directory.name("link"), O_RDONLY, reportingAs: "link")
                Issue.record("a link was followed")
            } catch {
                #expect(error == FileError(code: ELOOP, call: "openat", path: "link"))
            }
        }
    }

    @Test func anUnnamedFileTakesItsNameOnlyWhenLinked() throws {
        try Self.inScratch { dir in
            guard let folder = Directory(path: dir) else {
                Issue.record("the directory did not open")
                return
            }
            // (A filesystem without unnamed files says so: the staged output then names its temporary.)
            guard let file = try? OpenFile.unnamed(in: folder.fd, mode: 0o600, reportingAs: "out.mp4") else { return }
            try file.write(Array("ftyp".utf8), at: 4)
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
            let linked = folder.link(path: "/proc/self/fd/\(file.descriptor)", as: Directory.name("out.mp4"))
            #expect(linked)
            #expect(FileManager.default.contents(atPath: dir + "/out.mp4") == Data([0, 0, 0, 0] + Array("ftyp".utf8)))
        }
    }
}
