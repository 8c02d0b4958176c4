import Foundation
import ISOBMFF
import Testing

/// The movie-fragment boxes on boxes built byte by byte: each optional
/// field by its flag, the defaults a sample takes (`trun`, else `tfhd`, else
/// `trex`), where a run's data lies without a data offset, signed
/// composition offsets, the 64-bit decode time, and a file cut inside its
/// last fragment seen from the boxes.
@Suite("ISOBMFF movie fragments")
struct FragmentBoxTests {
    static func be(_ v: UInt64, _ n: Int) -> [UInt8] { BoxValueTests.be(v, n) }
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { BoxValueTests.box(type, payload) }

    /// A trex for `track`: description 1, duration `duration`, size `size`, flags `flags`.
    static func trex(_ track: UInt64, duration: UInt64, size: UInt64, flags: UInt64) -> [UInt8] {
        box("trex", [0, 0, 0, 0] + be(track, 4) + be(1, 4) + be(duration, 4) + be(size, 4) + be(flags, 4))
    }

    @Test func trackFragmentHeaderFieldsFollowTheirFlags() throws {
        // default-base-is-moof and a default sample size alone: track id, then the size.
        let bytes = [0, 0x02, 0, 0x10] + Self.be(7, 4) + Self.be(1234, 4)
        var tfhd = try TrackFragmentHeader(parsing: bytes[...], type: "tfhd")
        #expect(tfhd.trackID == 7 && tfhd.defaultSampleSize == 1234 && tfhd.baseDataOffset == nil && tfhd.defaultSampleDuration == nil)
        #expect(tfhd.flags & TrackFragmentHeader.defaultBaseIsMoof != 0 && tfhd.encode() == bytes)
        // A base offset given: its flag set, its 8 bytes before the size; taken away again: the bytes as read.
        tfhd.baseDataOffset = 1 << 40
        #expect(tfhd.encode() == [0, 0x02, 0, 0x11] + Self.be(7, 4) + Self.be(1 << 40, 8) + Self.be(1234, 4))
        tfhd.baseDataOffset = nil
        #expect(tfhd.encode() == bytes)
        #expect(throws: BoxError.fieldsCutShort("tfhd", needs: 12, has: 10)) {
            try TrackFragmentHeader(parsing: bytes.prefix(10), type: "tfhd")
        }
    }

    @Test func trackRunFieldsAndSignedOffsets() throws {
        // Version 1: data offset, sizes and composition offsets (-512 and 1024) of two samples.
        let v1 = [1, 0, 0x0A, 0x01] + Self.be(2, 4) + Self.be(100, 4)
            + Self.be(10, 4) + Self.be(UInt64(UInt32(bitPattern: -512)), 4) + Self.be(20, 4) + Self.be(1024, 4)
        let run = try TrackRun(parsing: v1[...], type: "trun")
        #expect(run.fields == [.size, .compositionOffset] && run.dataOffset == 100 && run.firstSampleFlags == nil)
        #expect(run.entries.map(\.size) == [10, 20] && run.entries.map(\.compositionOffset) == [-512, 1024] && run.encode() == v1)
        // Version 0 read as signed (as libavformat reads it) stays version 0.
        let v0: [UInt8] = [0] + v1.dropFirst()
        let same = try TrackRun(parsing: v0[...], type: "trun")
        #expect(same.entries[0].compositionOffset == -512 && same.encode() == v0)
        // Made with a negative offset, or given one: version 1.
        var built = TrackRun(fields: [.compositionOffset], entries: [TrackRun.Entry(compositionOffset: 5)])
        #expect(built.version == 0)
        built.entries.append(TrackRun.Entry(compositionOffset: -5))
        #expect(built.version == 1 && built.encode()[0] == 1)
        #expect(try TrackRun(parsing: built.encode()[...], type: "trun") == built)
        // No data offset, first-sample flags, no per-sample field: 3 samples of the defaults.
        let bare = [0, 0, 0, 0x04] + Self.be(3, 4) + Self.be(0x0200_0000, 4)
        let defaults = try TrackRun(parsing: bare[...], type: "trun")
        #expect(defaults.dataOffset == nil && defaults.firstSampleFlags == 0x0200_0000 && defaults.entries.count == 3 && defaults.encode() == bare)
        // Counts no bytes back: past the entries the payload holds, or past the limit of a run without fields.
        #expect(throws: BoxError.fieldsCutShort("trun", needs: 8 + 4 * 1000, has: 8)) {
            try TrackRun(parsing: ([0, 0, 0x02, 0] + Self.be(1000, 4))[...], type: "trun")
        }
        #expect(throws: BoxError.tooManyEntries("trun", declared: Int(UInt32.max), limit: TrackRun.fieldlessLimit)) {
            try TrackRun(parsing: ([0, 0, 0, 0] + Self.be(UInt64(UInt32.max), 4))[...], type: "trun")
        }
    }

    @Test func decodeTimeAndIndexMoveToVersion1ForA64BitValue() throws {
        let v0 = [0, 0, 0, 0] + Self.be(90000, 4)
        var tfdt = try TrackFragmentDecodeTime(parsing: v0[...], type: "tfdt")
        #expect(tfdt.baseMediaDecodeTime == 90000 && tfdt.encode() == v0)
        tfdt.baseMediaDecodeTime = 1 << 33
        #expect(tfdt.encode() == [1, 0, 0, 0] + Self.be(1 << 33, 8))
        #expect(try TrackFragmentDecodeTime(parsing: tfdt.encode()[...], type: "tfdt").baseMediaDecodeTime == 1 << 33)
        // A sidx of two references, the second to another index and without a SAP.
        let sidx = [0, 0, 0, 0] + Self.be(1, 4) + Self.be(1000, 4) + Self.be(0, 4) + Self.be(52, 4) + [0, 0] + Self.be(2, 2)
            + Self.be(5000, 4) + Self.be(2000, 4) + Self.be(0x9000_0000, 4)
            + Self.be(0x8000_0000 | 300, 4) + Self.be(1000, 4) + Self.be(0x0000_0010, 4)
        var index = try SegmentIndex(parsing: sidx[...], type: "sidx")
        #expect(index.references.map(\.size) == [5000, 300] && index.references.map(\.referencesIndex) == [false, true])
        #expect(index.references[0].startsWithSAP && index.references[0].sapType == 1 && index.references[1].sapDeltaTime == 16)
        #expect(index.encode() == sidx)
        index.earliestPresentationTime = 1 << 32
        let wide = index.encode()
        #expect(wide[0] == 1 && wide.count == sidx.count + 8)
        #expect(try SegmentIndex(parsing: wide[...], type: "sidx").earliestPresentationTime == 1 << 32)
    }

    @Test func containersKeepUnknownBoxesAndNeedTheirHeader() throws {
        let tfhd = Self.box("tfhd", [0, 0x02, 0, 0] + Self.be(1, 4))
        let sdtp = Self.box("sdtp", [0, 0, 0, 0, 0x20, 0x10])
        let trun = Self.box("trun", [0, 0, 0x02, 0x01] + Self.be(1, 4) + Self.be(8, 4) + Self.be(99, 4))
        let traf = tfhd + trun + sdtp
        var fragment = try TrackFragment(parsing: traf[...], type: "traf")
        #expect(fragment.header.trackID == 1 && fragment.decodeTime == nil && fragment.runs.count == 1 && fragment.encode() == traf)
        // A decode time set goes after the tfhd; the unknown box stays where it was.
        fragment.decodeTime = TrackFragmentDecodeTime(baseMediaDecodeTime: 3)
        #expect(fragment.encode() == tfhd + Self.box("tfdt", [0, 0, 0, 0] + Self.be(3, 4)) + trun + sdtp)
        let moof = Self.box("mfhd", [0, 0, 0, 0] + Self.be(9, 4)) + Self.box("traf", traf)
        let parsed = try MovieFragment(parsing: moof[...], type: "moof")
        let again = try TrackFragment(parsing: traf[...], type: "traf")
        #expect(parsed.header?.sequenceNumber == 9 && parsed.trackFragments == [again])
        #expect(parsed.encode() == moof)
        #expect(throws: BoxError.lacksChild("tfhd", in: "traf")) { try TrackFragment(parsing: (trun + sdtp)[...], type: "traf") }
        let mvex = Self.box("mehd", [0, 0, 0, 0] + Self.be(5000, 4)) + Self.trex(1, duration: 1024, size: 0, flags: 0)
        let extends = try MovieExtends(parsing: mvex[...], type: "mvex")
        #expect(extends.header?.fragmentDuration == 5000 && extends.trackDefaults.map(\.defaultSampleDuration) == [1024])
        #expect(extends.encode() == mvex)
    }

    /// Two tracks in one fragment, the second's tfhd with no base: it
    /// counts from the end of the first's data; a second run without a data
    /// offset starts where the first ended; sizes and durations from the
    /// trex where neither the tfhd nor the run gives them.
    @Test func samplesTakeTheirDefaultsAndPlaces() throws {
        let moofStart: Int64 = 1000
        let video = Self.box("traf", Self.box("tfhd", [0, 0x02, 0, 0x20] + Self.be(1, 4) + Self.be(0x0101_0000, 4))
            + Self.box("tfdt", [1, 0, 0, 0] + Self.be(1 << 32, 8))
            + Self.box("trun", [0, 0, 0x02, 0x05] + Self.be(2, 4) + Self.be(200, 4) + Self.be(0x0200_0000, 4) + Self.be(50, 4) + Self.be(60, 4))
            + Self.box("trun", [0, 0, 0x03, 0x00] + Self.be(1, 4) + Self.be(33, 4) + Self.be(70, 4)))
        let audio = Self.box("traf", Self.box("tfhd", [0, 0, 0, 0x10] + Self.be(2, 4) + Self.be(6, 4))
            + Self.box("trun", [0, 0, 0, 0] + Self.be(3, 4)))
        let moof = try MovieFragment(parsing: (Self.box("mfhd", [0, 0, 0, 0] + Self.be(1, 4)) + video + audio)[...], type: "moof")
        let defaults: [UInt32: TrackExtends] = [1: TrackExtends(trackID: 1, defaultSampleDuration: 40, defaultSampleSize: 9),
                        2: TrackExtends(trackID: 2, defaultSampleDuration: 1024, defaultSampleSize: 9)]
        var times: [UInt32: UInt64] = [2: 4096]
        let tracks = moof.samples(at: moofStart, defaults: defaults, decodeTimes: &times)
        #expect(tracks.map(\.trackID) == [1, 2])
        let v = tracks[0].samples, a = tracks[1].samples
        #expect(v.map(\.offset) == [1200, 1250, 1310] && v.map(\.size) == [50, 60, 70])
        #expect(v.map(\.duration) == [40, 40, 33] && v.map(\.decodeTime) == [1 << 32, (1 << 32) + 40, (1 << 32) + 80])
        #expect(v.map { SampleFlags.isSync($0.flags) } == [true, false, false])
        // The audio: after the video's data, the tfhd's size over the trex's, the time where its last fragment ended.
        #expect(a.map(\.offset) == [1380, 1386, 1392] && a.map(\.size) == [6, 6, 6] && a.map(\.decodeTime) == [4096, 5120, 6144])
        #expect(times == [1: (1 << 32) + 113, 2: 7168])
    }

    /// A file cut inside its last fragment's media data, then inside its
    /// last moof: the samples past the end, and those of the moof cut
    /// short, are listed and not in the file.
    @Test func coverageOfAFileCutInsideItsLastFragment() throws {
        let moov = Self.box("moov", Self.box("mvex", Self.trex(1, duration: 512, size: 100, flags: 0)))
        func fragment(_ sequence: UInt64) -> [UInt8] {
            let traf = Self.box("traf", Self.box("tfhd", [0, 0x02, 0, 0] + Self.be(1, 4))
                + Self.box("trun", [0, 0, 0, 0x01] + Self.be(4, 4) + Self.be(68 + 8, 4)))
            // 68 bytes: its header, mfhd 16, traf 8 + tfhd 16 + trun 20; the data after the mdat's header.
            let moof = Self.box("moof", Self.box("mfhd", [0, 0, 0, 0] + Self.be(sequence, 4)) + traf)
            return moof + Self.box("mdat", [UInt8](repeating: 7, count: 400))
        }
        let file = Self.box("ftyp", Array("iso6".utf8) + [0, 0, 0, 0]) + moov + fragment(1) + fragment(2)
        func coverage(_ bytes: [UInt8]) -> FragmentCoverage? { bytes.withUnsafeBytes { FragmentCoverage($0) } }
        #expect(coverage(file)?.tracks == [FragmentCoverage.Track(trackID: 1, listed: 8, inFile: 8)])
        // 250 bytes of the last mdat's 400: its first two samples whole.
        #expect(coverage(Array(file.dropLast(150)))?.tracks == [FragmentCoverage.Track(trackID: 1, listed: 8, inFile: 6)])
        // Cut inside the last moof's trun, after its count of 4 (64 bytes in): the count still there, the data not.
        let secondMoof = file.count - fragment(2).count
        #expect(coverage(Array(file.prefix(secondMoof + 66)))?.tracks == [FragmentCoverage.Track(trackID: 1, listed: 8, inFile: 4)])
        #expect(coverage(Self.box("ftyp", Array("isom".utf8) + [0, 0, 0, 0]) + moov) == nil)
    }

    /// A KDDI phone's fragmented 3GPP2 recording (samples in its `moov`, then
    /// one fragment of 29 AAC frames): whole, and cut inside its last `mdat`,
    /// no damage (the cut is `FragmentCoverage`'s); its fragment's boxes made
    /// to disagree one way at a time, the damage named with the fragment's
    /// number, its place and the box.
    @Test func damagedFragmentsOfARealRecordingAreNamed() throws {
        let url = RoundTripTests.repo.appendingPathComponent("Tests/Fixtures/wild/kddi_3g2_aac_2005.3g2")
        let file = [UInt8](try Data(contentsOf: url))
        func damage(_ bytes: [UInt8]) -> String? { bytes.withUnsafeBytes { IndexDamage.find(in: $0) } }
        func first(_ type: FourCC, in range: Range<Int>? = nil) throws -> BoxHeader {
            try #require(BoxWalker(BigEndianReader(file), in: range).first { $0.type == type })
        }
        func with(_ value: UInt64, _ size: Int, at: Int) -> [UInt8] {
            var b = file
            b.replaceSubrange(at..<(at + size), with: Self.be(value, size))
            return b
        }
        let moof = try first("moof"), traf = try first("traf", in: moof.payload)
        let tfhd = try first("tfhd", in: traf.payload), trun = try first("trun", in: traf.payload)
        let mdat = try #require(BoxWalker(BigEndianReader(file)).filter { $0.type == "mdat" }.last)
        let base = try #require(try TrackFragmentHeader(parsing: file[tfhd.payload], type: "tfhd").baseDataOffset)
        var bytes = 0
        _ = file.withUnsafeBytes { Fragments.walk($0) { _, samples in bytes += samples.reduce(0) { $0 + Int($1.size) } } }
        try #require(bytes > 0 && mdat.start > moof.start)

        #expect(damage(file) == nil)
        let cut = Array(file.dropLast(1000))
        #expect(damage(cut) == nil)
        #expect(cut.withUnsafeBytes { FragmentCoverage($0) }?.tracks.contains { $0.inFile < $0.listed } == true)

        let fragment = "its fragment 1 ('moof' at byte \(moof.start))"
        // Its tfhd's track id (after version and flags) made 2: the moov declares track 1 alone.
        #expect(damage(with(2, 4, at: tfhd.payload.lowerBound + 4))
                == "\(fragment) has a 'traf' for track 2, which the 'moov' does not declare (it declares 1)")
        // Its trun's sample count (after version and flags) made 1,000: 29 sizes are there.
        #expect(damage(with(1000, 4, at: trun.payload.lowerBound + 4))
                == "\(fragment) cannot be read: the 'trun' box holds \(trun.size - 8) bytes, its fields \(12 + 4 * 1000)")
        // Its trun's data offset (after the count) made 5,000: the data starts in the mdat, runs past it.
        let late = Int(base) + 5000
        #expect(damage(with(5000, 4, at: trun.payload.lowerBound + 8))
                == "\(fragment): the 'trun' of track 1 lists data at bytes \(late)–\(late + bytes), past the end of its 'mdat' (bytes \(mdat.payload.lowerBound)–\(mdat.end))")
        // Its tfhd's base offset (after the track id) past the end of the file.
        #expect(damage(with(UInt64(file.count + 100), 8, at: tfhd.payload.lowerBound + 8))
                == "\(fragment): the 'trun' of track 1 lists data at bytes \(file.count + 100)–\(file.count + 100 + bytes), past the end of the file (\(file.count) bytes)")
    }
}
