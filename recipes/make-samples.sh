#!/usr/bin/env bash
# Lays out sample media for the example recipes under DIR, from the generated
# test fixtures (Tests/Fixtures/make-fixtures.sh), hard-linked where possible:
#   DIR/rec/       iOS-style recordings: takeN.mp4 (video) + takeN.m4a (audio),
#                  one with a hole in the audio, one with short audio
#   DIR/rec/single recordings whose audio has a gap, to fill
#   DIR/archive/   H.264 MP4s to move to HEVC
#   DIR/mixed/     MKV, MOV and MPEG-TS files to remux to MP4
# Usage: recipes/make-samples.sh DIR [FIXTURES_DIR]
set -euo pipefail
dir=${1:?usage: make-samples.sh DIR [FIXTURES_DIR]}
here=$(cd "$(dirname "$0")/.." && pwd)
fx=${2:-$here/.fixtures}
"$here/Tests/Fixtures/make-fixtures.sh" "$fx" >/dev/null
put() { mkdir -p "$(dirname "$dir/$2")"; ln -f "$fx/$1" "$dir/$2" 2>/dev/null || cp -f "$fx/$1" "$dir/$2"; }
put clicks_video.mp4                   rec/take1.mp4
put clicks_audio.m4a                   rec/take1.m4a
put clicks_video.mp4                   rec/take2.mp4
put clicks_audio_gap.m4a               rec/take2.m4a
put clicks_video.mp4                   rec/take3.mp4
put clicks_audio_short.m4a             rec/take3.m4a
put clicks_av_gap.mp4                  rec/single/interview.mp4
put audio_gap.mp4                      rec/single/street.mp4
put h264_bframes_2997_aac48_stereo.mp4 archive/2019/birthday.mp4
put rotated90.mp4                      archive/2020/portrait.mp4
put h264_aac.mkv                       mixed/screen.mkv
put h264_aac.ts                        mixed/broadcast.ts
put audio_starts_late.mp4              mixed/camera.mov
