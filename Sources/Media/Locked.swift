import CFFmpeg
import Glibc
import Threads

/// A value behind a pthread mutex (`Condition`'s). Used instead of
/// Synchronization's `Mutex` where thread sanitizer must see the locking:
/// it intercepts pthread calls, not the futexes `Mutex` uses on Linux, and
/// reports false races there.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = Condition()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// Gives memory freed so far back to the system (`malloc_trim`): after a
/// phase whose allocations are all released, so the next one's peak is
/// not added to the last one's.
public func releaseFreedMemory() {
    malloc_trim(0)
}

/// Allocations of 1 MiB and more get pages of their own (`mmap`), given
/// back whole when freed, and grown in place (`mremap`): the muxer's and
/// demuxer's indexes, which grow to tens of MiB in a long recording. Left
/// to itself, glibc raises that threshold to the largest block freed so
/// far (up to 32 MiB), after which such indexes grow on the heap by copy,
/// leaving holes that keep the peak high. Packets stay on the heap, and
/// the heap's free top is kept up to 64 MiB (a fixed threshold would
/// otherwise leave glibc's trim at 128 KiB, and every large packet freed
/// would give its pages back, to be faulted in and zeroed again for the
/// next: 2.5× the time of a 1 GiB remux here). `releaseFreedMemory`
/// still gives it all back between phases. For the program's start; a
/// library leaves the process's allocator alone.
public func useOwnPagesForLargeBlocks() {
    mallopt(M_MMAP_THRESHOLD, 1 << 20)
    mallopt(M_TRIM_THRESHOLD, 64 << 20)
}
