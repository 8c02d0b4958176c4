import FileNames
import Media
import Sync

extension ProbeReport {
    /// The human-readable report `avtool probe` prints without `--json`.
    public var text: String {
        var lines: [String] = []
        var head = "\(escapedForTerminal(file)): \(format)"
        if let d = durationSeconds { head += ", \(formatSeconds(d))" }
        if let b = bitRate { head += ", \(b / 1000) kb/s" }
        if let s = size { head += ", \(formatBytes(s))" }
        lines.append(head)
        if let s = startSeconds, s != 0 { lines.append("  start \(formatSeconds(s))") }
        let fileTags = orderedTags(tags)
        for (key, value) in fileTags.prefix(Self.tagsShown) { lines.append("  \(key): \(value)") }
        if fileTags.count > Self.tagsShown { lines.append("  … \(fileTags.count - Self.tagsShown) more tags (see --json)") }
        if let cut = cutOff { lines.append("  CUT OFF: \(cut) ('avtool repair' or --salvage keeps every complete packet)") }
        if chapters > 0 { lines.append("  chapters: \(chapters)") }
        for s in streams {
            var l = "  #\(s.index) \(s.type.rawValue) \(s.codec)"
            if let p = s.profile { l += " (\(p))" }
            if let t = s.codecTag { l += " [\(t)]" }
            if let v = s.video {
                l += ", \(v.width)x\(v.height)"
                if let f = v.frameRateValue { l += ", \(trim(f)) fps" }
                if let p = v.pixelFormat { l += ", \(p)" }
                let color = [v.colorRange, v.colorPrimaries, v.colorTransfer, v.colorSpace].compactMap { $0 }
                if !color.isEmpty { l += " (\(color.joined(separator: "/")))" }
                if let r = v.rotation, r != 0 { l += ", rotation \(trim(r))°" }
            }
            if let a = s.audio {
                l += ", \(a.sampleRate) Hz, \(a.channelLayout ?? "\(a.channels) ch")"
                if let f = a.sampleFormat { l += ", \(f)" }
                if a.primingSamples > 0 { l += ", priming \(a.primingSamples) samples" }
            }
            if let lang = s.language { l += ", lang \(lang)" }
            lines.append(l)
            var t = "      time base \(s.timeBase ?? "?")"
            if let st = s.startSeconds { t += ", start \(formatSeconds(st))" }
            if let d = s.durationSeconds { t += ", duration \(formatSeconds(d))" }
            t += ", \(s.packets) packets"
            if let f = s.declaredFrames { t += " (\(f) declared)" }
            if let b = s.bitRate { t += ", \(b / 1000) kb/s" }
            if s.isAttachedPicture { t += ", cover art" }
            if s.corruptPackets > 0 { t += ", \(s.corruptPackets) CORRUPT packets (damaged or cut off)" }
            lines.append(t)
            if let m = s.loudness { lines.append("      " + loudnessLine(m)) }
            lines += formatLines(s)
            let streamTags = orderedTags(s.tags).filter { $0.key != "language" }
            if !streamTags.isEmpty {
                var l = "      tags: " + streamTags.prefix(Self.streamTagsShown).map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
                if streamTags.count > Self.streamTagsShown { l += ", … \(streamTags.count - Self.streamTagsShown) more" }
                lines.append(l)
            }
        }
        if let sync {
            if let k = sync.skew {
                var l = "  A/V start skew \(formatMicros(k.startMicroseconds))"
                if let n = k.startSamples { l += " (\(n) samples)" }
                l += ", end difference \(formatMicros(k.endMicroseconds))"
                if let n = k.endSamples { l += " (\(n) samples)" }
                lines.append(l)
            }
            if sync.gapCount == 0 {
                if sync.audioStream != nil { lines.append("  audio gaps: none") }
            } else {
                lines.append("  audio gaps: \(sync.gapCount) (\(sync.gapSamples) samples missing, \(sync.overlapSamples) overlapping)")
                for g in sync.gaps.prefix(20) {
                    let kind = g.samples > 0 ? "gap" : "overlap"
                    lines.append("    #\(g.stream) at \(formatSeconds(g.atSeconds)) (sample \(g.atSample)): \(kind) of \(g.samples.magnitude) samples (\(trim(abs(g.milliseconds))) ms)")
                }
                if sync.gaps.count > 20 { lines.append("    … \(sync.gaps.count - 20) more (see --json)") }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// File tags printed before folding (`--json` has them all).
    static let tagsShown = 16
    static let streamTagsShown = 6
}

/// A stream's HDR, views and data-track lines, under its timing line.
private func formatLines(_ s: StreamReport) -> [String] {
    var lines: [String] = []
    if let h = s.video?.hdr {
        lines.append("      HDR: \(h.format)")
        var l: [String] = []
        if let m = h.masteringDisplay {
            var d = "mastering display"
            let points = [("R", m.red), ("G", m.green), ("B", m.blue), ("white", m.whitePoint)]
                .compactMap { name, xy in xy.map { "\(name) \($0.map { trim($0, 4) }.joined(separator: ","))" } }
            if !points.isEmpty { d += " " + points.joined(separator: " ") }
            if let lo = m.minLuminance, let hi = m.maxLuminance { d += ", \(trim(lo, 4)) to \(trim(hi, 4)) cd/m²" }
            l.append(d)
        }
        if let c = h.contentLight { l.append("MaxCLL \(c.maxCLL) cd/m², MaxFALL \(c.maxFALL) cd/m²") }
        if !l.isEmpty { lines.append("      " + l.joined(separator: "; ")) }
    }
    if let v = s.video?.views {
        var l = [v.coding, v.count.map { "\($0) views" }].compactMap { $0 }
        if v.stereo { l.append("stereo") }
        if let eye = v.heroEye { l.append("hero eye \(eye)") }
        if v.eyeViewsReversed { l.append("eye views reversed") }
        if !l.isEmpty { lines.append("      " + l.joined(separator: ", ")) }
    }
    if let d = s.data {
        var l = "      \(d.kind)"
        if let h = d.handlerName { l += " (\(h))" }
        if let keys = d.keys { l += ": " + keys.joined(separator: ", ") }
        lines.append(l)
    }
    return lines
}

/// Tags in a stable order: the common ones first, then by key.
private func orderedTags(_ tags: [String: String]) -> [(key: String, value: String)] {
    let first = ["title", "creation_time", "location", "com.apple.quicktime.creationdate", "major_brand", "encoder"]
    func rank(_ k: String) -> Int { first.firstIndex(of: k) ?? first.count }
    return tags.sorted { (rank($0.key), $0.key) < (rank($1.key), $1.key) }
        .map { (key: escapedForTerminal($0.key), value: escapedForTerminal($0.value)) }
}

func formatSeconds(_ s: Double) -> String {
    // A broken file's timestamps can be anything: beyond ~30 million years
    // (or not a number) print the value as it is rather than trap in Int().
    guard s.isFinite, abs(s) < 1e15 else { return "\(s) s" }
    // Rounded to the millisecond first, so that 59.9996 s carries into the
    // minute (1:00.000) instead of printing 0:60.000.
    let ms = Int64((abs(s) * 1000).rounded())
    let sign = s < 0 && ms > 0 ? "-" : ""
    let h = ms / 3_600_000, m = ms / 60_000 % 60, sec = ms / 1000 % 60, frac = ms % 1000
    func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
    let fraction = frac < 10 ? "00\(frac)" : frac < 100 ? "0\(frac)" : "\(frac)"
    let secText = "\(two(sec)).\(fraction)"
    return h > 0 ? "\(sign)\(h):\(two(m)):\(secText)" : "\(sign)\(m):\(secText)"
}

func formatMicros(_ us: Int64) -> String { "\(trim(Double(us) / 1000)) ms" }

public func formatBytes(_ b: Int64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var v = Double(b), u = 0
    while v >= 1024 && u < units.count - 1 { v /= 1024; u += 1 }
    return u == 0 ? "\(b) B" : "\(fixed(v, 1)) \(units[u])"
}

/// A number with at most three (or `decimals`) decimals and no trailing zeros.
func trim(_ v: Double, _ decimals: Int = 3) -> String {
    var s = fixed(v, decimals)
    while s.contains(".") && (s.hasSuffix("0") || s.hasSuffix(".")) { s.removeLast() }
    return s
}


/// `loudness -23.0 LUFS, range 5.2 LU, true peak -1.3 dBTP, sample peak -1.5 dBFS`.
public func loudnessLine(_ m: LoudnessFigures) -> String {
    func db(_ v: Double) -> String { v.isFinite ? fixed(v, 1) : "-inf" }
    let integrated = m.isGatedOut ? "below -70 LUFS (gated out)" : "\(db(m.integratedLUFS)) LUFS"
    return "loudness \(integrated), range \(db(m.rangeLU)) LU, true peak \(db(m.truePeakDBTP)) dBTP, "
        + "sample peak \(db(m.samplePeakDBFS)) dBFS"
}
