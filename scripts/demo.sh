#!/usr/bin/env bash
# The main job on generated sample media: set up, build, then probe a sample,
# remux it into MKV, MOV and MPEG-TS, and transcode it (and a PCM-in-MOV
# recording) to H.265, probing each result.
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
echo
echo "== avtool transcode $sample $out/sample-hevc.mov (H.264 MP4 → H.265 MOV, audio copied)"
"$avtool" transcode "$sample" "$out/sample-hevc.mov" --preset fast --overwrite
"$avtool" probe "$out/sample-hevc.mov"
echo
echo "== avtool transcode $sample $out/sample-hevc-chunks.mov --chunks 3 (three x265 encoders side by side, joined to the frame)"
"$avtool" transcode "$sample" "$out/sample-hevc-chunks.mov" --preset fast --chunks 3 --overwrite
echo
echo "== avtool transcode .fixtures/pcm_in_mov.mov $out/pcm-hevc.mp4 (PCM audio becomes AAC for MP4)"
"$avtool" transcode .fixtures/pcm_in_mov.mov "$out/pcm-hevc.mp4" --preset fast --overwrite
"$avtool" probe "$out/pcm-hevc.mp4"
echo
echo "== avtool merge .fixtures/clicks_video.mp4 .fixtures/clicks_audio_late250.m4a $out/merged.mp4 --offset 250ms"
echo "   (a video and a separately recorded .m4a that started 250 ms later)"
"$avtool" merge .fixtures/clicks_video.mp4 .fixtures/clicks_audio_late250.m4a "$out/merged.mp4" --offset 250ms --overwrite
echo
echo "== avtool fill-silence .fixtures/audio_gap.mp4 $out/filled.mp4 (the microphone stopped for a second)"
"$avtool" fill-silence .fixtures/audio_gap.mp4 "$out/filled.mp4" --overwrite
"$avtool" probe "$out/filled.mp4"
echo "== avtool fill-silence .fixtures/clicks_audio_gap.m4a $out/filled.m4a (audio alone: a voice memo with a dropout)"
"$avtool" fill-silence .fixtures/clicks_audio_gap.m4a "$out/filled.m4a" --overwrite
echo
echo "== avtool concat three segments → $out/joined.mp4"
"$avtool" concat .fixtures/clicks_seg1.mp4 .fixtures/clicks_seg2.mp4 .fixtures/clicks_seg3.mkv "$out/joined.mp4" --overwrite
echo
echo "== avtool batch: the example recipes on a sample tree ($out/batch, from recipes/make-samples.sh)"
recipes/make-samples.sh "$out/batch" .fixtures
for r in ios-recordings remux-to-mp4 hevc-archive; do
  echo "-- recipes/$r.yaml"
  "$avtool" batch "recipes/$r.yaml" --base "$out/batch" --force
done
echo "-- run again: every job is up to date"
"$avtool" batch recipes/ios-recordings.yaml --base "$out/batch"
