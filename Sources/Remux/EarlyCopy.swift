import FileAccess
import Glibc
import Media
import Threads

/// The bulk copy's media data copied on a thread of its own from before the
/// index is parsed, where its place in the output can be foretold
/// (`MovieLayout.foretold`): the new index as large as the old one, or
/// larger by what the padding that keeps the media data's place within a
/// page takes up (an edit's tag), in a file far enough under 4 GiB that no
/// offset table can widen. The index is parsed and laid out meanwhile;
/// `keep` takes the copy when the layout is the one foretold, and otherwise
/// it is stopped and the output written again from its start.
package final class EarlyCopy {
    /// The pieces of the output as foretold, and where the first byte after the index goes.
    package let pieces: [MovieLayout.Piece]
    package let indexSize: Int64
    private let thread: WorkerThread
    private let state: Locked<(copied: Int64, done: Bool, failure: MediaError?)>
    /// The copy's own stop (a stop of the job's stops it too).
    private let stopping: Cancellation

    /// Starts copying every piece after the index from `fd` into `out`, at
    /// its foretold place; nil where the place cannot be foretold or no
    /// thread can be started.
    package init?(boxes: [MovieLayout.TopBox], size: Int64, alignment: Int64, from fd: OpenFile, to out: OpenFile, path: String,
          cancellation: Cancellation) {
        guard let moov = boxes.first(where: { $0.type == "moov" }),
              size + moov.size + 2 * alignment < Int64(UInt32.max) / 2,
              let (indexSize, pieces) = MovieLayout.foretold(boxes: boxes, alignment: alignment) else { return nil }
        self.pieces = pieces
        self.indexSize = indexSize
        let state = Locked<(copied: Int64, done: Bool, failure: MediaError?)>((0, false, nil))
        self.state = state
        // Every piece after the index at its place (the one before it, `ftyp`, is written with the index).
        var jobs: [(from: Int64, count: Int64, at: Int64)] = []
        var at: Int64 = 0, afterIndex = false
        for piece in pieces {
            switch piece {
            case .index:
                at += indexSize
                afterIndex = true
            case .input(let start, let count):
                if afterIndex { jobs.append((start, count, at)) }
                at += count
            }
        }
        let (work, own) = (jobs, Cancellation(parent: cancellation))
        stopping = own
        guard let thread = try? WorkerThread({
            defer { state.withLock { $0.done = true } }
            for job in work {
                do throws(MediaError) {
                    try FileBytes.copy(from: fd, at: job.from, count: job.count, to: out, at: job.at, path: path,
                                       cancellation: own) { n in state.withLock { $0.copied += n } }
                } catch {
                    state.withLock { $0.failure = error }
                    return
                }
            }
        }) else { return nil }
        self.thread = thread
    }

    deinit { stop() }

    /// Stops the copy (within 64 MiB) and waits for it.
    package func stop() {
        stopping.cancel()
        thread.join()
    }

    /// The bytes the pieces after the index take.
    package var copyCount: Int64 {
        pieces.drop { $0 != .index }.reduce(0) { if case .input(_, let n) = $1 { $0 + n } else { $0 } }
    }

    /// Whether `layout` is the one foretold: then the copy is waited for
    /// (`copied`, where given, told what it has copied every tenth of a
    /// second; its error thrown) and the bytes it copied returned; else it is stopped, and nil.
    package func keep(_ layout: MovieLayout, copied: ((Int64) -> Void)?) throws(MediaError) -> Int64? {
        guard layout.pieces == pieces, Int64(layout.index.count) == indexSize else {
            stop()
            return nil
        }
        if let copied {
            // Looked at every 5 ms, told every tenth of a second.
            var waited = 0
            while true {
                let (n, done) = state.withLock { ($0.copied, $0.done) }
                if done { break }
                if waited % 20 == 0 { copied(n) }
                waited += 1
                usleep(5_000)
            }
        }
        thread.join()
        let (copied, failure) = state.withLock { ($0.copied, $0.failure) }
        if let failure { throw failure }
        return copied
    }
}
