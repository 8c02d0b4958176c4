/// `tkhd`: a track's id, duration on the movie's timeline, display matrix
/// and size (ISO/IEC 14496-12 8.3.2). Version 1 when a value needs it or
/// the box was read so.
public struct TrackHeader: BoxPayload {
    public static let types: Set<FourCC> = ["tkhd"]
    public var type: FourCC { "tkhd" }
    public var version: UInt8
    /// Enabled, in movie, in preview (bits 0-2).
    public var flags: UInt32
    public var creationTime: UInt64
    public var modificationTime: UInt64
    public var trackID: UInt32
    public var reserved1: UInt32
    /// In the movie's time scale.
    public var duration: UInt64
    public var reserved2: [UInt8]
    public var layer: UInt16
    public var alternateGroup: UInt16
    public var volume: UInt16
    public var reserved3: UInt16
    /// a, b, u, c, d, v, x, y, w, as written.
    public var matrix: [UInt32]
    /// 16.16 fixed point.
    public var width: UInt32
    public var height: UInt32
    public var trailing: [UInt8]

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        (version, flags) = try r.versionZeroOrOne()
        creationTime = try r.versioned(version)
        modificationTime = try r.versioned(version)
        trackID = try r.u32()
        reserved1 = try r.u32()
        duration = try r.versioned(version)
        reserved2 = try r.bytes(8)
        layer = try r.u16()
        alternateGroup = try r.u16()
        volume = try r.u16()
        reserved3 = try r.u16()
        matrix = []
        for _ in 0..<9 { matrix.append(try r.u32()) }
        width = try r.u32()
        height = try r.u32()
        trailing = r.rest()
    }

    /// Version 1 when a time does not fit 32 bits.
    public var encodedVersion: UInt8 {
        FieldWriter.version(version, holding: creationTime, modificationTime, duration)
    }

    public func encode() -> [UInt8] {
        let v = encodedVersion
        var w = FieldWriter(capacity: 96 + trailing.count)
        w.versionAndFlags(v, flags)
        w.versioned(creationTime, v)
        w.versioned(modificationTime, v)
        w.u32(trackID)
        w.u32(reserved1)
        w.versioned(duration, v)
        w.append(reserved2)
        w.u16(layer)
        w.u16(alternateGroup)
        w.u16(volume)
        w.u16(reserved3)
        for m in matrix { w.u32(m) }
        w.u32(width)
        w.u32(height)
        w.append(trailing)
        return w.bytes
    }
}
