import CFFmpeg
import ISOBMFF

/// How much of a stream an MP4/MOV index lists, and how much of that the
/// file holds.
public struct StreamCoverage: Sendable, Equatable, Codable {
    public var stream: Int
    public var type: MediaType
    /// Packets the index lists.
    public var listed: Int
    /// Of those, the packets whose bytes all lie within the file.
    public var present: Int
}

extension InputFile {
    /// Per stream of an MP4/MOV, the packets its index lists and those the
    /// file holds: for a fragmented file, from its fragments' boxes
    /// (`FragmentCoverage`: every `moof` in the file, before any packet is
    /// read); otherwise from the demuxer's index, which lists every packet
    /// with its place. Streams whose index is not whole (cover art) are left
    /// out; `nil` for other formats.
    public var indexCoverage: [StreamCoverage]? { coverage(wholeOnly: true) }

    /// The same, where the demuxer's index says, from whatever it holds so
    /// far (not only when it lists every packet).
    public var coverageSoFar: [StreamCoverage]? { coverage(wholeOnly: false) }

    private func coverage(wholeOnly: Bool) -> [StreamCoverage]? {
        guard formatName.hasPrefix("mov"), let fileSize = size else { return nil }
        if let fragments = fragmentCoverage { return fragments }
        // Counted in the demuxer's index, not copied out of it (an entry per packet).
        return streams.filter { !$0.isAttachedPicture }.compactMap { s in
            s.indexCount(wholeOnly: wholeOnly, within: fileSize).map { c in
                StreamCoverage(stream: s.index, type: s.mediaType, listed: c.listed, present: c.present)
            }
        }
    }

    /// Per stream of a fragmented MP4 opened from its path, what its
    /// fragments list and hold (`FragmentCoverage`, matched by track id);
    /// nil when it has no fragment, cannot be mapped, or holds a fragment
    /// the boxes cannot be read of (the demuxer's index says then).
    private var fragmentCoverage: [StreamCoverage]? {
        guard memory == nil, identity != nil, let mapped = try? MappedFile(path: path),
              let fragments = mapped.withBytes({ FragmentCoverage($0) }), fragments.unreadableAt == nil else { return nil }
        return streams.filter { !$0.isAttachedPicture }.compactMap { s in
            fragments.tracks.first { Int($0.trackID) == s.id }.map {
                StreamCoverage(stream: s.index, type: s.mediaType, listed: $0.listed, present: $0.inFile)
            }
        }
    }

    /// What its index says is missing when the file is cut off before the
    /// end of its packets ("146 of 300 video and 230 of 469 audio packets
    /// are in the file"), or for Matroska how much of its segment is there;
    /// `nil` when whole or when it cannot tell.
    public var cutOff: String? { Self.cutOff(indexCoverage) ?? matroskaCutOff }

    /// The same from what the index holds so far (`coverageSoFar`).
    public var cutOffSoFar: String? { Self.cutOff(coverageSoFar) ?? matroskaCutOff }

    /// For a Matroska/WebM file that ends before its segment does (by the
    /// segment's declared size): the bytes missing. nil when whole, of
    /// unknown size (a live recording's), or not Matroska.
    public var matroskaMissingBytes: Int64? {
        guard formatName.hasPrefix("matroska"), memory == nil, let size,
              let mapped = try? MappedFile(path: path),
              let end = mapped.withBytes({ MatroskaSegment($0) })?.declaredEnd, end > size else { return nil }
        return end - size
    }

    private var matroskaCutOff: String? {
        guard let missing = matroskaMissingBytes, let size else { return nil }
        return "only \(size) of the \(size + missing) bytes its Matroska segment declares are in the file"
    }

    private static func cutOff(_ coverage: [StreamCoverage]?) -> String? {
        guard let c = coverage, c.contains(where: { $0.present < $0.listed }) else { return nil }
        return "only " + describe(c.map { ($0.present, $0.listed, $0.type) }) + " are in the file"
    }

    /// "146 of 300 video and 230 of 469 audio packets".
    public static func describe(_ counts: [(have: Int, of: Int, type: MediaType)]) -> String {
        let parts = counts.map { "\($0.have) of \($0.of) \($0.type.rawValue)" }
        let joined = parts.count <= 1 ? parts.joined()
            : parts.dropLast().joined(separator: ", ") + " and " + parts.last!
        return joined + " packets"
    }

    /// The error for an input cut off before the end of its packets (its
    /// index lists more than the file holds), or nil.
    public func cutOffError(_ operation: String, soFar: Bool = false) -> MediaError? {
        // A file cut while it is read is a change, not a recording cut off.
        if let changed = changedError() { return changed }
        guard let cut = soFar ? cutOffSoFar : cutOff else { return nil }
        return MediaError.invalid(operation, path: path, message: "it is cut off: \(cut)", remedy: .salvage)
    }
}

/// What a salvaging read kept of a damaged or cut-off input.
public struct SalvageReport: Sendable, Equatable, Codable {
    /// Per output track: packets kept, and (MP4/MOV) the packets the index lists.
    public var kept: [Int]
    public var listed: [Int?]
    public var types: [MediaType]
    /// Packets dropped as damaged (flagged corrupt by the demuxer).
    public var damagedPackets = 0
    /// Whether reading stopped at an error before the end.
    public var stoppedEarly = false
    /// Bytes the file lacks of what its container declares (Matroska's segment).
    public var missingBytes: Int64 = 0

    public init(types: [MediaType], listed: [Int?]) {
        self.types = types
        self.listed = listed
        kept = Array(repeating: 0, count: types.count)
    }

    /// Whether anything was lost.
    public var lostAny: Bool {
        damagedPackets > 0 || stoppedEarly || missingBytes > 0 || zip(kept, listed).contains { k, l in l.map { k < $0 } ?? false }
    }

    /// The warning a salvaging verb gives, or nil when nothing was lost.
    public var warning: String? {
        guard lostAny else { return nil }
        let counts = types.indices.map { j in (kept[j], listed[j] ?? kept[j], types[j]) }
        var text = "salvaged what was readable: kept " + InputFile.describe(counts)
        if damagedPackets > 0 { text += "; \(damagedPackets) damaged packet(s) left out" }
        if stoppedEarly { text += "; reading stopped at damage before the end" }
        if missingBytes > 0 { text += "; the file ends \(missingBytes) bytes short of its Matroska segment" }
        return text
    }
}
