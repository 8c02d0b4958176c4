#!/usr/bin/env bash
# The main job on generated sample media: set up, build, then probe a sample
# and remux it into MKV, MOV and MPEG-TS, probing each result.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-debian.sh
swift build -c release --product avtool
avtool=.build/release/avtool
Tests/Fixtures/make-fixtures.sh .fixtures >/dev/null
out=.demo
mkdir -p "$out"
sample=.fixtures/h264_bframes_2997_aac48_stereo.mp4
echo "== avtool probe $sample"
"$avtool" probe "$sample"
for ext in mkv mov ts; do
  echo
  echo "== avtool remux $sample $out/sample.$ext"
  "$avtool" remux "$sample" "$out/sample.$ext" --overwrite
  "$avtool" probe "$out/sample.$ext"
done
echo
echo "== avtool probe .fixtures/audio_gap.mp4 (a recording with a hole in its audio)"
"$avtool" probe .fixtures/audio_gap.mp4
