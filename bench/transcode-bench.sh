#!/usr/bin/env bash
# transcode-bench.sh — `avtool transcode` vs `ffmpeg -c:v libx265` (H.264 → H.265):
# wall time, peak RSS, output size, PSNR against the source, frame counts.
#
# Usage: bench/transcode-bench.sh [--avtool PATH] [--runs N] [--preset P] [--crf C]
#                                 [--keyint K] [--max-load L] [--max-wait S] [--workdir DIR] [--hdr]
#   --avtool PATH   avtool binary (default <repo>/.build-bench/release/avtool; built with
#                   `swift build -c release --product avtool --scratch-path .build-bench`
#                   if missing)
#   --runs N        timed runs per command (default 3); medians are reported
#   --preset P      x265 preset for both commands (default fast)
#   --crf C         CRF for both commands (default 24, avtool's default)
#   --keyint K      keyframe interval for both (avtool --keyint K, ffmpeg -g K); default:
#                   each its own (avtool 3 s = 90 frames, x265 250), as users run them
#   --max-load L    before each timed run wait while the 1-min load average is > L
#                   (default 1.0) ...
#   --max-wait S    ... for at most S seconds (default 180), then run anyway
#   --workdir DIR   scratch dir; the generated input is cached here (default <repo>/.bench)
#
# Input: 10 s (300 frames) 1920x1080 30000/1001 fps testsrc2 + temporal noise, H.264
# (libx264 -preset medium -crf 20 -bf 3) + AAC 48 kHz stereo sine, generated
# once (bit-exact flags) and cached as DIR/transcode-input-v<N>.mp4.
# Commands (run alternately, N times each):
#   avtool: avtool transcode IN OUT.mov --preset P --crf C --quiet --overwrite
#   ffmpeg: ffmpeg -nostdin -y -loglevel error -i IN -c:v libx265 -preset P -crf C
#           -x265-params log-level=error -tag:v hvc1 -c:a copy OUT.mov
# The first run's output of each is checked (ffprobe -count_frames: as many video
# frames as the input) and scored (ffmpeg psnr filter against the input, `average:`);
# every run's output size is recorded.
#
# Output: a table on stdout, followed by one JSON line (last line) with
#   runs, preset, crf, input_frames, avtool_s, ffmpeg_s, ratio_wall (target <= 1.0),
#   avtool_psnr_db, ffmpeg_psnr_db, psnr_delta_db (avtool - ffmpeg; target |.| <= 0.05),
#   avtool_bytes, ffmpeg_bytes, avtool_rss_mib, ffmpeg_rss_mib, avtool_frames,
#   ffmpeg_frames, frames_ok, load_max, load_median (1-min load at the timed runs' start)
# Progress messages go to stderr. Timing/medians: bench/lib/common.sh.
#
# Adding a command: write `bench_<name> IN OUT` (single command; timed by the
# caller, may read PRESET, CRF, AVTOOL) and append <name> to BENCHES.
#
# --hdr: the HDR jobs instead, on Dolby's profile 8 sample (Tests/Fixtures/devices,
# 640x360 59.94 fps, PQ, an RPU per frame) joined five times by `avtool concat`
# (30 s, the record kept): `transcode` carrying the RPUs against the same
# transcode with --no-dolby-vision (ratio_rpus, target <= 1.03), and `transcode
# --sdr` against the `ffmpeg` program running the same zscale/tonemap chain and
# x265 settings (ratio_sdr, target <= 1.0). Both keyframe intervals 180 unless --keyint.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
BENCH_TAG=transcode-bench
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

SCRATCH=.build-bench
AVTOOL="$REPO_ROOT/$SCRATCH/release/avtool"
AVTOOL_EXPLICIT=0
RUNS=3
PRESET=fast
KEYINT=
CRF=24
BENCH_MAX_LOAD=1.0
BENCH_MAX_WAIT=180
WORKDIR="$REPO_ROOT/.bench"
HDR=0

