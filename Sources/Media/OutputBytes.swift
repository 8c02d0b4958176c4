/// The bytes of the outputs this process writes, counted in one place:
/// the finished outputs' sizes and the sizes so far of those being
/// written, intermediate files (chunks, ranges to be joined) left out.
/// What `--progress json` reports as `bytes_written`; it ends at the
/// outputs' size, whatever the muxer rewrote or read back on the way.
public enum OutputBytes {
    /// Held weakly: a staged output dropped (an error, a stop) removes its
    /// temporary as it goes, which a strong reference here would prevent.
    private final class Entry {
        weak var output: StagedOutput?
        init(_ output: StagedOutput) { self.output = output }
    }

    private static let state = Locked<(finished: Int64, writing: [ObjectIdentifier: Entry])>((0, [:]))

    static func writing(_ output: StagedOutput) {
        state.withLock { $0.writing[ObjectIdentifier(output)] = Entry(output) }
    }

    static func finished(_ output: StagedOutput, bytes: Int64) {
        state.withLock {
            if $0.writing.removeValue(forKey: ObjectIdentifier(output)) != nil { $0.finished += bytes }
        }
    }

    public static var total: Int64 {
        state.withLock { s in s.writing.values.reduce(s.finished) { $0 + ($1.output?.bytesSoFar ?? 0) } }
    }
}
