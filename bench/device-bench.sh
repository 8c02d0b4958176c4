#!/usr/bin/env bash
# device-bench.sh — what carrying a camera's data tracks costs: wall time / peak
# RSS of avtool verbs on a long GoPro recording (H.264 + AAC + `gpmd` telemetry,
# as MOV) with its data track and with --no-data, and of `ffmpeg -c copy`.
#
# Usage: bench/device-bench.sh [--avtool PATH] [--runs N] [--copies N] [--workdir DIR]
#   --avtool PATH   avtool binary (default <repo>/.build/release/avtool; built with
#                   `swift build -c release --product avtool` if missing)
#   --runs N        timed runs per command (default 5); the median is reported
#   --copies N      the GoPro sample (10.5 s) joined N times by ffmpeg's concat
#                   demuxer into the input MOV (default 60: 10.5 minutes, ~210 MB)
#   --workdir DIR   scratch dir; the input is cached here (default <repo>/.bench)
#
# remux: MOV → MP4 (the muxer's way, the data track carried by avtool); cut: 2–8
# minutes; fill: fill-silence into MP4; each also with --no-data (_nodata).
# Output: a table of medians, then one JSON line (last line) with each
# <name>_s / <name>_rss_mib and the ratios data/nodata per verb and remux/ffmpeg.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH_TAG="device-bench"
# shellcheck source=lib/common.sh
source "$REPO_ROOT/bench/lib/common.sh"

AVTOOL="$REPO_ROOT/.build/release/avtool"
AVTOOL_EXPLICIT=0
RUNS=5
COPIES=60
WORKDIR="$REPO_ROOT/.bench"
usage() { sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
    case "$1" in
        --avtool) AVTOOL="$2"; AVTOOL_EXPLICIT=1; shift 2 ;;
        --runs) RUNS="$2"; shift 2 ;;
        --copies) COPIES="$2"; shift 2 ;;
        --workdir) WORKDIR="$2"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer"
[[ "$COPIES" =~ ^[1-9][0-9]*$ ]] || die "--copies must be a positive integer"

bench_require_tools ffmpeg ffprobe python3
bench_ensure_time
bench_ensure_avtool "$AVTOOL" "$AVTOOL_EXPLICIT" "$REPO_ROOT"
mkdir -p "$WORKDIR"
WORKDIR="$(cd "$WORKDIR" && pwd)"
RESULTS="$(mktemp -d "$WORKDIR/results.XXXXXX")"
trap 'rm -rf "$RESULTS"; rm -f "$WORKDIR"/out.device.*' EXIT

SAMPLE="$REPO_ROOT/Tests/Fixtures/devices/gopro_max_heromode_gpmd.mp4"
INPUT="$WORKDIR/gopro-x$COPIES.mov"
if [[ ! -f "$INPUT" ]]; then
    log "joining the GoPro sample $COPIES times (ffmpeg's concat demuxer: video, audio, gpmd)"
    list="$WORKDIR/gopro.partial.txt"
    : >"$list"
    for ((i = 0; i < COPIES; i++)); do printf "file '%s'\n" "$SAMPLE" >>"$list"; done
    ffmpeg -nostdin -loglevel error -y -f concat -safe 0 -i "$list" -map 0:v -map 0:a -map 0:3 -c copy \
        "$WORKDIR/gopro.partial.mov"
    rm -f "$list"
    mv -f "$WORKDIR/gopro.partial.mov" "$INPUT"
fi
log "input $INPUT: $(file_size "$INPUT") bytes, $(ffprobe -v error -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$INPUT" | paste -sd+ | bc) packets"

bench_remux()        { "$AVTOOL" remux "$1" "$2.mp4" --quiet --overwrite; }
bench_remux_nodata() { "$AVTOOL" remux "$1" "$2.mp4" --quiet --overwrite --no-data; }
# (ffmpeg cannot write this gpmd track into MP4: its video and audio only.)
bench_ffmpeg()       { ffmpeg -nostdin -loglevel error -y -i "$1" -map 0:v -map 0:a -c copy -movflags +faststart "$2.mp4"; }
bench_cut()          { "$AVTOOL" cut "$1" "$2.mp4" --from 2m --to 8m --quiet --overwrite; }
bench_cut_nodata()   { "$AVTOOL" cut "$1" "$2.mp4" --from 2m --to 8m --quiet --overwrite --no-data; }
bench_fill()         { "$AVTOOL" fill-silence "$1" "$2.mp4" --quiet --overwrite; }
bench_fill_nodata()  { "$AVTOOL" fill-silence "$1" "$2.mp4" --quiet --overwrite --no-data; }
BENCHES=(remux remux_nodata ffmpeg cut cut_nodata fill fill_nodata)
BENCH_VARS=(AVTOOL)

cat "$INPUT" >/dev/null
for ((run = 1; run <= RUNS; run++)); do
    for name in "${BENCHES[@]}"; do
        bench_timed "$name" "$INPUT" "$WORKDIR/out.device.$name" || die "$name failed (run $run)"
        log "  run $run/$RUNS $name: $(bench_last "$name")"
        rm -f "$WORKDIR"/out.device.*
    done
done

python3 - "$(bench_medians_json "${BENCHES[@]}")" "$RUNS" <<'PY'
import json, sys
med, runs = json.loads(sys.argv[1]), int(sys.argv[2])
print(f"\ndevice benchmark: {runs} runs, medians")
print(f"{'command':<14} {'wall_s':>8} {'min_s':>8} {'max_s':>8} {'rss_MiB':>8}")
for n, m in med.items():
    print(f"{n:<14} {m['wall_s']:>8.3f} {m['min_s']:>8.3f} {m['max_s']:>8.3f} {m['rss_mib']:>8.1f}")
ratio = lambda a, b: round(med[a]["wall_s"] / med[b]["wall_s"], 3) if med[b]["wall_s"] > 0 else None
out = {f"{n}_s": round(m["wall_s"], 3) for n, m in med.items()}
out.update({f"{n}_rss_mib": round(m["rss_mib"], 1) for n, m in med.items()})
out.update({"ratio_remux_data": ratio("remux", "remux_nodata"), "ratio_cut_data": ratio("cut", "cut_nodata"),
            "ratio_fill_data": ratio("fill", "fill_nodata"), "ratio_remux_ffmpeg": ratio("remux", "ffmpeg")})
for k in ("ratio_remux_data", "ratio_cut_data", "ratio_fill_data", "ratio_remux_ffmpeg"):
    print(f"{k}: {out[k]}")
print(json.dumps(out))
PY