usage() { sed -n '2,47p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --avtool)    [[ $# -ge 2 ]] || die "--avtool needs a value"; AVTOOL="$2"; AVTOOL_EXPLICIT=1; shift 2 ;;
        --avtool=*)  AVTOOL="${1#*=}"; AVTOOL_EXPLICIT=1; shift ;;
        --runs)      [[ $# -ge 2 ]] || die "--runs needs a value"; RUNS="$2"; shift 2 ;;
        --runs=*)    RUNS="${1#*=}"; shift ;;
        --preset)    [[ $# -ge 2 ]] || die "--preset needs a value"; PRESET="$2"; shift 2 ;;
        --preset=*)  PRESET="${1#*=}"; shift ;;
        --crf)       [[ $# -ge 2 ]] || die "--crf needs a value"; CRF="$2"; shift 2 ;;
        --crf=*)     CRF="${1#*=}"; shift ;;
        --keyint)    [[ $# -ge 2 ]] || die "--keyint needs a value"; KEYINT="$2"; shift 2 ;;
        --keyint=*)  KEYINT="${1#*=}"; shift ;;
        --max-load)  [[ $# -ge 2 ]] || die "--max-load needs a value"; BENCH_MAX_LOAD="$2"; shift 2 ;;
        --max-load=*) BENCH_MAX_LOAD="${1#*=}"; shift ;;
        --max-wait)  [[ $# -ge 2 ]] || die "--max-wait needs a value"; BENCH_MAX_WAIT="$2"; shift 2 ;;
        --max-wait=*) BENCH_MAX_WAIT="${1#*=}"; shift ;;
        --workdir)   [[ $# -ge 2 ]] || die "--workdir needs a value"; WORKDIR="$2"; shift 2 ;;
        --workdir=*) WORKDIR="${1#*=}"; shift ;;
        --hdr)       HDR=1; shift ;;
        -h|--help)   usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done

