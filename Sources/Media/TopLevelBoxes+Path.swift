import ISOBMFF

extension TopLevelBoxes {
    /// The boxes of the file at `path`, or nil when it cannot be mapped.
    public init?(path: String) {
        guard let file = try? MappedFile(path: path) else { return nil }
        self = file.withBytes { TopLevelBoxes($0) }
    }
}
