#!/usr/bin/env bash
# Installs what avtool needs on Debian 12 (bookworm): FFmpeg 5.1 development
# libraries and libyaml's (libyaml-dev: recipes are read with libyaml), and the
# programs the tests use as oracles (ffmpeg, ffprobe, GStreamer's gst-discoverer,
# and GStreamer's encoders and muxers for Tests/Fixtures/make-encoder-audio.sh, x264enc being in plugins-ugly;
# strace to watch avtool's system calls; man-db
# to render the installed manual; binutils for the package script's readelf and strip;
# PyYAML, the recipe reader's oracle).
# Does nothing when everything is present.
set -euo pipefail
packages=(
  pkg-config libavformat-dev libavcodec-dev libavfilter-dev libavutil-dev
  libswresample-dev libswscale-dev libx265-dev libyaml-dev
  ffmpeg gstreamer1.0-tools gstreamer1.0-plugins-base-apps gstreamer1.0-plugins-base
  gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly gstreamer1.0-libav
  time strace man-db git binutils python3-yaml
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The real-media fetcher needs python3 with pip (present on most machines).
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3 python3-pip)
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "installing: ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >/dev/null
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
