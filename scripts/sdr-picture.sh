#!/usr/bin/env bash
# sdr-picture.sh — the picture in README's --sdr section: one frame of an HDR
# recording as a player that ignores HDR shows it (its HLG/PQ values taken
# as BT.709: washed out), beside the same frame of `avtool transcode --sdr`.
#
# Usage: scripts/sdr-picture.sh [--avtool PATH] [INPUT [SECONDS [OUT.jpg]]]
#   INPUT    an HDR recording (default: the iPhone 14 Pro Dolby Vision 8.4 HLG
#            clip in Tests/Fixtures/devices)
#   SECONDS  the frame's time (default 0)
#   OUT.jpg  default docs/sdr-side-by-side.jpg
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
AVTOOL="$REPO/.build/release/avtool"
if [[ "${1:-}" == --avtool ]]; then AVTOOL="$2"; shift 2; fi
INPUT="${1:-$REPO/Tests/Fixtures/devices/iphone14pro_dv84_hlg_720p_mebx.MOV}"
AT="${2:-0}"
OUT="${3:-$REPO/docs/sdr-side-by-side.jpg}"
[[ -x "$AVTOOL" ]] || { echo "sdr-picture: no avtool at $AVTOOL (swift build -c release)" >&2; exit 1; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
"$AVTOOL" transcode "$INPUT" "$TMP/sdr.mp4" --sdr --preset fast --crf 18 --quiet
# Each half 400 wide, labelled; the source's pixels untouched but for the scale (its tags ignored).
ffmpeg -nostdin -v error -y -ss "$AT" -i "$INPUT" -ss "$AT" -i "$TMP/sdr.mp4" -filter_complex \
    "[0:v:0]setparams=color_primaries=bt709:color_trc=bt709:colorspace=bt709,scale=400:-2:flags=bicubic,format=rgb24,drawtext=text='HDR source, shown as SDR':x=12:y=12:fontsize=16:fontcolor=white:box=1:boxcolor=black@0.5[a];\
     [1:v:0]scale=400:-2:flags=bicubic,format=rgb24,drawtext=text='avtool transcode --sdr':x=12:y=12:fontsize=16:fontcolor=white:box=1:boxcolor=black@0.5[b];\
     [a][b]hstack" -frames:v 1 -q:v 3 "$OUT"
echo "$OUT"
