import Foundation
import Testing

/// Files that name other files or URLs to read — concat lists, HLS
/// playlists — whatever their extension. One that names itself used to open
/// itself until the process ran out of file descriptors (or, with a high
/// limit, out of stack: a crash); one that names an unreachable host hung
/// avtool on the network. They are refused at once, naming the format.
@Suite("inputs that refer to other files")
struct ReferencingInputTests {
    @Test(arguments: [
        ("loop.ffconcat", "ffconcat version 1.0\nfile loop.ffconcat\n", "(concat)"),
        ("loop.mp4", "ffconcat version 1.0\nfile loop.mp4\n", "(concat)"),
        ("loop.m3u8", "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nloop.m3u8\n", "(hls)"),
        ("remote.mov", "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nhttp://10.255.255.1/a.ts\n", "(hls)"),
    ])
    func refusedAtOnce(name: String, content: String, format: String) throws {
        let scratch = try Scratch()
        let input = scratch.path(name)
        try Data(content.utf8).write(to: URL(fileURLWithPath: input))
        for args in [["probe", input], ["remux", input, scratch.path("out.mkv")], ["fill-silence", input, scratch.path("out.mkv")]] {
            let started = Date()
            let r = try Tool.avtool(args)
            #expect(Date().timeIntervalSince(started) < 10, "\(args[0]) took too long")
            #expect(r.status == 1, "\(r)")
            #expect(r.stderr.contains("'\(input)'") && r.stderr.contains(format)
                    && r.stderr.contains("which names other files or URLs to read"), "\(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1)
            #expect(scratch.contents == [name], "left behind: \(scratch.contents)")
        }
    }
}
