import FileAccess
import Glibc
import ISOBMFF
import Media
import Pipeline
import Threads

/// The remux of an MP4, MOV or M4A into the same kind of file with nothing
/// changed but the index's place and what `--metadata`, `--rotate` and
/// `--creation-time` ask: the media data copied as it is
/// (`copy_file_range`: the kernel copies it, file to file, without a pass
/// through this process's memory), the index (`moov`) written in front with its chunk
/// offsets moved (`MovieLayout`) and the edits made in its boxes
/// (`IndexEdits`). Every packet, edit list, track and tag not edited is the
/// input's. Decided, checked and written from the file's own boxes: the
/// sample tables say whether every chunk is in the file (a file cut off
/// is left to the muxer's way, which refuses it), and libavformat reads
/// only the index with its sample tables emptied (`MovieLayout.hollowIndex`:
/// the streams, their tags and matrices, no entry per packet), so the
/// memory taken grows with the tables alone. Edits are only kept this way when the new index
/// holds exactly the tags and display matrices the muxer's way would be given
/// (`MetadataEdits.applied`): read from its boxes as libavformat's demuxer
/// reads them (`MovieLayout.holdsEdits`), or where they cannot tell, read
/// back by libavformat the same way. Taken only when the options ask
/// for nothing else; any other remux goes through libavformat (nil).
func bulkRemux(path: String, output outputPath: String, container: Container, options: RemuxOptions,
               cancellation: Cancellation, progress: ((RemuxProgress) -> Void)?) throws(MediaError) -> RemuxReport? {
    guard options.bulk, !options.encodeAudioToAAC, bulkOptionsAllow(options), container.isISOBMFF else { return nil }
    let began = ContinuousClock.now
    guard let fd = try? OpenFile(path: path, O_RDONLY), let identity = FileIdentity(file: fd), identity.size > 0 else { return nil }
    let size = identity.size
    guard let top = try? MovieLayout.topLevelBoxes(fileSize: size, read: { try? fd.read($1, at: $0) }),
          let first = top.first, ["ftyp", "wide", "free", "skip", "mdat", "moov"].contains(first.type) else { return nil }
    // The kind of file by its major brand (a file without `ftyp` is classic QuickTime).
    let ftyp = top.first { $0.type == "ftyp" }
    let brand = ftyp.map { (try? fd.read(4, at: $0.start + 8)) ?? [] } ?? Array("qt  ".utf8)
    guard family(brand: brand) == container.muxer else { return nil }
    let staged = try StagedOutput(target: outputPath, overwrite: options.overwrite, inputs: [path])
    let out = try FileBytes.create(staged.temporary, reportingAs: outputPath)
    // The media data's copy starts now, at the place the index's size foretells (`EarlyCopy`): the
    // padding that keeps the data's place within a page takes up an edit's few bytes too.
    let early = EarlyCopy(boxes: top, size: size, alignment: 4096, from: fd, to: out, path: outputPath, cancellation: cancellation)
    // Its thread ends before the files it copies between are closed, whatever ends this.
    defer { early?.stop() }
    if let early {
        // The output's blocks reserved at once (as `FileOutput` does): allocated in one go, a full disk found first.
        try? out.reserve(early.indexSize + early.copyCount + (ftypSize(top)))
    }
    // Laid out once it is known with which edits (`BulkPlan`).
    let plain: MovieLayout
    do {
        plain = try MovieLayout.parsed(fileSize: size, alignment: 4096) { try? fd.read($1, at: $0) }
    } catch {
        return nil
    }
    // Every track's samples listed by tables that agree, and all of them in the file.
    guard let tracks = plain.tracks, tracks.allSatisfy({ $0.samples > 0 && $0.lies(within: size) }) else { return nil }
    let head = ftyp.flatMap { try? fd.read(Int($0.size), at: $0.start) } ?? []
    let edits = options.edits, mov = container.muxer == "mov"
    // The streams (for the report and the edits' targets): named from the boxes, without
    // loading libavformat, where every track's is known there and no cover art or chapter
    // track can make another; else as libavformat makes them of the index alone.
    let named = plain.sourceIndex.tracks.compactMap(\.knownStream)
    let planned: BulkPlan?
    if named.count == tracks.count, plain.sourceIndex.tracks.count == tracks.count, !plain.mayHoldCoverArt,
       !plain.sourceIndex.tracks.contains(where: { $0.references.contains { $0.type == "chap" } }) {
        planned = try BulkPlan(boxes: plain, named: named, tracks: tracks, head: head, path: path, edits: edits, quickTime: mov)
    } else {
        planned = try BulkPlan(index: plain, tracks: tracks, head: head, path: path, identity: identity, edits: edits,
                               quickTime: mov)
    }
    guard let planned else { return nil }
    let (layout, streams, duration, check) = (planned.layout, planned.streams, planned.duration, planned.check)

    // The check's thread ends before this does, whatever ends it.
    defer { check?.thread.join() }
    let total = layout.pieces.reduce(Int64(0)) { sum, piece in
        if case .input(_, let count) = piece { sum + count } else { sum + Int64(layout.index.count) }
    }
    let tell = progress.map { progress in
        { (n: Int64) -> Void in
            progress(RemuxProgress(bytesRead: n, inputSize: size, position: (duration ?? 0) * Double(n) / Double(max(total, 1)),
                                   duration: duration))
        }
    }
    let written: Int64
    if let early, let copied = try early.keep(layout, copied: tell) {
        // The copy was where the layout puts it: the pieces before it (`ftyp`, the index) written in front.
        written = try writeFront(layout, from: fd, to: out, path: outputPath, cancellation: cancellation) + copied
    } else {
        // Written from the start (an early copy's bytes, if any, dropped).
        if early != nil { try MediaError.files("could not write output") { () throws(FileError) in try out.truncate(to: 0) } }
        // The output's blocks reserved at once (as `FileOutput` does): the
        // filesystem allocates them in one go, and a disk without the room is
        // found before the copy. Only a help where it cannot.
        try? out.reserve(total)
        written = try copy(layout, from: fd, size: size, duration: duration, to: out, path: outputPath,
                           cancellation: cancellation, progress: progress)
    }
    if let check {
        check.thread.join()
        // Not what the muxer's way would write: the copy is let go (the staged output goes with it).
        guard check.holds.withLock({ $0 }) else { return nil }
    }
    // The input must be the file whose index was read, the output hold its tracks as they were.
    if let changed = FileIdentity.changedError(path: path, since: identity) { throw changed }
    try OutputCheck.verify(path: staged.temporary, name: outputPath, sameTracksAs: plain.sourceIndex)
    try staged.commit()
    var report = RemuxReport(input: path, output: outputPath, container: container.name, streams: streams, dropped: [])
    report.outputBytes = written
    report.durationSeconds = duration
    report.indexPlacement = (layout.indexAlreadyInFront ? "already in front" : "moved to the front")
        + ": the media data copied as it is, the index's chunk offsets moved"
        + (layout.widened > 0 ? " (\(layout.widened) offset table(s) widened to 64 bits)" : "")
        + (options.edits.isEmpty ? "" : ", the tags and matrices edited in the index")
    report.elapsedSeconds = (ContinuousClock.now - began).seconds
    return report
}

