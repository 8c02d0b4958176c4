import Sync
import Testing

private func tb(_ n: Int32, _ d: Int32) -> Rational { Rational(n, d)! }
private let audio48k = Rational(unchecked: 1, 48_000)

@Suite("ExtentTracker, TrackExtent and AVSkew")
struct TrackExtentTests {
    // MARK: ExtentTracker

    @Test("earliest pts to latest pts + duration, in any packet order")
    func extentOfReorderedPackets() throws {
        var e = ExtentTracker(timeBase: .mpegClock)
        for (pts, duration) in [(Int64(3003), Int64(3003)), (12_012, 3003), (6006, 3003), (9009, 3003)] {
            e.add(pts: pts, duration: duration)
        }
        e.add(pts: nil, duration: 100_000)  // ignored
        let x = try #require(e.extent)
        #expect(x.start == Timestamp(3003, .mpegClock))
        #expect(x.end == Timestamp(15_015, .mpegClock))
        #expect(x.start.value == 3003 && x.end.value == 15_015)
        #expect(x.duration == Timestamp(12_012, .mpegClock))
    }

    @Test("no packet with a pts, no extent")
    func empty() {
        var e = ExtentTracker(timeBase: audio48k)
        #expect(e.extent == nil)
        e.add(pts: nil, duration: 1024)
        #expect(e.extent == nil)
    }

    @Test("a negative duration counts as zero")
    func negativeDuration() throws {
        var e = ExtentTracker(timeBase: audio48k)
        e.add(pts: 100, duration: -50)
        let x = try #require(e.extent)
        #expect(x.start.value == 100 && x.end.value == 100)
    }

    @Test("AAC priming: first pts −1024 with 1024 priming samples starts at 0")
    func priming() throws {
        var e = ExtentTracker(timeBase: audio48k)
        e.primingSamples = 1024
        e.sampleRate = 48_000
        for n in Int64(-1)..<3 { e.add(pts: n * 1024, duration: 1024) }
        let x = try #require(e.extent)
        #expect(x.start == Timestamp(0, audio48k))
        #expect(x.start.value == 0)
        #expect(x.end.value == 3072)
        #expect(x.duration?.value == 3072)
    }

    @Test("priming in another time base is rescaled to nearest")
    func primingInMilliseconds() throws {
        // 2112 samples at 44.1 kHz = 47.89 ms → 48 ms
        var e = ExtentTracker(timeBase: tb(1, 1000))
        e.primingSamples = 2112
        e.sampleRate = 44_100
        e.add(pts: -48, duration: 23)
        e.add(pts: -25, duration: 23)
        e.add(pts: -2, duration: 23)
        let x = try #require(e.extent)
        #expect(x.start.value == 0)
        #expect(x.end.value == 21)
    }

    @Test("priming is ignored without a sample rate, and never moves the start past the end")
    func primingEdges() throws {
        var noRate = ExtentTracker(timeBase: audio48k)
        noRate.primingSamples = 1024
        noRate.add(pts: -1024, duration: 1024)
        #expect(noRate.extent?.start.value == -1024)

        var short = ExtentTracker(timeBase: audio48k)
        short.primingSamples = 2048
        short.sampleRate = 48_000
        short.add(pts: 0, duration: 1024)
        let x = try #require(short.extent)
        #expect(x.start.value == 1024)
        #expect(x.end.value == 1024)
        #expect(x.duration?.value == 0)
    }

    // MARK: TrackExtent

    @Test("duration is in the end's time base; the start is rounded to nearest into it")
    func durationAcrossTimeBases() {
        let x = TrackExtent(start: Timestamp(1, tb(1, 3)), end: Timestamp(1000, tb(1, 1000)))
        // 1/3 s = 333.33 ms → 333; 1000 − 333 = 667
        #expect(x.duration == Timestamp(667, tb(1, 1000)))
        #expect(x.duration?.timeBase == tb(1, 1000))
        #expect(TrackExtent(start: Timestamp(-1, tb(1, 1000)), end: Timestamp(.max, tb(1, 1000))).duration == nil)
    }

    // MARK: AVSkew

    /// Video 0 … 10 s in 1/90000.
    private static let video = TrackExtent(start: Timestamp(0, .mpegClock), end: Timestamp(900_000, .mpegClock))

    @Test("audio starting 0.5 s after the video and ending 0.5 s before it")
    func audioLateAndShort() throws {
        // 0.5 s = 24000 samples; 9.5 s = 456000 samples
        let audio = TrackExtent(start: Timestamp(24_000, audio48k), end: Timestamp(456_000, audio48k))
        let skew = try #require(AVSkew(video: Self.video, audio: audio, sampleRate: 48_000))
        #expect(skew.startMicroseconds == 500_000)
        #expect(skew.startSamples == 24_000)
        #expect(skew.endMicroseconds == -500_000)  // negative: audio ends first
        #expect(skew.endSamples == -24_000)
    }

    @Test("audio starting early and ending late has the opposite signs")
    func audioEarlyAndLong() throws {
        // −1024 samples = −21333.33 µs → −21333; 10 s + 2048 samples = 480000 + 2048.
        let audio = TrackExtent(start: Timestamp(-1024, audio48k), end: Timestamp(482_048, audio48k))
        let skew = try #require(AVSkew(video: Self.video, audio: audio, sampleRate: 48_000))
        #expect(skew.startMicroseconds == -21_333)
        #expect(skew.startSamples == -1024)
        // 2048/48000 s = 42666.67 µs → 42667
        #expect(skew.endMicroseconds == 42_667)
        #expect(skew.endSamples == 2048)
    }

    @Test("the skew from the AAC priming example: tracker output straight into AVSkew")
    func trackerIntoSkew() throws {
        var a = ExtentTracker(timeBase: audio48k)
        a.primingSamples = 1024
        a.sampleRate = 48_000
        // Audio packets from 0.5 s − priming to 10 s.
        for n in Int64(0)..<445 { a.add(pts: 24_000 - 1024 + n * 1024, duration: 1024) }
        // last end = 24000 − 1024 + 445·1024 = 478656 samples = 9.972 s
        let audio = try #require(a.extent)
        #expect(audio.start.value == 24_000)
        #expect(audio.end.value == 478_656)
        let skew = try #require(AVSkew(video: Self.video, audio: audio, sampleRate: 48_000))
        #expect(skew.startMicroseconds == 500_000)
        #expect(skew.startSamples == 24_000)
        // 478656 − 480000 = −1344 samples = −28000 µs
        #expect(skew.endSamples == -1344)
        #expect(skew.endMicroseconds == -28_000)
    }

    @Test("without a usable sample rate there are no sample counts")
    func noSampleRate() throws {
        let audio = TrackExtent(start: Timestamp(24_000, audio48k), end: Timestamp(480_000, audio48k))
        for rate: Int32? in [nil, 0, -48_000] {
            let skew = try #require(AVSkew(video: Self.video, audio: audio, sampleRate: rate))
            #expect(skew.startMicroseconds == 500_000)
            #expect(skew.endMicroseconds == 0)
            #expect(skew.startSamples == nil)
            #expect(skew.endSamples == nil)
        }
    }

    @Test("a difference that does not fit in 64 bits gives nil")
    func overflow() {
        let huge = TrackExtent(start: Timestamp(0, tb(1, 1)), end: Timestamp(.max, tb(1, 1)))
        #expect(AVSkew(video: Self.video, audio: huge, sampleRate: 48_000) == nil)
    }
}
