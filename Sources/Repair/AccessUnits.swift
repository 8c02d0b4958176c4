import ISOBMFF
import Media

/// Where one video sample (an access unit: length-prefixed NAL units, as
/// MP4/MOV store H.264 and HEVC) starts and ends in media data that no
/// index describes. A sample is a run of NAL units with valid headers
/// holding at least one coded slice; it ends where a NAL unit that can
/// only begin a new access unit follows a slice (a parameter set, an
/// access unit delimiter, an SEI, or a slice flagged as a picture's first).
struct AccessUnitScanner: Equatable {
    enum Codec { case h264, hevc }

    enum Result: Equatable {
        /// A whole sample: its end (exclusive) and whether it is a keyframe
        /// (an IDR/IRAP picture).
        case sample(end: Int, keyframe: Bool)
        /// A sample whose next NAL unit runs past the end of the data.
        case cutShort
        /// The bytes do not start a sample.
        case none
    }

    let codec: Codec
    /// Bytes in each NAL unit's length prefix (1, 2 or 4).
    let lengthSize: Int
    /// The longest NAL unit taken as real (far beyond any in the reference).
    let longestUnit: Int

    /// The scanner for a stream's `avcC`/`hvcC` extradata; nil for other
    /// codecs or Annex B extradata (start codes, not lengths).
    init?(codecName: String, extradata: [UInt8], longestUnit: Int) {
        switch codecName {
        case "h264":
            guard extradata.count >= 7, extradata[0] == 1 else { return nil }
            codec = .h264
            lengthSize = Int(extradata[4] & 3) + 1
        case "hevc":
            guard extradata.count >= 23, extradata[0] == 1 else { return nil }
            codec = .hevc
            lengthSize = Int(extradata[21] & 3) + 1
        default:
            return nil
        }
        guard lengthSize != 3 else { return nil }
        self.longestUnit = longestUnit
    }

    private var headerSize: Int { codec == .h264 ? 1 : 2 }

    /// What one NAL unit header (and the first bit after it) says.
    struct Unit {
        var slice: Bool
        var keyframe: Bool
        /// Can only begin an access unit once a slice has been seen.
        var beginsUnit: Bool
    }

    /// The header at `b[at...]` (at least `headerSize + 1` bytes), or nil
    /// when it is not a valid NAL unit header of the codec.
    func unit(_ b: UnsafeRawBufferPointer, at i: Int) -> Unit? {
        let h0 = b[i]
        guard h0 & 0x80 == 0 else { return nil }
        switch codec {
        case .h264:
            let type = h0 & 0x1f, refIdc = h0 >> 5
            let firstOfPicture = b[i + 1] & 0x80 != 0  // first_mb_in_slice == 0
            switch type {
            case 1: return Unit(slice: true, keyframe: false, beginsUnit: firstOfPicture)
            case 5: return refIdc == 0 ? nil : Unit(slice: true, keyframe: true, beginsUnit: firstOfPicture)
            case 7, 8: return refIdc == 0 ? nil : Unit(slice: false, keyframe: false, beginsUnit: true)
            case 6, 9: return refIdc != 0 ? nil : Unit(slice: false, keyframe: false, beginsUnit: true)
            case 10, 11, 12: return refIdc != 0 ? nil : Unit(slice: false, keyframe: false, beginsUnit: false)
            case 13, 14, 15: return Unit(slice: false, keyframe: false, beginsUnit: true)
            case 19, 20: return Unit(slice: false, keyframe: false, beginsUnit: false)
            default: return nil
            }
        case .hevc:
            let h1 = b[i + 1]
            let type = (h0 >> 1) & 0x3f, layer = (Int(h0 & 1) << 5) | Int(h1 >> 3)
            guard layer == 0, h1 & 7 != 0 else { return nil }
            let firstOfPicture = b[i + 2] & 0x80 != 0  // first_slice_segment_in_pic_flag
            switch type {
            case 0...9: return Unit(slice: true, keyframe: false, beginsUnit: firstOfPicture)
            case 16...21: return Unit(slice: true, keyframe: true, beginsUnit: firstOfPicture)
            case 32...35, 39, 41...44, 48...55: return Unit(slice: false, keyframe: false, beginsUnit: true)
            case 36, 37, 38, 40: return Unit(slice: false, keyframe: false, beginsUnit: false)
            // Unspecified types after the slices: Dolby Vision's RPU (62) and enhancement layer (63).
            case 56...63: return Unit(slice: false, keyframe: false, beginsUnit: false)
            default: return nil
            }
        }
    }

    /// The ends of the NAL units of the sample from `start` to `end` (as
    /// `sample` found it) after its first slice: where it could end instead,
    /// were the units after taken from other bytes.
    func unitEnds(_ b: UnsafeRawBufferPointer, at start: Int, end: Int) -> [Int] {
        let r = BigEndianReader(b)
        var i = start, sawSlice = false, out: [Int] = []
        while i + lengthSize + headerSize + 1 <= end {
            guard let n = r.length(at: i, size: lengthSize), let u = unit(b, at: i + lengthSize) else { break }
            sawSlice = sawSlice || u.slice
            i += lengthSize + n
            if sawSlice && i <= end { out.append(i) }
        }
        return out
    }

    /// The sample starting at `start`, the data ending at `end`.
    func sample(_ b: UnsafeRawBufferPointer, at start: Int, end: Int) -> Result {
        let r = BigEndianReader(b)
        var i = start, sawSlice = false, keyframe = false
        while i + lengthSize + headerSize + 1 <= end {
            let body = i + lengthSize
            guard let n = r.length(at: i, size: lengthSize), n > headerSize, n <= longestUnit, let u = unit(b, at: body) else { break }
            if sawSlice && u.beginsUnit { break }
            // The first unit must be one that can begin a sample.
            if i == start && !u.beginsUnit { return .none }
            if body + n > end { return .cutShort }
            sawSlice = sawSlice || u.slice
            keyframe = keyframe || u.keyframe
            i = body + n
        }
        // Data that ends within a length prefix and header: the rest is cut.
        if i < end && i + lengthSize + headerSize + 1 > end && sawSlice { return .cutShort }
        return sawSlice ? .sample(end: i, keyframe: keyframe) : .none
    }
}
