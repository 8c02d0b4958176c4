#!/usr/bin/env bash
# quality-bench.sh — `transcode --quality` against the one fixed CRF that gives
# the same worst-file SSIM, over a set of real recordings (issue 50).
#
# Usage: bench/quality-bench.sh [--avtool PATH] [--media DIR] [--files "A B …"] [--target SSIM]
#                               [--preset P] [--chunks N] [--no-chunks] [--workdir DIR]
#   --avtool PATH   avtool binary (default <repo>/.build/release/avtool, built if missing)
#   --media DIR     where the recordings are (default <repo>/.real-media, the real media
#                   the tests fetch; ../shared/media on the team's machines)
#   --files "…"     file names in DIR (default: every .mp4/.mov/.mkv there with a video stream)
#   --target SSIM   the --quality target (default 0.985)
#   --preset P      x265 preset for every encode (default medium)
#   --chunks N      chunk count of the per-chunk comparison (default 4)
#   --no-chunks     skip the per-chunk comparison
#   --long M        also a programme of M minutes made of the files (each scaled to
#                   1280x720 by ffmpeg, one after the other, the whole repeated): the
#                   search's time against the full encode's where the file is long
#                   enough to be sampled (default 0: none)
#   --workdir DIR   scratch directory (default <repo>/.bench)
#
# Measures, over the files:
#   1. --quality TARGET on each (its own cache folder, so nothing is reused):
#      the CRF, the output's bytes and whole-file SSIM against the source
#      (ffmpeg's ssim filter), its weakest 2-second window, the search's and
#      the full encode's seconds;
#   2. the one fixed CRF whose worst-file SSIM is at least the --quality runs'
#      worst-file SSIM (whole CRFs, bisected), and the total bytes at it:
#      goal: --quality's total bytes at most 0.85× the fixed CRF's;
#   3. search time against full-encode time, medians over the files:
#      goal: at most 25 % (files of 12 s or less are sampled whole, so the search
#      encodes each several times over: the goal is for files long enough to be
#      sampled, which --long measures);
#   4. with --chunks N: per-chunk CRFs against one CRF for the whole file at
#      equal worst-2-second-window SSIM (the fixed CRF bisected per file):
#      goal: smaller in total.
# Output: a table on stdout, then one JSON line (last line). Takes hours on
# eight 1080p recordings at preset medium; use --preset ultrafast for a look.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
BENCH_TAG=quality-bench
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

AVTOOL="$REPO_ROOT/.build/release/avtool"
AVTOOL_EXPLICIT=0
MEDIA="$REPO_ROOT/.real-media"
FILES=""
TARGET=0.985
PRESET=medium
CHUNKS=4
LONG=0
WORKDIR="$REPO_ROOT/.bench"

usage() { sed -n '2,37p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
    case "$1" in
        --avtool) AVTOOL="$2"; AVTOOL_EXPLICIT=1; shift 2 ;;
        --media) MEDIA="$2"; shift 2 ;;
        --files) FILES="$2"; shift 2 ;;
        --target) TARGET="$2"; shift 2 ;;
        --preset) PRESET="$2"; shift 2 ;;
        --chunks) CHUNKS="$2"; shift 2 ;;
        --no-chunks) CHUNKS=0; shift ;;
        --long) LONG="$2"; shift 2 ;;
        --workdir) WORKDIR="$2"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done

bench_require_tools ffmpeg ffprobe python3
bench_ensure_avtool "$AVTOOL" "$AVTOOL_EXPLICIT" "$REPO_ROOT"
[[ -d "$MEDIA" ]] || die "no media folder '$MEDIA' (see --media)"
mkdir -p "$WORKDIR"
RUN="$(mktemp -d "$WORKDIR/quality.XXXXXX")"
trap 'rm -rf "$RUN"' EXIT

