import Batch
import Transcode

/// Batch transcodes in chunks (`chunks: N`). Run whole on one machine, such
/// a job is `transcode IN OUT --chunks N`. Sharded (`--shard K/M`), it
/// becomes N chunk jobs (`--chunk k/N --chunk-dir OUT.chunks`, each standing
/// for its chunk's packets, so the shards share the chunks as they share
/// files), and the join runs with `--merge-ledgers`, once every shard has
/// ended.
enum BatchChunks {
    /// Options that decide the video: a chunk task's, never the join's.
    static let videoOptions: Set<String> = ["crf", "bitrate", "bpp", "preset", "tune", "x265-params", "keyint",
                                            "10bit", "size", "fps", "salvage", "no-dolby-vision", "sdr", "tone-map"]
    /// Options of the whole-file run only.
    static let wholeRunOptions: Set<String> = ["chunks", "jobs", "chunk-dir"]

    /// The chunk count a job asks for (more than one), if any.
    static func count(_ job: Job) -> Int? {
        guard job.verb == "transcode", let n = job.options.last(where: { $0.name == "chunks" })?.values?.first.flatMap({ Int($0) }),
              n > 1 else { return nil }
        return n
    }

    static func directory(_ job: Job) -> String {
        job.options.last { $0.name == "chunk-dir" }?.values?.first ?? job.output + ".chunks"
    }

    /// The jobs with each chunked transcode as its chunk jobs.
    static func distributed(_ jobs: [Job]) -> [Job] {
        jobs.flatMap { job -> [Job] in
            guard let n = count(job) else { return [job] }
            let dir = directory(job)
            let own = job.options.filter { !wholeRunOptions.contains($0.name) }
            return (1...n).map { k in
                var chunk = job
                chunk.output = dir + "/" + ChunkFiles.media(k, of: n)
                chunk.passesOutput = false
                chunk.options = own + [OptionSetting(name: "chunk", values: ["\(k)/\(n)"], line: job.line),
                                       OptionSetting(name: "chunk-dir", values: [dir], line: job.line)]
                return chunk
            }
        }
    }

    /// The joins of the chunked transcodes among `jobs`.
    static func joins(_ jobs: [Job]) -> [Job] {
        jobs.compactMap { job -> Job? in
            guard count(job) != nil else { return nil }
            var join = job
            join.passesInputs = false
            join.options = job.options.filter { !videoOptions.contains($0.name) && !wholeRunOptions.contains($0.name) }
                + [OptionSetting(name: "join", values: [directory(job)], line: job.line)]
            return join
        }
    }
}
