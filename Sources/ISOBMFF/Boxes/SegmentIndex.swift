/// `sidx`: the subsegments of a segment — their sizes, durations and where
/// each starts to be decodable (ISO/IEC 14496-12 8.16.3), as DASH writers
/// put before their fragments. Version 1 when a time or offset needs 64
/// bits or the box was read so.
public struct SegmentIndex: BoxPayload {
    public static let types: Set<FourCC> = ["sidx"]
    public var type: FourCC { "sidx" }

    public struct Reference: Sendable, Equatable {
        /// The reference is to another `sidx`, not to media.
        public var referencesIndex: Bool
        /// 31 bits: the bytes referred to.
        public var size: UInt32
        public var subsegmentDuration: UInt32
        public var startsWithSAP: Bool
        /// 3 bits.
        public var sapType: UInt8
        /// 28 bits.
        public var sapDeltaTime: UInt32

        public init(referencesIndex: Bool = false, size: UInt32, subsegmentDuration: UInt32, startsWithSAP: Bool = true,
                    sapType: UInt8 = 1, sapDeltaTime: UInt32 = 0) {
            (self.referencesIndex, self.size, self.subsegmentDuration) = (referencesIndex, size, subsegmentDuration)
            (self.startsWithSAP, self.sapType, self.sapDeltaTime) = (startsWithSAP, sapType, sapDeltaTime)
        }
    }

    public var version: UInt8
    public var flags: UInt32
    public var referenceID: UInt32
    public var timescale: UInt32
    public var earliestPresentationTime: UInt64
    /// From the end of this box to the first byte referred to.
    public var firstOffset: UInt64
    public var reserved: UInt16
    public var references: [Reference]
    public var trailing: [UInt8]

    public init(referenceID: UInt32, timescale: UInt32, earliestPresentationTime: UInt64, firstOffset: UInt64 = 0,
                references: [Reference]) {
        (version, flags, reserved, trailing) = (0, 0, 0, [])
        (self.referenceID, self.timescale, self.earliestPresentationTime) = (referenceID, timescale, earliestPresentationTime)
        (self.firstOffset, self.references) = (firstOffset, references)
    }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        (version, flags) = try r.versionZeroOrOne()
        referenceID = try r.u32()
        timescale = try r.u32()
        earliestPresentationTime = try r.versioned(version)
        firstOffset = try r.versioned(version)
        reserved = try r.u16()
        let count = Int(try r.u16())
        guard count <= r.remaining / 12 else { throw .fieldsCutShort(type, needs: r.offset + 12 * count, has: payload.count) }
        let values = try r.u32s(3 * count)
        references = (0..<count).map { k in
            let (a, d, s) = (values[3 * k], values[3 * k + 1], values[3 * k + 2])
            return Reference(referencesIndex: a >> 31 != 0, size: a & 0x7FFF_FFFF, subsegmentDuration: d,
                             startsWithSAP: s >> 31 != 0, sapType: UInt8(s >> 28 & 7), sapDeltaTime: s & 0x0FFF_FFFF)
        }
        trailing = r.rest()
    }

    public var encodedVersion: UInt8 { FieldWriter.version(version, holding: earliestPresentationTime, firstOffset) }

    public func encode() -> [UInt8] {
        let v = encodedVersion
        var w = FieldWriter(capacity: 32 + 12 * references.count + trailing.count)
        w.versionAndFlags(v, flags)
        w.u32(referenceID)
        w.u32(timescale)
        w.versioned(earliestPresentationTime, v)
        w.versioned(firstOffset, v)
        w.u16(reserved)
        w.u16(UInt16(truncatingIfNeeded: references.count))
        for ref in references {
            w.u32((ref.referencesIndex ? 1 << 31 : 0) | ref.size & 0x7FFF_FFFF)
            w.u32(ref.subsegmentDuration)
            w.u32((ref.startsWithSAP ? 1 << 31 : 0) | UInt32(ref.sapType & 7) << 28 | ref.sapDeltaTime & 0x0FFF_FFFF)
        }
        w.append(trailing)
        return w.bytes
    }
}
