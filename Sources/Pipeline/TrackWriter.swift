import Media
import Sync

/// Writes one output track of a `MuxSession` from the packets of one input
/// stream at a time: a copy passes them through, a re-encoder decodes and
/// encodes them. A verb is a composition of writers: remux copies every
/// track, transcode re-encodes the main video, and so on.
public protocol TrackWriter: AnyObject {
    /// The output track this writer fills.
    var track: Int { get }
    /// Takes the next packet of the current input stream (its own timing).
    func send(_ packet: borrowing Packet) throws(MediaError)
    /// Ends the current input stream (a segment); the next one continues
    /// the track.
    func endSegment() throws(MediaError)
    /// Flushes everything held (decoders, encoders) into the session.
    func finish() throws(MediaError)
    /// Whether the writer takes no more packets (a cut's track past its range).
    var ended: Bool { get }
}

extension TrackWriter {
    /// Nothing is held between segments.
    public func endSegment() {}
    /// A writer takes every packet of its stream.
    public var ended: Bool { false }
}

/// Stream copy: every packet goes to the track as it is; only its timing
/// moves, through the session's timeline for the track.
public final class CopyWriter: TrackWriter {
    public let track: Int
    private let session: MuxSession

    public init(track: Int, session: MuxSession) {
        self.track = track
        self.session = session
    }

    public func send(_ packet: borrowing Packet) throws(MediaError) {
        try session.write(packet, track: track)
    }

    public func finish() {}
}

/// Decodes and encodes again, passing each encoded packet (timing in the
/// encoder's time base) to `emit`: `AudioReencoder`, `VideoReencoder`.
/// The encoder exists before the output does (its stream is part of the
/// output's fixed stream set).
public protocol Reencoder: AnyObject {
    var encoder: Encoder { get }
    func send(_ packet: borrowing Packet, emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError)
    func finish(emit: (borrowing Packet) throws(MediaError) -> Void) throws(MediaError)
}

extension AudioReencoder: Reencoder {}

/// A re-encoded track: the reencoder's packets go to the track, timed in
/// the encoder's time base (start the track's timeline with
/// `retimedIn: reencoder.encoder.timeBase`).
public final class ReencodeWriter<R: Reencoder>: TrackWriter {
    public let track: Int
    public let reencoder: R
    private let session: MuxSession

    public init(_ reencoder: R, track: Int, session: MuxSession) {
        self.reencoder = reencoder
        self.track = track
        self.session = session
    }

    /// Sees each packet before it is written (a meter of the output).
    public var tap: ((borrowing Packet) throws(MediaError) -> Void)?

    public func send(_ packet: borrowing Packet) throws(MediaError) {
        try reencoder.send(packet, emit: write)
    }

    public func finish() throws(MediaError) {
        try reencoder.finish(emit: write)
    }

    private func write(_ p: borrowing Packet) throws(MediaError) {
        try tap?(p)
        try session.write(p, track: track)
    }
}
