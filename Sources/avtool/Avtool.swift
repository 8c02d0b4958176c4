import ArgumentParser

@main
struct Avtool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "avtool",
        abstract: "Remux, transcode, merge and probe audio/video files, with sample-accurate A/V sync.",
        version: VersionText.text,
        subcommands: [ProbeCommand.self, RemuxCommand.self, TranscodeCommand.self, MergeCommand.self,
                      ConcatCommand.self, FillSilenceCommand.self, AutoSyncCommand.self, CutCommand.self, SplitCommand.self, RepairCommand.self, BatchCommand.self]
    )
}