if [[ -z "$FILES" ]]; then
    for f in "$MEDIA"/*.mp4 "$MEDIA"/*.mov "$MEDIA"/*.mkv; do
        [[ -f "$f" ]] || continue
        ffprobe -v error -select_streams v:0 -show_entries stream=codec_type -of csv=p=0 "$f" | grep -q video \
            && FILES+="$(basename "$f") "
    done
fi
read -r -a NAMES <<<"$FILES"
[[ ${#NAMES[@]} -gt 0 ]] || die "no video files in '$MEDIA'"
log "${#NAMES[@]} files, target SSIM $TARGET, preset $PRESET"

# ssim OUT SRC — "whole weakest2s": ffmpeg's SSIM of OUT against SRC, and
# the lowest mean over 2-second windows of its per-picture values.
ssim() {
    local stats="$RUN/ssim.$$.log"
    ffmpeg -nostdin -i "$1" -i "$2" -lavfi "[0:v][1:v]ssim=stats_file=$stats" -f null - >/dev/null 2>&1
    local fps
    fps=$(ffprobe -v error -select_streams v:0 -show_entries stream=avg_frame_rate -of default=nw=1:nk=1 "$2" | head -n1)
    python3 - "$stats" "$fps" <<'EOF'
import sys
v = [float(l.split("All:")[1].split()[0]) for l in open(sys.argv[1])]
n, d = (sys.argv[2].split("/") + ["1"])[:2]
w = max(1, round(2 * float(n) / max(float(d), 1)))
runs = [sum(v[i:i + w]) / w for i in range(0, max(1, len(v) - w + 1))] if len(v) > w else [sum(v) / len(v)]
print(f"{sum(v) / len(v):.6f} {min(runs):.6f}")
EOF
}

# fixed NAME CRF — encodes NAME at CRF (once), prints "bytes whole weakest2s".
fixed_crf() {
    local out="$RUN/fixed-$1-$2.mp4"
    if [[ ! -f "$out.txt" ]]; then
        "$AVTOOL" transcode "$MEDIA/$1" "$out" --crf "$2" --preset "$PRESET" -q -y >/dev/null
        echo "$(file_size "$out") $(ssim "$out" "$MEDIA/$1")" >"$out.txt"
    fi
    cat "$out.txt"
}

declare -A Q_BYTES Q_SSIM Q_WIN Q_CRF Q_SEARCH Q_ENCODE
for name in "${NAMES[@]}"; do
    log "--quality $TARGET: $name"
    out="$RUN/q-$name.mp4"
    XDG_CACHE_HOME="$RUN/cache-$name" "$AVTOOL" transcode "$MEDIA/$name" "$out" --quality "$TARGET" \
        --preset "$PRESET" --json -y >"$RUN/q-$name.json"
    # The report's elapsed seconds are the encode's; the search's are its own.
    read -r crf search encode < <(python3 -c "
import json, sys; d = json.load(open(sys.argv[1])); q = d['quality']
print(q['crf'], q['search_seconds'], d['elapsed_seconds'])" "$RUN/q-$name.json")
    read -r whole win < <(ssim "$out" "$MEDIA/$name")
    Q_BYTES[$name]=$(file_size "$out"); Q_SSIM[$name]=$whole; Q_WIN[$name]=$win; Q_CRF[$name]=$crf
    Q_SEARCH[$name]=$search; Q_ENCODE[$name]=$encode
done

worst=$(for n in "${NAMES[@]}"; do echo "${Q_SSIM[$n]}"; done | sort -g | head -n1)
log "worst-file SSIM with --quality: $worst; bisecting the fixed CRF that reaches it on every file"
# The highest whole CRF whose worst-file SSIM is at least $worst.
lo=0; hi=51
while (( hi - lo > 1 )); do
    mid=$(( (lo + hi) / 2 )); ok=1
    for n in "${NAMES[@]}"; do
        read -r _ whole _ < <(fixed_crf "$n" "$mid")
        python3 -c "import sys; sys.exit(0 if $whole >= $worst else 1)" || { ok=0; break; }
    done
    if (( ok )); then lo=$mid; else hi=$mid; fi
done
FIXED=$lo
fixed_total=0; quality_total=0
for n in "${NAMES[@]}"; do
    read -r bytes _ _ < <(fixed_crf "$n" "$FIXED")
    fixed_total=$(( fixed_total + bytes )); quality_total=$(( quality_total + Q_BYTES[$n] ))
done

chunk_json=null
if (( CHUNKS > 1 )); then
    chunk_rows=()
    for n in "${NAMES[@]}"; do
        log "--chunks $CHUNKS --quality $TARGET: $n"
        out="$RUN/c-$n.mp4"
        XDG_CACHE_HOME="$RUN/cache-$n" "$AVTOOL" transcode "$MEDIA/$n" "$out" --chunks "$CHUNKS" \
            --quality "$TARGET" --preset "$PRESET" -q -y >/dev/null
        read -r _ cwin < <(ssim "$out" "$MEDIA/$n")
        # One CRF for the whole file at the same worst-window SSIM: the highest whole CRF reaching it.
        l=0; h=51
        while (( h - l > 1 )); do
            m=$(( (l + h) / 2 ))
            read -r _ _ win < <(fixed_crf "$n" "$m")
            if python3 -c "import sys; sys.exit(0 if $win >= $cwin else 1)"; then l=$m; else h=$m; fi
        done
        read -r fbytes _ _ < <(fixed_crf "$n" "$l")
        chunk_rows+=("{\"file\":\"$n\",\"chunked_bytes\":$(file_size "$out"),\"worst_window\":$cwin,\"one_crf\":$l,\"one_crf_bytes\":$fbytes}")
    done
    chunk_json="[$(IFS=,; echo "${chunk_rows[*]}")]"
fi

long_json=null
if (( LONG > 0 )); then
    log "a ${LONG}-minute programme of the files at 1280x720"
    list="$RUN/long.txt"; : >"$list"
    for n in "${NAMES[@]}"; do
        ffmpeg -nostdin -v error -i "$MEDIA/$n" -map 0:v:0 -vf "scale=1280:720:force_original_aspect_ratio=decrease,pad=1280:720:-1:-1,fps=25,format=yuv420p" \
            -c:v libx264 -preset veryfast -crf 12 -g 50 "$RUN/long-$n.mp4"
        echo "file '$RUN/long-$n.mp4'" >>"$list"
    done
    ffmpeg -nostdin -v error -f concat -safe 0 -i "$list" -c copy "$RUN/long-once.mp4"
    ffmpeg -nostdin -v error -stream_loop -1 -i "$RUN/long-once.mp4" -t $(( LONG * 60 )) -c copy "$RUN/long.mp4"
    XDG_CACHE_HOME="$RUN/cache-long" "$AVTOOL" transcode "$RUN/long.mp4" "$RUN/long-q.mp4" --quality "$TARGET" \
        --preset "$PRESET" --json -y >"$RUN/long.json"
    long_json=$(python3 -c "
import json, sys; d = json.load(open(sys.argv[1])); q = d['quality']
print(json.dumps({'minutes': $LONG, 'crf': q['crf'], 'search_s': q['search_seconds'], 'encode_s': d['elapsed_seconds'],
                  'samples': len(q['samples']), 'probes': len(q['probes'])}))" "$RUN/long.json")
fi

python3 - "$TARGET" "$FIXED" "$fixed_total" "$quality_total" "$chunk_json" "$long_json" <<EOF
import json, statistics, sys
target, fixed, fixed_total, quality_total = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
chunks = json.loads(sys.argv[5])
long = json.loads(sys.argv[6])
rows = [$(for n in "${NAMES[@]}"; do printf '{"file":"%s","crf":%s,"bytes":%s,"ssim":%s,"weakest_2s":%s,"search_s":%s,"encode_s":%s},' \
    "$n" "${Q_CRF[$n]}" "${Q_BYTES[$n]}" "${Q_SSIM[$n]}" "${Q_WIN[$n]}" "${Q_SEARCH[$n]}" "${Q_ENCODE[$n]}"; done)]
print(f"{'file':40} {'crf':>6} {'bytes':>12} {'ssim':>9} {'worst 2s':>9} {'search s':>9} {'encode s':>9}")
for r in rows:
    print(f"{r['file'][:40]:40} {r['crf']:6.1f} {r['bytes']:12d} {r['ssim']:9.5f} {r['weakest_2s']:9.5f} {r['search_s']:9.2f} {r['encode_s']:9.2f}")
ratio = quality_total / fixed_total if fixed_total else None
search_share = statistics.median(r["search_s"] for r in rows) / statistics.median(r["encode_s"] for r in rows)
within = all(abs(r["ssim"] - target) <= 0.003 for r in rows)
windows = all(r["weakest_2s"] >= target - 0.005 for r in rows)
print(f"fixed CRF with the same worst-file SSIM: {fixed}; bytes --quality / fixed: {ratio:.3f} (goal <= 0.85)")
print(f"search / full encode (medians): {search_share:.3f} (goal <= 0.25)")
print(f"every file within ±0.003 of {target}: {within}; every weakest 2 s at least target - 0.005: {windows}")
chunk_ratio = None
if chunks:
    chunk_ratio = sum(c["chunked_bytes"] for c in chunks) / sum(c["one_crf_bytes"] for c in chunks)
    print(f"--chunks per-chunk CRFs / one CRF at equal worst-window SSIM: {chunk_ratio:.3f} (goal < 1)")
long_share = None
if long:
    long_share = long["search_s"] / long["encode_s"]
    print(f"{long['minutes']}-minute programme: search {long['search_s']:.1f} s ({long['samples']} samples, {long['probes']} probes), "
          f"encode {long['encode_s']:.1f} s: search / encode {long_share:.3f} (goal <= 0.25)")
print(json.dumps({"bench": "quality", "target": target, "files": rows, "fixed_crf": fixed, "long": long, "long_search_share": long_share,
                  "quality_bytes": quality_total, "fixed_bytes": fixed_total, "bytes_ratio": ratio,
                  "search_share": search_share, "within_0_003": within, "windows_ok": windows,
                  "chunks": chunks, "chunks_ratio": chunk_ratio}))
EOF
