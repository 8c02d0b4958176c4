/// `traf`: one track's part of a movie fragment (ISO/IEC 14496-12 8.8.6):
/// its header, the decode time it starts at, its runs of samples. Every
/// other box in it (sample groups, `saiz`/`saio`, `senc`, `sdtp`…) is kept
/// byte for byte, in its place.
public struct TrackFragment: BoxPayload {
    public static let types: Set<FourCC> = ["traf"]
    public var type: FourCC { "traf" }
    public var header: TrackFragmentHeader
    public var decodeTime: TrackFragmentDecodeTime?
    public var runs: [TrackRun]
    /// The boxes as read, in order; those above are written from their values.
    public var list: BoxList

    public init(header: TrackFragmentHeader, decodeTime: TrackFragmentDecodeTime? = nil, runs: [TrackRun]) {
        (self.header, self.decodeTime, self.runs, list) = (header, decodeTime, runs, BoxList())
    }

    public init(parsing payload: ArraySlice<UInt8>, type: FourCC) throws(BoxError) {
        list = try BoxList(parsing: payload, prefix: 0, type: type)
        guard let header = try list.value("tfhd", as: TrackFragmentHeader.self) else { throw .lacksChild("tfhd", in: type) }
        self.header = header
        decodeTime = try list.value("tfdt", as: TrackFragmentDecodeTime.self)
        runs = []
        var total = 0
        for box in list.boxes where box.type == "trun" {
            let run = try TrackRun(box)
            total += run.entries.count
            // Checked run by run: no more than one run's entries are held past the limit.
            guard total <= MovieFragment.sampleLimit else { throw .tooManyEntries(type, declared: total, limit: MovieFragment.sampleLimit) }
            runs.append(run)
        }
    }

    public func encode() -> [UInt8] {
        list.setting("tfhd", to: [header], onlyFirst: true)
            .setting("tfdt", to: decodeTime.map { [$0] } ?? [], after: "tfhd", onlyFirst: true)
            .setting("trun", to: runs, after: decodeTime == nil ? "tfhd" : "tfdt")
            .encode()
    }
}
