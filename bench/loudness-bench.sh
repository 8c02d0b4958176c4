#!/usr/bin/env bash
# loudness-bench.sh — `avtool loudness` against ffmpeg-normalize (PyPI, installed
# by this script into a venv) doing the same job, and `avtool probe --loudness`
# against `ffmpeg -af ebur128=peak=true -f null`, in the same run, alternating:
# wall time, peak RSS, medians.
#
# Usage: bench/loudness-bench.sh [--avtool PATH] [--runs N] [--minutes M] [--source tone|bbb] [--workdir DIR]
#   --avtool PATH   avtool binary (default <repo>/.build-bench/release/avtool, built
#                   with `swift build -c release --product avtool --scratch-path .build-bench`)
#   --runs N        timed runs per command (default 3); medians are reported
#   --minutes M     length of the generated recording (default 10; the issue's
#                   figure is --minutes 60)
#   --source S      tone (default): the generated tone below; bbb: the real recording
#                   .real-media/bbb_720p_aac51.mp4 (Big Buck Bunny, 5.3 s, fetched by
#                   Tests/Fixtures/get-real-media.sh) looped to M minutes, its 5.1 AAC made
#                   stereo AAC 128 kb/s, video copied: -34 LUFS with a -10.7 dBTP true peak,
#                   so the podcast target (-16 LUFS, -1 dBTP) needs about 8 dB of limiting
#   --workdir DIR   scratch dir; the input and the venv are cached here (default <repo>/.bench)
#
# Input (generated once per length M and source, cached):
#   loudness-Mm.mp4   1280x720 25 fps H.264 (libx264) and AAC 48 kHz stereo 128 kb/s of a
#                     tone whose level swells and falls (a programme with a loudness range)
#   loudness-bbb-Mm.mp4  (--source bbb) the looped real recording
# Commands (rows; AV = --avtool):
#   avtool_loudness   AV loudness IN OUT.mp4 --target podcast
#   ffmpeg_normalize  ffmpeg-normalize IN -o OUT.mp4 --normalization-type ebu --target-level -16
#                     --true-peak -1 -c:a aac -b:a 128k   (video copied: its default)
#   avtool_probe      AV probe --loudness IN
#   ffmpeg_ebur128    ffmpeg -i IN -vn -af ebur128=peak=true -f null -
# Every output is checked before its time counts: ebur128's integrated loudness
# within 1 LU of -16.
# Output: a table, then one JSON line with the medians (NAME_s, NAME_rss_mib) and
#   normalize_ratio   avtool_loudness / ffmpeg_normalize   (target <= 0.35)
#   probe_ratio       avtool_probe / ffmpeg_ebur128        (target <= 0.6)
#   avtool_encodes_max, avtool_rehearsals_max   the most encodes (target <= 2) and rehearsals
#                     any avtool run's report (--json) gave
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
BENCH_TAG=loudness-bench
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

AVTOOL="$REPO_ROOT/.build-bench/release/avtool"
AVTOOL_EXPLICIT=0
RUNS=3
MINUTES=10
SOURCE=tone
WORKDIR="$REPO_ROOT/.bench"

