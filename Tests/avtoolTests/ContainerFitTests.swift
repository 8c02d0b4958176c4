import Foundation
import Testing

/// Outputs in the containers recordings come in, decided by what FFmpeg's
/// muxers hold (not by a list narrower than theirs): Matroska takes H.263
/// (as `ffmpeg -c copy` writes it), 3GP/3G2 are written, MOV gets AAC for
/// Opus it cannot hold, and AMR stored 5 frames a sample reaches MP4-family
/// muxers a frame a packet (movenc takes no other).
@Suite("containers that fit the codecs")
struct ContainerFitTests {
    static let amr3gp = "qt_3gpp_export_2005_amrnb_mp4v_hinted.3gp"

    /// An old phone's kind of file from real recordings: the carphone clip's
    /// first second encoded to H.263 (QCIF, as 3GP phones wrote it) beside a
    /// voice memo's AAC, copied.
    static func h263File(in scratch: Scratch) throws -> String {
        let out = scratch.path("phone.3gp")
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", try Fixtures.real("carphone_pristine.mp4"),
                                        "-i", try Fixtures.wild("ios_voicememos_2021.m4a"), "-t", "1",
                                        "-map", "0:v", "-map", "1:a", "-c:v", "h263", "-c:a", "copy", out])
        try #require(r.status == 0, "\(r)")
        return out
    }

    /// Before: "mkv cannot hold video codec 'h263'" from every verb, and
    /// "avtool does not write 3gp files".
    @Test(arguments: ["remux", "cut", "split", "fill-silence", "concat"], ["mkv", "3gp"])
    func h263PhoneFile(_ verb: String, into ext: String) throws {
        let scratch = try Scratch()
        let input = try Self.h263File(in: scratch)
        let out = scratch.path(verb == "split" ? "part-{n}.\(ext)" : "out.\(ext)")
        let args: [String] = switch verb {
        case "cut": [verb, input, out, "--from", "0.2", "--to", "0.8"]
        case "split": [verb, input, out, "--every", "0.5"]
        case "concat": [verb, input, input, out]
        default: [verb, input, out]
        }
        let r = try Tool.avtool(args)
        try #require(r.status == 0, "\(r)")
        let written = verb == "split" ? scratch.path("part-1.\(ext)") : out
        let probe = try FFprobe(written)
        #expect(probe.streams.contains { FFprobe.string($0, "codec_name") == "h263" }, "\(probe.streams)")
    }

    /// The Chrome recorder's VP8 and Opus in one WebM (its two recordings
    /// copied side by side, 2 s) transcoded to MOV: before, "could not write
    /// header …: Invalid argument (the mov muxer rejected the stream set)";
    /// now the Opus is encoded to AAC and the report says so.
    @Test func browserRecordingToMOVEncodesOpusToAAC() throws {
        let scratch = try Scratch()
        let webm = scratch.path("recording.webm")
        let m = try Tool.run("ffmpeg", ["-nostdin", "-v", "error",
                                        "-i", try Fixtures.wild("chrome_mediarecorder_vp8_video_only.webm"),
                                        "-i", try Fixtures.wild("chrome_mediarecorder_opus_audio_only.webm"),
                                        "-t", "2", "-map", "0:v", "-map", "1:a", "-c", "copy", webm])
        try #require(m.status == 0, "\(m)")
        let out = scratch.path("out.mov")
        let r = try Tool.avtool("transcode", webm, out, "--preset", "ultrafast")
        try #require(r.status == 0, "\(r)")
        #expect(r.stderr.contains("audio #1 opus → aac 64k (mov cannot hold opus)"), "\(r.stderr)")
        let audio = try FFprobe(out).streams.filter { FFprobe.string($0, "codec_type") == "audio" }
        #expect(audio.map { FFprobe.string($0, "codec_name") } == ["aac"])
    }

    /// QuickTime's 3GPP export (AMR-NB, 5 frames a sample; MPEG-4 video)
    /// remuxed to 3GP and MOV: before, 3GP was no output container and MOV
    /// failed with "Operation not permitted" (coded permission-denied). The
    /// AMR frames are the input's, byte for byte, and the video's packets too.
    @Test(arguments: ["3gp", "mov"])
    func amrOf5FramesASampleIntoMovenc(_ ext: String) throws {
        let scratch = try Scratch()
        let input = try Fixtures.wild(Self.amr3gp)
        let out = scratch.path("out.\(ext)")
        let r = try Tool.avtool("remux", input, out, "--no-data")
        try #require(r.status == 0, "\(r)")
        #expect(try amrBytes(out, scratch) == (try amrBytes(input, scratch)))
        let (a, b) = (try PacketList(input).payloads, try PacketList(out).payloads)
        #expect(a[1] == b[1], "video packets differ")
        // 699 samples of 5 frames each, written a frame a packet.
        #expect(b[0]?.count == 699 * 5)
        if ext == "3gp" { #expect((FFprobe.tag(try FFprobe(out).format, "major_brand") ?? "").hasPrefix("3gp")) }
    }

    /// A KDDI phone's 3G2 (AAC) remuxed to 3G2, and a voice memo to 3GP:
    /// every packet the input's (before: "avtool does not write 3g2 files").
    @Test func threeG2AndVoiceMemoInto3GPFamily() throws {
        let scratch = try Scratch()
        for (input, ext) in [(try Fixtures.wild("kddi_3g2_aac_2005.3g2"), "3g2"),
                             (try Fixtures.wild("ios_voicememos_2021.m4a"), "3gp")] {
            let out = scratch.path("out.\(ext)")
            let r = try Tool.avtool("remux", input, out)
            try #require(r.status == 0, "\(r)")
            #expect(try PacketList(out).payloads == (try PacketList(input).payloads), "\(input)")
            let brand = FFprobe.tag(try FFprobe(out).format, "major_brand") ?? ""
            #expect(ext == "3g2" ? ["3g2a", "kddi"].contains(brand) : brand.hasPrefix("3gp"), "\(brand)")
        }
    }

    /// The AMR stream rewritten as a raw `.amr` file by `ffmpeg -c copy`:
    /// the frames in order whatever their packing.
    private func amrBytes(_ path: String, _ scratch: Scratch) throws -> Data {
        let raw = scratch.path(UUID().uuidString + ".amr")
        let r = try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a", "-c", "copy", "-f", "amr", raw])
        try #require(r.status == 0, "\(r)")
        return try Data(contentsOf: URL(fileURLWithPath: raw))
    }
}
