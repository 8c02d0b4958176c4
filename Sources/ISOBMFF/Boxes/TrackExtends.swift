/// `trex`: a track's defaults for the samples its movie fragments list
/// (ISO/IEC 14496-12 8.8.3), taken where a `tfhd` or `trun` gives none.
public struct TrackExtends: BoxPayload {
    public static let types: Set<FourCC> = ["trex"]
    public var type: FourCC { "trex" }
    public var version: UInt8
    public var flags: UInt32
    public var trackID: UInt32
    public var defaultSampleDescriptionIndex: UInt32
    public var defaultSampleDuration: UInt32
    public var defaultSampleSize: UInt32
    /// `SampleFlags` bits.
    public var defaultSampleFlags: UInt32
    public var trailing: [UInt8]

    public init(trackID: UInt32, defaultSampleDescriptionIndex: UInt32 = 1, defaultSampleDuration: UInt32 = 0,
                defaultSampleSize: UInt32 = 0, defaultSampleFlags: UInt32 = 0) {
        (version, flags, trailing) = (0, 0, [])
        (self.trackID, self.defaultSampleDescriptionIndex) = (trackID, defaultSampleDescriptionIndex)
        (self.defaultSampleDuration, self.defaultSampleSize, self.defaultSampleFlags) = (defaultSampleDuration, defaultSampleSize, defaultSampleFlags)
    }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        (version, flags) = try r.versionAndFlags()
        trackID = try r.u32()
        defaultSampleDescriptionIndex = try r.u32()
        defaultSampleDuration = try r.u32()
        defaultSampleSize = try r.u32()
        defaultSampleFlags = try r.u32()
        trailing = r.rest()
    }

    public func encode() -> [UInt8] {
        var w = FieldWriter(capacity: 24 + trailing.count)
        w.versionAndFlags(version, flags)
        for v in [trackID, defaultSampleDescriptionIndex, defaultSampleDuration, defaultSampleSize, defaultSampleFlags] { w.u32(v) }
        w.append(trailing)
        return w.bytes
    }
}

/// A sample's flags in a movie fragment (ISO/IEC 14496-12 8.8.3.1): two
/// bits each of is-leading, depends-on, is-depended-on and redundancy, the
/// padding, the non-sync bit, the degradation priority.
public enum SampleFlags {
    /// `sample_is_non_sync_sample`.
    public static let nonSync: UInt32 = 0x0001_0000
    /// `sample_depends_on` = 1: the sample depends on others (not an I picture).
    public static let dependsOnOthers: UInt32 = 0x0100_0000

    /// Whether a sample of these flags starts a run a decoder can start
    /// from, as libavformat reads it: neither non-sync nor depending on
    /// others (every audio sample is, whatever its flags).
    public static func isSync(_ flags: UInt32) -> Bool { flags & (nonSync | dependsOnOthers) == 0 }
}
