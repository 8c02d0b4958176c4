#!/usr/bin/env bash
# merge-bench.sh — `avtool merge`, `avtool fill-silence` and `avtool concat`
# against the ffmpeg program doing the same stream copy, in the same run (and,
# with --before, against an earlier avtool binary): wall time, peak RSS.
#
# Usage: bench/merge-bench.sh [--avtool PATH] [--before PATH] [--runs N] [--minutes M] [--workdir DIR]
#   --avtool PATH   avtool binary (default <repo>/.build-bench/release/avtool, built
#                   with `swift build -c release --product avtool --scratch-path .build-bench`)
#   --before PATH   an older avtool binary (optional): the real-encoder merge and
#                   fill-silence jobs are timed with it too (before_* rows, *_vs_before)
#   --runs N        timed runs per command (default 3); medians are reported
#   --minutes M     length of the generated recording (default 10; the 1-hour
#                   figure is --minutes 60). Use an even M: AAC frames (1024
#                   samples at 48 kHz) and 25 fps video end together only then
#   --workdir DIR   scratch dir; generated inputs are cached here (default <repo>/.bench)
#
# Inputs (generated once, cached per length M in DIR):
#   merge-video-Mm.mp4         1280x720 25 fps H.264 (libx264), no audio
#   merge-audio-Mm.m4a         AAC 48 kHz stereo from libavcodec's encoder (ffmpeg -c:a aac)
#   merge-segments-Mm/         the video and that audio muxed, cut at keyframes into 10 segments
#   merge-audio-voaac-Mm.m4a   AAC 48 kHz stereo 128 kb/s from a real encoder other than
#                              libavcodec's: GStreamer's voaacenc (VisualOn, Android's),
#                              M*60*48000/1024 frames, via gst-launch-1.0 … ! mp4mux
#   fill-voaac-Mm.mp4          the video and the voaacenc audio muxed (ffmpeg -c copy), no gaps
# Commands (rows; AV = --avtool, BEFORE = --before):
#   avtool_merge / ffmpeg_merge (libavcodec AAC):
#            AV merge V A OUT.mp4
#            ffmpeg -i V -i A -map 0:v -map 1:a -c copy OUT.mp4
#   avtool_merge_voaac / ffmpeg_merge_voaac / before_merge_voaac:
#            AV merge V A_VOAAC OUT.mp4
#            ffmpeg -i V -i A_VOAAC -map 0:v -map 1:a -c copy OUT.mp4
#            BEFORE merge V A_VOAAC OUT.mp4
#   avtool_fill_voaac / ffmpeg_fill_voaac / before_fill_voaac:
#            AV fill-silence FILL_VOAAC OUT.mp4
#            ffmpeg -i FILL_VOAAC -map 0 -c copy OUT.mp4
#            BEFORE fill-silence FILL_VOAAC OUT.mp4
#   avtool_concat / avtool_concat_copy / ffmpeg_concat:
#            AV concat SEG1 … SEG10 OUT.mp4          (audio re-encoded at joints
#                                                    that are not whole AAC frames)
#            AV concat … --tolerance 11ms            (copy: joints within half a frame)
#            ffmpeg -f concat -safe 0 -i LIST -c copy OUT.mp4
# Every output of every run is checked with ffprobe before its time counts: 2
# streams, audio aac, and audio packets equal to the input's (avtool: plus the
# silent frames its report names; audio re-encoded whole: +1 or +2, the
# encoder's priming frame and a last partial frame; concat: within one frame
# per segment). avtool's report line (audio copied / re-encoded) is printed
# once per job.
# Output: a table, then one JSON line with the medians (NAME_s, NAME_rss_mib),
#   the audio mode avtool reported per job (audio_modes), and the ratios of wall times
#   merge_ratio        avtool_merge_voaac / ffmpeg_merge_voaac   (target <= 1.0)
#   fill_ratio         avtool_fill_voaac / ffmpeg_fill_voaac     (target <= 1.0)
#   merge_vs_before    avtool_merge_voaac / before_merge_voaac   (with --before; goal <= 0.3)
#   fill_vs_before     avtool_fill_voaac / before_fill_voaac     (with --before; goal <= 0.3)
#   merge_lavc_ratio   avtool_merge / ffmpeg_merge (libavcodec AAC; was merge_ratio)
#   concat_ratio, concat_copy_ratio   avtool_concat(_copy) / ffmpeg_concat
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
BENCH_TAG=merge-bench
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

