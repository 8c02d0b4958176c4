import Foundation
import ISOBMFF
import Testing

/// Parse-then-encode gives back the input's bytes, for every real file the
/// tests use: the index (`moov`) and fragment boxes (`moof`, `sidx`, `mfra`) of every
/// generated fixture, device recording, wild recording and fetched real
/// file, and every fuzz-corpus input and reproducer whole; each box this module reads into
/// fields gives back its payload too. The media data is never read.
@Suite("ISOBMFF round trips")
struct RoundTripTests {
    /// The repository, from this file's place in it (Tests/ISOBMFFTests/RoundTripTests.swift).
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The files of `folder` (in the repository; the generated fixtures and
    /// real files where AVTOOL_FIXTURES and AVTOOL_REAL_MEDIA say, as for
    /// the other tests), sorted; none when it is not there.
    static func files(_ folder: String) -> [URL] {
        let moved = [".fixtures": "AVTOOL_FIXTURES", ".real-media": "AVTOOL_REAL_MEDIA"][folder]
            .flatMap { ProcessInfo.processInfo.environment[$0] }
        let url = moved.map { URL(fileURLWithPath: $0) } ?? repo.appendingPathComponent(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.sorted().filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") && !$0.hasSuffix(".txt") }
            .map { url.appendingPathComponent($0) }
            .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
    }

    /// The top-level boxes of the file at `url` as (type, start, size), read
    /// a header at a time; nil when its top level does not parse (not an
    /// MP4/MOV, or cut off inside a box).
    static func topLevel(_ file: FileHandle, size: Int) -> [(type: FourCC, start: Int, size: Int)]? {
        var boxes: [(type: FourCC, start: Int, size: Int)] = []
        var at = 0
        while at < size {
            if size - at < 8, !boxes.isEmpty { break }
            guard (try? file.seek(toOffset: UInt64(at))) != nil, let head = try? file.read(upToCount: 16),
                  let h = try? BoxHeader.read(BigEndianReader([UInt8](head)), at: 0, room: size - at) else { return nil }
            boxes.append((h.type, at, h.size))
            at += h.size
        }
        return boxes
    }

    /// The index boxes of the file at `url` (whole `moov`, `moof`, `sidx` and
    /// `mfra` boxes, each with its bytes); nil when its top level does not parse.
    static func indexBoxes(_ url: URL) throws -> [[UInt8]]? {
        let file = try FileHandle(forReadingFrom: url)
        defer { try? file.close() }
        let size = Int(try file.seekToEnd())
        guard let boxes = topLevel(file, size: size), boxes.first.map({ ["ftyp", "moov", "free", "skip", "wide", "mdat"].contains($0.type) }) == true
        else { return nil }
        return try boxes.filter { ["moov", "moof", "sidx", "mfra"].contains($0.type) }.map { box in
            try file.seek(toOffset: UInt64(box.start))
            return [UInt8](try file.read(upToCount: box.size) ?? Data())
        }
    }

    /// What a round trip of `bytes` (boxes one after another) found wrong, if anything:
    /// nil when it does not parse at all; [] when everything came back.
    static func roundTrip(_ bytes: [UInt8], typedMustParse: Bool) -> [String]? {
        guard let (boxes, tail) = try? BoxNode.parse(bytes[...]) else { return nil }
        var encoded: [UInt8] = []
        BoxNode.append(boxes, to: &encoded)
        encoded += tail
        var wrong: [String] = encoded == bytes ? [] : ["tree: \(encoded.count) bytes back of \(bytes.count)"]
        var typed = 0
        for box in boxes.flatMap(\.all) {
            do throws(BoxError) {
                guard let back = try KnownBoxes.reencoded(box) else { continue }
                typed += 1
                if back.type != box.type || back.payload[...] != box.content { wrong.append("'\(box.type)' payload") }
            } catch {
                if typedMustParse { wrong.append("'\(box.type)': \(error)") }
            }
        }
        if typedMustParse && typed == 0 && boxes.contains(where: { $0.type == "moov" }) { wrong.append("no box read into fields") }
        return wrong + (typedMustParse ? inner(boxes) : [])
    }

    /// What the boxes read inside payloads got wrong: each track's sample
    /// entries (`SampleEntry`, by its handler) and each `meta` list's
    /// boxes, items and their `data`.
    static func inner(_ boxes: [BoxNode]) -> [String] {
        var wrong: [String] = []
        func check(_ box: BoxNode, _ what: String) {
            do throws(BoxError) {
                if let back = try KnownBoxes.reencoded(box), back.payload[...] != box.content { wrong.append("\(what) '\(box.type)' payload") }
            } catch {
                wrong.append("\(what) '\(box.type)': \(error)")
            }
        }
        let all = boxes.flatMap(\.all)
        for trak in all where trak.type == "trak" {
            let handler = trak.descendant(["mdia", "hdlr"]).flatMap { try? HandlerReference($0) }?.handlerType
            guard let stsd = trak.descendant(["mdia", "minf", "stbl", "stsd"]), let table = try? SampleDescriptionTable(stsd) else { continue }
            for entry in table.entries {
                do throws(BoxError) {
                    let read = try SampleEntry(entry, handler: handler)
                    if read.box.encoded() != entry.encoded() { wrong.append("sample entry '\(entry.type)'") }
                    for b in read.boxes { check(b, "in '\(entry.type)'") }
                    if entry.type == "mebx", let keys = read.child("keys") {
                        // The key table as its value reads it: the local ids the samples name.
                        let table = try TimedMetadataKeys(parsing: keys.payload)
                        if table.encode()[...] != keys.payload || table.localIDs.isEmpty { wrong.append("'mebx' key table") }
                    }
                } catch {
                    wrong.append("sample entry '\(entry.type)': \(error)")
                }
            }
        }
        for meta in all where meta.type == "meta" {
            guard let list = try? Metadata(meta).list else { continue }
            for b in list.boxes { check(b, "in 'meta'") }
            for item in list.first("ilst").flatMap({ try? ItemList($0) })?.list.boxes ?? [] {
                guard let values = try? BoxList(parsing: item.payload, prefix: 0, type: item.type) else {
                    wrong.append("item '\(item.type)' is not boxes")
                    continue
                }
                if values.encode()[...] != item.payload { wrong.append("item '\(item.type)'") }
                for d in values.boxes where d.type == "data" { check(d, "in '\(item.type)'") }
            }
        }
        return wrong
    }

    @Test(arguments: [".fixtures", "Tests/Fixtures/devices", "Tests/Fixtures/wild", ".real-media"])
    func indexesComeBackByteForByte(_ folder: String) throws {
        var checked = 0, indexes = 0
        var skipped: [String] = []
        for url in Self.files(folder) {
            guard let boxes = try Self.indexBoxes(url) else {
                skipped.append(url.lastPathComponent)
                continue
            }
            checked += 1
            for bytes in boxes {
                indexes += 1
                let wrong = Self.roundTrip(bytes, typedMustParse: true)
                #expect(wrong == [], "\(url.lastPathComponent): \(wrong.map { $0.joined(separator: ", ") } ?? "does not parse")")
            }
        }
        print("\(folder): \(checked) files, \(indexes) index boxes round-tripped; top level not MP4/MOV, skipped: \(skipped.count) \(skipped)")
        #expect(checked > 0 || Self.files(folder).isEmpty)
    }

    @Test func fuzzCorpusComesBackByteForByte() throws {
        var parsed = 0
        let inputs = Self.files("Tests/Fuzz/corpus") + Self.files("Tests/Fuzz/crashes")
        for url in inputs {
            let bytes = [UInt8](try Data(contentsOf: url))
            guard let wrong = Self.roundTrip(bytes, typedMustParse: false) else { continue }
            parsed += 1
            #expect(wrong == [], "\(url.lastPathComponent): \(wrong.joined(separator: ", "))")
        }
        print("fuzz corpus and reproducers: \(parsed) of \(inputs.count) inputs parse as boxes and round-tripped; \(inputs.count - parsed) skipped")
        #expect(parsed > 0)
    }
}
