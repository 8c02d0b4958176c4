import CFFmpeg
import Glibc

/// The versions of the libraries this build runs on, as loaded (not as
/// compiled against): what a bug report needs first.
public enum LibraryVersions {
    /// FFmpeg's own version string (`av_version_info`), e.g. `5.1.6-0+deb12u1`.
    public static var ffmpeg: String { av_version_info().map { String(cString: $0) } ?? "unknown" }

    /// Each FFmpeg library and its `major.minor.micro` version.
    public static var libraries: [(name: String, version: String)] {
        func text(_ v: UInt32) -> String { "\(v >> 16).\((v >> 8) & 0xff).\(v & 0xff)" }
        return [("libavformat", text(avformat_version())), ("libavcodec", text(avcodec_version())),
                ("libavutil", text(avutil_version())),
                ("libswresample", text(swresample_version())), ("libswscale", text(swscale_version()))]
    }

    /// x265's version (`x265_version_str`), found in the process when
    /// libavcodec was built with it and loaded it; nil otherwise.
    public static var x265: String? {
        guard avcodec_find_encoder_by_name("libx265") != nil,
              let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "x265_version_str") else { return nil }
        return symbol.assumingMemoryBound(to: UnsafePointer<CChar>?.self).pointee.map { String(cString: $0) }
    }

    /// Whether libavcodec has the libx264 encoder.
    public static var x264: Bool { avcodec_find_encoder_by_name("libx264") != nil }
}
