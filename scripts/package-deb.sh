#!/usr/bin/env bash
# package-deb.sh — build avtool_<version>_<arch>.deb with dpkg-deb.
#
# Usage: scripts/package-deb.sh [OUTDIR]     (default: the repository's root)
#
# The package holds what scripts/install.sh installs under /usr: the binary
# (the Swift standard library and Foundation linked in, so no Swift toolchain
# is needed), its manual and the bash/zsh/fish completions. Depends names the
# Debian packages of the shared libraries the binary loads (the FFmpeg 5.1
# libraries, libyaml, libstdc++, libc), found with dpkg -S on this machine, and x265,
# which libavcodec loads for HEVC encoding. Install it with
#   sudo apt-get install ./avtool_<version>_<arch>.deb
# Prints the package's path on stdout.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
outdir="${1:-$repo}"
mkdir -p "$outdir"
outdir="$(cd "$outdir" && pwd)"
say() { printf 'package-deb.sh: %s\n' "$*" >&2; }

version="$(sed -n 's/.*static let version = "\([^"]*\)".*/\1/p' "$repo/Sources/avtool/Support/VersionText.swift")"
[[ -n "$version" ]] || { say "could not read the version from VersionText.swift"; exit 1; }
arch="$(dpkg --print-architecture)"

root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
chmod 755 "$root"
"$repo/scripts/install.sh" --stage "$root" /usr
# The package manager keeps the file list: the uninstall manifest is not shipped.
rm -f "$root/usr/share/avtool/installed-files"
strip --strip-unneeded "$root/usr/bin/avtool"
gzip -9n "$root/usr/share/man/man1/avtool.1"

# Depends: the package of each shared library the binary needs, plus x265,
# libavfilter (loaded when a filter graph is first built, not linked) and
# FFmpeg's other libraries (loaded at the first call of one of their
# functions, CFFmpegLazy, not linked on x86-64).
needed=$(readelf -d "$root/usr/bin/avtool" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -v '^ld-linux')
declare -A packages=()
for lib in $needed libx265.so libavfilter.so. libavformat.so. libavcodec.so. libavutil.so. libswresample.so. libswscale.so.; do
    path=$(ldconfig -p | awk -v l="$lib" 'index($1, l) == 1 && !found {print $NF; found = 1}')
    [[ -n "$path" ]] || { say "no $lib on this machine"; exit 1; }
    pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | sed -n "1s/:.*//p") \
        || pkg=$(dpkg -S "$path" | sed -n "1s/:.*//p")
    [[ -n "$pkg" ]] || { say "no package owns $path"; exit 1; }
    packages[$pkg]=1
done
depends=$(printf '%s\n' "${!packages[@]}" | sort | paste -sd, - | sed 's/,/, /g')

size=$(du -sk "$root/usr" | cut -f1)
mkdir -p "$root/DEBIAN"
cat >"$root/DEBIAN/control" <<EOF
Package: avtool
Version: $version
Architecture: $arch
Maintainer: avtool developers <avtool@localhost>
Installed-Size: $size
Depends: $depends
Section: video
Priority: optional
Homepage: https://github.com/avtool/avtool
Description: remux, transcode, merge and cut audio/video with sample-accurate A/V sync
 avtool changes containers without re-encoding, turns H.264 into H.265,
 merges separately recorded video and audio on one time base, fills
 microphone gaps with silence, joins and cuts recordings, and runs all of
 it in batch (YAML recipes, Slurm), on FFmpeg's libraries.
EOF
deb="$outdir/avtool_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2
say "built $deb (Depends: $depends)"
echo "$deb"
