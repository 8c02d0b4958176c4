import CFFmpeg

/// Reads an `AVDictionary` into ordered key/value pairs.
func entries(of dictionary: OpaquePointer?) -> [(key: String, value: String)] {
    var result: [(String, String)] = []
    var entry: UnsafeMutablePointer<AVDictionaryEntry>? = nil
    while let e = av_dict_get(dictionary, "", entry, AV_DICT_IGNORE_SUFFIX) {
        result.append((String(cString: e.pointee.key), String(cString: e.pointee.value)))
        entry = e
    }
    return result
}

/// Builds an `AVDictionary` from pairs; the caller frees it with `av_dict_free`.
func makeDictionary(_ pairs: [(String, String)]) -> OpaquePointer? {
    var dict: OpaquePointer? = nil
    for (k, v) in pairs { av_dict_set(&dict, k, v, 0) }
    return dict
}

extension Optional where Wrapped == UnsafePointer<CChar> {
    var string: String? { self.map { String(cString: $0) } }
}
