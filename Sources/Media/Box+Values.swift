import ISOBMFF

extension Box {
    /// This box's payload read into its typed value (`ISOBMFF`); nil when it does not parse.
    func value<Value: BoxPayload>(_: Value.Type) -> Value? { try? Value(parsing: payload, type: type) }

    /// The payload made `value`'s, the type with it (`stco` widened to `co64`).
    mutating func set(_ value: some BoxPayload) {
        type = value.type
        payload = value.encode()[...]
    }
}
