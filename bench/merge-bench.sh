#!/usr/bin/env bash
# merge-bench.sh — `avtool merge` and `avtool concat` against the ffmpeg
# program doing the same stream copy, in the same run: wall time, peak RSS.
#
# Usage: bench/merge-bench.sh [--avtool PATH] [--runs N] [--minutes M] [--workdir DIR]
#   --avtool PATH   avtool binary (default <repo>/.build-bench/release/avtool, built
#                   with `swift build -c release --product avtool --scratch-path .build-bench`)
#   --runs N        timed runs per command (default 3); medians are reported
#   --minutes M     length of the generated recording (default 10)
#   --workdir DIR   scratch dir; generated inputs are cached here (default <repo>/.bench)
#
# Inputs (generated once, cached): a 1280x720 25 fps H.264 video without audio
# and a separately recorded AAC 48 kHz stereo .m4a of the same length; and the
# two muxed together and cut at keyframes into 10 segments.
# Commands:
#   merge:   avtool merge V A OUT.mp4
#            ffmpeg -i V -i A -map 0:v -map 1:a -c copy OUT.mp4
#   concat:  avtool concat SEG1 … SEG10 OUT.mp4          (audio re-encoded at joints
#                                                        that are not whole AAC frames)
#            avtool concat … --tolerance 11ms            (copy: joints within half a frame)
#            ffmpeg -f concat -safe 0 -i LIST -c copy OUT.mp4
# Output: a table, then one JSON line with the medians and the ratios
#   merge_ratio (target <= 1.0), concat_ratio, concat_copy_ratio.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
BENCH_TAG=merge-bench
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

AVTOOL="$REPO_ROOT/.build-bench/release/avtool"
AVTOOL_EXPLICIT=0
RUNS=3
MINUTES=10
WORKDIR="$REPO_ROOT/.bench"

usage() { sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --avtool)    [[ $# -ge 2 ]] || die "--avtool needs a value"; AVTOOL="$2"; AVTOOL_EXPLICIT=1; shift 2 ;;
        --runs)      [[ $# -ge 2 ]] || die "--runs needs a value"; RUNS="$2"; shift 2 ;;
        --minutes)   [[ $# -ge 2 ]] || die "--minutes needs a value"; MINUTES="$2"; shift 2 ;;
        --workdir)   [[ $# -ge 2 ]] || die "--workdir needs a value"; WORKDIR="$2"; shift 2 ;;
        -h|--help)   usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer (got '$RUNS')"
[[ "$MINUTES" =~ ^[1-9][0-9]*$ ]] || die "--minutes must be a positive integer (got '$MINUTES')"

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

# ---------------------------------------------------------------------------
# Inputs (cached)
# ---------------------------------------------------------------------------
SECONDS_LEN=$((MINUTES * 60))
VIDEO="$WORKDIR/merge-video-${MINUTES}m.mp4"
AUDIO="$WORKDIR/merge-audio-${MINUTES}m.m4a"
SEGDIR="$WORKDIR/merge-segments-${MINUTES}m"
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
SEGMENTS=("$SEGDIR"/seg*.mp4)
INPUT_BYTES=$(( $(file_size "$VIDEO") + $(file_size "$AUDIO") ))

# ---------------------------------------------------------------------------
# Benchmarks (bench_NAME IN OUT; IN unused, the inputs come from BENCH_VARS)
# ---------------------------------------------------------------------------
bench_avtool_merge() { "$AVTOOL" merge "$VIDEO" "$AUDIO" "$2" --quiet --overwrite; }
bench_ffmpeg_merge() { ffmpeg -nostdin -loglevel error -y -i "$VIDEO" -i "$AUDIO" -map 0:v -map 1:a -c copy "$2"; }
bench_avtool_concat() { "$AVTOOL" concat "$SEGDIR"/seg*.mp4 "$2" --quiet --overwrite; }
bench_avtool_concat_copy() { "$AVTOOL" concat "$SEGDIR"/seg*.mp4 "$2" --tolerance 11ms --quiet --overwrite; }
bench_ffmpeg_concat() { ffmpeg -nostdin -loglevel error -y -f concat -safe 0 -i "$SEGDIR/list.txt" -c copy "$2"; }

BENCHES=(avtool_merge ffmpeg_merge avtool_concat avtool_concat_copy ffmpeg_concat)
BENCH_VARS=(AVTOOL VIDEO AUDIO SEGDIR)

log "inputs: $VIDEO + $AUDIO ($INPUT_BYTES bytes), ${#SEGMENTS[@]} segments; $RUNS runs each"
cat "$VIDEO" "$AUDIO" "${SEGMENTS[@]}" >/dev/null
for ((run = 1; run <= RUNS; run++)); do
    for name in "${BENCHES[@]}"; do
        out="$WORKDIR/out.$name.mp4"
        rm -f "$out"
        bench_timed "$name" "-" "$out" || die "$name failed (run $run)"
        if [[ "$run" == 1 ]]; then
            n=$(ffprobe -v error -show_entries stream=codec_type -of csv=p=0 "$out" | wc -l)
            [[ "$n" == 2 ]] || die "$name: output has $n streams, expected 2"
        fi
        log "  run $run/$RUNS $name: $(bench_last "$name")"
        rm -f "$out"
    done
done

python3 - "$(bench_medians_json "${BENCHES[@]}")" "$INPUT_BYTES" "$RUNS" "$MINUTES" <<'PY'
import json, sys
med, input_bytes, runs, minutes = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
print(f"\nmerge/concat benchmark: {minutes} min 720p + AAC ({input_bytes} bytes), {runs} runs, medians")
print(f"{'command':<20} {'wall_s':>8} {'min_s':>8} {'max_s':>8} {'rss_MiB':>8}")
for n, m in med.items():
    print(f"{n:<20} {m['wall_s']:>8.3f} {m['min_s']:>8.3f} {m['max_s']:>8.3f} {m['rss_mib']:>8.1f}")
def ratio(a, b):
    return round(med[a]["wall_s"] / med[b]["wall_s"], 3) if med[b]["wall_s"] > 0 else None
out = {"runs": runs, "minutes": minutes, "input_bytes": input_bytes,
       "merge_ratio": ratio("avtool_merge", "ffmpeg_merge"),
       "concat_ratio": ratio("avtool_concat", "ffmpeg_concat"),
       "concat_copy_ratio": ratio("avtool_concat_copy", "ffmpeg_concat")}
for n, m in med.items():
    out[f"{n}_s"] = m["wall_s"]; out[f"{n}_rss_mib"] = m["rss_mib"]
print(f"ratio merge avtool/ffmpeg: {out['merge_ratio']} (target <= 1.0); concat: {out['concat_ratio']}, concat (copy): {out['concat_copy_ratio']}")
print(json.dumps(out))
PY
