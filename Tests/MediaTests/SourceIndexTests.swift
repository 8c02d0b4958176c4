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
}
