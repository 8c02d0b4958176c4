#!/usr/bin/env bash
# cut-bench.sh — cutting 10 minutes out of a 1-hour H.264 + AAC MP4:
# `avtool cut` (keyframe mode), `avtool cut --mode exact` (the frames from --from
# to the next keyframe and the end's open GOP re-encoded, the rest copied) vs
# `ffmpeg -ss -t -c copy` vs a full re-encode of the same 10 minutes (`ffmpeg
# -ss -t -c:v libx264 -preset veryfast`), wall time and peak RSS, medians of
# alternating runs.
#
# Usage: bench/cut-bench.sh [--avtool PATH] [--runs N] [--workdir DIR]
#   --avtool PATH   avtool binary (default <repo>/.build/release/avtool)
#   --runs N        timed runs per command (default 3)
#   --workdir DIR   scratch dir; the generated input is cached here (default <repo>/.bench)
#
# Output: a table of medians, then one JSON line with avtool_s, ffmpeg_copy_s,
# reencode_s, their RSS, and the ratios.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
BENCH_TAG=cut-bench
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

AVTOOL="$REPO_ROOT/.build/release/avtool"
AVTOOL_EXPLICIT=0
RUNS=3
WORKDIR="$REPO_ROOT/.bench"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --avtool) AVTOOL="$2"; AVTOOL_EXPLICIT=1; shift 2 ;;
        --runs) RUNS="$2"; shift 2 ;;
        --workdir) WORKDIR="$2"; shift 2 ;;
        -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1" ;;
    esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer"

bench_require_tools ffmpeg ffprobe python3 awk
bench_ensure_time
bench_ensure_avtool "$AVTOOL" "$AVTOOL_EXPLICIT" "$REPO_ROOT"
mkdir -p "$WORKDIR"
WORKDIR="$(cd "$WORKDIR" && pwd)"
RESULTS="$(mktemp -d "$WORKDIR/results.XXXXXX")"
cleanup() { rm -rf "$RESULTS"; rm -f "$WORKDIR"/cut-out.*; }
trap cleanup EXIT

# A 60 s 1280x720 H.264 (keyframe every 2 s) + AAC segment, stream-copied 60 times.
INPUT="$WORKDIR/cut-input-1h.mp4"
if [[ ! -f "$INPUT" ]]; then
    seg="$WORKDIR/cut-segment.mp4" list="$WORKDIR/cut-list.txt"
    log "encoding a 60 s segment"
    ffmpeg -nostdin -hide_banner -loglevel error -y \
        -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=60" \
        -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=60,aformat=channel_layouts=stereo" \
        -map 0:v -map 1:a -c:v libx264 -preset veryfast -g 60 -b:v 3M -c:a aac -b:a 128k "$seg"
    : >"$list"
    for ((i = 0; i < 60; i++)); do printf "file '%s'\n" "$seg" >>"$list"; done
    log "concatenating 60 copies"
    ffmpeg -nostdin -hide_banner -loglevel error -y -f concat -safe 0 -i "$list" -map 0 -c copy "$INPUT.partial.mp4"
    mv -f "$INPUT.partial.mp4" "$INPUT"
    rm -f "$list"
fi

bench_avtool()      { "$AVTOOL" cut "$1" "$2" --from 20:00.5 --duration 10:00 --quiet --overwrite; }
bench_avtool_exact() { "$AVTOOL" cut "$1" "$2" --from 20:00.5 --duration 10:00 --mode exact --quiet --overwrite; }
bench_ffmpeg_copy() { ffmpeg -nostdin -loglevel error -y -ss 1200.5 -t 600 -i "$1" -map 0 -c copy "$2"; }
bench_reencode()    { ffmpeg -nostdin -loglevel error -y -ss 1200.5 -t 600 -i "$1" -map 0 -c:v libx264 -preset veryfast -c:a copy "$2"; }
BENCHES=(avtool avtool_exact ffmpeg_copy reencode)
BENCH_VARS=(AVTOOL)

cat "$INPUT" >/dev/null
for ((run = 1; run <= RUNS; run++)); do
    for name in "${BENCHES[@]}"; do
        out="$WORKDIR/cut-out.$name.mp4"
        bench_timed "$name" "$INPUT" "$out" || die "$name failed"
        if [[ $run == 1 ]]; then
            d=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$out")
            log "  $name: output $(file_size "$out") bytes, $d s"
        fi
        log "  run $run/$RUNS $name: $(bench_last "$name")"
        rm -f "$out"
    done
done

python3 - "$(bench_medians_json "${BENCHES[@]}")" <<'PY'
import json, sys
m = json.loads(sys.argv[1])
print("\ncut benchmark: 10 minutes out of a 1-hour 720p H.264 + AAC MP4, medians")
print(f"{'command':<12} {'wall_s':>8} {'rss_MiB':>8}")
for n, v in m.items():
    print(f"{n:<12} {v['wall_s']:>8.3f} {v['rss_mib']:>8.1f}")
r = lambda a, b: round(m[a]["wall_s"] / m[b]["wall_s"], 4) if m[b]["wall_s"] > 0 else None
print(f"avtool / ffmpeg -c copy: {r('avtool', 'ffmpeg_copy')}; avtool / full re-encode: {r('avtool', 'reencode')}; "
      f"avtool --mode exact / full re-encode: {r('avtool_exact', 'reencode')}")
print(json.dumps({"avtool_s": m["avtool"]["wall_s"], "ffmpeg_copy_s": m["ffmpeg_copy"]["wall_s"],
                  "reencode_s": m["reencode"]["wall_s"], "avtool_rss_mib": m["avtool"]["rss_mib"],
                  "ffmpeg_copy_rss_mib": m["ffmpeg_copy"]["rss_mib"], "reencode_rss_mib": m["reencode"]["rss_mib"],
                  "avtool_exact_s": m["avtool_exact"]["wall_s"], "avtool_exact_rss_mib": m["avtool_exact"]["rss_mib"],
                  "ratio_ffmpeg_copy": r("avtool", "ffmpeg_copy"), "ratio_reencode": r("avtool", "reencode"),
                  "ratio_exact_reencode": r("avtool_exact", "reencode")}))
PY
