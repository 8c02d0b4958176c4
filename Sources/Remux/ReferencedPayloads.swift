import FileAccess
import Glibc
import ISOBMFF
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
        guard input.formatName.hasPrefix("mov"), !kept.isEmpty, Self.smallPackets(kept),
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

    /// Whether the kept streams' packets are small on average (under 24 KiB):
    /// where this way pays. It saves the per-packet work of reading and
    /// writing each payload (about 1.8 µs a packet here) and copies the
    /// bytes in one pass of the kernel, where reading one file while a
    /// thread writes the other goes about 0.1 ms a MB faster: large packets
    /// (a camera's 80 Mb/s, 130 KB each) are copied faster the other way.
    private static func smallPackets(_ kept: [InputStream]) -> Bool {
        let packets = kept.reduce(0) { $0 + $1.indexEntryCount }
        let bytes = kept.reduce(Int64(0)) { $0 + $1.indexedBytes }
        return packets > 0 && bytes / Int64(packets) < 24 << 10
    }

    /// AAC whose first packet starts with an ADTS header: the muxer looks
    /// at that packet and, finding one, rewrites every payload (its
    /// `aac_adtstoasc`), which a named payload would not show it.
    private static func startsWithADTS(_ s: InputStream, in payloads: PayloadReferences) -> Bool {
        guard s.codecName == "aac", let first = s.firstIndexed, first.size > 2 else { return false }
        guard let b = try? payloads.source.read(3, at: first.position), !b.isEmpty else { return true }
        return b.withUnsafeBytes(\.startsWithADTS)
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
    let (scratch, scratchSize) = try MediaError.files("could not write output") { () throws(FileError) in
        let scratch = try OpenFile(path: written.temporary, O_RDONLY, reportingAs: name)
        return (scratch, try scratch.size())
    }
    // The media data placed where most of its bytes lie within a page as in the input: the kernel
    // copies page onto page (a copy shifted within the pages takes half as long again).
    var shifts: [Int64: Int64] = [:]
    for p in payloads.placements { shifts[((p.from - p.at) % 4096 + 4096) % 4096, default: 0] += p.count }
    let phase = shifts.max { $0.value < $1.value }?.key ?? 0
    let layout: MovieLayout
    do {
        layout = try MovieLayout.parsed(fileSize: scratchSize, alignment: 4096) { try? scratch.read($1, at: $0) }
            .laidOut(phase: phase)
    } catch {
        throw MediaError.invalid("could not write output", path: name, message: "its index could not be moved in front (\(error))")
    }
    let out = try FileBytes.create(target.temporary, reportingAs: name)
    let total = layout.pieces.reduce(Int64(0)) { sum, piece in
        if case .input(_, let count) = piece { sum + count } else { sum + Int64(layout.index.count) }
    }
    try? out.reserve(total)
    // The index written, then every run copied at its place.
    var jobs: [CopyJob] = []
    var at: Int64 = 0
    for piece in layout.pieces {
        switch piece {
        case .index:
            try MediaError.files("could not write output") { () throws(FileError) in try out.write(layout.index, at: at) }
            at += Int64(layout.index.count)
        case .input(let start, let count):
            jobs += CopyJob.runs(start..<(start + count), at: at, placed: payloads.placements, input: payloads.source,
                                 scratch: scratch)
            at += count
        }
    }
    _ = try CopyJob.run(jobs, to: out, name: name, inputPath: payloads.path, cancellation: cancellation) { n in
        progress?(RemuxProgress(bytesRead: n, inputSize: total,
                                position: (duration ?? 0) * (0.5 + 0.5 * Double(n) / Double(max(total, 1))), duration: duration))
    }
    return (at, layout)
}

/// A run of the output copied from a file: `count` bytes of `fd` at `from`, to `at`.
private struct CopyJob {
    let fd: OpenFile
    let from: Int64
    let count: Int64
    let at: Int64

    /// The runs of `range` of the muxer's file (`scratch`), placed from `at`
    /// in the output: the input's bytes where a placement puts them
    /// (`placed`, in the order of their places), the muxer's own elsewhere.
    static func runs(_ range: Range<Int64>, at: Int64, placed: [PayloadReferences.Placement], input: OpenFile,
                     scratch: OpenFile) -> [CopyJob] {
        // The first placement that ends after the range starts.
        var lo = 0, hi = placed.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if placed[mid].at + placed[mid].count <= range.lowerBound { lo = mid + 1 } else { hi = mid }
        }
        var jobs: [CopyJob] = []
        var i = lo, position = range.lowerBound
        let shift = at - range.lowerBound
        while position < range.upperBound {
            if i < placed.count, placed[i].at <= position {
                let p = placed[i]
                let n = min(range.upperBound, p.at + p.count) - position
                jobs.append(CopyJob(fd: input, from: p.from + (position - p.at), count: n, at: position + shift))
                position += n
                if position == p.at + p.count { i += 1 }
            } else {
                let next = i < placed.count ? min(placed[i].at, range.upperBound) : range.upperBound
                jobs.append(CopyJob(fd: scratch, from: position, count: next - position, at: position + shift))
                position = next
            }
        }
        return jobs
    }

    /// Copies every job into `out` by the kernel (`copy_file_range`: no
    /// byte through this process), `copied` told every 8 MiB. The bytes copied.
    static func run(_ jobs: [CopyJob], to out: OpenFile, name: String, inputPath: String, cancellation: Cancellation,
                    copied: (Int64) -> Void) throws(MediaError) -> Int64 {
        var done: Int64 = 0, told: Int64 = 0
        for job in jobs {
            try job.copy(to: out, name: name, inputPath: inputPath, cancellation: cancellation) { done += $0 }
            if done - told >= 8 << 20 {
                told = done
                copied(done)
            }
        }
        return done
    }

    func copy(to out: OpenFile, name: String, inputPath: String, cancellation: Cancellation,
              copied: (Int64) -> Void) throws(MediaError) {
        var n: Int64 = 0
        try FileBytes.copy(from: fd, at: from, count: count, to: out, at: at, path: name, cancellation: cancellation) {
            n += $0
            copied($0)
        }
        if n != count {
            throw MediaError.invalid("could not remux", path: inputPath, message: "the input ended early")
        }
    }
}
