import Media
import Sync

// What a stream is beyond its codec, in a user's words: HDR format, views,
// a data track's kind. From the container's side data, the first decoded
// frames (`FirstFrames`) and, for MP4/MOV, the boxes (`SourceIndex`).

extension HDRReport {
    /// The HDR of `stream`: nil for SDR video (no Dolby Vision record, no
    /// HDR10+, neither PQ nor HLG).
    init?(_ stream: InputStream, firstFrames: FirstFrames?) {
        let dv = stream.dolbyVision
        let plus = firstFrames?.hasHDR10Plus == true
        var names: [String] = []
        if let dv { names.append(Self.name(dv)) }
        if plus { names.append("HDR10+") }
        if names.isEmpty {
            switch stream.colorTransfer {
            case "smpte2084": names.append("HDR10 (PQ)")
            case "arib-std-b67": names.append("HLG")
            default: return nil
            }
        }
        format = names.joined(separator: " + ")
        dolbyVision = dv.map {
            DolbyVisionReport(version: "\($0.versionMajor).\($0.versionMinor)", profile: $0.profile, level: $0.level,
                              compatibilityID: $0.compatibilityID, rpuPresent: $0.hasRPU,
                              elPresent: $0.hasEnhancementLayer, blPresent: $0.hasBaseLayer)
        }
        hdr10Plus = firstFrames?.decodedAny == true ? plus : nil
        let metadata = stream.containerHDRMetadata ?? firstFrames?.staticMetadata
        masteringDisplay = metadata.flatMap(MasteringDisplayReport.init)
        contentLight = metadata?.contentLight.map { ContentLightReport(maxCLL: $0.maxCLL, maxFALL: $0.maxFALL) }
    }

    /// "Dolby Vision 8.4 (HLG-compatible), level 2": the profile, then
    /// the base layer's compatibility after a dot (Dolby's own naming),
    /// what a player without Dolby Vision gets, and the level.
    static func name(_ dv: DolbyVisionConfiguration) -> String {
        let id = dv.compatibilityID
        var name = "Dolby Vision \(dv.profile)" + (id != 0 ? ".\(id)" : "")
        var notes: [String] = []
        if dv.hasEnhancementLayer { notes.append("dual layer") }
        if !dv.hasBaseLayer {
            notes.append("no base layer in this track")
        } else {
            switch id {
            case 0: notes.append("no compatible base layer")
            case 1: notes.append("HDR10-compatible")
            case 2: notes.append("SDR-compatible")
            case 4: notes.append("HLG-compatible")
            case 6: notes.append("Ultra HD Blu-ray HDR10-compatible")
            default: notes.append("compatibility id \(id)")
            }
        }
        name += " (\(notes.joined(separator: ", ")))"
        if dv.level > 0 { name += ", level \(dv.level)" }
        return name
    }
}

extension MasteringDisplayReport {
    init?(_ metadata: HDRMetadata) {
        guard metadata.primaries != nil || metadata.luminance != nil else { return nil }
        func value(_ q: Rational) -> Double { Double(q.numerator) / Double(q.denominator) }
        func xy(_ c: HDRMetadata.Chromaticity?) -> [Double]? { c.map { [value($0.x), value($0.y)] } }
        red = xy(metadata.primaries?.red)
        green = xy(metadata.primaries?.green)
        blue = xy(metadata.primaries?.blue)
        whitePoint = xy(metadata.primaries?.white)
        minLuminance = metadata.luminance.map { value($0.min) }
        maxLuminance = metadata.luminance.map { value($0.max) }
    }
}

extension ViewsReport {
    init(_ views: VideoViews) {
        coding = views.layers != nil ? "MV-HEVC" : nil
        count = views.layers
        stereo = views.isStereo
        heroEye = views.heroEye?.rawValue
        eyeViewsReversed = views.eyeViewsReversed
    }
}

extension DataTrackReport {
    /// A data track's kind from its sample entry (else its handler type);
    /// nil when the index names neither.
    init?(_ track: SourceTrack) {
        guard let kind = track.sampleEntryType ?? track.handlerType else { return nil }
        self.kind = kind.description
        handlerName = track.handlerName
        let keys = track.metadataKeys
        self.keys = keys.isEmpty ? nil : keys
    }
}
