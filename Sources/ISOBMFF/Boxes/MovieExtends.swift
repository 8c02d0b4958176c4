/// `mvex`: the sign that a movie goes on in fragments (ISO/IEC 14496-12
/// 8.8.1), with the whole duration (`mehd`) and each track's sample
/// defaults (`trex`); any other box kept byte for byte.
public struct MovieExtends: BoxPayload {
    public static let types: Set<FourCC> = ["mvex"]
    public var type: FourCC { "mvex" }
    public var header: MovieExtendsHeader?
    public var trackDefaults: [TrackExtends]
    /// The boxes as read, in order; those above are written from their values.
    public var list: BoxList

    public init(header: MovieExtendsHeader? = nil, trackDefaults: [TrackExtends]) {
        (self.header, self.trackDefaults, list) = (header, trackDefaults, BoxList())
    }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        list = try BoxList(parsing: payload, prefix: 0, type: type)
        header = try list.value("mehd", as: MovieExtendsHeader.self)
        trackDefaults = try list.values("trex", as: TrackExtends.self)
    }

    public func encode() -> [UInt8] {
        list.setting("mehd", to: header.map { [$0] } ?? [], onlyFirst: true)
            .setting("trex", to: trackDefaults, after: "mehd")
            .encode()
    }
}
