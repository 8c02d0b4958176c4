/// A full box holding a count and that many entries of 32-bit fields (the
/// sample tables' common shape): read and written once here for `stts`,
/// `ctts`, `stss`, `stsc`.
struct UInt32Table: Sendable, Equatable {
    var version: UInt8
    var flags: UInt32
    /// The entries, each `fields` numbers.
    var values: [UInt32]
    var trailing: [UInt8]

    init(version: UInt8 = 0, values: [UInt32]) { (self.version, flags, self.values, trailing) = (version, 0, values, []) }

    init(parsing payload: ArraySlice<UInt8>, type: FourCC, fields: Int) throws(BoxError) {
        var r = FieldReader(type, payload)
        (version, flags) = try r.versionAndFlags()
        values = try r.u32s(try r.entryCount(of: 4 * fields) * fields)
        trailing = r.rest()
    }

    func encode(fields: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 8 + 4 * values.count)
        out.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: (flags & 0xff_ffff).bigEndian, toByteOffset: 0, as: UInt32.self)
            raw.storeBytes(of: UInt32(values.count / fields).bigEndian, toByteOffset: 4, as: UInt32.self)
            for (k, v) in values.enumerated() { raw.storeBytes(of: v.bigEndian, toByteOffset: 8 + 4 * k, as: UInt32.self) }
        }
        out[0] = version  // (over the flags' zero top byte)
        return out + trailing
    }
}
