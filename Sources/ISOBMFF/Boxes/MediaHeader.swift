/// `mdhd`: a track's media time scale, duration and language (ISO/IEC
/// 14496-12 8.4.2). Version 1 when a value needs it or the box was read so.
public struct MediaHeader: BoxPayload {
    public static let types: Set<FourCC> = ["mdhd"]
    public var type: FourCC { "mdhd" }
    public var version: UInt8
    public var flags: UInt32
    public var creationTime: UInt64
    public var modificationTime: UInt64
    public var timescale: UInt32
    /// In `timescale` units: the sum of the samples' durations.
    public var duration: UInt64
    /// ISO 639-2/T packed in 3×5 bits (bit 15 clear), or an old Macintosh language code.
    public var language: UInt16
    /// QuickTime's quality; 0 in ISO files.
    public var preDefined: UInt16
    public var trailing: [UInt8]

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        (version, flags) = try r.versionZeroOrOne()
        creationTime = try r.versioned(version)
        modificationTime = try r.versioned(version)
        timescale = try r.u32()
        duration = try r.versioned(version)
        language = try r.u16()
        preDefined = try r.u16()
        trailing = r.rest()
    }

    /// Version 1 when a time does not fit 32 bits.
    public var encodedVersion: UInt8 {
        FieldWriter.version(version, holding: creationTime, modificationTime, duration)
    }

    public func encode() -> [UInt8] {
        let v = encodedVersion
        var w = FieldWriter(capacity: 36 + trailing.count)
        w.versionAndFlags(v, flags)
        w.versioned(creationTime, v)
        w.versioned(modificationTime, v)
        w.u32(timescale)
        w.versioned(duration, v)
        w.u16(language)
        w.u16(preDefined)
        w.append(trailing)
        return w.bytes
    }
}
