import ISOBMFF

/// The ISOBMFF-only entry: the input parsed as boxes (`BoxNode`), encoded
/// back and compared, and every box read into fields (`KnownBoxes`) encoded
/// back and compared with its payload. Pure Swift, no FFmpeg: every input
/// runs it first; with AVTOOL_FUZZ_ENTRY=isobmff it is all that runs, so a
/// fuzzing run spends its time on the box layer alone. A difference traps
/// (a finding); a refusal (`BoxError`) is an outcome. The movie fragments'
/// walk (`FragmentCoverage`) runs on every input too.
func boxRoundTrip(_ data: [UInt8]) -> String {
    // The fragments' walk takes any bytes, whole or cut off (a cut recording's refusal rests on it).
    let fragments = data.withUnsafeBytes { FragmentCoverage($0) }.map { "; fragments of \($0.tracks.count) track(s)" } ?? ""
    let boxes: [BoxNode], tail: ArraySlice<UInt8>
    do throws(BoxError) {
        (boxes, tail) = try BoxNode.parse(data[...])
    } catch {
        return "boxes: \(error)" + fragments
    }
    var encoded: [UInt8] = []
    encoded.reserveCapacity(data.count)
    BoxNode.append(boxes, to: &encoded)
    encoded += tail
    precondition(encoded == data, "the boxes encode to \(encoded.count) bytes, not the input's \(data.count)")
    var typed = 0, refused = 0
    for box in boxes.flatMap(\.all) {
        do throws(BoxError) {
            guard let back = try KnownBoxes.reencoded(box) else { continue }
            precondition(back.type == box.type && back.payload[...] == box.content, "'\(box.type)' encodes to other bytes")
            typed += 1
        } catch {
            refused += 1
        }
    }
    return "boxes: \(boxes.count) top-level, \(typed) typed round trips, \(refused) refused" + fragments
}
