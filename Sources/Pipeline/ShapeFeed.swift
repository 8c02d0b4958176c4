import Media
import Threads

/// A `PacketSource` read on a thread of its own, its packets handed over as
/// shapes (timing, size, flags, place, side data; the payload's bytes only
/// for the tracks in `keeping`) in batches, each made a packet again on the
/// caller's thread by `make` (a payload of zeros for a trial write, a
/// reference to the input's bytes for a copy that never reads them). The
/// demuxer's work and its payloads' memory stay on its thread: the two
/// halves run on two cores, and no packet's memory crosses threads. Where
/// no thread can be started, both on the caller's.
public struct ShapeFeed: PacketFeed {
    private let source: HandedOver<PacketSource>
    private let keeping: Set<Int>
    private let make: (borrowing Packet, PacketShape) throws(MediaError) -> Void

    public init(_ source: PacketSource, keeping: Set<Int> = [],
                make: @escaping (borrowing Packet, PacketShape) throws(MediaError) -> Void) {
        self.source = HandedOver(source)
        self.keeping = keeping
        self.make = make
    }

    public mutating func readWhile(_ take: (borrowing Packet, Int) throws(MediaError) -> Bool) throws(MediaError) {
        let packet = try Packet()
        let shapes = BatchQueue<PacketShape, MediaError>(limit: 8)
        let (handed, keeping) = (source, keeping)
        let reader = try? WorkerThread {
            var batch: [PacketShape] = []
            do throws(MediaError) {
                try handed.value.readWhile { (p, j) -> Bool in
                    batch.append(p.shape(track: j, keepingPayload: keeping.contains(j)))
                    guard batch.count == 512 else { return true }
                    let more = shapes.put(batch)
                    batch.removeAll(keepingCapacity: true)
                    return more
                }
                if !batch.isEmpty { _ = shapes.put(batch) }
                shapes.finish(throwing: nil)
            } catch {
                shapes.finish(throwing: error)
            }
        }
        guard let reader else {
            try handed.value.readWhile { (p, j) throws(MediaError) -> Bool in
                try make(packet, p.shape(track: j, keepingPayload: keeping.contains(j)))
                return try take(packet, j)
            }
            return
        }
        defer {
            shapes.close()
            reader.join()
        }
        while let batch = try shapes.take() {
            for shape in batch {
                try make(packet, shape)
                guard try take(packet, shape.track) else { return }
            }
        }
    }
}