usage() { sed -n '2,/^set -euo pipefail$/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --avtool)    [[ $# -ge 2 ]] || die "--avtool needs a value"; AVTOOL="$2"; AVTOOL_EXPLICIT=1; shift 2 ;;
        --runs)      [[ $# -ge 2 ]] || die "--runs needs a value"; RUNS="$2"; shift 2 ;;
        --minutes)   [[ $# -ge 2 ]] || die "--minutes needs a value"; MINUTES="$2"; shift 2 ;;
        --workdir)   [[ $# -ge 2 ]] || die "--workdir needs a value"; WORKDIR="$2"; shift 2 ;;
        --source)    [[ $# -ge 2 ]] || die "--source needs a value"; SOURCE="$2"; shift 2 ;;
        -h|--help)   usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer (got '$RUNS')"
[[ "$MINUTES" =~ ^[1-9][0-9]*$ ]] || die "--minutes must be a positive integer (got '$MINUTES')"
[[ "$SOURCE" == tone || "$SOURCE" == bbb ]] || die "--source must be tone or bbb (got '$SOURCE')"

bench_require_tools ffmpeg ffprobe python3 awk
bench_ensure_time
bench_ensure_avtool "$AVTOOL" "$AVTOOL_EXPLICIT" "$REPO_ROOT" --scratch-path "$REPO_ROOT/.build-bench"

mkdir -p "$WORKDIR"
WORKDIR="$(cd "$WORKDIR" && pwd)"
RESULTS="$(mktemp -d "$WORKDIR/results.XXXXXX")"
cleanup() { rm -rf "$RESULTS"; rm -f "$WORKDIR"/out.loudness.*; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ffmpeg-normalize in a venv of its own (pip, PyPI).
VENV="$WORKDIR/ffmpeg-normalize-venv"
if [[ ! -x "$VENV/bin/ffmpeg-normalize" ]]; then
    log "installing ffmpeg-normalize into $VENV"
    python3 -m venv "$VENV" || die "python3 -m venv failed (apt-get install python3-venv)"
    "$VENV/bin/pip" install --quiet ffmpeg-normalize >&2 || die "pip install ffmpeg-normalize failed"
fi
NORMALIZE="$VENV/bin/ffmpeg-normalize"
log "ffmpeg-normalize $("$NORMALIZE" --version 2>&1 | tail -n1)"

SECONDS_LEN=$((MINUTES * 60))
INPUT="$WORKDIR/loudness-${MINUTES}m.mp4"
FF=(ffmpeg -hide_banner -nostdin -loglevel error -y)
if [[ "$SOURCE" == bbb ]]; then
    INPUT="$WORKDIR/loudness-bbb-${MINUTES}m.mp4"
    BBB="$REPO_ROOT/.real-media/bbb_720p_aac51.mp4"
    [[ -s "$BBB" ]] || die "$BBB is missing (Tests/Fixtures/get-real-media.sh fetches it)"
    if [[ ! -s "$INPUT" ]]; then
        log "making $INPUT ($MINUTES min of Big Buck Bunny, stereo AAC)"
        "${FF[@]}" -stream_loop -1 -i "$BBB" -t "$SECONDS_LEN" -map 0:v -map 0:a -c:v copy \
            -c:a aac -ac 2 -b:a 128k "$INPUT.partial.mp4"
        mv "$INPUT.partial.mp4" "$INPUT"
    fi
elif [[ ! -s "$INPUT" ]]; then
    log "generating $INPUT ($MINUTES min 720p H.264 + AAC)"
    "${FF[@]}" -f lavfi -i "testsrc2=size=1280x720:rate=25:duration=$SECONDS_LEN" \
        -f lavfi -i "aevalsrc=0.25*sin(2*PI*220*t)*(0.55+0.45*sin(2*PI*0.05*t))+0.02*sin(2*PI*3000*t)|0.25*sin(2*PI*330*t)*(0.55+0.45*sin(2*PI*0.07*t)):s=48000:d=$SECONDS_LEN" \
        -map 0:v -map 1:a -c:v libx264 -preset ultrafast -crf 30 -g 75 -pix_fmt yuv420p \
        -c:a aac -b:a 128k "$INPUT.partial.mp4"
    mv "$INPUT.partial.mp4" "$INPUT"
fi

# The report (--json) is kept: its encodes and rehearsals are read after each run.
REPORT="$WORKDIR/out.loudness.report.json"
BENCH_VARS=(AVTOOL NORMALIZE REPORT)
bench_avtool_loudness() { "$AVTOOL" loudness "$1" "$2" --target podcast --overwrite --json >"$REPORT"; }
bench_ffmpeg_normalize() {
    "$NORMALIZE" "$1" -o "$2" -f --normalization-type ebu --target-level -16 --true-peak -1 -c:a aac -b:a 128k
}
bench_avtool_probe() { "$AVTOOL" probe --loudness "$1" >/dev/null; }
bench_ffmpeg_ebur128() { ffmpeg -hide_banner -nostdin -nostats -i "$1" -vn -af ebur128=peak=true -f null - 2>/dev/null; }

# check_output FILE — ebur128's integrated loudness of FILE within 1 LU of -16.
check_output() {
    local i
    i=$(ffmpeg -hide_banner -nostdin -nostats -i "$1" -vn -af ebur128 -f null - 2>&1 \
        | awk '/^ +I:/ { v = $2 } END { print v }')
    awk -v i="$i" 'BEGIN { exit !(i >= -17 && i <= -15) }' || die "$1: integrated loudness $i LUFS, not -16"
}

NAMES=(avtool_loudness ffmpeg_normalize avtool_probe ffmpeg_ebur128)
ENCODES="$WORKDIR/out.loudness.encodes"
: >"$ENCODES"
for run in $(seq 1 "$RUNS"); do
    for name in "${NAMES[@]}"; do
        load=$(bench_wait_quiet)
        out="$WORKDIR/out.loudness.$name.mp4"
        bench_timed "$name" "$INPUT" "$out" || die "$name failed"
        case "$name" in avtool_loudness|ffmpeg_normalize) check_output "$out" ;; esac
        if [[ "$name" == avtool_loudness ]]; then
            python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["passes"], r.get("rehearsals", 0), r.get("encodes_stopped", 0))' \
                "$REPORT" >>"$ENCODES"
            log "run $run $name: $(bench_last "$name") (load $load); encodes, rehearsals, encodes stopped: $(tail -1 "$ENCODES")"
        else
            log "run $run $name: $(bench_last "$name") (load $load)"
        fi
    done
done

json=$(bench_medians_json "${NAMES[@]}")
python3 - "$json" "$ENCODES" <<'PY'
import json, sys
m = json.loads(sys.argv[1])
runs = [list(map(int, line.split())) for line in open(sys.argv[2]) if line.strip()]
print(f"{'command':<18} {'median s':>9} {'min s':>8} {'max s':>8} {'RSS MiB':>8}")
for n, r in m.items():
    print(f"{n:<18} {r['wall_s']:>9.2f} {r['min_s']:>8.2f} {r['max_s']:>8.2f} {r['rss_mib']:>8.1f}")
flat = {f"{n}_s": r["wall_s"] for n, r in m.items()}
flat.update({f"{n}_rss_mib": round(r["rss_mib"], 1) for n, r in m.items()})
flat["normalize_ratio"] = round(m["avtool_loudness"]["wall_s"] / m["ffmpeg_normalize"]["wall_s"], 3)
flat["probe_ratio"] = round(m["avtool_probe"]["wall_s"] / m["ffmpeg_ebur128"]["wall_s"], 3)
flat["avtool_encodes_max"] = max(r[0] for r in runs)
flat["avtool_rehearsals_max"] = max(r[1] for r in runs)
print(json.dumps(flat, sort_keys=True))
PY
