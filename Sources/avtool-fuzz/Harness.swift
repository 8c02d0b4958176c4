import Concat
import Glibc
import Media
import Pipeline
import Probe
import Remux
import Repair
import Sync

// The fuzz target: one input, as bytes, through what avtool does with a file
// — open (from memory, through a custom AVIOContext), probe every packet
// (timestamps into the core's extent tracker and gap scanner), then one of
// the writing paths into an in-memory muxer: remux (every packet through the
// core's TrackTimeline), fill-silence (SyncPlan, AudioAssembler, silent
// codec frames or re-encoding) or concat of the input with itself
// (SplicePlan across a joint); and the bulk remux's index work (MovieLayout
// with IndexEdits, the new index read back). An input that does not open (as
// an MP4 whose index was never written), and every third one that does, is
// also walked as `repair` walks such a file (`RebuildScanner`), with one of
// the fixed references below. Errors are the expected outcome for most
// inputs; a crash, a trap, a hang or a leak is a bug.
//
// Two builds of the same file:
// - `scripts/fuzz.sh` builds it with `-sanitize=fuzzer,address` and
//   `-DAVTOOL_LIBFUZZER`: main hands control to libFuzzer.
// - the ordinary build is a replayer: `avtool-fuzz FILE…` runs each file once
//   and says what happened (used to check reproducers). The libFuzzer build
//   replays the same way when AVTOOL_FUZZ_REPLAY=1 is set (`scripts/sanitize.sh
//   --quick` runs the fuzz corpus suite with it, so one instrumented build
//   serves the fuzzer and the sanitized suites).

/// AVTOOL_FUZZ_ENTRY=isobmff: only the box layer's round trip runs (`boxRoundTrip`).
let boxesOnly = getenv("AVTOOL_FUZZ_ENTRY").map { String(cString: $0) } == "isobmff"
/// The containers an input is written into.
let targets = ["mp4", "mkv", "ts"].map { Container(named: $0)! }
/// At most this much output in memory; beyond it the output reports a full disk.
let outputLimit = 256 << 20
/// Silence made in one place at most (avtool's own limit is 12 hours): a few
/// bytes of input can declare an hour of video to pad, which is work, not a
/// bug, and would only slow the fuzzer down.
let fillOptions: AssemblyOptions = {
    var o = AssemblyOptions()
    o.longestFillSeconds = 60
    return o
}()

/// The references the rebuild's walk uses, planned once: PCM (16-bit
/// little-endian with a timecode track, 24-bit big-endian with HEVC, two
/// H.264 tracks with three PCM tracks, two of one format) from
/// Tests/Fuzz/references, and the device recordings with data tracks (a
/// GoPro's timecode, GPMF and `fdsc` beside AAC; an iPhone's `mebx`).
nonisolated(unsafe) let rebuildReferences: [(name: String, scanner: RebuildScanner)] = {
    // The repository, from this file's place in it (Sources/avtool-fuzz/Harness.swift).
    var root = #filePath
    for _ in 0..<3 { root = String(root[..<(root.lastIndex(of: "/") ?? root.startIndex)]) }
    let names = ["Tests/Fuzz/references/pcm_s16le_tmcd.mov", "Tests/Fuzz/references/pcm_s24be_hevc.mov",
                 "Tests/Fuzz/references/h264x2_pcm_s16le_x2_s24be.mov",
                 "Tests/Fixtures/devices/gopro_max_heromode_gpmd.mp4", "Tests/Fixtures/devices/iphone14pro_dv84_hlg_720p_mebx.MOV"]
    return names.map { name in
        do throws(MediaError) {
            let reference = try InputFile(path: root + "/" + name)
            return (name, try RebuildScanner(reference: reference, container: Container(named: "mov")!))
        } catch {
            fatalError("the rebuild's reference \(name): \(error)")
        }
    }
}()

/// The index-less rebuild's walk over the input with one of the references (by the input's length).
func rebuildWalk(_ bytes: UnsafeRawBufferPointer) -> String {
    let (name, scanner) = rebuildReferences[(bytes.count / 3) % rebuildReferences.count]
    let reference = name.split(separator: "/").last ?? ""
    do throws(MediaError) {
        let r = try scanner.scan(bytes)
        return "; rebuilt with \(reference): \(r.samples) samples, \(r.bytes) bytes, \(r.gaps) gaps, "
            + "\(r.ambiguous) ambiguous, \(r.unplacedBytes) unplaced"
    } catch {
        return "; rebuilt with \(reference): \(error)"
    }
}

