#!/usr/bin/env bash
# deb-test.sh — builds the Debian package (scripts/package-deb.sh), installs
# it with apt-get as a user would, runs the installed avtool (--version, a
# remux checked by ffprobe, its manual), and removes the package again.
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
deb="$(scripts/package-deb.sh "$out")"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y -q "$deb" >/dev/null
/usr/bin/avtool --version
/usr/bin/avtool remux .fixtures/h264_bframes_2997_aac48_stereo.mp4 "$out/installed.mkv" --quiet
streams=$(ffprobe -v error -show_entries stream=codec_type -of csv=p=0 "$out/installed.mkv" | paste -sd, -)
[ "$streams" = "video,audio" ] || { echo "deb-test: the installed avtool wrote '$streams'" >&2; exit 1; }
dpkg-deb -f "$deb" Depends | grep -q libavfilter || { echo "deb-test: the package does not depend on libavfilter" >&2; exit 1; }
/usr/bin/avtool probe --loudness .fixtures/h264_bframes_2997_aac48_stereo.mp4 --json | grep -q integrated \
    || { echo "deb-test: the installed avtool cannot measure loudness (libavfilter)" >&2; exit 1; }
man -P cat /usr/share/man/man1/avtool.1.gz 2>/dev/null | grep -q remux || { echo "deb-test: the manual does not render" >&2; exit 1; }
$sudo apt-get remove -y -q avtool >/dev/null
[ ! -e /usr/bin/avtool ] || { echo "deb-test: /usr/bin/avtool left after removal" >&2; exit 1; }
echo "deb-test: $(basename "$deb") installed, ran and was removed" >&2
