/// `tfhd`: which track a track fragment is of, where its data is counted
/// from and the defaults of its samples (ISO/IEC 14496-12 8.8.7). Each
/// optional field is there when its flag is set; a field given a value is
/// written with its flag, one set to nil without.
public struct TrackFragmentHeader: BoxPayload {
    public static let types: Set<FourCC> = ["tfhd"]
    public var type: FourCC { "tfhd" }

    /// The flags that say an optional field follows, in the fields' order.
    static let baseDataOffsetPresent: UInt32 = 0x01
    static let sampleDescriptionIndexPresent: UInt32 = 0x02
    static let defaultSampleDurationPresent: UInt32 = 0x08
    static let defaultSampleSizePresent: UInt32 = 0x10
    static let defaultSampleFlagsPresent: UInt32 = 0x20
    static let presence: UInt32 = 0x3B
    /// No samples: the fragment only moves time on by the default duration.
    public static let durationIsEmpty: UInt32 = 0x01_0000
    /// Data offsets count from the `moof`'s start, not from the end of the data before.
    public static let defaultBaseIsMoof: UInt32 = 0x02_0000

    public var version: UInt8
    /// The flags but those that say which optional fields follow (written
    /// from the fields): `durationIsEmpty`, `defaultBaseIsMoof`.
    public var flags: UInt32
    public var trackID: UInt32
    /// Where the data offsets count from, in the file.
    public var baseDataOffset: UInt64?
    public var sampleDescriptionIndex: UInt32?
    public var defaultSampleDuration: UInt32?
    public var defaultSampleSize: UInt32?
    /// `SampleFlags` bits.
    public var defaultSampleFlags: UInt32?
    public var trailing: [UInt8]

    public init(trackID: UInt32, flags: UInt32 = TrackFragmentHeader.defaultBaseIsMoof) {
        (version, self.flags, self.trackID, trailing) = (0, flags, trackID, [])
    }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        let read = try r.versionAndFlags()
        (version, flags) = (read.version, read.flags & ~Self.presence)
        trackID = try r.u32()
        func field(_ flag: UInt32) throws(BoxError) -> UInt32? {
            guard read.flags & flag != 0 else { return nil }
            return try r.u32()
        }
        if read.flags & Self.baseDataOffsetPresent != 0 { baseDataOffset = try r.u64() }
        sampleDescriptionIndex = try field(Self.sampleDescriptionIndexPresent)
        defaultSampleDuration = try field(Self.defaultSampleDurationPresent)
        defaultSampleSize = try field(Self.defaultSampleSizePresent)
        defaultSampleFlags = try field(Self.defaultSampleFlagsPresent)
        trailing = r.rest()
    }

    /// The flags as written: `flags`, with the presence bits of the fields there are.
    public var encodedFlags: UInt32 {
        var f = flags & ~Self.presence
        if baseDataOffset != nil { f |= Self.baseDataOffsetPresent }
        if sampleDescriptionIndex != nil { f |= Self.sampleDescriptionIndexPresent }
        if defaultSampleDuration != nil { f |= Self.defaultSampleDurationPresent }
        if defaultSampleSize != nil { f |= Self.defaultSampleSizePresent }
        if defaultSampleFlags != nil { f |= Self.defaultSampleFlagsPresent }
        return f
    }

    public func encode() -> [UInt8] {
        var w = FieldWriter(capacity: 32 + trailing.count)
        w.versionAndFlags(version, encodedFlags)
        w.u32(trackID)
        if let baseDataOffset { w.u64(baseDataOffset) }
        for v in [sampleDescriptionIndex, defaultSampleDuration, defaultSampleSize, defaultSampleFlags] {
            if let v { w.u32(v) }
        }
        w.append(trailing)
        return w.bytes
    }
}
