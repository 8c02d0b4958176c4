import Media

/// The loop under every single-input verb (remux, transcode, cut, split,
/// the chunk join; repair through remux): each packet of the source, in
/// file order, to its track's writer — a copy, a re-encoder, a cut's
/// selection or splicer, the chunks' interleaver — then every writer
/// finished, in track order. Between packets: cancellation (a writer may
/// take many packets before it writes one) and, every 256th packet,
/// `progress`. With `untilEnded`, reading stops once every writer has
/// ended (a cut's range is over); the rest of the file is not read.
public func runTracks(_ source: inout PacketSource, into writers: [any TrackWriter], cancellation: Cancellation,
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
