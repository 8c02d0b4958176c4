import Media
import Sync

extension MuxSession {
    /// An AMR packet of several frames written a frame a packet, each timed
    /// at its place; returns the first frame's output timing. The packet is
    /// blank afterwards.
    func writeFrames(_ packet: borrowing Packet, _ frames: [Range<Int>], track: Int) throws(MediaError) -> PacketTiming {
        let amr = tracks[track].amr!
        let part = try Packet()
        var first: PacketTiming?
        for (i, range) in frames.enumerated() {
            try amr.frames.cut(packet, frame: i, at: range, into: part, sampleRate: amr.sampleRate, timeBase: amr.timeBase)
            let mapped = try write(part, track: track)
            if first == nil { first = mapped }
        }
        packet.unref()
        return first!
    }
}
