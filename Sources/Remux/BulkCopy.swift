import CFFmpeg
import Glibc
import Media
import Pipeline

/// The remux of an MP4, MOV or M4A into the same kind of file with nothing
/// changed but the index's place: the media data copied as it is
/// (`copy_file_range`: the kernel copies it, file to file, without a pass
/// through this process's memory), the index (`moov`) written in front with its chunk
/// offsets moved (`MovieLayout`). Every packet, edit list, tag and track is
/// the input's. Taken only when the options ask for nothing else; any
/// other remux goes through libavformat.
func bulkRemux(_ input: InputFile, output outputPath: String, container: Container, options: RemuxOptions,
               cancellation: Cancellation, progress: ((RemuxProgress) -> Void)?) throws(MediaError) -> RemuxReport? {
    guard options.bulk, bulkOptionsAllow(options), container.isISOBMFF, input.formatName.hasPrefix("mov"),
          input.indexCoverage != nil, input.cutOffError("could not remux") == nil else { return nil }
    let began = ContinuousClock.now
    let fd = open(input.path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
    let size = Int64(st.st_size)
    let layout: MovieLayout
    do {
        layout = try MovieLayout(fileSize: size, alignment: 4096) { FileBytes.read(fd, $0, $1) }
    } catch {
        return nil
    }
    // The kind of file by its major brand (a file without `ftyp` is classic QuickTime).
    let ftyp = layout.boxes.first { $0.type == "ftyp" }
    let brand = ftyp.map { FileBytes.read(fd, $0.start + 8, 4) ?? [] } ?? Array("qt  ".utf8)
    guard family(brand: brand) == container.muxer else { return nil }
    // Every stream's packets, from the index the demuxer read (the report's counts).
    var streams: [RemuxStreamReport] = []
    for s in input.streams {
        guard let packets = s.indexedPackets else { return nil }
        streams.append(RemuxStreamReport(inputIndex: s.index, outputIndex: s.index, type: s.mediaType, codec: s.codecName,
                                         packets: packets.count, bytes: packets.reduce(0) { $0 + Int64($1.size) }))
    }

    let staged = try StagedOutput(target: outputPath, overwrite: options.overwrite, inputs: [input.path])
    let out = try FileBytes.create(staged.temporary, reportingAs: outputPath)
    defer { close(out) }
    // The output's blocks reserved at once (as `FileOutput` does): the
    // filesystem allocates them in one go, and a disk without the room is
    // found before the copy. Only a help where it cannot.
    let total = layout.pieces.reduce(Int64(0)) { sum, piece in
        if case .input(_, let count) = piece { sum + count } else { sum + Int64(layout.index.count) }
    }
    _ = avtool_reserve_blocks(out, 0, total)
    var written: Int64 = 0
    let duration = input.duration?.seconds
    for piece in layout.pieces {
        switch piece {
        case .index:
            try FileBytes.write(out, layout.index, path: outputPath)
            written += Int64(layout.index.count)
        case .input(let start, let count):
            try FileBytes.copy(from: fd, at: start, count: count, to: out, path: outputPath, cancellation: cancellation) { n in
                written += n
                if let progress {
                    let fraction = Double(written) / Double(max(size, 1))
                    progress(RemuxProgress(bytesRead: written, inputSize: size, position: (duration ?? 0) * fraction,
                                           duration: duration))
                }
            }
        }
    }
    // The input must be the file whose index was read.
    if let changed = input.changedError() { throw changed }
    try staged.commit()
    var report = RemuxReport(input: input.path, output: outputPath, container: container.name, streams: streams, dropped: [])
    report.outputBytes = written
    report.durationSeconds = duration
    report.indexPlacement = (layout.indexAlreadyInFront ? "already in front" : "moved to the front")
        + ": the media data copied as it is, the index's chunk offsets moved"
        + (layout.widened > 0 ? " (\(layout.widened) offset table(s) widened to 64 bits)" : "")
    report.elapsedSeconds = (ContinuousClock.now - began).seconds
    return report
}

/// Options that leave the file as it is but for the index's place.
private func bulkOptionsAllow(_ o: RemuxOptions) -> Bool {
    o.faststart && o.edits.isEmpty && o.streams == StreamSelection() && o.start == .zero && o.repair == .fix
        && !o.salvage && o.indexReservationAdjustment == 0
}

/// The muxer that writes what a major brand names: QuickTime, iTunes audio, else MP4.
private func family(brand: [UInt8]) -> String {
    switch String(decoding: brand, as: UTF8.self) {
    case "qt  ": "mov"
    case "M4A ", "M4B ": "ipod"
    default: "mp4"
    }
}