/// Runs one input; returns a one-line outcome. The writing path and the
/// container are chosen by the input's length, so mutated inputs reach all
/// of them without running each input several times.
func runOne(_ bytes: UnsafeRawBufferPointer) -> String {
    let data = Array(bytes)
    var outcome = boxRoundTrip(data) + "; "
    if boxesOnly { return outcome }
    do throws(MediaError) {
        let report = try probe(InputFile(memory: MemoryInput(data), name: "input"))
        // The text `avtool probe` prints: its number formatting sees the file's values too.
        _ = report.text
        outcome += "probe: \(report.streams.count) streams, \(report.streams.reduce(0) { $0 + $1.packets }) packets"
    } catch {
        // What does not open goes to the rebuild, as `repair` sends it.
        return outcome + "probe: \(error)" + rebuildWalk(bytes)
    }
    if data.count % 3 == 0 { outcome += rebuildWalk(bytes) }
    outcome += indexEdits(data)
    let container = targets[(data.count / 4) % targets.count]
    switch data.count % 4 {
    case 2:
        do throws(MediaError) {
            let report = try fillSilence(memory: data, container: container, toVideoEnd: data.count % 8 == 2,
                                         options: fillOptions, limit: outputLimit)
            outcome += "; fill-silence to \(container): \(report.outputBytes) bytes, \(report.silenceInsertedSamples) samples of silence"
        } catch {
            outcome += "; fill-silence to \(container): \(error)"
        }
    case 3:
        do throws(MediaError) {
            let report = try concat(memory: [data, data], container: container, options: fillOptions, limit: outputLimit)
            outcome += "; concat to \(container): \(report.outputBytes) bytes, joints \(report.jointsSeconds)"
        } catch {
            outcome += "; concat to \(container): \(error)"
        }
    default:
        do throws(MediaError) {
            let out = try MemoryOutput(limit: outputLimit)
            let report = try remux(InputFile(memory: MemoryInput(data), name: "input"), into: out,
                                   container: container, options: RemuxOptions())
            outcome += "; remux to \(container): \(report.outputBytes) bytes, \(report.corrections.total) timestamp fixes"
        } catch {
            outcome += "; remux to \(container): \(error)"
        }
    }
    return outcome
}

/// The bulk remux's work on an index: the file laid out with the index in
/// front and every kind of edit made in its boxes (file tags only, then
/// everything on the first track as well), the new index read back.
func indexEdits(_ data: [UInt8]) -> String {
    var tags = IndexEdits(family: data.count % 2 == 0 ? .iso : .quickTime)
    tags.fileTags = [("title", "t"), ("comment", nil), ("com.example.key", "v")]
    var all = tags
    all.trackTags = [0: [("language", "fra"), ("handler_name", "h")]]
    all.creationTime = 1_700_000_000
    all.matrices = [0: MetadataEdits.displayMatrix(90)]
    var outcome = ""
    // What the carrying of data tracks and probe read of the index.
    if let index = SourceIndex(fileSize: Int64(data.count), read: { offset, count in
        guard offset >= 0, offset < data.count else { return nil }
        return Array(data[Int(offset)..<min(data.count, Int(offset) + count)])
    }) {
        let described = index.tracks.map { t in
            "\(t.id) \(t.handlerType?.description ?? "-") \(t.handlerName ?? "-") \(t.sampleEntryType?.description ?? "-") "
                + "\(t.sampleEntryBoxes.count) \(t.metadataKeys.count) \(t.views?.layers ?? 0) \(t.references.count) \(t.indexBytes)"
        }
        outcome += "; tracks: \(described.joined(separator: ", "))"
    }
    for edits in [tags, all] {
        do throws(MovieLayout.Refusal) {
            let layout = try MovieLayout(fileSize: Int64(data.count), alignment: 4096, edits: edits) { offset, count in
                guard offset >= 0, offset < data.count else { return nil }
                return Array(data[Int(offset)..<min(data.count, Int(offset) + count)])
            }
            let back = (try? MemoryInput(layout.index)).flatMap { try? InputFile(memory: $0, name: "index", packetsOnly: true, format: "mov") }
            outcome += "; index edited: \(layout.index.count) bytes, \(back?.streams.count ?? 0) streams read back"
        } catch {
            outcome += "; index not edited: \(error)"
        }
    }
    return outcome
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    _ = runOne(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}

#if AVTOOL_LIBFUZZER
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32
#endif

@main
struct FuzzMain {
    static func main() {
        LibraryLogLevel.quiet.apply()
        #if AVTOOL_LIBFUZZER
        if getenv("AVTOOL_FUZZ_REPLAY").map({ String(cString: $0) }) != "1" {
            // SwiftPM makes this function the program's entry point, so libFuzzer's
            // own main never runs: hand over to its driver.
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
        }
        #endif
        replay(CommandLine.arguments.dropFirst())
    }

    /// Runs each file once and prints one line of what happened.
    static func replay(_ paths: ArraySlice<String>) {
        if paths.isEmpty {
            print("usage: avtool-fuzz FILE… (replays inputs; scripts/fuzz.sh builds the libFuzzer version)")
            exit(2)
        }
        for path in paths {
            guard let f = fopen(path, "rb") else {
                print("\(path): cannot open")
                exit(1)
            }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = fread(&chunk, 1, chunk.count, f)
                if n <= 0 { break }
                bytes += chunk[0..<n]
            }
            fclose(f)
            let outcome = bytes.withUnsafeBytes { runOne($0) }
            print("\(path): \(outcome)")
        }
    }
}
