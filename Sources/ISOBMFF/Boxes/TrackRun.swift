/// `trun`: a run of a track fragment's samples, contiguous in the file
/// (ISO/IEC 14496-12 8.8.8). Which per-sample fields each entry holds is
/// the box's (`fields`); a field not held takes the `tfhd`'s default, else
/// the `trex`'s. Version 1's composition offsets are signed; version 0's are
/// read as signed too, as libavformat reads them (the bits are the same).
/// Setting an entry with a negative offset moves the box to version 1.
public struct TrackRun: BoxPayload {
    public static let types: Set<FourCC> = ["trun"]
    public var type: FourCC { "trun" }

    /// The per-sample fields a run's entries hold (its flags' bits).
    public struct Fields: OptionSet, Sendable, Equatable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let duration = Fields(rawValue: 0x100)
        public static let size = Fields(rawValue: 0x200)
        public static let flags = Fields(rawValue: 0x400)
        public static let compositionOffset = Fields(rawValue: 0x800)
        static let all: Fields = [.duration, .size, .flags, .compositionOffset]
        /// The bytes an entry takes.
        var entrySize: Int { 4 * rawValue.nonzeroBitCount }
    }

    /// One sample's fields; those its run does not hold are 0.
    public struct Entry: Sendable, Equatable {
        public var duration: UInt32
        public var size: UInt32
        /// `SampleFlags` bits.
        public var flags: UInt32
        /// PTS − DTS, in the track's media time scale.
        public var compositionOffset: Int32

        public init(duration: UInt32 = 0, size: UInt32 = 0, flags: UInt32 = 0, compositionOffset: Int32 = 0) {
            (self.duration, self.size, self.flags, self.compositionOffset) = (duration, size, flags, compositionOffset)
        }
    }

    static let dataOffsetPresent: UInt32 = 0x01
    static let firstSampleFlagsPresent: UInt32 = 0x04
    static let presence = Fields.all.rawValue | dataOffsetPresent | firstSampleFlagsPresent
    /// The most samples a run whose entries hold no field may declare: no
    /// bytes back them, so a hostile count would reserve the memory alone.
    public static let fieldlessLimit = 1 << 20

    public var version: UInt8
    /// The flags but those that say which fields follow (written from the fields).
    public var flags: UInt32
    /// Where the run's first sample starts, from the base the `tfhd` sets.
    public var dataOffset: Int32?
    /// The first sample's flags, in place of the default (a run starting with a sync sample).
    public var firstSampleFlags: UInt32?
    public var fields: Fields
    public var entries: [Entry] {
        didSet {
            if fields.contains(.compositionOffset), entries.contains(where: { $0.compositionOffset < 0 }) { version = max(version, 1) }
        }
    }
    public var trailing: [UInt8]

    public init(fields: Fields, entries: [Entry], dataOffset: Int32? = 0, firstSampleFlags: UInt32? = nil) {
        let negative = fields.contains(.compositionOffset) && entries.contains { $0.compositionOffset < 0 }
        (version, flags, self.fields, self.entries, trailing) = (negative ? 1 : 0, 0, fields, entries, [])
        (self.dataOffset, self.firstSampleFlags) = (dataOffset, firstSampleFlags)
    }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        let read = try r.versionAndFlags()
        (version, flags) = (read.version, read.flags & ~Self.presence)
        let present = Fields(rawValue: read.flags).intersection(.all)
        fields = present
        let declared = Int(try r.u32())
        dataOffset = nil
        firstSampleFlags = nil
        if read.flags & Self.dataOffsetPresent != 0 { dataOffset = Int32(bitPattern: try r.u32()) }
        if read.flags & Self.firstSampleFlagsPresent != 0 { firstSampleFlags = try r.u32() }
        let size = present.entrySize
        if size == 0 {
            guard declared <= Self.fieldlessLimit else { throw .tooManyEntries(type, declared: declared, limit: Self.fieldlessLimit) }
        } else if declared > r.remaining / size {
            throw .fieldsCutShort(type, needs: r.offset + declared * size, has: payload.count)
        }
        let values = try r.u32s(declared * present.rawValue.nonzeroBitCount)
        var k = 0
        func next(_ field: Fields) -> UInt32 {
            guard present.contains(field) else { return 0 }
            defer { k += 1 }
            return values[k]
        }
        var parsed: [Entry] = []
        parsed.reserveCapacity(declared)
        for _ in 0..<declared {
            parsed.append(Entry(duration: next(.duration), size: next(.size), flags: next(.flags),
                              compositionOffset: Int32(bitPattern: next(.compositionOffset))))
        }
        entries = parsed
        trailing = r.rest()
    }

    /// The flags as written: `flags`, with the bits of the fields there are.
    public var encodedFlags: UInt32 {
        var f = flags & ~Self.presence | fields.rawValue
        if dataOffset != nil { f |= Self.dataOffsetPresent }
        if firstSampleFlags != nil { f |= Self.firstSampleFlagsPresent }
        return f
    }

    public func encode() -> [UInt8] {
        var w = FieldWriter(capacity: 16 + entries.count * fields.entrySize + trailing.count)
        w.versionAndFlags(version, encodedFlags)
        w.u32(UInt32(entries.count))
        if let dataOffset { w.u32(UInt32(bitPattern: dataOffset)) }
        if let firstSampleFlags { w.u32(firstSampleFlags) }
        for e in entries {
            if fields.contains(.duration) { w.u32(e.duration) }
            if fields.contains(.size) { w.u32(e.size) }
            if fields.contains(.flags) { w.u32(e.flags) }
            if fields.contains(.compositionOffset) { w.u32(UInt32(bitPattern: e.compositionOffset)) }
        }
        w.append(trailing)
        return w.bytes
    }
}
