#!/usr/bin/env bash
# remux-bench.sh — wall time / peak RSS of `avtool remux` vs `ffmpeg -c copy` vs `cp`
# on a large (>= 1 GB) H.264 + AAC MP4 of large packets, or (--shape hour) on a
# 60-minute 720p H.264 + AAC recording of ordinary size and many small packets.
#
# Usage: bench/remux-bench.sh [--avtool PATH] [--runs N] [--shape large|hour] [--size-gb G]
#                             [--workdir DIR] [--input FILE]
#   --avtool PATH   avtool binary (default <repo>/.build/release/avtool; built with
#                   `swift build -c release --product avtool` if missing)
#   --runs N        timed runs per command (default 5); the median is reported
#   --shape S       large (default): >= --size-gb of 1080p at 80 Mb/s, few large packets;
#                   hour: the real 720p recording .real-media/bbb_720p_aac51.mp4 (Big Buck
#                   Bunny, 5.3 s) made a recording of ordinary bit rate (H.264 540 kb/s,
#                   stereo AAC 128 kb/s) and concatenated 678 times into 60 minutes:
#                   ~280 MB, ~259,000 packets, where fixed and per-packet costs show.
#                   Its goals (issue 31) are printed with the table.
#   --size-gb G     minimum input size in GiB, may be fractional (default 1; shape large)
#   --workdir DIR   scratch dir; the generated input is cached here (default <repo>/.bench)
#   --input FILE    time this file instead of the generated one
#
# avtool is the general path (--no-bulk; with --shape hour MP4 -> MOV, as ffmpeg then writes),
# bulk the default same-container copy,
# edit the same job with a tag changed (--metadata: the bulk path, the tag made in the index).
# Output: a table of medians on stdout, followed by one JSON line (last line) with
#   input_bytes, runs, avtool_s, ffmpeg_s, cp_s, ratio_ffmpeg, ratio_cp, ratio_bulk_cp, ratio_edit_cp,
#   avtool_rss_mib, ffmpeg_rss_mib, cp_rss_mib, bulk_s, bulk_rss_mib, edit_s, edit_rss_mib
# Progress messages go to stderr.
#
# Adding a benchmark: write a `bench_<name> IN OUT` function that runs the
# command (it is timed by the caller) and append <name> to BENCHES. Its medians
# then appear in the table and as <name>_s / <name>_rss_mib keys in the JSON.
# Timing and medians are the shared helpers of bench/lib/common.sh (also used
# by bench/transcode-bench.sh).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
BENCH_TAG=remux-bench
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

AVTOOL="$REPO_ROOT/.build/release/avtool"
AVTOOL_EXPLICIT=0
RUNS=5
SIZE_GB=1
WORKDIR="$REPO_ROOT/.bench"
INPUT_GIVEN=""
SHAPE=large

usage() { sed -n '2,28p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --avtool)   [[ $# -ge 2 ]] || die "--avtool needs a value"; AVTOOL="$2"; AVTOOL_EXPLICIT=1; shift 2 ;;
        --avtool=*) AVTOOL="${1#*=}"; AVTOOL_EXPLICIT=1; shift ;;
        --runs)     [[ $# -ge 2 ]] || die "--runs needs a value"; RUNS="$2"; shift 2 ;;
        --runs=*)   RUNS="${1#*=}"; shift ;;
        --shape)    [[ $# -ge 2 ]] || die "--shape needs a value"; SHAPE="$2"; shift 2 ;;
        --shape=*)  SHAPE="${1#*=}"; shift ;;
        --size-gb)  [[ $# -ge 2 ]] || die "--size-gb needs a value"; SIZE_GB="$2"; shift 2 ;;
        --size-gb=*) SIZE_GB="${1#*=}"; shift ;;
        --workdir)  [[ $# -ge 2 ]] || die "--workdir needs a value"; WORKDIR="$2"; shift 2 ;;
        --workdir=*) WORKDIR="${1#*=}"; shift ;;
        --input)    [[ $# -ge 2 ]] || die "--input needs a value"; INPUT_GIVEN="$2"; shift 2 ;;
        --input=*)  INPUT_GIVEN="${1#*=}"; shift ;;
        -h|--help)  usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done

[[ "$SHAPE" == large || "$SHAPE" == hour ]] || die "--shape must be large or hour (got '$SHAPE')"
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer (got '$RUNS')"
[[ "$SIZE_GB" =~ ^[0-9]*\.?[0-9]+$ ]] || die "--size-gb must be a positive number (got '$SIZE_GB')"
TARGET_BYTES=$(awk -v g="$SIZE_GB" 'BEGIN{printf "%.0f", g*1073741824}')
[[ "$TARGET_BYTES" -gt 0 ]] || die "--size-gb must be > 0"

