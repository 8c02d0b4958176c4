import CFFmpeg
import Glibc
import Media
import Pipeline

/// A stream copy of an MP4/MOV into MP4/MOV whose payloads the muxer
/// writes as they are, done without reading the payloads: the packets are
/// read from the index alone (`HollowFileInput`), each payload named by its
/// place in the input (`PayloadReferences`), and the muxer writes a file
/// that holds everything but those payloads, their places noted and left
/// empty (the index at the end, as a muxer without faststart writes it).
/// That file's index is then moved in front (`MovieLayout`) into the output,
/// and the media data composed there from the input's bytes where the
/// payloads go and the muxer's own bytes around them: one pass of the
/// muxer, no payload read into memory and written out again, no second
/// pass to move the index. The muxer is given the packets as the index
/// lists them, so the output keeps the input's sample tables as they are.
struct ReferencedPackets {
    /// The input read from its index alone (nil once the muxer has written).
    let input: InputFile?
    let payloads: PayloadReferences

    /// What is left after the muxer has written: the payloads' places.
    init(payloads: PayloadReferences) {
        input = nil
        self.payloads = payloads
    }

    /// `input` read again without its media data; nil where a stream's
    /// payloads cannot be named (the muxer looks into them, or the index
    /// does not list every packet) or the file is not one whole MP4/MOV.
    init?(_ input: InputFile, kept: [InputStream], cancellation: Cancellation) {
        guard input.formatName.hasPrefix("mov"), !kept.isEmpty,
              kept.allSatisfy({ s in (payloadBlind(s) || CarriedTrack.carries(s)) && (s.isAttachedPicture || s.indexLiesInFile) }),
              let boxes = TopLevelBoxes(path: input.path), !boxes.hasFragments, !boxes.cutShort, !boxes.mediaData.isEmpty,
              let hollow = try? HollowFileInput(path: input.path, holes: boxes.mediaData.map { Int64($0.lowerBound)..<Int64($0.upperBound) }),
              let read = try? InputFile(hollow: hollow, name: input.path, format: "mov", cancellation: cancellation),
              read.streams.count == input.streams.count,
              let payloads = try? PayloadReferences(path: input.path),
              !kept.contains(where: { Self.startsWithADTS($0, in: payloads) })
        else { return nil }
        self.input = read
        self.payloads = payloads
    }

    /// AAC whose first packet starts with an ADTS header: the muxer looks
    /// at that packet and, finding one, rewrites every payload (its
    /// `aac_adtstoasc`), which a named payload would not show it.
    private static func startsWithADTS(_ s: InputStream, in payloads: PayloadReferences) -> Bool {
        guard s.codecName == "aac", let first = s.firstIndexed, first.size > 2 else { return false }
        guard let b = FileBytes.read(payloads.source, first.position, 2) else { return true }
        return b[0] == 0xFF && b[1] & 0xF0 == 0xF0
    }

    /// The packets of `source` (reading the kept streams of `input`), each
    /// payload named; read where the session keeps it itself (a track carried
    /// past the muxer), cover art as it came with the index.
    func feed(_ source: PacketSource, kept: [InputStream], container: Container) -> ShapeFeed {
        let filled = Set(kept.indices.filter { container.isISOBMFF && CarriedTrack.carries(kept[$0]) })
        let pictures = Set(kept.indices.filter { kept[$0].isAttachedPicture })
        let payloads = payloads
        return ShapeFeed(source, keeping: pictures) { (packet, shape) throws(MediaError) in
            if filled.contains(shape.track) || pictures.contains(shape.track) {
                try payloads.fill(packet, as: shape)
            } else {
                try payloads.refer(packet, as: shape)
            }
        }
    }
}

