import Media
import Pipeline

/// How a window's packets were read into its encoder (`readWindow`).
enum WindowRead {
    /// Every picture of the window decoded clean (or read from the start).
    case read
    /// After a seek, `pictures` of the window decoded damaged, or the decoder
    /// refused the seek's entry (`pictures` 1): no clean entry point there.
    case damaged(pictures: Int)
    /// The stream could not seek to the window.
    case unseekable
}

/// Sends `s`'s packets from `input` to `encoder` (its `window` set) until it
/// is past its window, each encoded packet to `emit`. With `seek` and a
/// window that starts after the stream's, the read starts at the keyframe
/// before the window, the decoder first given the stream's first packet
/// (`prime`) and let go of it: decoder state a stream sets up once at its
/// start (x264's version SEI, which changes how its 4:4:4 pictures decode;
/// parameter sets sent in band) is then as a decode from the start has it.
/// Such a read stops at the window's first damaged picture; the caller then
/// reads again from the start, as the single pass decodes it. The chunks of
/// a chunked transcode and the quality search's samples are read here.
func readWindow(_ input: InputFile, stream s: Media.InputStream, into encoder: VideoReencoder, seek: Bool,
                prime: Bool = true, operation: String, cancellation: Cancellation,
                emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError) -> WindowRead {
    let lower = encoder.window?.lower
    let seeking = seek && lower != nil
    if seeking, let lower {
        let first = try Packet()
        while prime, try input.read(into: first) {
            guard first.streamIndex == s.index else { continue }
            try encoder.send(first, emit: emit)
            break
        }
        guard input.seek(stream: s.index, toKeyframeBefore: lower) else { return .unseekable }
    }
    var source = try PacketSource(input, kept: [s], salvage: false, operation: operation)
    do {
        try source.readWhile { (packet, _) throws(MediaError) -> Bool in
            try cancellation.check()
            try encoder.send(packet, emit: emit)
            return !encoder.isPastWindow && !(seeking && encoder.damagedInWindow > 0)
        }
    } catch where seeking && error.operation == "could not decode" {
        // The primed decoder refuses the seek's entry (x265's IDRs all
        // count from POC 0: "duplicate POC" after the primed first one).
        return .damaged(pictures: max(1, encoder.damagedInWindow))
    }
    return seeking && encoder.damagedInWindow > 0 ? .damaged(pictures: encoder.damagedInWindow) : .read
}