/// The bytes of a file's `ftyp` box (0 without one).
private func ftypSize(_ boxes: [MovieLayout.TopBox]) -> Int64 { boxes.first { $0.type == "ftyp" }?.size ?? 0 }

/// The pieces of the output before the index and the index itself, at
/// their places (the rest was copied there beforehand). The bytes written.
private func writeFront(_ layout: MovieLayout, from fd: OpenFile, to out: OpenFile, path outputPath: String,
                        cancellation: Cancellation) throws(MediaError) -> Int64 {
    var at: Int64 = 0
    for piece in layout.pieces {
        switch piece {
        case .index:
            StopPoint.index.reached()
            try MediaError.files("could not write output") { () throws(FileError) in try out.write(layout.index, at: at) }
            return at + Int64(layout.index.count)
        case .input(let start, let count):
            try FileBytes.copy(from: fd, at: start, count: count, to: out, at: at, path: outputPath, cancellation: cancellation) { _ in }
            at += count
        }
    }
    return at
}

/// The pieces of the output in order: the index, and the media data copied
/// from the input as it is. The bytes written.
private func copy(_ layout: MovieLayout, from fd: OpenFile, size: Int64, duration: Double?, to out: OpenFile, path outputPath: String,
                  cancellation: Cancellation, progress: ((RemuxProgress) -> Void)?) throws(MediaError) -> Int64 {
    var written: Int64 = 0
    for piece in layout.pieces {
        switch piece {
        case .index:
            StopPoint.index.reached()
            try MediaError.files("could not write output") { () throws(FileError) in try out.append(layout.index) }
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
    return written
}

/// What the bulk copy writes: the index laid out (edited), the streams for
/// the report, the duration, and the edits' check where it runs beside the
/// copy. nil where the copy cannot be the muxer's equal.
private struct BulkPlan {
    let layout: MovieLayout
    let streams: [RemuxStreamReport]
    let duration: Double?
    var check: (thread: WorkerThread, holds: Locked<Bool>)?

    /// The streams named from the boxes; an edited index checked on its
    /// boxes (`MovieLayout.holdsEdits`) or, where they cannot tell, read
    /// back by libavformat (loaded for it) on a thread of its own while the
    /// media data is copied — the copy is kept only if it holds the edits.
    /// Where no thread can be started, here.
    init?(boxes plain: MovieLayout, named: [(type: MediaType, codec: String)], tracks: [TrackSamples], head: [UInt8], path: String,
          edits metadata: MetadataEdits, quickTime: Bool) throws(MediaError) {
        duration = plain.movieDuration
        streams = zip(named, tracks).enumerated().map { j, pair in
            RemuxStreamReport(inputIndex: j, outputIndex: j, type: pair.0.type, codec: pair.0.codec,
                              packets: pair.1.samples, bytes: pair.1.bytes)
        }
        let kinds = named.map { EditedStream($0.type, attachedPicture: false) }
        guard let edits = try indexEdits(metadata, kinds: kinds, quickTime: quickTime),
              let edited = try? plain.laidOut(edits) else { return nil }
        layout = edited
        // Read from the boxes as the demuxer reads them, where they tell: libavformat is not loaded.
        if edits.isEmpty || edited.holdsEdits(metadata, streams: kinds, head: head) { return }
        let old = plain.hollowIndex(rewritten: false, head: head), new = edited.hollowIndex(rewritten: true, head: head)
        let holds = Locked(false)
        let verdict: @Sendable () -> Void = {
            guard let memory = try? MemoryInput(old),
                  let before = try? InputFile(memory: memory, name: path, packetsOnly: true, format: "mov") else { return }
            let ok = holdsEdits(new, before: before, name: path, edits: metadata)
            holds.withLock { $0 = ok }
        }
        if let thread = try? WorkerThread(verdict) {
            check = (thread, holds)
        } else {
            verdict()
            guard holds.withLock({ $0 }) else { return nil }
        }
    }

    /// The streams as libavformat makes them of the index alone (its
    /// sample tables emptied), an edited index checked by it here.
    init?(index plain: MovieLayout, tracks: [TrackSamples], head: [UInt8], path: String, identity: FileIdentity,
          edits metadata: MetadataEdits, quickTime: Bool) throws(MediaError) {
        guard let memory = try? MemoryInput(plain.hollowIndex(rewritten: false, head: head)),
              let opened = try? InputFile(index: memory, of: path, identity: identity, sourceIndex: plain.sourceIndex) else { return nil }
        // A stream of each track, in order, and one of each cover picture (an item of the index, not a track).
        guard opened.streams.filter({ !$0.isAttachedPicture }).count == tracks.count else { return nil }
        guard let edits = try indexEdits(metadata, kinds: opened.streams.map(\.edited), quickTime: quickTime) else { return nil }
        guard let edited = try? plain.laidOut(edits),
              edits.isEmpty || holdsEdits(edited.hollowIndex(rewritten: true, head: head), before: opened, name: path, edits: metadata)
        else { return nil }
        layout = edited
        var reports: [RemuxStreamReport] = []
        var track = 0
        for s in opened.streams {
            // Cover art is an item of the index, not a track: kept with it.
            if let bytes = s.attachedPictureBytes {
                reports.append(RemuxStreamReport(inputIndex: s.index, outputIndex: s.index, type: s.mediaType, codec: s.reportedCodec,
                                                 packets: 1, bytes: Int64(bytes)))
                continue
            }
            let t = tracks[track]
            track += 1
            reports.append(RemuxStreamReport(inputIndex: s.index, outputIndex: s.index, type: s.mediaType, codec: s.reportedCodec,
                                             packets: t.samples, bytes: t.bytes))
        }
        streams = reports
        duration = opened.duration?.seconds
    }
}

/// Options that leave the file as it is but for the index's place and its tags.
private func bulkOptionsAllow(_ o: RemuxOptions) -> Bool {
    o.faststart && o.edits.chapterWindow == nil && o.streams == StreamSelection() && o.start == .zero && o.repair == .fix
        && !o.salvage && o.indexReservationAdjustment == 0
}

/// `edits` as changes to the input's index; nil when they are not all of
/// a kind made there (the muxer's way then makes them). An edit naming a
/// stream the file does not have is the same error as on that way.
private func indexEdits(_ edits: MetadataEdits, kinds: [EditedStream], quickTime: Bool) throws(MediaError) -> IndexEdits? {
    var result = IndexEdits(family: quickTime ? .quickTime : .iso)
    guard !edits.isEmpty else { return result }
    // The demuxer makes a stream of each track, in order, and one of each
    // cover picture (an iTunes item, not a track): stream N's track is its
    // place among the others. (The read-back check holds that to account.)
    var track: [Int: Int] = [:]
    for j in kinds.indices where kinds[j] != .picture { track[j] = track.count }
    if let t = edits.creationTime {
        // Cover art cannot hold a creation time of its own.
        guard !kinds.contains(.picture), let seconds = MetadataEdits.epochSeconds(t) else { return nil }
        result.creationTime = seconds
        result.creationTimeText = t
    }
    if let degrees = edits.rotation {
        for j in kinds.indices where kinds[j] == .video { result.matrices[track[j]!] = MetadataEdits.displayMatrix(degrees) }
    }
    for tag in edits.tags {
        guard tag.key.lowercased() != "creation_time" else { return nil }
        guard tag.streams != nil else {
            result.fileTags.append((tag.key, tag.value))
            continue
        }
        let targets = try tag.targets(kinds)
        // Cover art has neither a language nor a handler of its own.
        let tracks = targets.compactMap { track[$0] }
        guard ["language", "handler_name"].contains(tag.key.lowercased()), tracks.count == targets.count else { return nil }
        for t in tracks { result.trackTags[t, default: []].append((tag.key, tag.value)) }
    }
    return result
}

/// Whether `head` (the output's `ftyp` and new index, its sample tables
/// emptied), read by libavformat, holds the tags and display matrices that
/// `before` (the input's, read the same way) would be given by `edits`
/// (`MetadataEdits.applied`, what the muxer's way is given) and nothing
/// else. Both are read without their media data, so what the demuxer takes
/// from it (a timecode track's first sample) reads the same in both.
private func holdsEdits(_ head: [UInt8], before old: InputFile, name: String, edits: MetadataEdits) -> Bool {
    func read(_ bytes: [UInt8]) -> InputFile? {
        guard let memory = try? MemoryInput(bytes) else { return nil }
        return try? InputFile(memory: memory, name: name, packetsOnly: true, format: "mov")
    }
    let wanted: (tags: IntendedTags, matrices: [[Int32]?])
    guard let tags = try? edits.applied(to: old.tags, streams: old.streams.map(\.edited)) else { return false }
    // A turn replaces the matrix of video (not cover art); the rest keep theirs.
    wanted = (tags, old.streams.map { s in
        edits.rotation.flatMap { s.edited == .video ? MetadataEdits.displayMatrix($0) : nil } ?? s.displayMatrix
    })
    guard let new = read(head), new.streams.count == wanted.matrices.count else { return false }
    let got = new.tags
    guard TagCheck.sameTags(got.format, wanted.tags.format),
          zip(got.streams, wanted.tags.streams).allSatisfy({ TagCheck.sameTags($0, $1) }) else { return false }
    let identity = MetadataEdits.displayMatrix(0)
    return zip(wanted.matrices, new.streams).allSatisfy { ($0 ?? identity) == ($1.displayMatrix ?? identity) }
}

/// The muxer that writes what a major brand names: QuickTime, iTunes audio,
/// 3GPP (`3gp4`…`3gp9`, `3gr6`, `3gs6`…), 3GPP2 (`3g2a`…, KDDI's `kddi`), else MP4.
private func family(brand: [UInt8]) -> String {
    let name = String(decoding: brand, as: UTF8.self)
    switch name {
    case "qt  ": return "mov"
    case "M4A ", "M4B ": return "ipod"
    case "kddi": return "3g2"
    default:
        if name.hasPrefix("3g2") { return "3g2" }
        if name.hasPrefix("3g") { return "3gp" }
        return "mp4"
    }
}
