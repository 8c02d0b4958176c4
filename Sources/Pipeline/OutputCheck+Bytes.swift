import FileAccess
import FileNames
import Glibc
import Media

extension OutputCheck {
    /// Checks that track `track` (its place in the index) of the MP4/MOV file
    /// at `path` (called `name` in errors) holds exactly the bytes of the
    /// file at `source` that lie in `pieces`, in order: a track rebuilt from
    /// another file's bytes (repair's PCM) compared with the bytes it came
    /// from, read back from both files a block at a time.
    public static func verify(path: String, name: String, track: Int, holds pieces: [Range<Int64>],
                              of source: String) throws(MediaError) {
        guard let index = SourceIndex(path: path), track < index.tracks.count, let chunks = index.tracks[track].chunks else {
            throw mismatch(name, track, "its index could not be read back")
        }
        let written = chunks.map { $0.offset..<($0.offset + $0.bytes) }.filter { !$0.isEmpty }
        let want = pieces.reduce(Int64(0)) { $0 + Int64($1.count) }, got = written.reduce(Int64(0)) { $0 + Int64($1.count) }
        guard want == got else {
            throw mismatch(name, track, "it holds \(got) bytes where \(want) were taken from \(quoted(source))")
        }
        guard let out = try? OpenFile(path: path, O_RDONLY), let input = try? OpenFile(path: source, O_RDONLY) else {
            throw mismatch(name, track, "its bytes could not be read back")
        }
        var a = Cursor(ranges: written), b = Cursor(ranges: pieces)
        var at: Int64 = 0
        while let x = a.place, let y = b.place {
            let n = Int(min(x.left, y.left, 1 << 20))
            guard let w = try? out.read(n, at: x.offset), let s = try? input.read(n, at: y.offset), w.count == n, s.count == n else {
                throw mismatch(name, track, "its bytes could not be read back")
            }
            if w != s {
                throw mismatch(name, track, "its bytes from byte \(at) of the track are not those at byte \(y.offset) of \(quoted(source)) they were taken from")
            }
            a.advance(Int64(n))
            b.advance(Int64(n))
            at += Int64(n)
        }
    }

    /// A place in a list of byte ranges read in order.
    private struct Cursor {
        let ranges: [Range<Int64>]
        var range = 0, into: Int64 = 0

        /// The file offset reached, and the bytes left in its range; nil at the end.
        var place: (offset: Int64, left: Int64)? {
            guard range < ranges.count else { return nil }
            return (ranges[range].lowerBound + into, Int64(ranges[range].count) - into)
        }

        mutating func advance(_ n: Int64) {
            into += n
            while range < ranges.count, into >= Int64(ranges[range].count) {
                into -= Int64(ranges[range].count)
                range += 1
            }
        }
    }
}
