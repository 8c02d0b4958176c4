#!/bin/bash
# Output hashes of the byte-level MP4/MOV paths (issue 49): every MP4/MOV/M4A
# fixture, device recording, wild file and real file remuxed in bulk, with
# index edits (--metadata, --rotate), through the muxer (--no-bulk: the index
# completion and carried tracks), cut short (the edit-list ends of frames
# hidden after --to), and a few index-less cuts
# repaired with a reference. Prints "sha256  case" per output (or the exit
# status when avtool refused), sorted: compare two runs with diff.
#   scripts/isobmff-hashes.sh [path/to/avtool] > hashes.txt
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
avtool=${1:-$repo/.build/debug/avtool}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

inputs=()
for dir in "$repo/.fixtures" "$repo/Tests/Fixtures/devices" "$repo/Tests/Fixtures/wild" "$repo/.real-media"; do
    for f in "$dir"/*.mp4 "$dir"/*.mov "$dir"/*.MOV "$dir"/*.m4a "$dir"/*.m4v "$dir"/*.m4b; do
        [ -f "$f" ] && inputs+=("$f")
    done
done

# One run: its output's hash, or why there is none.
run() {
    local name=$1 out=$2; shift 2
    rm -f "$out"
    if "$avtool" "$@" > /dev/null 2>&1 && [ -f "$out" ]; then
        echo "$(sha256sum < "$out" | cut -c1-64)  $name"
    else
        echo "refused(exit $?)  $name"
    fi
}

for f in "${inputs[@]}"; do
    base=$(basename "$f"); ext=${base##*.}; ext=${ext,,}
    tag=${f#"$repo"/}
    out="$work/o.$ext"
    run "$tag bulk" "$out" remux "$f" "$out" --overwrite
    run "$tag edits" "$out" remux "$f" "$out" --overwrite --metadata title=isobmff --rotate 90 --creation-time 2020-01-02T03:04:05Z
    run "$tag muxer" "$out" remux "$f" "$out" --overwrite --no-bulk
    run "$tag cut" "$out" cut "$f" "$out" --overwrite --from 0.4 --to 1.3
done

# Index-less recordings: an index-last copy cut at 70% of its media data, the size of its mdat left 0.
for name in .fixtures/h264_bframes_2997_aac48_stereo.mp4 .fixtures/hevc_aac.mp4 .fixtures/iphone_tags.mov \
            .fixtures/pcm_in_mov.mov .real-media/camera_576p.mp4 Tests/Fixtures/devices/gopro_max_heromode_gpmd.mp4 \
            Tests/Fixtures/devices/iphone14pro_dv84_hlg_720p_mebx.MOV; do
    src="$repo/$name"; [ -f "$src" ] || continue
    ext=${name##*.}; ext=${ext,,}
    whole="$work/whole.$ext" cut="$work/cut.$ext" out="$work/r.$ext"
    ffmpeg -v error -y -i "$src" -map 0 -c copy -f "$([ "$ext" = mov ] && echo mov || echo mp4)" "$whole" || continue
    python3 - "$whole" "$cut" <<'PY'
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
m = data.find(b'mdat'); v = data.find(b'moov', m + 4)
data[m - 4:m] = b'\0\0\0\0'
open(sys.argv[2], 'wb').write(data[:m + 4 + (v - 4 - m - 4) * 70 // 100])
PY
    run "$name repair" "$out" repair "$cut" "$out" --reference "$src" --overwrite
done | sort -k2
