/// `mvhd`: the movie's time scale, duration and display matrix (ISO/IEC
/// 14496-12 8.2.2). Version 1 (64-bit times) when a value needs it or the
/// box was read so.
public struct MovieHeader: BoxPayload {
    public static let types: Set<FourCC> = ["mvhd"]
    public var type: FourCC { "mvhd" }
    public var version: UInt8
    public var flags: UInt32
    public var creationTime: UInt64
    public var modificationTime: UInt64
    public var timescale: UInt32
    /// In `timescale` units; all ones (either width) is "unknown".
    public var duration: UInt64
    /// 16.16 fixed point.
    public var rate: UInt32
    /// 8.8 fixed point.
    public var volume: UInt16
    /// 10 reserved bytes (QuickTime's preview and poster times live in the 24 after the matrix).
    public var reserved: [UInt8]
    /// a, b, u, c, d, v, x, y, w (16.16, 16.16, 2.30 …), as written.
    public var matrix: [UInt32]
    public var preDefined: [UInt8]
    public var nextTrackID: UInt32
    public var trailing: [UInt8]

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        (version, flags) = try r.versionZeroOrOne()
        creationTime = try r.versioned(version)
        modificationTime = try r.versioned(version)
        timescale = try r.u32()
        duration = try r.versioned(version)
        rate = try r.u32()
        volume = try r.u16()
        reserved = try r.bytes(10)
        matrix = []
        for _ in 0..<9 { matrix.append(try r.u32()) }
        preDefined = try r.bytes(24)
        nextTrackID = try r.u32()
        trailing = r.rest()
    }

    /// Version 1 when a time does not fit 32 bits.
    public var encodedVersion: UInt8 {
        FieldWriter.version(version, holding: creationTime, modificationTime, duration)
    }

    public func encode() -> [UInt8] {
        let v = encodedVersion
        var w = FieldWriter(capacity: 112 + trailing.count)
        w.versionAndFlags(v, flags)
        w.versioned(creationTime, v)
        w.versioned(modificationTime, v)
        w.u32(timescale)
        w.versioned(duration, v)
        w.u32(rate)
        w.u16(volume)
        w.append(reserved)
        for m in matrix { w.u32(m) }
        w.append(preDefined)
        w.u32(nextTrackID)
        w.append(trailing)
        return w.bytes
    }
}
