import Foundation
import Testing

/// A real recording given a crafted index — boxes nested 100,000 deep, or a
/// sample table that declares 2^32-1 entries in a file of a few hundred
/// kilobytes — is refused as damaged by every verb: exit 1, one line, no
/// signal, little memory, little time (issue 47).
@Suite("crafted index")
struct CraftedIndexTests {
    /// An iPad recording whose index (`moov`) is its last box.
    static let source = "ipad2_ios5_h264_rot180.mov"

    enum Shape: String, CaseIterable, CustomStringConvertible {
        /// 100,000 `trak` boxes, each inside the one before, at the end of the `moov`.
        case nested
        /// Every track's `stsz` (sample sizes), `stco` (chunk offsets) or `stts` (durations) says 2^32-1 entries.
        case stsz, stco, stts
        /// Every `stsz` says its 2^32-1 samples are all of one size (1,000 bytes): more than the chunks hold.
        case stszOneSize
        var description: String { rawValue }
    }

    static func u32(_ b: [UInt8], _ at: Int) -> Int {
        Int(b[at]) << 24 | Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3])
    }

    static func put32(_ b: inout [UInt8], _ at: Int, _ v: Int) {
        for k in 0..<4 { b[at + k] = UInt8((v >> (24 - 8 * k)) & 0xFF) }
    }

    /// (start, size, type) of each box in `range`, descending into the boxes that hold the sample tables.
    static func boxes(_ b: [UInt8], _ range: Range<Int>, descending: Bool = true) -> [(start: Int, size: Int, type: String)] {
        var out: [(Int, Int, String)] = []
        var at = range.lowerBound
        while at + 8 <= range.upperBound {
            let size = u32(b, at), type = String(decoding: b[(at + 4)..<(at + 8)], as: UTF8.self)
            guard size >= 8, at + size <= range.upperBound else { break }
            out.append((at, size, type))
            if descending, ["moov", "trak", "mdia", "minf", "stbl"].contains(type) { out += boxes(b, (at + 8)..<(at + size)) }
            at += size
        }
        return out
    }

    static func crafted(_ shape: Shape) throws -> [UInt8] {
        var b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try Fixtures.wild(source))))
        let all = boxes(b, 0..<b.count)
        let moov = try #require(all.first { $0.type == "moov" })
        try #require(moov.start + moov.size == b.count, "the moov is not the last box")
        switch shape {
        case .nested:
            let depth = 100_000
            put32(&b, moov.start, moov.size + 8 * depth)
            b.reserveCapacity(b.count + 8 * depth)
            for k in 0..<depth {
                b += [0, 0, 0, 0] + Array("trak".utf8)
                put32(&b, b.count - 8, 8 * (depth - k))
            }
        case .stsz, .stco, .stts:
            let tables = all.filter { $0.type == shape.rawValue }
            try #require(!tables.isEmpty)
            // The count follows version and flags (and, in an stsz, the size all samples share).
            for t in tables { put32(&b, t.start + 8 + (shape == .stsz ? 8 : 4), 0xFFFF_FFFF) }
        case .stszOneSize:
            for t in all where t.type == "stsz" {
                put32(&b, t.start + 12, 1000)
                put32(&b, t.start + 16, 0xFFFF_FFFF)
            }
        }
        return b
    }

    /// Every verb on `input`, with where each writes.
    static func verbs(_ input: String, bare: String, _ s: Scratch) -> [[String]] {
        [["probe", input],
         ["remux", input, s.path("remux.mov")],
         ["remux", "--no-bulk", input, s.path("nobulk.mov")],
         ["repair", input, s.path("repair.mov")],
         ["repair", bare, s.path("byref.mov"), "--reference", input],
         ["cut", input, s.path("cut.mov"), "--from", "1"],
         ["fill-silence", input, s.path("fill.mov")],
         ["transcode", input, s.path("transcode.mov"), "--preset", "ultrafast"]]
    }

    @Test(arguments: Shape.allCases)
    func everyVerbRefusesIt(shape: Shape) throws {
        let s = try Scratch()
        let bytes = try Self.crafted(shape)
        let input = s.path("crafted-\(shape).mov")
        try Data(bytes).write(to: URL(fileURLWithPath: input))
        // The same recording without its index, to be rebuilt by the crafted one.
        let moov = try #require(Self.boxes(bytes, 0..<bytes.count, descending: false).first { $0.type == "moov" })
        let bare = s.path("bare.mov")
        try Data(bytes[0..<moov.start]).write(to: URL(fileURLWithPath: bare))
        let before = Set(s.contents)
        for verb in Self.verbs(input, bare: bare, s) {
            let measure = s.path("time.txt")
            let r = try Tool.run("/usr/bin/time", ["-f", "%M %U %S", "-o", measure, Tool.avtool] + verb)
            let figures = try String(contentsOfFile: measure, encoding: .utf8).split(separator: "\n").last?
                .split(separator: " ").compactMap { Double($0) } ?? []
            let context = "\(shape): \(verb[0]) \(verb.dropFirst().filter { $0.hasPrefix("-") }.joined(separator: " "))"
            #expect(r.status == 1, "\(context): \(r)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(context): \(r.stderr)")
            #expect(!r.stderr.contains("Fatal error") && !r.stderr.contains("Command terminated by signal"), "\(context)")
            try #require(figures.count == 3, "\(context): /usr/bin/time said nothing")
            #expect(figures[0] < 100_000, "\(context): peak RSS \(Int(figures[0])) KB")
            #expect(figures[1] + figures[2] < 1, "\(context): \(figures[1] + figures[2]) s of CPU")
            try? FileManager.default.removeItem(atPath: measure)
        }
        #expect(Set(s.contents) == before, "left behind: \(Set(s.contents).subtracting(before))")
    }

    /// A phone's fragmented recording (KDDI, 3GPP2) whose fragment disagrees
    /// with the rest: a `traf` for a track its `moov` does not declare, or a
    /// `trun` whose data runs past its `mdat`. `probe` and `repair` say so in
    /// one line, with the fragment's number and the box. Before: the first
    /// was "not a media file libavformat can read"; the second was called a
    /// recording cut off (324 of 352 packets) and repair wrote an output of it.
    @Test(arguments: ["traf", "trun"])
    func aDamagedFragmentIsNamed(box: String) throws {
        let s = try Scratch()
        var b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try Fixtures.wild("kddi_3g2_aac_2005.3g2"))))
        let moof = try #require(Self.boxes(b, 0..<b.count, descending: false).first { $0.type == "moof" })
        let traf = try #require(Self.boxes(b, (moof.start + 8)..<(moof.start + moof.size), descending: false).first { $0.type == "traf" })
        let inside = Self.boxes(b, (traf.start + 8)..<(traf.start + traf.size), descending: false)
        let fragment = "its index is damaged: its fragment 1 ('moof' at byte \(moof.start))"
        let said: String
        if box == "traf" {
            // The tfhd's track id, after its header, version and flags.
            Self.put32(&b, try #require(inside.first { $0.type == "tfhd" }).start + 12, 2)
            said = "\(fragment) has a 'traf' for track 2, which the 'moov' does not declare (it declares 1)"
        } else {
            // The trun's data offset, after its header, version, flags and sample count: 5,000 bytes later.
            Self.put32(&b, try #require(inside.first { $0.type == "trun" }).start + 16, 5000)
            said = "\(fragment): the 'trun' of track 1 lists data at bytes "
        }
        let input = s.path("damaged.3g2")
        try Data(b).write(to: URL(fileURLWithPath: input))
        let before = Set(s.contents)
        for verb in [["probe", input], ["repair", input, s.path("repaired.3g2")]] {
            let r = try Tool.avtool(verb)
            #expect(r.status == 1, "\(box): \(verb[0]): \(r)")
            #expect(r.stderr.split(separator: "\n").count == 1, "\(box): \(verb[0]): \(r.stderr)")
            #expect(r.stderr.contains("'\(input)': \(said)"), "\(box): \(verb[0]): \(r.stderr)")
        }
        #expect(Set(s.contents) == before, "left behind: \(Set(s.contents).subtracting(before))")
    }
}
