#!/usr/bin/env bash
# chunked-bench.sh — a chunked H.265 transcode against the single pass, on this
# machine, and what it would take on a cluster.
#
# Usage: bench/chunked-bench.sh [--avtool PATH] [--input FILE] [--seconds S] [--preset P]
#                               [--chunks N] [--hour-join | --no-hour-join] [--workdir DIR]
#   --avtool PATH   avtool binary (default <repo>/.build/release/avtool, built if missing)
#   --input FILE    the recording (default: a generated 1080p25 H.264 + AAC clip of S seconds)
#   --seconds S     length of the generated clip (default 60)
#   --preset P      x265 preset for every run (default fast), CRF 24
#   --chunks N      chunk tasks timed one after another for the cluster model (default 8)
#   --no-hour-join  skip the join of a one-hour file (it encodes an hour of small video first)
#   --workdir DIR   scratch directory, generated inputs cached (default <repo>/.bench)
#
# Measures (one run each, GNU time):
#   1. single pass vs --chunks 2 on this machine: wall, CPU (user+sys), PSNR
#      against the source (ffmpeg's psnr filter), size;
#   2. the N chunk tasks (--chunk K/N --chunk-dir) one after another, each
#      task's own wall, and the join (--join) of their chunks;
#   3. the model for M machines (one task each, the chunks split M ways):
#      wall(M) = task overhead + encode seconds per source second × duration / M
#      + join, for M = 4, 16, 64, for this file and scaled to one hour;
#   4. the join's own time for a one-hour file (its chunks encoded first at
#      320x180 ultrafast; the join copies packets, so its cost follows the
#      packet count and the bytes), and a task's overhead on it (the plan
#      reads every video packet's timing), used for the one-hour model.
# Output: a table on stdout, then one JSON line (last line).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
BENCH_TAG=chunked-bench
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

AVTOOL="$REPO_ROOT/.build/release/avtool"
AVTOOL_EXPLICIT=0
INPUT=""
SECONDS_LONG=60
PRESET=fast
CHUNKS=8
HOUR_JOIN=1
WORKDIR="$REPO_ROOT/.bench"

usage() { sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
    case "$1" in
        --avtool) AVTOOL="$2"; AVTOOL_EXPLICIT=1; shift 2 ;;
        --input) INPUT="$2"; shift 2 ;;
        --seconds) SECONDS_LONG="$2"; shift 2 ;;
        --preset) PRESET="$2"; shift 2 ;;
        --chunks) CHUNKS="$2"; shift 2 ;;
        --hour-join) HOUR_JOIN=1; shift ;;
        --no-hour-join) HOUR_JOIN=0; shift ;;
        --workdir) WORKDIR="$2"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done

bench_require_tools ffmpeg ffprobe python3
bench_ensure_time
bench_ensure_avtool "$AVTOOL" "$AVTOOL_EXPLICIT" "$REPO_ROOT"
mkdir -p "$WORKDIR"
RUN="$(mktemp -d "$WORKDIR/chunked.XXXXXX")"
trap 'rm -rf "$RUN"' EXIT

if [[ -z "$INPUT" ]]; then
    INPUT="$WORKDIR/chunked-1080p-${SECONDS_LONG}s.mp4"
    if [[ ! -f "$INPUT" ]]; then
        log "generating $INPUT (1080p25 H.264 + AAC, ${SECONDS_LONG} s)"
        ffmpeg -nostdin -v error -f lavfi -i "testsrc2=size=1920x1080:rate=25:duration=$SECONDS_LONG" \
            -f lavfi -i "sine=frequency=440:duration=$SECONDS_LONG" -c:v libx264 -preset veryfast -g 50 \
            -pix_fmt yuv420p -c:a aac -b:a 128k "$INPUT.partial.mp4"
        mv "$INPUT.partial.mp4" "$INPUT"
    fi
fi
DURATION=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$INPUT")
OPTS=(--preset "$PRESET" --crf 24 -q -y)

# timed NAME COMMAND... — runs the command under GNU time; sets NAME_wall, NAME_cpu.
timed() {
    local name="$1"; shift
    "$TIME_BIN" -f '%e %U %S' -o "$RUN/$name.time" "$@" >/dev/null
    read -r wall user sys <"$RUN/$name.time"
    printf -v "${name}_wall" '%s' "$wall"
    printf -v "${name}_cpu" '%s' "$(python3 -c "print(round($user + $sys, 2))")"
}
psnr() {
    ffmpeg -nostdin -i "$1" -i "$INPUT" -lavfi "[0:v][1:v]psnr" -f null - 2>&1 |
        grep -o 'average:[0-9.inf]*' | tail -n1 | cut -d: -f2
}

log "single pass ($PRESET) on $(basename "$INPUT"), ${DURATION} s"
bench_wait_quiet >/dev/null
timed single "$AVTOOL" transcode "$INPUT" "$RUN/single.mp4" "${OPTS[@]}"
log "--chunks 2"
bench_wait_quiet >/dev/null
timed chunks2 "$AVTOOL" transcode "$INPUT" "$RUN/chunks2.mp4" --chunks 2 "${OPTS[@]}"
single_psnr=$(psnr "$RUN/single.mp4"); chunks2_psnr=$(psnr "$RUN/chunks2.mp4")
single_bytes=$(file_size "$RUN/single.mp4"); chunks2_bytes=$(file_size "$RUN/chunks2.mp4")

