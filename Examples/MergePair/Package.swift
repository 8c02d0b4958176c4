// swift-tools-version:6.0
// An example of AVToolKit, avtool's verbs as a Swift library: merge a video
// and its separately recorded audio, print the progress and the sync report.
import PackageDescription

let package = Package(
    name: "MergePair",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "avtool", path: "../..")],
    targets: [
        .executableTarget(name: "merge-pair", dependencies: [.product(name: "AVToolKit", package: "avtool")]),
    ],
    swiftLanguageModes: [.v6]
)
