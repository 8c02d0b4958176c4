/// `stsz`: each sample's size, or one size for all (ISO/IEC 14496-12 8.7.3.2).
public struct SampleSizes: BoxPayload {
    public static let types: Set<FourCC> = ["stsz"]
    public var type: FourCC { "stsz" }
    public var version: UInt8
    public var flags: UInt32
    /// Every sample's size when not 0 (then `sizes` is empty).
    public var sampleSize: UInt32
    public var sampleCount: UInt32
    /// Each sample's size, when `sampleSize` is 0.
    public var sizes: [UInt32]
    public var trailing: [UInt8]

    /// The sizes of `sizes.count` samples: one size for all when they are alike (and there are some).
    public init(sizes: [UInt32]) {
        (version, flags, sampleCount, trailing) = (0, 0, UInt32(sizes.count), [])
        if let s = sizes.first, sizes.allSatisfy({ $0 == s }) {
            (sampleSize, self.sizes) = (s, [])
        } else {
            (sampleSize, self.sizes) = (0, sizes)
        }
    }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        var r = FieldReader(type, payload)
        (version, flags) = try r.versionAndFlags()
        sampleSize = try r.u32()
        sampleCount = try r.u32()
        let listed = sampleSize == 0 ? Int(sampleCount) : 0
        guard listed <= r.remaining / 4 else { throw .fieldsCutShort(type, needs: 12 + 4 * listed, has: payload.count) }
        sizes = try r.u32s(listed)
        trailing = r.rest()
    }

    public func encode() -> [UInt8] {
        var w = FieldWriter(capacity: 12 + 4 * sizes.count + trailing.count)
        w.versionAndFlags(version, flags)
        w.u32(sampleSize)
        w.u32(sampleCount)
        var out = w.bytes + [UInt8](repeating: 0, count: 4 * sizes.count)
        out.withUnsafeMutableBytes { raw in
            for (k, s) in sizes.enumerated() { raw.storeBytes(of: s.bigEndian, toByteOffset: 12 + 4 * k, as: UInt32.self) }
        }
        return out + trailing
    }
}
