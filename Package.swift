// swift-tools-version:6.0
import PackageDescription

// FFmpeg's libraries loaded when first called (CFFmpegLazy's trampolines),
// on x86-64 Linux; elsewhere linked as usual.
#if arch(x86_64) && os(Linux)
let lazyFFmpeg = true
#else
let lazyFFmpeg = false
#endif
let ffmpegLibraries = ["avformat", "avcodec", "avutil", "swresample", "swscale"]

// scripts/fuzz.sh's instrumented build names libFuzzer's driver (the archive
// without libFuzzer's `main`) here, to be linked into the fuzz target alone:
// the same build then gives the AddressSanitizer avtool that
// scripts/sanitize.sh --quick runs (`-sanitize=fuzzer` would put libFuzzer's
// `main` into avtool as well).
let libFuzzerDriver: [LinkerSetting] = Context.environment["AVTOOL_LIBFUZZER_DRIVER"].map {
    [.unsafeFlags([$0, "-lstdc++"])]
} ?? []

let package = Package(
    name: "avtool",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "avtool", targets: ["avtool"]),
        // The verbs as a Swift library (Examples/MergePair uses it): the functions the CLI calls.
        .library(name: "AVToolKit", targets: ["AVToolKit"]),
        // The fuzz target (scripts/fuzz.sh builds it with libFuzzer); built
        // normally it replays inputs: avtool-fuzz FILE…
        .executable(name: "avtool-fuzz", targets: ["avtool-fuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        // FFmpeg 5.1 through pkg-config, plus a shim for the macros Swift cannot import.
        // libavfilter is installed (the system set) but not linked: nothing here uses it,
        // and loading it (with the libraries it needs: flite, libplacebo, …) costs
        // memory in every run.
        // The headers come from the system's include path; the libraries are
        // not linked where CFFmpegLazy loads them (pkg-config would link them).
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: lazyFFmpeg ? nil : "libavformat libavcodec libavutil libswresample libswscale",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev",
                              "libavfilter-dev", "libswresample-dev", "libswscale-dev"])]
        ),
        // Every function of FFmpeg's libraries as a trampoline that loads its
        // library on the first call (dlopen), not at start: a run that needs
        // none (`--help`, a bulk copy of an MP4's boxes) maps neither them nor the
        // hundred-odd libraries they need (25 MiB resident, 25 ms). Elsewhere it
        // links them.
        .target(name: "CFFmpegLazy",
                linkerSettings: [.linkedLibrary("dl")]
                    + (lazyFFmpeg ? [] : ffmpegLibraries.map { .linkedLibrary($0) })),
        // libavfilter for the one target that runs filter graphs (Filters), loaded with dlopen
        // when a graph is first built: linked, the program would map it (and what it pulls in)
        // in every run, 11 MiB more resident for a remux.
        .target(name: "CFFmpegFilter", linkerSettings: [.linkedLibrary("dl")]),
        // The timestamp-sync core: pure Swift value types, no FFmpeg.
        .target(name: "Sync"),
        // ISO-BMFF (MP4/MOV) boxes as bytes: the big-endian reader, four-character codes, the box
        // walker, a lossless box tree and one typed value per box it reads. No FFmpeg.
        .target(name: "ISOBMFF"),
        // Threads and a condition on pthreads, without Foundation: writing behind, the index trial, the batch scheduler, chunked transcode.
        .target(name: "Threads"),
        // File names as bytes (not always UTF-8) in text, exactly; text shown on a terminal, escaped.
        .target(name: "FileNames"),
        // The Linux file calls Swift cannot import (O_TMPFILE, copy_file_range, fallocate): headers only.
        .systemLibrary(name: "CFileAccess"),
        // The one file-access seam: an open file that closes once, each call (pread, pwrite,
        // copy_file_range, fallocate, O_TMPFILE, fstat) wrapped once, its failure one errno-typed
        // `FileError`. No FFmpeg.
        .target(name: "FileAccess", dependencies: ["CFileAccess", "FileNames"]),
        // The safe Swift layer over FFmpeg.
        .target(name: "Media", dependencies: ["CFFmpeg", "CFFmpegLazy", "Sync", "ISOBMFF", "Threads", "FileNames", "FileAccess"]),
        .target(name: "Probe", dependencies: ["Media", "Sync", "FileNames"]),
        // The one writing path every verb shares: the mux session (staged output, muxer,
        // one timeline per track) and the track writers (copy, re-encode) behind one protocol.
        .target(name: "Pipeline", dependencies: ["Media", "ISOBMFF", "Sync", "Threads", "FileNames", "FileAccess"]),
        // The verbs: siblings, each a composition of the pipeline's pieces and the core's plans.
        .target(name: "Remux", dependencies: ["Media", "ISOBMFF", "Sync", "Pipeline", "Threads", "FileNames", "FileAccess"]),
        .target(name: "Transcode", dependencies: ["Media", "Sync", "Pipeline", "Threads", "Loudness", "Filters", "FileNames", "FileAccess"]),
        // merge, concat, fill-silence: one assembly over the core's sync, gap and splice plans.
        .target(name: "Concat", dependencies: ["Media", "Sync", "Pipeline", "Loudness"]),
        // repair: a cut-off input salvaged through remux; an unfinished MP4/MOV (no index)
        // rebuilt from its media data with a reference recording's settings.
        .target(name: "Repair", dependencies: ["Media", "ISOBMFF", "Sync", "Pipeline", "Remux"]),
        // cut (and split): the packets of a time range, keyframe mode, on the core's CutSelection.
        .target(name: "Cut", dependencies: ["Media", "Sync", "Pipeline", "Concat", "Loudness"]),
        // libavfilter's graphs (audio or video frames in, filtered frames out): loudness, tone mapping.
        .target(name: "Filters", dependencies: ["Media", "Sync", "CFFmpeg", "CFFmpegFilter"]),
        // Loudness (EBU R128): measured by Sync's meter (ebur128's figures), limited by Sync's TruePeakLimiter.
        .target(name: "Loudness", dependencies: ["Media", "Sync", "Pipeline", "CFFmpeg"]),
        // libyaml through pkg-config: the event parser recipes are read with (Batch only).
        .systemLibrary(
            name: "CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"])]
        ),
        // Recipes (YAML, read by libyaml's event parser into nodes with their lines), job
        // expansion, the ledger, sharding and the scheduler. It runs jobs through a `JobRunner`
        // the CLI supplies, so a recipe's options are checked and run by the very code that
        // parses the command line.
        .target(name: "Batch", dependencies: ["Threads", "CYAML", "FileNames", "FileAccess"]),
        // The library product: every verb as an async function, with the names its callers need
        // (options, reports, progress, the error); the modules behind are not re-exported.
        .target(name: "AVToolKit", dependencies: ["Media", "Sync", "Threads", "Pipeline", "Probe", "Remux", "Transcode", "Concat",
                                                  "Repair", "Cut", "Loudness"]),
        .executableTarget(
            name: "avtool",
            dependencies: [
                "AVToolKit", "Media", "Sync", "Pipeline", "Probe", "Remux", "Transcode", "Concat", "Repair", "Cut", "Loudness",
                "Batch", "FileNames",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "avtool-fuzz", dependencies: ["ISOBMFF", "Media", "Sync", "Pipeline", "Probe", "Remux", "Concat", "Repair"],
                          linkerSettings: libFuzzerDriver),
        .testTarget(
            name: "SyncTests",
            dependencies: ["Sync", .product(name: "PropertyBased", package: "swift-property-based")]
        ),
        // Depends on ISOBMFF alone: builds and runs with no libav* installed.
        .testTarget(name: "ISOBMFFTests", dependencies: ["ISOBMFF"]),
        // Depends on FileAccess alone: the seam on real files, no libav*.
        .testTarget(name: "FileAccessTests", dependencies: ["FileAccess"]),
        .testTarget(name: "MediaTests", dependencies: ["Media", "ISOBMFF", "Sync", "CFFmpeg", "Probe", "Pipeline", "Remux", "Concat",
                                                    "Transcode", "FileAccess"]),
        .testTarget(name: "BatchTests", dependencies: ["Batch", .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "avtoolTests", dependencies: ["avtool"]),
    ],
    swiftLanguageModes: [.v6]
)

// The documentation plugin only when asked for (scripts/docs.sh): the
// builds and tests do not resolve it.
if Context.environment["AVTOOL_DOCC"] != nil {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}
