import ArgumentParser
import Media

/// Flags every verb that writes a file shares.
struct OutputOptions: ParsableArguments {
    @Flag(name: [.customShort("y"), .long], help: "Replace the output file if it already exists.")
    var overwrite = false
}

/// Flags for what a verb prints.
struct ReportingOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Print nothing on stderr except errors (no progress, no summary).")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Also print FFmpeg's own warnings on stderr.")
    var verbose = false

    @Flag(help: "Print the report as JSON on stdout.")
    var json = false

    func applyLogLevel() {
        (verbose ? LibraryLogLevel.warning : .quiet).apply()
    }
}
