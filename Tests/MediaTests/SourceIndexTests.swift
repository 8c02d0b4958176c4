import ISOBMFF
import Testing
@testable import Media

/// The index of real device recordings read box by box: what libavformat
/// does not pass on.
@Suite struct SourceIndexTests {
    static func device(_ name: String) -> String {
        let here = #filePath.split(separator: "/").dropLast(2).joined(separator: "/")
        return "/" + here + "/Fixtures/devices/" + name
    }

    @Test func iPhoneMetadataTracksAndDolbyVision() throws {
        let index = try #require(SourceIndex(path: Self.device("iphone14pro_dv84_hlg_720p_mebx.MOV")))
        #expect(index.tracks.map(\.id) == [1, 2, 3, 4, 5])
        let video = try #require(index.track(id: 1))
        #expect(video.handlerType == "vide")
        #expect(video.handlerName == "Core Media Video")
        #expect(video.sampleEntryType == "hvc1")
        #expect(video.sampleEntryBoxes.map(\.type).contains("dvvC"))
        let orientation = try #require(index.track(id: 3))
        #expect(orientation.handlerType == "meta")
        #expect(orientation.sampleEntryType == "mebx")
        #expect(orientation.metadataKeys == ["com.apple.quicktime.video-orientation"])
        #expect(orientation.references.first?.type == "cdsc")
        #expect(orientation.references.first?.ids == [1])
        #expect(index.track(id: 4)?.metadataKeys == ["com.apple.quicktime.detected-face"])
    }

    @Test func goProTelemetryAndSpatialVideo() throws {
        let gopro = try #require(SourceIndex(path: Self.device("gopro_max_heromode_gpmd.mp4")))
        #expect(gopro.tracks.compactMap(\.sampleEntryType).contains("gpmd"))
        #expect(gopro.tracks.first { $0.sampleEntryType == "gpmd" }?.handlerName == "GoPro MET")
        let spatial = try #require(SourceIndex(path: Self.device("apple_vt_spatial_mvhevc_160x120.mp4")))
        let types = spatial.tracks.first?.sampleEntryBoxes.map(\.type) ?? []
        #expect(types.contains("lhvC") && types.contains("vexu") && types.contains("hfov"))
    }

    /// Handler names as MP4 (C string), QuickTime (length byte) and odd
    /// writers leave them: an empty name, a lone zero, a length byte of 0.
    @Test func handlerNamesOfEveryShape() {
        func name(_ tail: [UInt8]) -> String? {
            let payload: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0] + Array("soun".utf8) + [UInt8](repeating: 0, count: 12) + tail
            return SourceTrack.handler(try? HandlerReference(parsing: payload[...], type: "hdlr")).1
        }
        #expect(name(Array("SoundHandler".utf8) + [0]) == "SoundHandler")
        #expect(name([16] + Array("Core Media Audio".utf8)) == "Core Media Audio")
        #expect(name([9] + Array("GoPro MET".utf8) + [0]) == "GoPro MET")
        #expect(name([0]) == nil)
        #expect(name([]) == nil)
        #expect(name([0, 0, 0]) == nil)
        #expect(name([200, 65]) == String(decoding: [200, 65], as: UTF8.self), "not a length: the bytes as they are")
    }

    /// An index whose boxes are cut short or empty reads as tracks without
    /// what is missing, never a trap (the iTunes file that stopped `probe`
    /// had a handler name of one zero byte); a track whose header (`tkhd`)
    /// is cut short is not read at all.
    @Test func brokenBoxesReadWithoutATrap() throws {
        func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            var out: [UInt8] = []
            put(UInt64(payload.count + 8), 4, &out)
            return out + Array(type.utf8) + payload
        }
        // A version 0 track header: 84 bytes, the track id after the two times.
        let tkhd = box("tkhd", [UInt8](repeating: 0, count: 12) + [0, 0, 0, 7] + [UInt8](repeating: 0, count: 68))
        for stsd in [box("stsd", []), box("stsd", [0, 0]), box("stsd", [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 4])] {
            let stbl = box("stbl", stsd)
            let minf = box("minf", stbl)
            let mdia = box("mdia", box("hdlr", [0]) + box("mdhd", [1]) + minf)
            let moov = box("moov", box("trak", tkhd + mdia + box("tref", [0, 0, 0, 9, 1, 2])))
            let index = try #require(SourceIndex(moov: moov))
            let t = try #require(index.track(id: 7))
            #expect(t.sampleEntryType == nil && t.sampleEntryBoxes.isEmpty && t.metadataKeys.isEmpty && t.views == nil)
            #expect(t.handlerName == nil && t.timescale == nil)
            let cut = box("tkhd", [UInt8](repeating: 0, count: 12) + [0, 0, 0, 7] + [UInt8](repeating: 0, count: 64))
            #expect(SourceIndex(moov: box("moov", box("trak", cut + mdia)))?.tracks.isEmpty == true)
        }
    }
}