AVTOOL="$REPO_ROOT/.build-bench/release/avtool"
AVTOOL_EXPLICIT=0
BEFORE=""
RUNS=3
MINUTES=10
WORKDIR="$REPO_ROOT/.bench"

usage() { sed -n '2,/^set -euo pipefail$/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --avtool)    [[ $# -ge 2 ]] || die "--avtool needs a value"; AVTOOL="$2"; AVTOOL_EXPLICIT=1; shift 2 ;;
        --before)    [[ $# -ge 2 ]] || die "--before needs a value"; BEFORE="$2"; shift 2 ;;
        --runs)      [[ $# -ge 2 ]] || die "--runs needs a value"; RUNS="$2"; shift 2 ;;
        --minutes)   [[ $# -ge 2 ]] || die "--minutes needs a value"; MINUTES="$2"; shift 2 ;;
        --workdir)   [[ $# -ge 2 ]] || die "--workdir needs a value"; WORKDIR="$2"; shift 2 ;;
        -h|--help)   usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer (got '$RUNS')"
[[ "$MINUTES" =~ ^[1-9][0-9]*$ ]] || die "--minutes must be a positive integer (got '$MINUTES')"
if [[ -n "$BEFORE" ]]; then
    [[ -x "$BEFORE" ]] || die "--before binary not found or not executable: $BEFORE"
    BEFORE="$(cd "$(dirname "$BEFORE")" && pwd)/$(basename "$BEFORE")"
fi
(( MINUTES % 2 == 0 )) || log "warning: odd --minutes: the voaacenc audio ends 512 samples before the video"

bench_require_tools ffmpeg ffprobe python3 awk
bench_ensure_time
bench_ensure_avtool "$AVTOOL" "$AVTOOL_EXPLICIT" "$REPO_ROOT" --scratch-path "$REPO_ROOT/.build-bench"

mkdir -p "$WORKDIR"
WORKDIR="$(cd "$WORKDIR" && pwd)"
RESULTS="$(mktemp -d "$WORKDIR/results.XXXXXX")"
cleanup() { rm -rf "$RESULTS"; rm -f "$WORKDIR"/out.*; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# audio_probe FILE — "codec,packets" of FILE's first audio stream (packets counted).
audio_probe() {
    ffprobe -v error -select_streams a:0 -count_packets \
        -show_entries stream=codec_name,nb_read_packets -of csv=p=0 "$1" | head -n1
}
# stream_count FILE — number of streams in FILE.
stream_count() { ffprobe -v error -show_entries stream=codec_type -of csv=p=0 "$1" | wc -l; }

# ---------------------------------------------------------------------------
# Inputs (cached)
# ---------------------------------------------------------------------------
SECONDS_LEN=$((MINUTES * 60))
VIDEO="$WORKDIR/merge-video-${MINUTES}m.mp4"
AUDIO="$WORKDIR/merge-audio-${MINUTES}m.m4a"
SEGDIR="$WORKDIR/merge-segments-${MINUTES}m"
VO_AUDIO="$WORKDIR/merge-audio-voaac-${MINUTES}m.m4a"
VO_MUXED="$WORKDIR/fill-voaac-${MINUTES}m.mp4"
VO_FRAMES=$((SECONDS_LEN * 48000 / 1024))
FF=(ffmpeg -hide_banner -nostdin -loglevel error -y)
if [[ ! -s "$VIDEO" ]]; then
    log "generating $VIDEO ($MINUTES min 720p H.264)"
    "${FF[@]}" -f lavfi -i "testsrc2=size=1280x720:rate=25:duration=$SECONDS_LEN" \
        -c:v libx264 -preset ultrafast -crf 30 -g 50 -pix_fmt yuv420p "$VIDEO.partial.mp4"
    mv "$VIDEO.partial.mp4" "$VIDEO"
fi
if [[ ! -s "$AUDIO" ]]; then
    log "generating $AUDIO"
    "${FF[@]}" -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=$SECONDS_LEN" -ac 2 \
        -c:a aac -b:a 128k "$AUDIO.partial.m4a"
    mv "$AUDIO.partial.m4a" "$AUDIO"
fi
if [[ ! -s "$SEGDIR/list.txt" ]]; then
    log "cutting 10 segments"
    rm -rf "$SEGDIR"; mkdir -p "$SEGDIR"
    "${FF[@]}" -i "$VIDEO" -i "$AUDIO" -map 0:v -map 1:a -c copy "$SEGDIR/all.mp4"
    "${FF[@]}" -i "$SEGDIR/all.mp4" -map 0 -c copy -f segment -segment_time $((SECONDS_LEN / 10)) \
        -reset_timestamps 1 "$SEGDIR/seg%02d.mp4"
    rm -f "$SEGDIR/all.mp4"
    for f in "$SEGDIR"/seg*.mp4; do echo "file '$f'"; done >"$SEGDIR/list.txt"
fi
if [[ ! -s "$VO_AUDIO" ]]; then
    log "generating $VO_AUDIO (GStreamer voaacenc, $VO_FRAMES AAC frames)"
    bench_require_tools gst-launch-1.0 gst-inspect-1.0
    gst-inspect-1.0 voaacenc >/dev/null 2>&1 \
        || die "GStreamer element voaacenc missing (apt-get install gstreamer1.0-plugins-bad)"
    gst-launch-1.0 -q audiotestsrc wave=sine freq=440 num-buffers="$VO_FRAMES" samplesperbuffer=1024 \
        ! audio/x-raw,rate=48000,channels=2 ! voaacenc bitrate=128000 ! aacparse \
        ! mp4mux ! filesink location="$VO_AUDIO.partial.m4a" >&2
    [[ "$(audio_probe "$VO_AUDIO.partial.m4a")" == "aac,$VO_FRAMES" ]] \
        || die "voaacenc output is not $VO_FRAMES AAC packets: $(audio_probe "$VO_AUDIO.partial.m4a")"
    mv "$VO_AUDIO.partial.m4a" "$VO_AUDIO"
fi
if [[ ! -s "$VO_MUXED" ]]; then
    log "generating $VO_MUXED (video + voaacenc audio, stream copy)"
    "${FF[@]}" -i "$VIDEO" -i "$VO_AUDIO" -map 0:v -map 1:a -c copy "$VO_MUXED.partial.mp4"
    mv "$VO_MUXED.partial.mp4" "$VO_MUXED"
fi
SEGMENTS=("$SEGDIR"/seg*.mp4)
INPUT_BYTES=$(( $(file_size "$VIDEO") + $(file_size "$AUDIO") ))
VO_INPUT_BYTES=$(( $(file_size "$VIDEO") + $(file_size "$VO_AUDIO") ))

# Audio packets of each job's input (what a stream copy must give back).
AUDIO_PACKETS=$(audio_probe "$AUDIO" | cut -d, -f2)
VO_PACKETS=$(audio_probe "$VO_AUDIO" | cut -d, -f2)
[[ "$(audio_probe "$VO_MUXED")" == "aac,$VO_PACKETS" ]] || die "$VO_MUXED: audio is not aac,$VO_PACKETS"
SEG_PACKETS=0
for f in "${SEGMENTS[@]}"; do SEG_PACKETS=$(( SEG_PACKETS + $(audio_probe "$f" | cut -d, -f2) )); done

# ---------------------------------------------------------------------------
# Benchmarks (bench_NAME IN OUT; IN unused, the inputs come from BENCH_VARS).
# avtool's stderr (warnings, then its one-line report) goes to OUT.report.
# ---------------------------------------------------------------------------
bench_avtool_merge() { "$AVTOOL" merge "$VIDEO" "$AUDIO" "$2" --overwrite 2>"$2.report"; }
bench_ffmpeg_merge() { ffmpeg -nostdin -loglevel error -y -i "$VIDEO" -i "$AUDIO" -map 0:v -map 1:a -c copy "$2"; }
bench_avtool_merge_voaac() { "$AVTOOL" merge "$VIDEO" "$VO_AUDIO" "$2" --overwrite 2>"$2.report"; }
bench_ffmpeg_merge_voaac() { ffmpeg -nostdin -loglevel error -y -i "$VIDEO" -i "$VO_AUDIO" -map 0:v -map 1:a -c copy "$2"; }
bench_before_merge_voaac() { "$BEFORE" merge "$VIDEO" "$VO_AUDIO" "$2" --overwrite 2>"$2.report"; }
bench_avtool_fill_voaac() { "$AVTOOL" fill-silence "$VO_MUXED" "$2" --overwrite 2>"$2.report"; }
bench_ffmpeg_fill_voaac() { ffmpeg -nostdin -loglevel error -y -i "$VO_MUXED" -map 0 -c copy "$2"; }
bench_before_fill_voaac() { "$BEFORE" fill-silence "$VO_MUXED" "$2" --overwrite 2>"$2.report"; }
bench_avtool_concat() { "$AVTOOL" concat "$SEGDIR"/seg*.mp4 "$2" --overwrite 2>"$2.report"; }
bench_avtool_concat_copy() { "$AVTOOL" concat "$SEGDIR"/seg*.mp4 "$2" --tolerance 11ms --overwrite 2>"$2.report"; }
bench_ffmpeg_concat() { ffmpeg -nostdin -loglevel error -y -f concat -safe 0 -i "$SEGDIR/list.txt" -c copy "$2"; }

BENCHES=(avtool_merge ffmpeg_merge avtool_merge_voaac ffmpeg_merge_voaac)
[[ -n "$BEFORE" ]] && BENCHES+=(before_merge_voaac)
BENCHES+=(avtool_fill_voaac ffmpeg_fill_voaac)
[[ -n "$BEFORE" ]] && BENCHES+=(before_fill_voaac)
BENCHES+=(avtool_concat avtool_concat_copy ffmpeg_concat)
BENCH_VARS=(AVTOOL BEFORE VIDEO AUDIO SEGDIR VO_AUDIO VO_MUXED)

# expected_packets NAME — the input's audio packet count for job NAME.
expected_packets() {
    case "$1" in
        *_merge) echo "$AUDIO_PACKETS" ;;
        *_voaac) echo "$VO_PACKETS" ;;
        *_concat*) echo "$SEG_PACKETS" ;;
        *) die "no expected packet count for $1" ;;
    esac
}

# check_output NAME OUT — die unless OUT has 2 streams and AAC audio with the
# packets the job's input has (see the header); records avtool's audio mode.
check_output() {
    local name="$1" out="$2" n probe codec packets want report="" mode="" silent=0 ok=0 lo hi
    n=$(stream_count "$out")
    [[ "$n" == 2 ]] || die "$name: output has $n streams, expected 2"
    probe=$(audio_probe "$out")
    codec=${probe%%,*}; packets=${probe##*,}
    [[ "$codec" == aac ]] || die "$name: output audio codec is '$codec', expected aac"
    want=$(expected_packets "$name")
    if [[ -f "$out.report" ]]; then
        report=$(grep -m1 "^wrote '" "$out.report" || true)
        [[ -n "$report" ]] || die "$name: no report line from avtool: $(tail -n3 "$out.report")"
        mode=$(sed -n 's/.* audio aac \(copied\|re-encoded\).*/\1/p' <<<"$report")
        silent=$(sed -n 's/.*(\([0-9][0-9]*\) silent frames\{0,1\} added).*/\1/p' <<<"$report")
        silent=${silent:-0}
    fi
    case "$name" in
        *_concat*) lo=$((want - ${#SEGMENTS[@]})); hi=$((want + ${#SEGMENTS[@]})) ;;
        *) if [[ "$mode" == re-encoded ]]; then lo=$((want + 1)); hi=$((want + 2))
           else lo=$((want + silent)); hi=$lo; fi ;;
    esac
    (( packets >= lo && packets <= hi )) && ok=1
    [[ "$ok" == 1 ]] || die "$name: output has $packets audio packets, expected $lo..$hi (input $want${mode:+, audio $mode}${silent:+, $silent silent frames})"
    if [[ -n "$report" && ! -f "$RESULTS/$name.mode" ]]; then
        echo "${mode:-?}" >"$RESULTS/$name.mode"
        log "  $name report: ${report#"wrote '$out' "}"
    fi
}

log "inputs: $VIDEO + $AUDIO ($INPUT_BYTES bytes; $AUDIO_PACKETS audio packets), ${#SEGMENTS[@]} segments;" \
    "voaacenc: $VO_AUDIO ($VO_PACKETS packets), $VO_MUXED; $RUNS runs each"
[[ -n "$BEFORE" ]] && log "before: $BEFORE"
cat "$VIDEO" "$AUDIO" "$VO_AUDIO" "$VO_MUXED" "${SEGMENTS[@]}" >/dev/null
for ((run = 1; run <= RUNS; run++)); do
    for name in "${BENCHES[@]}"; do
        out="$WORKDIR/out.$name.mp4"
        rm -f "$out" "$out.report"
        if ! bench_timed "$name" "-" "$out"; then
            [[ -s "$out.report" ]] && log "$name said: $(tail -n3 "$out.report")"
            die "$name failed (run $run)"
        fi
        check_output "$name" "$out"
        log "  run $run/$RUNS $name: $(bench_last "$name")"
        rm -f "$out" "$out.report"
    done
done

MODES_JSON=$(for name in "${BENCHES[@]}"; do
    if [[ -f "$RESULTS/$name.mode" ]]; then printf '%s %s\n' "$name" "$(cat "$RESULTS/$name.mode")"; fi
done | python3 -c 'import json, sys; print(json.dumps(dict(l.split() for l in sys.stdin if l.strip())))')

python3 - "$(bench_medians_json "${BENCHES[@]}")" "$MODES_JSON" "$INPUT_BYTES" "$VO_INPUT_BYTES" \
    "$RUNS" "$MINUTES" "$AVTOOL" "$BEFORE" <<'PY'
import json, sys
med, modes = json.loads(sys.argv[1]), json.loads(sys.argv[2])
input_bytes, vo_input_bytes, runs, minutes = (int(a) for a in sys.argv[3:7])
avtool, before = sys.argv[7], sys.argv[8] or None
print(f"\nmerge/fill-silence/concat benchmark: {minutes} min 720p + AAC "
      f"(libavcodec {input_bytes} bytes, voaacenc {vo_input_bytes} bytes), {runs} runs, medians")
print(f"{'command':<20} {'wall_s':>8} {'min_s':>8} {'max_s':>8} {'rss_MiB':>8}  audio")
for n, m in med.items():
    print(f"{n:<20} {m['wall_s']:>8.3f} {m['min_s']:>8.3f} {m['max_s']:>8.3f} {m['rss_mib']:>8.1f}  {modes.get(n, '')}")
def ratio(a, b):
    if a not in med or b not in med:
        return None
    return round(med[a]["wall_s"] / med[b]["wall_s"], 3) if med[b]["wall_s"] > 0 else None
out = {"runs": runs, "minutes": minutes, "input_bytes": input_bytes, "voaac_input_bytes": vo_input_bytes,
       "avtool": avtool, "before": before,
       "merge_ratio": ratio("avtool_merge_voaac", "ffmpeg_merge_voaac"),
       "fill_ratio": ratio("avtool_fill_voaac", "ffmpeg_fill_voaac"),
       "merge_vs_before": ratio("avtool_merge_voaac", "before_merge_voaac"),
       "fill_vs_before": ratio("avtool_fill_voaac", "before_fill_voaac"),
       "merge_lavc_ratio": ratio("avtool_merge", "ffmpeg_merge"),
       "concat_ratio": ratio("avtool_concat", "ffmpeg_concat"),
       "concat_copy_ratio": ratio("avtool_concat_copy", "ffmpeg_concat"),
       "audio_modes": modes}
for n, m in med.items():
    out[f"{n}_s"] = m["wall_s"]; out[f"{n}_rss_mib"] = m["rss_mib"]
print(f"ratio avtool/ffmpeg (voaacenc AAC): merge {out['merge_ratio']}, fill-silence {out['fill_ratio']} (target <= 1.0); "
      f"merge (libavcodec AAC) {out['merge_lavc_ratio']}; concat {out['concat_ratio']}, concat (copy) {out['concat_copy_ratio']}")
if before:
    print(f"ratio avtool now/before (voaacenc AAC): merge {out['merge_vs_before']}, fill-silence {out['fill_vs_before']} (goal <= 0.3)")
print(json.dumps(out))
PY
