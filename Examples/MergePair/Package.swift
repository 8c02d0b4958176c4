// swift-tools-version:6.0
// Examples of AVToolKit, avtool's verbs as a Swift library: merge-pair merges
// a video and its separately recorded audio, printing the progress and the
// sync report; job-service runs transcodes concurrently, as a service would,
// and cancels one.
import PackageDescription

let package = Package(
    name: "MergePair",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "avtool", path: "../..")],
    targets: [
        .executableTarget(name: "merge-pair", dependencies: [.product(name: "AVToolKit", package: "avtool")]),
        .executableTarget(name: "job-service", dependencies: [.product(name: "AVToolKit", package: "avtool")]),
    ],
    swiftLanguageModes: [.v6]
)
