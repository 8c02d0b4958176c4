import Foundation
import Media
import Sync
import Testing

/// What FFmpeg's muxers refuse, said for the user's file, coded `unsupported`.
/// The verbs no longer hand these to the muxer (AMR is written a frame a
/// packet, MOV is not offered VP8), so the refusals are met here the way
/// they were met before: the file's own streams and packets given to
/// `OutputFile` directly.
@Suite("muxer refusals")
struct MuxerRefusalTests {
    static func wild(_ name: String) -> String {
        MemoryIOTests.fixtures.deletingLastPathComponent().appendingPathComponent("Tests/Fixtures/wild/\(name)").path
    }

    /// QuickTime's 3GPP export stores 5 AMR frames a sample; movenc takes
    /// one ("input is not a single packet"). Before: "could not write to
    /// 'out.mov' (stream #0): Operation not permitted", coded permission-denied.
    @Test func amrPacketOfFiveFramesIntoMOV() throws {
        let input = try InputFile(path: Self.wild("qt_3gpp_export_2005_amrnb_mp4v_hinted.3gp"))
        let amr = input.streams[0]
        let memory = try MemoryOutput()
        let out = try OutputFile(memory: memory, name: "out.mov", container: Container(named: "mov")!,
                                 streams: [.copy(amr)], metadataSource: nil)
        let p = try Packet()
        while try input.read(into: p), p.streamIndex != amr.index {}
        p.timing = PacketTiming(pts: 0, dts: 0, duration: 800)
        p.streamIndex = 0
        let error = try #require(throws: MediaError.self) { try out.write(p) }
        #expect(error.category == .unsupported)
        #expect(error.description.hasPrefix("could not write 'out.mov' (stream #0): the mov muxer of FFmpeg 5.1 refused audio codec 'amr_nb': a packet that holds several frames"), "\(error)")
        #expect(error.description.contains("(FFmpeg: Operation not permitted)"), "\(error)")
        #expect(error.remedy == .otherContainerOrConvert(.audio))
    }

    /// Chrome's VP8 into MOV: movenc's set-up refuses it ("VP8 muxing is
    /// currently not supported"). Before: "could not write header of
    /// 'out.mov': Not yet implemented in FFmpeg, patches welcome (the mov
    /// muxer rejected the stream set)", coded io-error.
    @Test func vp8IntoMOVNamesTheStream() throws {
        let input = try InputFile(path: Self.wild("chrome_mediarecorder_vp8_video_only.webm"))
        let mov = Container(named: "mov")!
        #expect(mov.canHold(input.streams[0]) == false)
        let error = try #require(throws: MediaError.self) {
            _ = try OutputFile(memory: MemoryOutput(), name: "out.mov", container: mov,
                               streams: [.copy(input.streams[0])], metadataSource: nil)
        }
        #expect(error.category == .unsupported)
        #expect(error.description.hasPrefix("could not write 'out.mov' (stream #0): the mov muxer of FFmpeg 5.1 cannot write video codec 'vp8' (FFmpeg: Not yet implemented in FFmpeg, patches welcome)"), "\(error)")
    }
}