# ---------------------------------------------------------------------------
# Prerequisites
# ---------------------------------------------------------------------------
bench_require_tools ffmpeg ffprobe python3 awk
bench_ensure_time
bench_ensure_avtool "$AVTOOL" "$AVTOOL_EXPLICIT" "$REPO_ROOT"

mkdir -p "$WORKDIR"
WORKDIR="$(cd "$WORKDIR" && pwd)"
RESULTS="$(mktemp -d "$WORKDIR/results.XXXXXX")"
cleanup() { rm -rf "$RESULTS"; rm -f "$WORKDIR"/out.* "$WORKDIR"/*.partial.*; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------------------
# Input generation (cached in WORKDIR)
# ---------------------------------------------------------------------------
# A SEG_SECONDS high-bitrate 1080p H.264 (ultrafast) + AAC segment is encoded
# once, then stream-copied N times through the concat demuxer until the file
# is at least TARGET_BYTES. Bump GEN_VERSION when changing the recipe.
GEN_VERSION=1
SEG_SECONDS=30
SEG_VBITRATE=80M
INPUT="$WORKDIR/input-${SIZE_GB}g.mp4"
INPUT_PARAMS="v$GEN_VERSION seg=${SEG_SECONDS}s vb=$SEG_VBITRATE target=$TARGET_BYTES"

generate_input() {
    local seg="$WORKDIR/segment-v$GEN_VERSION.mp4" list="$WORKDIR/concat.partial.txt"
    local tmp="$WORKDIR/input.partial.mp4" t0=$SECONDS segsize copies i
    if [[ ! -f "$seg" ]]; then
        log "encoding ${SEG_SECONDS}s 1920x1080 segment (libx264 ultrafast, $SEG_VBITRATE) + AAC"
        ffmpeg -nostdin -hide_banner -loglevel error -y \
            -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=$SEG_SECONDS,noise=alls=20:allf=t+u" \
            -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=$SEG_SECONDS,aformat=channel_layouts=stereo" \
            -map 0:v -map 1:a \
            -c:v libx264 -preset ultrafast -pix_fmt yuv420p -g 60 \
            -b:v "$SEG_VBITRATE" -maxrate "$SEG_VBITRATE" -bufsize "$SEG_VBITRATE" \
            -c:a aac -b:a 192k "$WORKDIR/segment.partial.mp4"
        mv -f "$WORKDIR/segment.partial.mp4" "$seg"
    fi
    segsize=$(file_size "$seg")
    copies=$(( (TARGET_BYTES + segsize - 1) / segsize ))
    [[ $copies -ge 1 ]] || copies=1
    log "concatenating $copies x $segsize bytes (stream copy)"
    : >"$list"
    for ((i = 0; i < copies; i++)); do
        printf "file '%s'\n" "$seg" >>"$list"
    done
    ffmpeg -nostdin -hide_banner -loglevel error -y \
        -f concat -safe 0 -i "$list" -map 0 -c copy "$tmp"
    rm -f "$list"
    [[ $(file_size "$tmp") -ge $TARGET_BYTES ]] || die "generated input is smaller than $TARGET_BYTES bytes"
    mv -f "$tmp" "$INPUT"
    printf '%s\n' "$INPUT_PARAMS" >"$INPUT.params"
    GEN_SECONDS=$((SECONDS - t0))
    log "generated $INPUT ($(file_size "$INPUT") bytes) in ${GEN_SECONDS}s"
}

# The hour: a real 720p recording (Big Buck Bunny's first 5.3 s, H.264 +
# 5.1 AAC at 1.6 Mb/s) encoded once at a recording's ordinary bit rate, then
# stream-copied 678 times through the concat demuxer: 60 minutes, 25 fps,
# 48 kHz AAC, one packet per frame. Bump HOUR_VERSION when changing the recipe.
HOUR_VERSION=1
HOUR_SOURCE="$REPO_ROOT/.real-media/bbb_720p_aac51.mp4"
HOUR_COPIES=678

generate_hour() {
    local seg="$WORKDIR/hour-segment-v$HOUR_VERSION.mp4" list="$WORKDIR/concat.partial.txt"
    local tmp="$WORKDIR/hour.partial.mp4" t0=$SECONDS i
    [[ -f "$HOUR_SOURCE" ]] || die "$HOUR_SOURCE is missing (Tests/Fixtures/get-real-media.sh fetches it)"
    if [[ ! -f "$seg" ]]; then
        log "encoding $HOUR_SOURCE at 540 kb/s H.264 + 128 kb/s stereo AAC"
        ffmpeg -nostdin -hide_banner -loglevel error -y -i "$HOUR_SOURCE" -map 0:v -map 0:a \
            -c:v libx264 -preset medium -b:v 540k -maxrate 800k -bufsize 1100k -g 50 -pix_fmt yuv420p \
            -c:a aac -b:a 128k -ac 2 -ar 48000 "$WORKDIR/hour-segment.partial.mp4"
        mv -f "$WORKDIR/hour-segment.partial.mp4" "$seg"
    fi
    log "concatenating $HOUR_COPIES copies (stream copy) into 60 minutes"
    : >"$list"
    for ((i = 0; i < HOUR_COPIES; i++)); do
        printf "file '%s'\n" "$seg" >>"$list"
    done
    ffmpeg -nostdin -hide_banner -loglevel error -y -f concat -safe 0 -i "$list" -map 0 -c copy "$tmp"
    rm -f "$list"
    mv -f "$tmp" "$INPUT"
    printf '%s\n' "$INPUT_PARAMS" >"$INPUT.params"
    GEN_SECONDS=$((SECONDS - t0))
    log "generated $INPUT ($(file_size "$INPUT") bytes) in ${GEN_SECONDS}s"
}
if [[ "$SHAPE" == hour ]]; then
    INPUT="$WORKDIR/hour-720p.mp4"
    INPUT_PARAMS="hour v$HOUR_VERSION copies=$HOUR_COPIES"
    TARGET_BYTES=1
fi

GEN_SECONDS=0
if [[ -n "$INPUT_GIVEN" ]]; then
    [[ -f "$INPUT_GIVEN" ]] || die "--input $INPUT_GIVEN: no such file"
    INPUT="$INPUT_GIVEN"
    log "using the given input $INPUT"
elif [[ -f "$INPUT" && -f "$INPUT.params" && "$(cat "$INPUT.params")" == "$INPUT_PARAMS" \
      && $(file_size "$INPUT") -ge $TARGET_BYTES ]]; then
    log "using cached input $INPUT"
else
    rm -f "$INPUT" "$INPUT.params"
    if [[ "$SHAPE" == hour ]]; then generate_hour; else generate_input; fi
fi
INPUT_BYTES=$(file_size "$INPUT")
INPUT_STREAMS=$(ffprobe -v error -show_entries stream=codec_type -of csv=p=0 "$INPUT" | wc -l)

# ---------------------------------------------------------------------------
# Benchmarks: bench_<name> IN OUT. Keep each one a single command; the runner
# times the whole function call with GNU time in a child bash.
# ---------------------------------------------------------------------------
# avtool: the general path (every packet through libavformat's muxer, as for
# any change of container); bulk: the same MP4 → MP4 job as avtool does it by
# default, the media data copied as it is and the index rewritten in front.
bench_avtool() { "$AVTOOL" remux "$1" "$2" --quiet --overwrite --no-bulk; }
bench_bulk()   { "$AVTOOL" remux "$1" "$2" --quiet --overwrite; }
# edit: the same job with a tag changed (today through the general path).
bench_edit()   { "$AVTOOL" remux "$1" "$2" --quiet --overwrite --metadata title=bench; }
bench_ffmpeg() { ffmpeg -nostdin -loglevel error -y -i "$1" -map 0 -c copy -movflags +faststart "$2"; }
bench_cp()     { cp "$1" "$2"; }

# The hour's general path is MP4 -> MOV (another container: every packet
# through the muxer), and ffmpeg writes the same MOV.
OUT_EXT_avtool=mp4 OUT_EXT_ffmpeg=mp4
[[ "$SHAPE" == hour ]] && OUT_EXT_avtool=mov OUT_EXT_ffmpeg=mov

BENCHES=(avtool bulk edit ffmpeg cp)
BENCH_VARS=(AVTOOL)  # variables the bench_ functions read

# Sanity check of an output (skipped for plain copies): must be readable and
# carry as many streams as the input.
check_output() { # NAME OUT
    [[ -s "$2" ]] || die "$1: produced no output ($2)"
    [[ "$1" == cp ]] && return 0
    local n
    n=$(ffprobe -v error -show_entries stream=codec_type -of csv=p=0 "$2" | wc -l) \
        || die "$1: ffprobe cannot read output $2"
    [[ "$n" == "$INPUT_STREAMS" ]] || die "$1: output has $n streams, input has $INPUT_STREAMS"
}

# run_bench NAME RUN -> appends "wall_seconds peak_rss_kib" to $RESULTS/NAME
run_bench() {
    local name="$1" run="$2" ext_var="OUT_EXT_$1"
    local out="$WORKDIR/out.$1.${!ext_var:-mp4}"
    rm -f "$out"
    bench_timed "$name" "$INPUT" "$out" || die "$name failed (run $run)"
    [[ "$run" == 1 ]] && check_output "$name" "$out"
    log "  run $run/$RUNS $name: $(bench_last "$name")"
    rm -f "$out"
}

log "input: $INPUT ($INPUT_BYTES bytes), $RUNS runs each of: ${BENCHES[*]}"
log "warm-up read of the input"
cat "$INPUT" >/dev/null

for ((run = 1; run <= RUNS; run++)); do
    for name in "${BENCHES[@]}"; do
        run_bench "$name" "$run"
    done
done
sync

# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------
python3 - "$(bench_medians_json "${BENCHES[@]}")" "$INPUT_BYTES" "$RUNS" "$SHAPE" "${BENCHES[@]}" <<'PY'
import json, sys

medians, input_bytes, runs, shape, names = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:]
med = {n: (m["wall_s"], m["rss_mib"], m["min_s"], m["max_s"]) for n, m in medians.items()}

def ratio(a, b):
    if a not in med or b not in med or med[b][0] <= 0:
        return None
    return round(med[a][0] / med[b][0], 3)

gib = input_bytes / 1073741824
print(f"\nremux benchmark: input {input_bytes} bytes ({gib:.2f} GiB), {runs} runs, medians")
print(f"{'command':<10} {'wall_s':>9} {'min_s':>8} {'max_s':>8} {'MB/s':>9} {'rss_MiB':>9} {'vs_avtool':>10}")
for n in names:
    w, r, lo, hi = med[n]
    mbps = input_bytes / 1e6 / w if w > 0 else float("inf")
    rel = (f"{med['avtool'][0] / w:.2f}x" if "avtool" in med and w > 0 else "-")
    print(f"{n:<10} {w:>9.3f} {lo:>8.3f} {hi:>8.3f} {mbps:>9.1f} {r:>9.1f} {rel:>10}")
print(f"ratio avtool/ffmpeg (wall): {ratio('avtool', 'ffmpeg')}")
print(f"ratio avtool/cp     (wall): {ratio('avtool', 'cp')}")
print(f"ratio bulk/cp       (wall): {ratio('bulk', 'cp')}")
print(f"ratio edit/cp       (wall): {ratio('edit', 'cp')}")
if shape == "hour":
    # Issue 31's goals for a recording of ordinary size with many small packets.
    def goal(text, value, limit):
        met = value is not None and value <= limit
        print(f"goal {text:<44} {value!s:>8} <= {limit:<6} {'met' if met else 'NOT met'}")
    print("\ngoals (issue 31):")
    goal("bulk copy / cp (wall)", ratio("bulk", "cp"), 1.2)
    goal("bulk copy with an edit / cp (wall)", ratio("edit", "cp"), 1.2)
    goal("general path MP4->MOV / ffmpeg (wall)", ratio("avtool", "ffmpeg"), 0.75)
    goal("general path peak RSS (MiB) vs ffmpeg's", round(med["avtool"][1], 1), round(med["ffmpeg"][1], 1))
    goal("bulk copy peak RSS (MiB)", round(med["bulk"][1], 1), 40)
    goal("bulk copy with an edit peak RSS (MiB)", round(med["edit"][1], 1), 40)

out = {
    "input_bytes": input_bytes,
    "runs": runs,
    "avtool_s": round(med["avtool"][0], 3),
    "ffmpeg_s": round(med["ffmpeg"][0], 3),
    "cp_s": round(med["cp"][0], 3),
    "ratio_ffmpeg": ratio("avtool", "ffmpeg"),
    "ratio_cp": ratio("avtool", "cp"),
    "ratio_bulk_cp": ratio("bulk", "cp"),
    "ratio_edit_cp": ratio("edit", "cp"),
    "avtool_rss_mib": round(med["avtool"][1], 1),
    "ffmpeg_rss_mib": round(med["ffmpeg"][1], 1),
    "cp_rss_mib": round(med["cp"][1], 1),
}
for n in names:  # extra benchmarks added later
    if n not in ("avtool", "ffmpeg", "cp"):
        out[f"{n}_s"] = round(med[n][0], 3)
        out[f"{n}_rss_mib"] = round(med[n][1], 1)
print(json.dumps(out))
PY
