/// `elst`: the track's edits, each a stretch of the movie's timeline and the
/// media time it shows (ISO/IEC 14496-12 8.6.6). Version 1 (64-bit
/// durations and times) when an entry needs it or the box was read so, as
/// Bento4's `AP4_ElstAtom` moves to it.
public struct EditList: BoxPayload {
    public static let types: Set<FourCC> = ["elst"]
    public var type: FourCC { "elst" }

    public struct Entry: Sendable, Equatable {
        /// In the movie's time scale.
        public var segmentDuration: UInt64
        /// In the media's time scale; -1 is an empty edit.
        public var mediaTime: Int64
        public var rateInteger: Int16
        public var rateFraction: Int16

        public init(segmentDuration: UInt64, mediaTime: Int64, rateInteger: Int16 = 1, rateFraction: Int16 = 0) {
            (self.segmentDuration, self.mediaTime, self.rateInteger, self.rateFraction) = (segmentDuration, mediaTime, rateInteger, rateFraction)
        }

        var needsVersion1: Bool { segmentDuration > UInt64(UInt32.max) || mediaTime < Int64(Int32.min) || mediaTime > Int64(Int32.max) }
    }

    public var version: UInt8
    public var flags: UInt32
    public var entries: [Entry]
    public var trailing: [UInt8]

    public init(entries: [Entry]) {
        (version, flags, self.entries, trailing) = (0, 0, entries, [])
    }

    /// An entry's size in the payload, and where the entries start: the one place the versions' layouts are written.
    public static func entrySize(version: UInt8) -> Int { version == 1 ? 20 : 12 }
    public static let entriesOffset = 8

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        (version, flags) = try r.versionZeroOrOne()
        let count = try r.entryCount(of: Self.entrySize(version: version))
        entries = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let duration = try r.versioned(version)
            let time = try r.versioned(version)
            entries.append(Entry(segmentDuration: duration,
                                 mediaTime: version == 1 ? Int64(bitPattern: time) : Int64(Int32(truncatingIfNeeded: time)),
                                 rateInteger: Int16(bitPattern: try r.u16()), rateFraction: Int16(bitPattern: try r.u16())))
        }
        trailing = r.rest()
    }

    /// Version 1 when an entry does not fit version 0's 32-bit fields.
    public var encodedVersion: UInt8 { max(version, entries.contains(where: \.needsVersion1) ? 1 : 0) }

    public func encode() -> [UInt8] {
        let v = encodedVersion
        var w = FieldWriter(capacity: 8 + entries.count * Self.entrySize(version: v) + trailing.count)
        w.versionAndFlags(v, flags)
        w.u32(UInt32(entries.count))
        for e in entries {
            w.versioned(e.segmentDuration, v)
            w.versioned(UInt64(bitPattern: e.mediaTime), v)
            w.u16(UInt16(bitPattern: e.rateInteger))
            w.u16(UInt16(bitPattern: e.rateFraction))
        }
        w.append(trailing)
        return w.bytes
    }
}
