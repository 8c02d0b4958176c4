#!/usr/bin/env bash
# memory-2h.sh — does avtool's memory stay flat as files get longer? Peak RSS
# (GNU time) of the streaming verbs on a generated 10-minute recording and on
# the same recording looped to 2 hours, side by side.
#
# Usage: bench/memory-2h.sh [--avtool PATH] [--workdir DIR]
#   --avtool PATH   avtool binary (default <repo>/.build-bench/release/avtool, built
#                   with `swift build -c release --product avtool --scratch-path .build-bench`)
#   --workdir DIR   generated inputs are cached here (default <repo>/.bench/memory)
#
# Inputs (generated once, cached; low resolution so it takes a minute): a
# 10-minute 160x90 30 fps H.264 + AAC 48 kHz stereo recording with a
# keyframe every second, as MKV and as MP4, a separate .m4a of its audio and
# a video-only MP4; and each looped 12 times (stream copy) to 2 hours.
# Commands, each on both lengths:
#   probe IN.mkv · remux IN.mkv OUT.mkv · remux IN.mp4 OUT.mp4 ·
#   merge VIDEO.mp4 AUDIO.m4a OUT.mp4 · fill-silence IN.mkv OUT.mkv
# Output: a table (peak RSS in MiB at 10 min and 2 h, and the 2 h / 10 min
# ratio), then one JSON line. A ratio near 1 is flat memory; MP4 outputs
# grow by their index (movenc keeps every sample's size and time until it
# writes the moov: ~ 12 bytes per packet), which the table's last column
# estimates so the rest can be read as the pipeline's own.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
BENCH_TAG=memory-2h
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

AVTOOL="$REPO_ROOT/.build-bench/release/avtool"
AVTOOL_EXPLICIT=0
WORKDIR="$REPO_ROOT/.bench/memory"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --avtool) AVTOOL="$2"; AVTOOL_EXPLICIT=1; shift 2 ;;
        --workdir) WORKDIR="$2"; shift 2 ;;
        -h|--help) sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1" ;;
    esac
done

bench_require_tools ffmpeg ffprobe python3
bench_ensure_time
bench_ensure_avtool "$AVTOOL" "$AVTOOL_EXPLICIT" "$REPO_ROOT" --scratch-path "$REPO_ROOT/.build-bench"
mkdir -p "$WORKDIR"
FF=(ffmpeg -hide_banner -loglevel error -nostdin -y)

# --- inputs -----------------------------------------------------------------
if [[ ! -f "$WORKDIR/.complete" ]]; then
    log "generating the 10-minute recording"
    "${FF[@]}" -f lavfi -i "testsrc2=size=160x90:rate=30" -f lavfi -i "sine=frequency=440:sample_rate=48000" \
        -t 600 -ac 2 -c:v libx264 -preset ultrafast -g 30 -pix_fmt yuv420p -c:a aac -b:a 96k \
        "$WORKDIR/m10.mkv"
    "${FF[@]}" -i "$WORKDIR/m10.mkv" -c copy "$WORKDIR/m10.mp4"
    log "looping it to 2 hours (stream copy)"
    "${FF[@]}" -stream_loop 11 -i "$WORKDIR/m10.mkv" -c copy "$WORKDIR/h2.mkv"
    "${FF[@]}" -i "$WORKDIR/h2.mkv" -c copy "$WORKDIR/h2.mp4"
    for len in m10 h2; do
        "${FF[@]}" -i "$WORKDIR/$len.mp4" -map 0:a -c copy "$WORKDIR/$len-audio.m4a"
        "${FF[@]}" -i "$WORKDIR/$len.mp4" -map 0:v -c copy "$WORKDIR/$len-video.mp4"
    done
    touch "$WORKDIR/.complete"
fi
for len in m10 h2; do
    d=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$WORKDIR/$len.mkv")
    log "$len.mkv: ${d%.*} s, $(( $(file_size "$WORKDIR/$len.mkv") / 1048576 )) MiB"
done

# --- runs -------------------------------------------------------------------
rss() {  # rss LABEL COMMAND... — peak RSS in KiB of one run
    local tfile="$WORKDIR/.time"
    "$TIME_BIN" -f '%M' -o "$tfile" "$@" >/dev/null 2>"$WORKDIR/.stderr" \
        || die "failed: $* ($(cat "$WORKDIR/.stderr"))"
    tail -n1 "$tfile"
}
packets() { ffprobe -v error -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$1" | awk '{ s += $1 } END { print s }'; }

rows=()
run() {  # run NAME INDEX_GROWS ARGS-with-@LEN@
    local name="$1" grows="$2"
    shift 2
    local k=() len
    for len in m10 h2; do
        local args=("${@//@LEN@/$WORKDIR/$len}")
        args=("${args[@]//@OUT@/$WORKDIR/out-$len}")
        k+=("$(rss "$AVTOOL" "${args[@]}")")
    done
    local index=0
    if [[ "$grows" == 1 ]]; then
        index=$(( ($(packets "$WORKDIR/h2.mp4") - $(packets "$WORKDIR/m10.mp4")) * 12 / 1024 ))
    fi
    rows+=("$name ${k[0]} ${k[1]} $index")
    log "$name: $(awk -v a="${k[0]}" -v b="${k[1]}" 'BEGIN { printf "%.1f MiB → %.1f MiB", a/1024, b/1024 }')"
}
run "probe mkv" 0 probe @LEN@.mkv
run "remux mkv→mkv" 0 remux @LEN@.mkv @OUT@.mkv -y -q
run "remux mp4→mp4" 1 remux @LEN@.mp4 @OUT@.mp4 -y -q
run "merge →mp4" 1 merge @LEN@-video.mp4 @LEN@-audio.m4a @OUT@-merged.mp4 -y -q
run "fill-silence mkv" 0 fill-silence @LEN@.mkv @OUT@-filled.mkv -y -q
rm -f "$WORKDIR"/out-*

printf '%-18s %12s %12s %8s %18s\n' "command" "10 min MiB" "2 h MiB" "ratio" "MP4 index growth"
for r in "${rows[@]}"; do
    set -- $r
    name="$1 $2"; a="$3"; b="$4"; idx="$5"
    awk -v n="$name" -v a="$a" -v b="$b" -v i="$idx" 'BEGIN {
        printf "%-18s %12.1f %12.1f %8.2f %18s\n", n, a/1024, b/1024, b/a, (i > 0 ? sprintf("~%.1f MiB", i/1024) : "-") }'
done
python3 - "${rows[@]}" <<'PY'
import json, sys
out = {}
for r in sys.argv[1:]:
    p = r.split()
    name, a, b, idx = p[0] + " " + p[1], int(p[2]), int(p[3]), int(p[4])
    out[name] = {"rss_10min_mib": round(a / 1024, 1), "rss_2h_mib": round(b / 1024, 1),
                 "ratio": round(b / a, 2), "mp4_index_growth_mib": round(idx / 1024, 1)}
print(json.dumps(out))
PY
