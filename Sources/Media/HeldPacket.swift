/// A packet kept back for later (a reference to the demuxer's data, not a
/// copy), with where it belongs: a class, so arrays of them can be held
/// while the reader moves on.
public final class HeldPacket {
    public let packet: Packet
    /// Where the packet belongs (output samples, or ticks), if the holder needs it.
    public let position: Int64?

    public init(_ p: borrowing Packet, position: Int64? = nil) throws(MediaError) {
        packet = try Packet()
        try packet.reference(p)
        self.position = position
    }
}
