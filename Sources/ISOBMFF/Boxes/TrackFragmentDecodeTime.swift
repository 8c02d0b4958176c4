/// `tfdt`: the decode time of a track fragment's first sample, in the
/// track's media time scale (ISO/IEC 14496-12 8.8.12). Version 1 when the
/// time needs 64 bits or the box was read so (a recording hours long at a
/// 90 kHz or 48 kHz scale outgrows 32 bits).
public struct TrackFragmentDecodeTime: BoxPayload {
    public static let types: Set<FourCC> = ["tfdt"]
    public var type: FourCC { "tfdt" }
    public var version: UInt8
    public var flags: UInt32
    public var baseMediaDecodeTime: UInt64
    public var trailing: [UInt8]

    public init(baseMediaDecodeTime: UInt64) { (version, flags, self.baseMediaDecodeTime, trailing) = (0, 0, baseMediaDecodeTime, []) }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        (version, flags) = try r.versionZeroOrOne()
        baseMediaDecodeTime = try r.versioned(version)
        trailing = r.rest()
    }

    public var encodedVersion: UInt8 { FieldWriter.version(version, holding: baseMediaDecodeTime) }

    public func encode() -> [UInt8] {
        let v = encodedVersion
        var w = FieldWriter(capacity: 12 + trailing.count)
        w.versionAndFlags(v, flags)
        w.versioned(baseMediaDecodeTime, v)
        w.append(trailing)
        return w.bytes
    }
}