/// Writes `target`'s temporary from `written` (what the muxer wrote,
/// payloads left empty, their places in `payloads`): its index in front,
/// the media data with the input's bytes in place. The bytes written.
func compose(_ written: StagedOutput, with payloads: PayloadReferences, into target: StagedOutput, duration: Double?,
             cancellation: Cancellation, progress: ((RemuxProgress) -> Void)?) throws(MediaError) -> (bytes: Int64, layout: MovieLayout) {
    let name = target.target
    let scratch = open(written.temporary, O_RDONLY | O_CLOEXEC)
    guard scratch >= 0 else { throw MediaError.posix(errno, "could not write output", path: name) }
    defer { close(scratch) }
    var st = stat()
    guard fstat(scratch, &st) == 0 else { throw MediaError.posix(errno, "could not write output", path: name) }
    let layout: MovieLayout
    do {
        layout = try MovieLayout(fileSize: Int64(st.st_size)) { FileBytes.read(scratch, $0, $1) }
    } catch {
        throw MediaError.invalid("could not write output", path: name, message: "its index could not be moved in front (\(error))")
    }
    let out = try FileBytes.create(target.temporary, reportingAs: name)
    defer { close(out) }
    let total = layout.pieces.reduce(Int64(0)) { sum, piece in
        if case .input(_, let count) = piece { sum + count } else { sum + Int64(layout.index.count) }
    }
    _ = avtool_reserve_blocks(out, 0, total)
    var writer = ComposedOutput(out: out, name: name, input: payloads.source, inputPath: payloads.path, scratch: scratch,
                                cancellation: cancellation) { n in
        progress?(RemuxProgress(bytesRead: n, inputSize: total,
                                position: (duration ?? 0) * (0.5 + 0.5 * Double(n) / Double(max(total, 1))), duration: duration))
    }
    let placed = payloads.placements
    for piece in layout.pieces {
        switch piece {
        case .index:
            try writer.bytes(layout.index)
        case .input(let start, let count):
            try writer.compose(start..<(start + count), placed: placed)
        }
    }
    return (writer.written, layout)
}

/// The output's bytes in order, from three places: bytes given, the
/// muxer's file (`scratch`) and the input; each run of the files copied by
/// the kernel (`copy_file_range`), however short: the kernel's copy of a
/// run of a few kilobytes costs less than reading it in and writing it out.
private struct ComposedOutput {
    let out: Int32
    let name: String
    let input: Int32
    let inputPath: String
    let scratch: Int32
    let cancellation: Cancellation
    let copied: (Int64) -> Void
    private(set) var written: Int64 = 0
    /// Where progress was last told.
    private var told: Int64 = 0

    init(out: Int32, name: String, input: Int32, inputPath: String, scratch: Int32, cancellation: Cancellation,
         copied: @escaping (Int64) -> Void) {
        (self.out, self.name, self.input, self.inputPath, self.scratch) = (out, name, input, inputPath, scratch)
        self.cancellation = cancellation
        self.copied = copied
    }

    mutating func bytes(_ b: [UInt8]) throws(MediaError) {
        try FileBytes.write(out, b, path: name)
        written += Int64(b.count)
    }

    /// The bytes of `range` of the muxer's file: the input's where a
    /// placement puts them (`placed`, in the order of their places), the
    /// muxer's own elsewhere.
    mutating func compose(_ range: Range<Int64>, placed: [PayloadReferences.Placement]) throws(MediaError) {
        // The first placement that ends after the range starts.
        var lo = 0, hi = placed.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if placed[mid].at + placed[mid].count <= range.lowerBound { lo = mid + 1 } else { hi = mid }
        }
        var i = lo, at = range.lowerBound
        while at < range.upperBound {
            if i < placed.count, placed[i].at <= at {
                let p = placed[i]
                let n = min(range.upperBound, p.at + p.count) - at
                try copy(from: input, at: p.from + (at - p.at), count: n, source: inputPath)
                at += n
                if at == p.at + p.count { i += 1 }
            } else {
                let next = i < placed.count ? min(placed[i].at, range.upperBound) : range.upperBound
                try copy(from: scratch, at: at, count: next - at, source: name)
                at = next
            }
        }
    }

    private mutating func copy(from fd: Int32, at start: Int64, count: Int64, source: String) throws(MediaError) {
        guard count > 0 else { return }
        let before = written
        try FileBytes.copy(from: fd, at: start, count: count, to: out, path: name, cancellation: cancellation) { n in
            written += n
        }
        if written - before != count {
            throw MediaError.invalid("could not remux", path: source, message: "the input ended early")
        }
        if written - told >= 8 << 20 {
            told = written
            try cancellation.check()
            copied(written)
        }
    }
}