[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer (got '$RUNS')"
[[ -z "$KEYINT" || "$KEYINT" =~ ^[1-9][0-9]*$ ]] || die "--keyint must be a positive integer (got '$KEYINT')"
[[ "$PRESET" =~ ^(ultrafast|superfast|veryfast|faster|fast|medium|slow|slower|veryslow|placebo)$ ]] \
    || die "--preset must be an x265 preset (got '$PRESET')"
[[ "$CRF" =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v c="$CRF" 'BEGIN { exit !(c <= 51) }' \
    || die "--crf must be a number from 0 to 51 (got '$CRF')"
[[ "$BENCH_MAX_LOAD" =~ ^[0-9]*\.?[0-9]+$ ]] || die "--max-load must be a number (got '$BENCH_MAX_LOAD')"
[[ "$BENCH_MAX_WAIT" =~ ^[0-9]+$ ]] || die "--max-wait must be whole seconds (got '$BENCH_MAX_WAIT')"

# ---------------------------------------------------------------------------
# Prerequisites
# ---------------------------------------------------------------------------
bench_require_tools ffmpeg ffprobe python3 awk
bench_ensure_time
bench_ensure_avtool "$AVTOOL" "$AVTOOL_EXPLICIT" "$REPO_ROOT" --scratch-path "$SCRATCH"
[[ "$(ffmpeg -hide_banner -encoders 2>/dev/null)" == *" libx265 "* ]] || die "this ffmpeg has no libx265 encoder"

mkdir -p "$WORKDIR"
WORKDIR="$(cd "$WORKDIR" && pwd)"
# Everything this run writes (outputs, logs, result files) lives here, away
# from the names other bench scripts clean up in WORKDIR.
RESULTS="$(mktemp -d "$WORKDIR/transcode-results.XXXXXX")"
cleanup() { rm -rf "$RESULTS"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------------------
# --hdr: Dolby Vision carried, and --sdr against the ffmpeg program.
# ---------------------------------------------------------------------------
if [[ "$HDR" == 1 ]]; then
    KEYINT=${KEYINT:-180}
    DV_SOURCE="$REPO_ROOT/Tests/Fixtures/devices/dolby_sparks_dv8_hvc1_360p.mp4"
    HDR_INPUT="$WORKDIR/transcode-hdr-input-v1.mp4"
    if [[ ! -f "$HDR_INPUT" ]]; then
        log "joining $DV_SOURCE five times into $HDR_INPUT"
        "$AVTOOL" concat "$DV_SOURCE" "$DV_SOURCE" "$DV_SOURCE" "$DV_SOURCE" "$DV_SOURCE" "$RESULTS/hdr.mp4" --quiet \
            || die "could not make the HDR input"
        mv -f "$RESULTS/hdr.mp4" "$HDR_INPUT"
    fi
    SDR_CHAIN="zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=hable:desat=2,zscale=t=bt709:m=bt709:r=tv,format=yuv420p"
    bench_rpus() { "$AVTOOL" transcode "$1" "$2" --preset "$PRESET" --crf "$CRF" --keyint "$KEYINT" --quiet --overwrite; }
    bench_nodv() { "$AVTOOL" transcode "$1" "$2" --preset "$PRESET" --crf "$CRF" --keyint "$KEYINT" --no-dolby-vision --quiet --overwrite; }
    bench_sdr() { "$AVTOOL" transcode "$1" "$2" --sdr --preset "$PRESET" --crf "$CRF" --keyint "$KEYINT" --quiet --overwrite; }
    bench_ffsdr() {
        ffmpeg -nostdin -y -loglevel error -i "$1" -vf "$SDR_CHAIN" -c:v libx265 -preset "$PRESET" -crf "$CRF" -g "$KEYINT" \
            -x265-params log-level=error -tag:v hvc1 -c:a copy "$2"
    }
    BENCHES=(rpus nodv sdr ffsdr)
    BENCH_VARS=(AVTOOL PRESET CRF KEYINT SDR_CHAIN)
    log "HDR input: $HDR_INPUT ($(file_size "$HDR_INPUT") bytes); $RUNS runs each of: ${BENCHES[*]}"
    for ((run = 1; run <= RUNS; run++)); do
        for name in "${BENCHES[@]}"; do
            out="$RESULTS/out.$name.mov"
            bench_wait_quiet >/dev/null
            bench_timed "$name" "$HDR_INPUT" "$out" || die "$name failed (run $run)"
            log "  run $run/$RUNS $name: $(bench_last "$name")"
            if [[ "$run" == 1 && "$name" == rpus ]]; then
                rpus=$(ffprobe -v error -select_streams v:0 -show_frames -show_entries side_data=side_data_type -of csv "$out" | grep -c "Dolby Vision RPU" || true)
                log "  rpus output: $rpus frames with an RPU"
            fi
            rm -f "$out"
        done
    done
    python3 - "$(bench_medians_json "${BENCHES[@]}")" "$RUNS" "$PRESET" "$CRF" <<'PY'
import json, sys
m, runs, preset, crf = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
print(f"\nHDR transcode benchmark (libx265 preset {preset}, crf {crf}), {runs} runs, medians")
print(f"{'command':<8} {'wall_s':>8} {'min_s':>7} {'max_s':>7} {'rss_MiB':>8}")
for n in ["rpus", "nodv", "sdr", "ffsdr"]:
    print(f"{n:<8} {m[n]['wall_s']:>8.2f} {m[n]['min_s']:>7.2f} {m[n]['max_s']:>7.2f} {m[n]['rss_mib']:>8.1f}")
rpus = m["rpus"]["wall_s"] / m["nodv"]["wall_s"]
sdr = m["sdr"]["wall_s"] / m["ffsdr"]["wall_s"]
print(f"ratio RPUs carried / not (wall): {rpus:.3f}  (target <= 1.03: {'ok' if rpus <= 1.03 else 'MISSED'})")
print(f"ratio --sdr / ffmpeg's chain (wall): {sdr:.3f}  (target <= 1.0: {'ok' if sdr <= 1.0 else 'MISSED'})")
print(json.dumps({"runs": int(runs), "rpus_s": round(m["rpus"]["wall_s"], 3), "nodv_s": round(m["nodv"]["wall_s"], 3),
                  "sdr_s": round(m["sdr"]["wall_s"], 3), "ffmpeg_sdr_s": round(m["ffsdr"]["wall_s"], 3),
                  "ratio_rpus": round(rpus, 3), "ratio_sdr": round(sdr, 3),
                  "sdr_rss_mib": round(m["sdr"]["rss_mib"], 1), "ffmpeg_sdr_rss_mib": round(m["ffsdr"]["rss_mib"], 1)}))
PY
    exit 0
fi

# ---------------------------------------------------------------------------
# Input generation (cached in WORKDIR). Bump GEN_VERSION when changing the recipe.
# ---------------------------------------------------------------------------
GEN_VERSION=2
GEN_FRAMES=300   # 10.01 s at 30000/1001
INPUT="$WORKDIR/transcode-input-v$GEN_VERSION.mp4"

generate_input() {
    local tmp="$RESULTS/input.mp4" t0=$SECONDS
    log "encoding $GEN_FRAMES frames 1920x1080 @ 30000/1001 (testsrc2 + noise; libx264 medium crf 20 bf 3) + AAC 48 kHz stereo"
    ffmpeg -nostdin -hide_banner -loglevel error -y \
        -f lavfi -i "testsrc2=size=1920x1080:rate=30000/1001,noise=alls=4:allf=t:all_seed=20240101" \
        -f lavfi -i "sine=frequency=440:beep_factor=4:sample_rate=48000,aformat=sample_fmts=fltp:channel_layouts=stereo" \
        -map 0:v -map 1:a -frames:v "$GEN_FRAMES" -t "$(awk -v n="$GEN_FRAMES" 'BEGIN{printf "%.3f", n*1001/30000}')" \
        -c:v libx264 -preset medium -crf 20 -bf 3 -pix_fmt yuv420p \
        -c:a aac -b:a 128k -ar 48000 -ac 2 \
        -fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1 \
        "$tmp"
    mv -f "$tmp" "$INPUT"
    log "generated $INPUT ($(file_size "$INPUT") bytes) in $((SECONDS - t0))s"
}

# count_frames FILE — decoded video frames of the first video stream.
count_frames() {
    ffprobe -v error -select_streams v:0 -count_frames \
        -show_entries stream=nb_read_frames -of csv=p=0 "$1" | head -n1 | tr -d '[:space:],'
}

# psnr FILE — average PSNR (dB) of FILE's video against the input's.
psnr() {
    ffmpeg -nostdin -hide_banner -i "$1" -i "$INPUT" -lavfi "[0:v][1:v]psnr" -f null - 2>&1 \
        | sed -n 's/.*Parsed_psnr.* average:\([0-9.inf]*\).*/\1/p' | tail -n1
}

if [[ -f "$INPUT" ]]; then
    log "using cached input $INPUT"
else
    generate_input
fi
INPUT_BYTES=$(file_size "$INPUT")
INPUT_FRAMES=$(count_frames "$INPUT")
INPUT_DESC=$(ffprobe -v error -show_entries stream=codec_name,profile,width,height,pix_fmt,avg_frame_rate,has_b_frames,sample_rate,channels,bit_rate:format=duration \
    -of compact=p=0:nk=0 "$INPUT" | tr '\n' ' ')
[[ "$INPUT_FRAMES" -gt 0 ]] || die "cannot count the input's frames"

# ---------------------------------------------------------------------------
# Benchmarks: bench_<name> IN OUT, each a single command timed by the caller.
# ---------------------------------------------------------------------------
bench_avtool() {
    "$AVTOOL" transcode "$1" "$2" --preset "$PRESET" --crf "$CRF" ${KEYINT:+--keyint "$KEYINT"} --quiet --overwrite
}
bench_ffmpeg() {
    ffmpeg -nostdin -y -loglevel error -i "$1" -c:v libx265 -preset "$PRESET" -crf "$CRF" ${KEYINT:+-g "$KEYINT"} \
        -x265-params log-level=error -tag:v hvc1 -c:a copy "$2"
}

BENCHES=(avtool ffmpeg)
BENCH_VARS=(AVTOOL PRESET CRF KEYINT)  # variables the bench_ functions read

# run_bench NAME RUN — waits for a quiet machine, times one run, records the
# load ("NAME RUN load" in $RESULTS/load) and the output size ($RESULTS/NAME.bytes);
# on run 1 also the output's frame count and PSNR ($RESULTS/NAME.frames, .psnr).
run_bench() {
    local name="$1" run="$2" out="$RESULTS/out.$1.mov" load
    rm -f "$out"
    load=$(bench_wait_quiet)
    echo "$name $run $load" >>"$RESULTS/load"
    bench_timed "$name" "$INPUT" "$out" || die "$name failed (run $run)"
    [[ -s "$out" ]] || die "$name: produced no output"
    file_size "$out" >>"$RESULTS/$name.bytes"
    log "  run $run/$RUNS $name: $(bench_last "$name"), $(file_size "$out") bytes (load before: $load)"
    if [[ "$run" == 1 ]]; then
        count_frames "$out" >"$RESULTS/$name.frames"
        psnr "$out" >"$RESULTS/$name.psnr"
        log "  $name output: $(cat "$RESULTS/$name.frames") frames, PSNR $(cat "$RESULTS/$name.psnr") dB"
        [[ -s "$RESULTS/$name.psnr" ]] || die "$name: could not compute PSNR"
    fi
    rm -f "$out"
}

log "input: $INPUT ($INPUT_BYTES bytes, $INPUT_FRAMES frames)"
log "$RUNS runs each of: ${BENCHES[*]} (preset $PRESET, crf $CRF); load now $(bench_load)"
cat "$INPUT" >/dev/null

for ((run = 1; run <= RUNS; run++)); do
    for name in "${BENCHES[@]}"; do
        run_bench "$name" "$run"
    done
done

# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------
python3 - "$(bench_medians_json "${BENCHES[@]}")" "$RESULTS" "$RUNS" "$PRESET" "$CRF" \
    "$INPUT_BYTES" "$INPUT_FRAMES" "$INPUT_DESC" "${BENCHES[@]}" <<'PY'
import json, os, statistics, sys

medians = json.loads(sys.argv[1])
results, runs, preset, crf = sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
input_bytes, input_frames, input_desc, names = int(sys.argv[6]), int(sys.argv[7]), sys.argv[8], sys.argv[9:]

def read(name, kind):
    p = os.path.join(results, f"{name}.{kind}")
    return [l.strip() for l in open(p) if l.strip()] if os.path.exists(p) else []

info = {}
for n in names:
    sizes = [int(x) for x in read(n, "bytes")]
    frames = read(n, "frames")
    ps = read(n, "psnr")
    info[n] = {"bytes": int(statistics.median(sizes)), "sizes_vary": len(set(sizes)) > 1,
               "frames": int(frames[0]) if frames and frames[0].isdigit() else None,
               "psnr": float(ps[0]) if ps else None}
loads = [float(l.split()[2]) for l in open(os.path.join(results, "load")) if l.strip()]

def r(x, d=3):
    return None if x is None else round(x, d)

a, f = medians.get("avtool"), medians.get("ffmpeg")
ratio = a["wall_s"] / f["wall_s"] if a and f and f["wall_s"] > 0 else None
pa, pf = info["avtool"]["psnr"], info["ffmpeg"]["psnr"]
delta = pa - pf if pa is not None and pf is not None else None

print(f"\ntranscode benchmark: H.264 -> H.265 (libx265 preset {preset}, crf {crf:g}), {runs} runs, medians")
print(f"input: {input_bytes} bytes, {input_frames} frames; {input_desc.strip()}")
print(f"{'command':<8} {'wall_s':>8} {'min_s':>7} {'max_s':>7} {'fps':>7} {'rss_MiB':>8} {'bytes':>10} {'kbit/s':>8} {'PSNR_dB':>8} {'frames':>7}")
dur = input_frames * 1001 / 30000
for n in names:
    m, i = medians[n], info[n]
    print(f"{n:<8} {m['wall_s']:>8.2f} {m['min_s']:>7.2f} {m['max_s']:>7.2f} {input_frames / m['wall_s']:>7.2f} "
          f"{m['rss_mib']:>8.1f} {i['bytes']:>10} {i['bytes'] * 8 / dur / 1000:>8.0f} "
          f"{(i['psnr'] if i['psnr'] is not None else float('nan')):>8.3f} {str(i['frames']):>7}"
          + ("  (sizes vary between runs)" if i["sizes_vary"] else ""))
ok_wall = ratio is not None and ratio <= 1.0
ok_psnr = delta is not None and abs(delta) <= 0.05
frames_ok = all(info[n]["frames"] == input_frames for n in names)
print(f"ratio avtool/ffmpeg (wall): {r(ratio)}  (target <= 1.0: {'ok' if ok_wall else 'MISSED'})")
print(f"PSNR avtool - ffmpeg: {r(delta, 3)} dB  (target |d| <= 0.05: {'ok' if ok_psnr else 'MISSED'})")
print(f"frame counts: input {input_frames}, " + ", ".join(f"{n} {info[n]['frames']}" for n in names)
      + f"  ({'ok' if frames_ok else 'MISMATCH'})")
print(f"1-min load at run start: min {min(loads):.2f}, median {statistics.median(loads):.2f}, max {max(loads):.2f}")

out = {
    "runs": runs, "preset": preset, "crf": crf, "input_bytes": input_bytes, "input_frames": input_frames,
    "avtool_s": r(a["wall_s"]), "ffmpeg_s": r(f["wall_s"]), "ratio_wall": r(ratio), "ratio_wall_ok": ok_wall,
    "avtool_psnr_db": r(pa, 4), "ffmpeg_psnr_db": r(pf, 4), "psnr_delta_db": r(delta, 4), "psnr_ok": ok_psnr,
    "avtool_bytes": info["avtool"]["bytes"], "ffmpeg_bytes": info["ffmpeg"]["bytes"],
    "size_ratio": r(info["avtool"]["bytes"] / info["ffmpeg"]["bytes"]),
    "avtool_rss_mib": r(a["rss_mib"], 1), "ffmpeg_rss_mib": r(f["rss_mib"], 1),
    "avtool_frames": info["avtool"]["frames"], "ffmpeg_frames": info["ffmpeg"]["frames"], "frames_ok": frames_ok,
    "load_max": r(max(loads), 2), "load_median": r(statistics.median(loads), 2),
}
print(json.dumps(out))
PY
