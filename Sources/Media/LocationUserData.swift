import ISOBMFF

/// The place a recording was made as QuickTime user data (`©xyz`, ISO 6709
/// text), where Apple's apps and Android's readers look for it.
///
/// libavformat's MP4/MOV muxer writes a file's `location` tag as `©xyz`
/// only into a MOV written without metadata keys; into an MP4, or a MOV
/// whose tags are written as keys (a phone's `com.apple.quicktime.*`,
/// `com.android.*`), it writes a 3GPP `loci` box and the `location` key,
/// which Photos may not read. `ffmpeg -c copy` into MOV keeps `©xyz`; so
/// does every MP4/MOV output here: this box is added to the index's `udta`
/// beside what the muxer wrote (`IndexCompletion`).
public enum LocationUserData {
    /// The `©xyz` box for a file whose tags are `tags`: its `location`, in
    /// the language of a `location-xxx` tag of the same text, as the MOV
    /// muxer writes it (language 0 without one); nil without a location.
    public static func box(for tags: [(key: String, value: String)]) -> BoxNode? {
        guard let location = tags.first(where: { $0.key.lowercased() == "location" })?.value, !location.isEmpty else {
            return nil
        }
        let language = tags.lazy.compactMap { tag -> UInt16? in
            let key = tag.key.lowercased()
            guard key.count == 12, key.hasPrefix("location-"), tag.value == location else { return nil }
            return MediaHeader.packedLanguage(String(key.suffix(3)))
        }.first ?? 0
        return BoxNode("©xyz", payload: UserDataText(location, language: language).encode()[...])
    }

    /// What the `udta` of an MP4/MOV output needs beside what the muxer
    /// writes: the file's place as `©xyz`, which the muxer writes only into
    /// a MOV without metadata keys (`keys`: its `use_metadata_tags`), from
    /// the tags the output is given (`metadataSource`'s, with `edits`).
    public static func boxes(_ container: Container, keys: Bool, metadataSource: InputFile?,
                             edits: MetadataEdits) -> [BoxNode] {
        guard container.isISOBMFF, keys || container.name != "mov", let source = metadataSource else { return [] }
        // (Edits the output cannot take fail its header; none is added then.)
        guard let tags = try? edits.applied(to: IntendedTags(format: source.metadata, streams: []), streams: []),
              let box = box(for: tags.format) else { return [] }
        return [box]
    }
}
