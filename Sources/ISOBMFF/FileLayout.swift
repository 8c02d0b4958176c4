/// A top-level box of a file: its type, where it starts and its size
/// (header included), as its header says; the payload is not read.
public struct TopLevelBox: Sendable, Equatable {
    public var type: FourCC
    public var start: Int64
    public var size: Int64

    public init(type: FourCC, start: Int64, size: Int64) {
        (self.type, self.start, self.size) = (type, start, size)
    }
}

/// The top-level boxes of a file too large to hold in memory, read a
/// header at a time through a reader of the caller's (`pread`, a mapping):
/// the one file-level walk, under the rules of every box walk (`BoxHeader.read`).
public enum FileLayout {
    /// The top-level boxes of a file of `fileSize` bytes read by
    /// `read(offset, count)`; throws, with the file offset, where no whole
    /// box starts (`endsInsideHeader`), or one runs past the end of the file
    /// (`runsPastParent`, `tooLarge`).
    public static func topLevelBoxes(fileSize: Int64, read: (Int64, Int) -> [UInt8]?) throws(BoxError) -> [TopLevelBox] {
        var boxes: [TopLevelBox] = []
        var at: Int64 = 0
        while at < fileSize {
            // Fewer bytes than a box header after the last box (a line end
            // a text-mode copy added): not a box, and nothing a demuxer reads.
            if fileSize - at < 8, !boxes.isEmpty { break }
            guard let h = read(at, 16), h.count >= 8, at <= Int64(Int.max) else { throw .endsInsideHeader(at: Int(clamping: at)) }
            let box: BoxHeader
            do throws(BoxWalkStop) {
                box = try BoxHeader.read(BigEndianReader(h), at: 0, room: Int(clamping: fileSize - at))
            } catch {
                throw BoxError(error, offsetBy: Int(at))
            }
            boxes.append(TopLevelBox(type: box.type, start: at, size: Int64(box.size)))
            at += Int64(box.size)
        }
        return boxes
    }
}

extension BoxError {
    /// The error a walk's stop is, for a walk of bytes that start `offset` into the file.
    init(_ stop: BoxWalkStop, offsetBy offset: Int) {
        switch BoxError(stop) {
        case .endsInsideHeader(let at): self = .endsInsideHeader(at: at + offset)
        case .runsPastParent(let type, let at): self = .runsPastParent(type, at: at + offset)
        case .tooLarge(let type, let at): self = .tooLarge(type, at: at + offset)
        case let other: self = other
        }
    }
}
