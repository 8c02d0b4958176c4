import CFFmpeg

/// One packet as the demuxer's index lists it: where a read would find it,
/// without reading it.
public struct IndexedPacket: Sendable, Equatable {
    /// The packet's DTS, which the MP4/MOV demuxer also gives as its PTS
    /// when the track has no composition offsets (audio).
    public var timestamp: Int64
    /// Where the payload starts in the file, and its bytes.
    public var position: Int64
    public var size: Int32
    /// Marked to be decoded and dropped (before an edit list's start).
    public var isDiscard: Bool
    public var isKeyframe: Bool

    /// Whether all its bytes are in a file of `size` bytes.
    public func lies(within size: Int64) -> Bool { position >= 0 && position + Int64(self.size) <= size }
}

extension InputStream {
    /// Every packet of the stream from the demuxer's index, in read order,
    /// when the index is known to be whole: the MP4/MOV demuxer builds it
    /// from the sample tables, one entry per packet it will return, and the
    /// count must match the header's and every payload must lie within the
    /// file. `nil` for other demuxers (whose indexes hold keyframes only or
    /// grow while reading), for fragmented files (their index grows with
    /// every fragment read) and for a file cut short of its index's end.
    public var indexedPackets: [IndexedPacket]? {
        guard let entries = indexEntries(wholeOnly: true), let fileSize = file.size,
              entries.allSatisfy({ $0.lies(within: fileSize) }) else { return nil }
        return entries
    }

    /// The demuxer's index as it stands, when it lists something and all
    /// of it lies within the file: for an MP4/MOV that is not fragmented,
    /// every packet its sample tables hold — also for PCM, whose packets
    /// are whole chunks while the header counts samples (`indexedPackets`
    /// then refuses the count).
    public var packetsInSampleTables: [IndexedPacket]? {
        guard let entries = indexEntries(wholeOnly: false), let fileSize = file.size,
              entries.allSatisfy({ $0.lies(within: fileSize) }) else { return nil }
        return entries
    }

    /// The entries of the demuxer's index (0 without one).
    public var indexEntryCount: Int { Int(max(avformat_index_get_entries_count(stream), 0)) }

    /// The bytes of the packets the demuxer's index lists (0 without one).
    public var indexedBytes: Int64 {
        var sum: Int64 = 0
        for i in 0..<max(avformat_index_get_entries_count(stream), 0) {
            if let e = avformat_index_get_entry(stream, i) { sum += Int64(e.pointee.size) }
        }
        return sum
    }

    /// Where the first packet of the demuxer's index is in the file, and its size.
    public var firstIndexed: (position: Int64, size: Int32)? {
        guard avformat_index_get_entries_count(stream) > 0, let e = avformat_index_get_entry(stream, 0) else { return nil }
        return (e.pointee.pos, e.pointee.size)
    }

    /// Whether the demuxer's index lists packets and every one of them lies
    /// within the file (an MP4/MOV's, whose sample tables it is), found
    /// without copying it out; the count need not be the header's (PCM's
    /// packets are whole chunks).
    public var indexLiesInFile: Bool {
        guard let fileSize = file.size, let c = indexCount(wholeOnly: false, within: fileSize) else { return false }
        return c.listed == c.present
    }

    /// Whether `indexedPackets` would be given, found without copying the
    /// index out (an entry per packet).
    public var hasWholeIndex: Bool {
        guard let fileSize = file.size, let c = indexCount(wholeOnly: true, within: fileSize) else { return false }
        return c.listed == c.present
    }

    /// The entries of the index `indexEntries` gives, counted where they
    /// are (no copy): all of them, and those whose bytes all lie within a
    /// file of `fileSize` bytes.
    func indexCount(wholeOnly: Bool, within fileSize: Int64) -> (listed: Int, present: Int)? {
        guard file.formatName.hasPrefix("mov") else { return nil }
        let count = avformat_index_get_entries_count(stream)
        guard count > 0 else { return nil }
        if wholeOnly {
            guard let declared = declaredFrameCount, Int64(count) == declared else { return nil }
        }
        var present = 0
        for i in 0..<count {
            guard let e = avformat_index_get_entry(stream, i) else { return nil }
            if e.pointee.pos >= 0 && e.pointee.pos + Int64(e.pointee.size) <= fileSize { present += 1 }
        }
        return (Int(count), present)
    }

    /// The MP4/MOV demuxer's index as it stands (`nil` for other demuxers
    /// and for an empty index); with `wholeOnly`, only when it lists as many
    /// packets as the header declares.
    func indexEntries(wholeOnly: Bool) -> [IndexedPacket]? {
        guard file.formatName.hasPrefix("mov") else { return nil }
        let count = avformat_index_get_entries_count(stream)
        guard count > 0 else { return nil }
        if wholeOnly {
            guard let declared = declaredFrameCount, Int64(count) == declared else { return nil }
        }
        var packets: [IndexedPacket] = []
        packets.reserveCapacity(Int(count))
        for i in 0..<count {
            guard let e = avformat_index_get_entry(stream, i) else { return nil }
            let flags = e.pointee.flags
            packets.append(IndexedPacket(timestamp: e.pointee.timestamp, position: e.pointee.pos, size: e.pointee.size,
                                         isDiscard: flags & AVINDEX_DISCARD_FRAME != 0,
                                         isKeyframe: flags & AVINDEX_KEYFRAME != 0))
        }
        return packets
    }

    /// Samples a packet of `size` bytes decodes to (`av_get_audio_frame_duration2`);
    /// 0 when the codec cannot tell from the size (AMR: a packet holds
    /// frames of several lengths, which only its bytes tell, `samples(in:)`).
    public func samples(inPacketOf size: Int32) -> Int64 {
        if AMRFrames(codec: codecID) != nil { return 0 }
        return Int64(av_get_audio_frame_duration2(parameters, size))
    }
}
