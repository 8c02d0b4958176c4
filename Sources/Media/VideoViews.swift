import ISOBMFF

/// The views a video track's sample entry declares: a layered HEVC entry
/// (`lhvC`, the second view of MV-HEVC) and Apple's video extended usage
/// box (`vexu` → `eyes` → `stri`, `hero`), which says the views are a
/// stereo pair. Read from the boxes, which libavformat does not pass on.
public struct VideoViews: Sendable, Equatable {
    /// Layers of a layered HEVC entry, as the base layer's VPS declares them
    /// (`vps_max_layers_minus1` + 1; 2 when the VPS cannot be read); nil
    /// without `lhvC`.
    public var layers: Int?
    /// The `stri` flags: which eyes the views are for.
    public var hasLeftEye = false
    public var hasRightEye = false
    public var hasAdditionalViews = false
    public var eyeViewsReversed = false
    /// The eye to show when only one is shown (`hero`).
    public var heroEye: Eye?

    public enum Eye: String, Sendable, Codable { case left, right }

    public var isStereo: Bool { hasLeftEye && hasRightEye }

    public init(layers: Int? = nil) { self.layers = layers }
}

extension SourceTrack {
    /// The views of a video track whose sample entry has `lhvC` or `vexu`;
    /// nil for any other track.
    public var views: VideoViews? {
        let layered = firstEntry?.child("lhvC") != nil
        let vexu = firstEntry?.child("vexu").map { VideoExtendedUsage(parsing: $0.payload) }
        guard layered || vexu != nil else { return nil }
        var views = VideoViews()
        if layered {
            let hvcC = firstEntry?.child("hvcC").map { Array($0.payload) }
            views.layers = hvcC.flatMap(Self.layerCount(hvcC:)) ?? 2
        }
        if let flags = vexu?.stereoFlags {
            views.hasLeftEye = flags & 1 != 0
            views.hasRightEye = flags & 2 != 0
            views.hasAdditionalViews = flags & 4 != 0
            views.eyeViewsReversed = flags & 8 != 0
        }
        if let eye = vexu?.heroEye { views.heroEye = eye == 1 ? .left : eye == 2 ? .right : nil }
        return views
    }

    /// `vps_max_layers_minus1` + 1 of the first VPS in an `hvcC` record. After
    /// the two-byte NAL unit header come the VPS id (4 bits) and two flags,
    /// then these 6 bits (H.265 7.3.2.1).
    private static func layerCount(hvcC: [UInt8]) -> Int? {
        guard let stream = NALStream(codecName: "hevc", extradata: hvcC),
              let vps = stream.parameterSets.first(where: { ($0.first ?? 0) >> 1 & 0x3f == 32 }), vps.count >= 4 else { return nil }
        return Int((vps[2] & 0x03) << 4 | vps[3] >> 4) + 1
    }
}
