import CFFmpeg
import Filters
import Media
import Pipeline
import Sync

/// The curve that brings HDR highlights into SDR's range (libavfilter's
/// `tonemap` operators).
public enum ToneMapOperator: String, Sendable, Codable, CaseIterable {
    /// Filmic (John Hable's): keeps contrast in the mid-tones, rolls highlights off softly.
    case hable
    /// Mobius: linear up to a knee, then a smooth roll-off; keeps more of the original look.
    case mobius
    /// Reinhard: a simple curve, brighter shadows, flatter highlights.
    case reinhard
    /// Highlights clipped, the rest unchanged.
    case clip
}

/// How an HDR picture (PQ or HLG, a Dolby Vision stream's base layer) is
/// rendered as BT.709 SDR: to linear light (zimg), BT.2020 primaries to
/// BT.709, the operator applied in linear RGB with highlights desaturated
/// gently, back to the BT.709 transfer and matrix, limited range. The peak
/// is the one `tonemap` finds in each frame's metadata: the content light
/// level or mastering display, else PQ's 10,000 or HLG's nominal 1,000 nits.
public struct ToneMapSettings: Sendable, Equatable {
    public var toneMap: ToneMapOperator
    /// The output's pixel format (`yuv420p`, or `yuv420p10le` for Main10).
    public var pixelFormat: String

    /// From which brightness highlights lose their colour, turning white (libavfilter's `desat`: the higher, the
    /// more colour kept; 2, its default, touches only skies and sunlit surfaces).
    static let desaturation = "2"

    /// The filter chain, as the `ffmpeg` program's `-vf` would name it. To
    /// linear light and to BT.709 primaries in one `zscale` (zimg converts
    /// the primaries in linear light either way): the picture is the one
    /// the usual `zscale=t=linear,format=gbrpf32le,zscale=p=bt709,tonemap…`
    /// gives, byte for byte, with one pass over a float frame fewer.
    public var filters: String {
        "zscale=t=linear:npl=100:p=bt709,format=gbrpf32le,"
            + "tonemap=tonemap=\(toneMap.rawValue):desat=\(Self.desaturation),"
            + "zscale=t=bt709:m=bt709:r=tv,format=\(pixelFormat)"
    }
}

/// Tone-maps each frame through a filter graph built on the first one.
final class ToneMapper: FrameFilter {
    let settings: ToneMapSettings
    private let path: String
    private let stream: Int
    private let timeBase: Rational
    private var graph: FilterGraph?
    /// Frames that had HDR10+ metadata (applied through their peak, then left out).
    private(set) var hdr10PlusFrames = 0

    init(_ settings: ToneMapSettings, stream: InputStream) {
        self.settings = settings
        path = stream.file.path
        self.stream = stream.index
        timeBase = stream.timeBase ?? .microseconds
    }

    func filter(_ frame: borrowing Frame, into out: borrowing Frame) throws(MediaError) {
        if graph == nil {
            graph = try FilterGraph(settings.filters, shapedLike: frame, timeBase: timeBase, path: path, stream: stream)
        }
        if frame.hasHDR10Plus { hdr10PlusFrames += 1 }
        try graph!.send(frame)
        guard case .ready = try graph!.receive(into: out) else {
            throw MediaError.invalid("could not tone-map", path: path, stream: stream,
                                     message: "the filters '\(settings.filters)' gave no frame for a frame")
        }
        // What described the HDR picture does not describe this one.
        for type in [AV_FRAME_DATA_MASTERING_DISPLAY_METADATA, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL,
                     AV_FRAME_DATA_DYNAMIC_HDR_PLUS, AV_FRAME_DATA_DOVI_RPU_BUFFER, AV_FRAME_DATA_DOVI_METADATA] {
            av_frame_remove_side_data(out.pointer, type)
        }
    }
}
