import ISOBMFF

/// An index (`moov`) read into `ISOBMFF`'s lossless box tree for the edits
/// made in it here: descended into as far as the sample tables, each
/// failure a `MovieLayout.Refusal` that says where in the index it is.
extension BoxNode {
    /// The boxes an index is descended into: those whose children hold the
    /// sample tables (what lies beside them, user data included, stays bytes
    /// for the edits that read it as a list).
    static let indexContainers = sampleTableContainers

    /// The boxes of an index's bytes, descended into `indexContainers`, and
    /// into the edit lists (`edts`) whose children parse.
    static func index(_ bytes: ArraySlice<UInt8>) throws(MovieLayout.Refusal) -> [BoxNode] {
        do throws(BoxError) {
            return try parse(bytes, descending: indexContainers, lenient: ["edts"]).boxes.map(\.sized)
        } catch {
            throw MovieLayout.Refusal(error)
        }
    }

    /// This box with a size field of 0 (to the end of its parent) written
    /// as the size: an edit may add a box after it.
    private var sized: BoxNode {
        var copy = self
        if copy.sizeField == .toEnd { copy.sizeField = .compact }
        copy.children = children?.map(\.sized)
        return copy
    }

    /// This box read into its typed value for an edit; refused, saying why, when it does not parse.
    func read<Value: BoxPayload>(_: Value.Type) throws(MovieLayout.Refusal) -> Value {
        do throws(BoxError) { return try Value(self) } catch { throw MovieLayout.Refusal(error) }
    }

    /// This box read into its typed value; nil when it does not parse.
    func value<Value: BoxPayload>(_: Value.Type) -> Value? { try? Value(self) }
}

extension MovieLayout.Refusal {
    /// Why an index's bytes are not boxes, said of the index (`BoxError.said(of:)`).
    init(_ error: BoxError) { self.init(description: error.said(of: .index)) }
}
