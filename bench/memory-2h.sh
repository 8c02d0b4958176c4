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
# Commands, each on both lengths, beside the ffmpeg program doing the same
# stream copy (the reference for what libavformat itself needs):
#   probe IN.mkv · remux IN.mkv OUT.mkv · remux IN.mp4 OUT.mp4 · remux IN.mp4 OUT.mkv ·
#   merge VIDEO.mp4 AUDIO.m4a OUT.mp4 · merge … OUT.mkv · fill-silence IN.mkv OUT.mkv
# Output: a table (peak RSS in MiB at 10 min and 2 h and the 2 h / 10 min
# ratio, for avtool and for ffmpeg), then one JSON line. A ratio near 1 is
# flat memory. MP4 grows on both sides whoever reads or writes it: the
# demuxer holds the whole sample index (moov) from the start, the muxer
# builds it for every packet until the trailer — ffmpeg's column shows how
# much of that is libavformat's.
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
        -h|--help) sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument: $1" ;;
    esac
done

bench_require_tools ffmpeg ffprobe python3
bench_ensure_time
if [[ "$AVTOOL_EXPLICIT" == 1 ]]; then
    bench_ensure_avtool "$AVTOOL" 1 "$REPO_ROOT"
else
    # Always from the current sources (incremental): a stale binary would measure old code.
    log "building avtool (release)"
    (cd "$REPO_ROOT" && swift build -c release --product avtool --scratch-path "$REPO_ROOT/.build-bench") >&2
fi
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
rss() {  # rss COMMAND... — peak RSS in KiB of one run
    local tfile="$WORKDIR/.time"
    "$TIME_BIN" -f '%M' -o "$tfile" "$@" >/dev/null 2>"$WORKDIR/.stderr" \
        || die "failed: $* ($(cat "$WORKDIR/.stderr"))"
    tail -n1 "$tfile"
}

rows=()
# run NAME AVTOOL-ARGS… [-- FFMPEG-PROGRAM ARGS…], @LEN@ and @OUT@ substituted per length.
run() {
    local name="$1"
    shift
    local ours=() theirs=()
    while [[ $# -gt 0 && "$1" != -- ]]; do ours+=("$1"); shift; done
    [[ $# -gt 0 ]] && { shift; theirs=("$@"); }
    local a=() f=() len
    for len in m10 h2; do
        local args=("${ours[@]//@LEN@/$WORKDIR/$len}")
        a+=("$(rss "$AVTOOL" "${args[@]//@OUT@/$WORKDIR/out-$len}")")
        if [[ ${#theirs[@]} -gt 0 ]]; then
            args=("${theirs[@]//@LEN@/$WORKDIR/$len}")
            f+=("$(rss "${args[@]//@OUT@/$WORKDIR/ffout-$len}")")
        else
            f+=(0)
        fi
    done
    rows+=("$name ${a[0]} ${a[1]} ${f[0]} ${f[1]}")
    log "$name: avtool $(awk -v a="${a[0]}" -v b="${a[1]}" 'BEGIN { printf "%.1f → %.1f MiB", a/1024, b/1024 }')"
}
FFC=(ffmpeg -hide_banner -loglevel error -nostdin -y)
run probe-mkv probe @LEN@.mkv -- ffprobe -v error -count_packets -show_streams @LEN@.mkv
run remux-mkv-to-mkv remux @LEN@.mkv @OUT@.mkv -y -q -- "${FFC[@]}" -i @LEN@.mkv -map 0 -c copy @OUT@.mkv
run remux-mp4-to-mp4 remux @LEN@.mp4 @OUT@.mp4 -y -q -- "${FFC[@]}" -i @LEN@.mp4 -map 0 -c copy -movflags +faststart @OUT@.mp4
run remux-mp4-to-mkv remux @LEN@.mp4 @OUT@.mkv -y -q -- "${FFC[@]}" -i @LEN@.mp4 -map 0 -c copy @OUT@.mkv
run merge-to-mp4 merge @LEN@-video.mp4 @LEN@-audio.m4a @OUT@-merged.mp4 -y -q \
    -- "${FFC[@]}" -i @LEN@-video.mp4 -i @LEN@-audio.m4a -map 0:v -map 1:a -c copy -movflags +faststart @OUT@-merged.mp4
run merge-to-mkv merge @LEN@-video.mp4 @LEN@-audio.m4a @OUT@-merged.mkv -y -q \
    -- "${FFC[@]}" -i @LEN@-video.mp4 -i @LEN@-audio.m4a -map 0:v -map 1:a -c copy @OUT@-merged.mkv
run fill-silence-mkv fill-silence @LEN@.mkv @OUT@-filled.mkv -y -q
rm -f "$WORKDIR"/out-* "$WORKDIR"/ffout-*

printf '%-18s %10s %10s %7s   %10s %10s %7s\n' "command" "avtool 10m" "avtool 2h" "ratio" "ffmpeg 10m" "ffmpeg 2h" "ratio"
for r in "${rows[@]}"; do
    # shellcheck disable=SC2086
    set -- $r
    awk -v n="$1" -v a="$2" -v b="$3" -v c="$4" -v d="$5" 'BEGIN {
        printf "%-18s %10.1f %10.1f %7.2f", n, a/1024, b/1024, b/a
        if (c > 0) printf "   %10.1f %10.1f %7.2f\n", c/1024, d/1024, d/c; else printf "   %10s %10s %7s\n", "-", "-", "-" }'
done
python3 - "${rows[@]}" <<'PY'
import json, sys
out = {}
for r in sys.argv[1:]:
    name, a, b, c, d = r.split()
    a, b, c, d = int(a), int(b), int(c), int(d)
    row = {"avtool_10min_mib": round(a / 1024, 1), "avtool_2h_mib": round(b / 1024, 1), "avtool_ratio": round(b / a, 2)}
    if c > 0:
        row.update({"ffmpeg_10min_mib": round(c / 1024, 1), "ffmpeg_2h_mib": round(d / 1024, 1), "ffmpeg_ratio": round(d / c, 2)})
    out[name] = row
print(json.dumps(out))
PY
