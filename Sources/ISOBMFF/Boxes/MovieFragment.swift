/// `moof`: a movie fragment (ISO/IEC 14496-12 8.8.4), its header and one
/// `traf` per track it adds samples to; any other box kept byte for byte.
public struct MovieFragment: BoxPayload {
    public static let types: Set<FourCC> = ["moof"]
    public var type: FourCC { "moof" }
    /// Its `mfhd` (libavformat reads a fragment without one).
    public var header: MovieFragmentHeader?
    public var trackFragments: [TrackFragment]
    /// The boxes as read, in order; those above are written from their values.
    public var list: BoxList

    /// The most samples a fragment may list, its track fragments together:
    /// hours of audio frames, far past a real fragment's hundreds, far below
    /// what would exhaust the memory (a run whose samples all take the
    /// defaults declares them in 4 bytes).
    public static let sampleLimit = 1 << 22

    public init(header: MovieFragmentHeader, trackFragments: [TrackFragment]) {
        (self.header, self.trackFragments, list) = (header, trackFragments, BoxList())
    }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        list = try BoxList(parsing: payload, prefix: 0, type: type)
        header = try list.value("mfhd", as: MovieFragmentHeader.self)
        trackFragments = []
        var total = 0
        for box in list.boxes where box.type == "traf" {
            let traf = try TrackFragment(box)
            total += traf.runs.reduce(0) { $0 + $1.entries.count }
            guard total <= Self.sampleLimit else { throw .tooManyEntries(type, declared: total, limit: Self.sampleLimit) }
            trackFragments.append(traf)
        }
    }

    public func encode() -> [UInt8] {
        list.setting("mfhd", to: header.map { [$0] } ?? [], onlyFirst: true)
            .setting("traf", to: trackFragments, after: "mfhd")
            .encode()
    }
}
