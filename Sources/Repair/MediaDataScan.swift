import Media

/// One sample found in the media data: its track, place and bytes.
struct FoundSample: Equatable {
    var track: Int
    var offset: Int
    var size: Int
    var keyframe: Bool
}

/// The samples of a video track (H.264/HEVC) and an audio track (AAC)
/// found by walking media data whose index is lost, sample by sample, in
/// file order: at each place, a video sample if the bytes start one, else
/// an audio frame if the decoder takes them as one; the walk stops where
/// neither fits (the end of what was written, or data of a track it cannot
/// read) and reports the bytes it could not place.
struct MediaDataScan {
    var samples: [FoundSample] = []
    /// Bytes of media data after the last sample found.
    var unplacedBytes = 0
    /// Where the walk stopped short of the media data's end, if it did.
    var stoppedAt: Int?
    /// Samples of other tracks passed over (a timecode track's).
    var skippedSamples = 0

    struct VideoTrack {
        var track: Int
        var scanner: AccessUnitScanner
    }

    struct AudioTrack {
        var track: Int
        var measure: AudioFrameMeasure
    }

    /// `skippable`: sample sizes of the reference's other tracks whose
    /// samples all have one size (a timecode track's 4 bytes); such a
    /// sample is passed over where a sample of a kept track follows it.
    init(_ b: UnsafeRawBufferPointer, boxes: TopLevelBoxes, video: VideoTrack?, audio: AudioTrack?, skippable: [Int] = [],
         cancellation: Cancellation, progress: ((Int) -> Void)? = nil) throws(MediaError) {
        var sinceCheck = 0
        for (n, range) in boxes.mediaData.enumerated() {
            // Only the last box can have been cut off.
            let open = boxes.cutShort && n == boxes.mediaData.count - 1
            var i = range.lowerBound
            walk: while i < range.upperBound {
                sinceCheck += 1
                if sinceCheck >= 256 {
                    sinceCheck = 0
                    try cancellation.check()
                    progress?(i)
                }
                if let v = video {
                    switch v.scanner.sample(b, at: i, end: range.upperBound) {
                    case .sample(let end, let keyframe):
                        // A sample that ends exactly where a cut file does may
                        // have lost its last slices.
                        if open && end == range.upperBound { break walk }
                        samples.append(FoundSample(track: v.track, offset: i, size: end - i, keyframe: keyframe))
                        i = end
                        continue walk
                    case .cutShort:
                        break walk
                    case .none:
                        break
                    }
                }
                if let a = audio,
                   let length = a.measure.frameLength(UnsafeRawBufferPointer(rebasing: b[i..<range.upperBound])) {
                    samples.append(FoundSample(track: a.track, offset: i, size: length, keyframe: true))
                    i += length
                    continue walk
                }
                for size in skippable where size > 0 && i + size <= range.upperBound {
                    let next = i + size
                    let followed = next == range.upperBound
                        || video.map { if case .sample = $0.scanner.sample(b, at: next, end: range.upperBound) { true } else { false } } == true
                        || audio?.measure.frameLength(UnsafeRawBufferPointer(rebasing: b[next..<range.upperBound])) != nil
                    if followed {
                        skippedSamples += 1
                        i = next
                        continue walk
                    }
                }
                break walk
            }
            if i < range.upperBound {
                unplacedBytes += range.upperBound - i
                if stoppedAt == nil { stoppedAt = i }
            }
        }
    }
}
