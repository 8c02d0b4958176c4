import Media

/// Where a run loop's packets come from, each with its output track: one
/// file in file order (`PacketSource`), or the segments of an assembly
/// (merge, concat, fill-silence), each read in output-time order across
/// its files. `take` returns false to stop reading.
public protocol PacketFeed {
    mutating func readWhile(_ take: (borrowing Packet, Int) throws(MediaError) -> Bool) throws(MediaError)
}

extension PacketSource: PacketFeed {}

/// The loop under every verb (remux, transcode, cut, split, the chunk
/// join, merge, concat, fill-silence; repair through remux): each packet
/// of the feed, in its order, to its track's writer — a copy, a
/// re-encoder, a cut's selection or splicer, the chunks' interleaver, an
/// assembly's placed audio — then every writer finished, in track order. Between packets: cancellation (a writer may
/// take many packets before it writes one) and, every 256th packet,
/// `progress`. With `untilEnded`, reading stops once every writer has
/// ended (a cut's range is over); the rest of the file is not read.
public func runTracks<Feed: PacketFeed>(_ source: inout Feed, into writers: [any TrackWriter], cancellation: Cancellation,
                      untilEnded: Bool = false, progress: (() -> Void)? = nil) throws(MediaError) {
    var throttle = ProgressThrottle()
    try source.readWhile { (packet, j) throws(MediaError) -> Bool in
        try cancellation.check()
        try writers[j].send(packet)
        if let progress, throttle.due() { progress() }
        return !untilEnded || !writers.allSatisfy(\.ended)
    }
    for w in writers { try w.finish() }
}