log "$CHUNKS chunk tasks, one after another"
tasks=()
for k in $(seq 1 "$CHUNKS"); do
    timed task "$AVTOOL" transcode "$INPUT" --chunk "$k/$CHUNKS" --chunk-dir "$RUN/dir" "${OPTS[@]}"
    tasks+=("$task_wall")
done
timed join "$AVTOOL" transcode --join "$RUN/dir" "$RUN/joined.mp4" -q -y
# A task's overhead (plan from the keyframes, encoder start): a task whose
# chunk is already in the ledger does only that.
timed again "$AVTOOL" transcode "$INPUT" --chunk "1/$CHUNKS" --chunk-dir "$RUN/dir" "${OPTS[@]}"

hour_join=null
hour_overhead=null
if [[ $HOUR_JOIN == 1 ]]; then
    HOUR="$WORKDIR/chunked-hour-180p.mp4"
    if [[ ! -f "$HOUR" ]]; then
        log "generating $HOUR (one hour, 320x180 H.264 + AAC)"
        ffmpeg -nostdin -v error -f lavfi -i "testsrc2=size=320x180:rate=25:duration=3600" \
            -f lavfi -i "sine=frequency=440:duration=3600" -c:v libx264 -preset ultrafast -g 50 \
            -c:a aac -b:a 64k "$HOUR.partial.mp4"
        mv "$HOUR.partial.mp4" "$HOUR"
    fi
    log "encoding the hour's 4 chunks (ultrafast), then timing the join"
    for k in 1 2 3 4; do
        "$AVTOOL" transcode "$HOUR" --chunk "$k/4" --chunk-dir "$RUN/hour" --preset ultrafast -q >/dev/null
    done
    bench_wait_quiet >/dev/null
    timed hourjoin "$AVTOOL" transcode --join "$RUN/hour" "$RUN/hour.mp4" -q -y
    hour_join=$hourjoin_wall
    # A task's overhead on the hour (its plan reads every video packet's timing).
    timed hourtask "$AVTOOL" transcode "$HOUR" --chunk 1/4 --chunk-dir "$RUN/hour" --preset ultrafast -q
    hour_overhead=$hourtask_wall
fi

python3 - "$DURATION" "$single_wall" "$single_cpu" "$single_psnr" "$single_bytes" \
    "$chunks2_wall" "$chunks2_cpu" "$chunks2_psnr" "$chunks2_bytes" "$join_wall" "$again_wall" "$hour_join" \
    "$hour_overhead" "$CHUNKS" "${tasks[@]}" <<'PY'
import json, sys
a = sys.argv[1:]
duration = float(a[0])
single = dict(wall=float(a[1]), cpu=float(a[2]), psnr=float(a[3]), bytes=int(a[4]))
chunks2 = dict(wall=float(a[5]), cpu=float(a[6]), psnr=float(a[7]), bytes=int(a[8]))
join, overhead = float(a[9]), float(a[10])
hour_join = None if a[11] == "null" else float(a[11])
hour_overhead = overhead if a[12] == "null" else float(a[12])
n = int(a[13]); tasks = [float(x) for x in a[14:14 + n]]
# Encoding cost per source second, each task's overhead taken out.
per_second = sum(t - overhead for t in tasks) / duration
join_per_second = join / duration
model = {}
for m in (4, 16, 64):
    model[m] = dict(this_file=round(overhead + per_second * duration / m + join, 1),
                    one_hour=round(hour_overhead + per_second * 3600 / m + (hour_join if hour_join else join_per_second * 3600), 1))
print(f"input: {duration:.1f} s")
print(f"{'':22}{'wall s':>9}{'cpu s':>9}{'PSNR dB':>9}{'MiB':>9}")
for name, r in (("single pass", single), ("--chunks 2", chunks2)):
    print(f"{name:22}{r['wall']:9.1f}{r['cpu']:9.1f}{r['psnr']:9.2f}{r['bytes'] / 2**20:9.2f}")
print(f"--chunks 2 vs single: wall {chunks2['wall'] / single['wall']:.2f}x, PSNR {chunks2['psnr'] - single['psnr']:+.2f} dB, size {chunks2['bytes'] / single['bytes'] - 1:+.2%}")
print(f"{n} tasks: {', '.join(f'{t:.1f}' for t in tasks)} s; task overhead {overhead:.2f} s; join {join:.2f} s")
print(f"encoding: {per_second:.2f} s per source second on one machine")
for m, r in model.items():
    print(f"expected wall on {m:2} machines: {r['this_file']:8.1f} s for this file, {r['one_hour']:8.1f} s for one hour")
if hour_join is not None:
    print(f"join of a one-hour file: {hour_join:.2f} s; a task's overhead on it: {hour_overhead:.2f} s")
print(json.dumps(dict(duration_s=duration, single=single, chunks2=chunks2, tasks_s=tasks, task_overhead_s=overhead,
                      join_s=join, encode_s_per_source_s=round(per_second, 3), hour_join_s=hour_join, hour_task_overhead_s=hour_overhead,
                      machines={str(k): v for k, v in model.items()})))
PY
