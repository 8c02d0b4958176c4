/// One sample a movie fragment lists, as a demuxer finds it: where its
/// bytes lie in the file, its size, duration, flags and composition offset,
/// each from its `trun` entry, else the `tfhd`'s default, else the track's
/// `trex` (the order libavformat's `mov_read_trun` takes them in).
public struct FragmentSample: Sendable, Equatable {
    /// Where its bytes start in the file; nil when no offset can say
    /// (a base past 2^63, a run that counts from it).
    public var offset: Int64?
    public var size: UInt32
    /// In the track's media time scale.
    public var duration: UInt32
    /// `SampleFlags` bits.
    public var flags: UInt32
    /// PTS − DTS, in the track's media time scale.
    public var compositionOffset: Int32
    /// The `tfdt`'s time, else where the track's fragment before ended
    /// (0 for its first), plus the durations of the samples before it.
    public var decodeTime: UInt64

    public init(offset: Int64?, size: UInt32, duration: UInt32, flags: UInt32, compositionOffset: Int32, decodeTime: UInt64) {
        (self.offset, self.size, self.duration, self.flags) = (offset, size, duration, flags)
        (self.compositionOffset, self.decodeTime) = (compositionOffset, decodeTime)
    }

    /// Whether all its bytes lie within a file of `fileSize` bytes.
    public func lies(within fileSize: Int64) -> Bool {
        guard let offset, offset >= 0 else { return false }
        return Int64(size) <= fileSize - offset
    }
}

extension MovieFragment {
    /// Each track fragment's samples, in order, for this `moof` starting at
    /// `start` in the file: a `tfhd` without a base offset counts from the
    /// `moof` (default-base-is-moof, or the first track fragment) or from
    /// the end of the data before; a run without a data offset starts where
    /// the run before it ended (ISO/IEC 14496-12 8.8.8.3). `defaults` are
    /// the tracks' `trex` by track id, `decodeTimes` where each track's
    /// fragments so far end (updated).
    public func samples(at start: Int64, defaults: [UInt32: TrackExtends],
                        decodeTimes: inout [UInt32: UInt64]) -> [(trackID: UInt32, samples: [FragmentSample])] {
        // libavformat's implicit offset: the moof's start, then the end of each run's data.
        var dataEnd: Int64? = start
        return trackFragments.map { (traf) -> (trackID: UInt32, samples: [FragmentSample]) in
            let h = traf.header
            let trex = defaults[h.trackID]
            let base: Int64?
            if let b = h.baseDataOffset {
                base = b <= UInt64(Int64.max) ? Int64(b) : nil
            } else {
                base = h.flags & TrackFragmentHeader.defaultBaseIsMoof != 0 ? start : dataEnd
            }
            // Neither the tfhd nor a trex gives a default: ISO's, none (0).
            let duration = h.defaultSampleDuration ?? trex?.defaultSampleDuration ?? 0
            let size = h.defaultSampleSize ?? trex?.defaultSampleSize ?? 0
            let flags = h.defaultSampleFlags ?? trex?.defaultSampleFlags ?? 0
            var time = traf.decodeTime?.baseMediaDecodeTime ?? decodeTimes[h.trackID] ?? 0
            var samples: [FragmentSample] = []
            samples.reserveCapacity(traf.runs.reduce(0) { $0 + $1.entries.count })
            var next = base
            for run in traf.runs {
                var at = run.dataOffset.map { d in base.flatMap { Self.advance($0, by: Int64(d)) } } ?? next
                let fields = run.fields
                for (k, e) in run.entries.enumerated() {
                    let first = k == 0 ? run.firstSampleFlags : nil
                    let sample = FragmentSample(
                        offset: at, size: fields.contains(.size) ? e.size : size,
                        duration: fields.contains(.duration) ? e.duration : duration,
                        flags: fields.contains(.flags) ? e.flags : first ?? flags,
                        compositionOffset: fields.contains(.compositionOffset) ? e.compositionOffset : 0, decodeTime: time)
                    samples.append(sample)
                    at = at.flatMap { Self.advance($0, by: Int64(sample.size)) }
                    time &+= UInt64(sample.duration)
                }
                next = at
                dataEnd = at
            }
            decodeTimes[h.trackID] = time
            return (h.trackID, samples)
        }
    }

    /// `offset` moved by `delta`, nil past either end of an Int64.
    private static func advance(_ offset: Int64, by delta: Int64) -> Int64? {
        let (sum, overflow) = offset.addingReportingOverflow(delta)
        return overflow ? nil : sum
    }
}
