#!/usr/bin/env bash
# make-sync-scenes.sh — generate deterministic scenes for waveform auto-sync
# tests (`avtool sync`, `merge --sync-by-audio`). Called by make-fixtures.sh.
#
# Usage: Tests/Fixtures/make-sync-scenes.sh OUTDIR
#
# One "scene" is a sound on a true clock: speech-like noise bursts (white
# noise through a speech-band filter under an aperiodic syllable envelope)
# and claps (fast-decaying bursts), from seeded lavfi sources. Two
# "microphones" record it:
#   * the camera (VIDEO): the scene from true time 0, through a cheap mic's
#     EQ (highpass 250 Hz, lowpass 5 kHz) with its own pink noise, AAC, in an
#     MP4 with a small video track; its clock is the true clock;
#   * the recorder (AUDIO): the scene from true time OFFSET (negative: it
#     started before the camera), through another EQ (+6 dB at 2.5 kHz,
#     lowpass 12 kHz) with its own white noise, on a clock running DRIFT ppm
#     fast: the true-clock signal is resampled by (1 + DRIFT) with
#     asetrate/aresample/asetrate at integer rates P/Q = 1 + DRIFT, then cut.
# The truth is then: merge offset = OFFSET, drift = DRIFT. It is checked by
# a second method: a marker channel (20 ms 3 kHz bursts every 7 true
# seconds) goes through the recorder's exact chain beside the scene, and
# ffmpeg's silencedetect must find each marker where OFFSET and DRIFT put it
# (within 0.1 ms). The markers are not in the recordings.
#
# Offsets are whole samples at 48 kHz (fractional milliseconds). Each
# scene's truth is in sync_scenes.txt (name offset_seconds drift_ppm).
#
# Cached by OUTDIR/.sync-stamp (sha256 of this script).
set -euo pipefail

SCRIPT_PATH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
OUTDIR="${1:?usage: make-sync-scenes.sh OUTDIR}"
mkdir -p "$OUTDIR"
OUTDIR="$(cd "$OUTDIR" && pwd)"

die() { echo "make-sync-scenes: ERROR: $*" >&2; exit 1; }
log() { echo "make-sync-scenes: $*" >&2; }

SHA="$(sha256sum "$SCRIPT_PATH" | awk '{print $1}')"
STAMP="$OUTDIR/.sync-stamp"
TRUTH="$OUTDIR/sync_scenes.txt"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$SHA" && -f "$TRUTH" ]]; then
    ok=1
    while read -r name _; do
        [[ -e "$OUTDIR/${name}_audio.m4a" ]] || ok=0
    done <"$TRUTH"
    [[ $ok == 1 ]] && exit 0
fi
rm -f "$STAMP"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/avtool-sync-scenes.XXXXXX")"
trap 'rm -rf "$WORK"; rm -f "$OUTDIR"/.partial.*' EXIT

START_SECONDS=$SECONDS
FF=(ffmpeg -hide_banner -loglevel error -nostdin -y)
BITEXACT=(-fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1 -map_chapters -1)
X264=(-c:v libx264 -preset veryfast -crf 30 -pix_fmt yuv420p -threads 1 -x264-params "keyint=50:scenecut=0:bframes=0:threads=1")
AAC=(-c:a aac -b:a 64k)
RATE=48000
LEAD=10   # the scene's file starts 10 s before true time 0

# scene NAME SECONDS CLICKS SEED: a stereo float WAV, channel 0 the scene, channel
# 1 the markers, true time t - LEAD. With CLICKS=1 the scene also has a
# 10 ms 1 kHz beep on whole true seconds (for click-track tests): on an
# pseudo-random quarter of them (a hash of the second), so the beeps form no
# pattern that matches some seconds off; the bursts are clipped at 0.03 and kept 200 ms clear
# before and 50 ms after every whole second, so only beeps reach the click
# detector's 15 % and each beep follows a quiet stretch.
scene() {
    local out="$WORK/$1.wav" d=$2 clicks=$3 seed=$4 beep="0"
    [[ $clicks == 1 ]] && beep="0.5*sin(2*PI*1000*t)*lt(mod(t\,1)\,0.01)*gt(mod(abs(sin(floor(t)*12.9898))*43758.5453\,1)\,0.75)"
    "${FF[@]}" \
        -f lavfi -i "aevalsrc='0.35*(0.6+0.4*sin(2*PI*4.3*t))*gt(sin(2*PI*0.37*t)+sin(2*PI*0.61*t+1)+sin(2*PI*1.13*t+2)\,1.2)+0.6*exp(-50*mod(t\,2.3))*gt(sin(2*PI*0.11*t+0.5)\,-0.3)|0.5*sin(2*PI*3000*t)*lt(mod(t\,7)\,0.02)':s=$RATE:d=$d" \
        -f lavfi -i "anoisesrc=seed=$seed:sample_rate=$RATE:d=$d:color=white:amplitude=1" \
        -f lavfi -i "aevalsrc='$beep':s=$RATE:d=$d" \
        -filter_complex "[1]bandpass=f=1200:width_type=o:w=3.5[n];[0]channelsplit[e][m];[e][n]amultiply,$([[ $clicks == 1 ]] && echo "volume=0.4,aeval='clip(val(0)\,-0.03\,0.03)*gt(mod(t\,1)\,0.05)*lt(mod(t\,1)\,0.8)'" || echo volume=0.5)[b];[b][2]amix=inputs=2:normalize=0[s];[s][m]amerge=inputs=2" \
        -c:a pcm_f32le "$out"
}

# camera NAME SCENE SECONDS SEED [FPS] [NOISE]: VIDEO = small video + the camera mic.
camera() {
    local name=$1 src="$WORK/$2.wav" d=$3 seed=$4 fps=${5:-10} noise=${6:-0.03} f="$OUTDIR/.partial.$1_video.mp4"
    local video="color=c=black:s=160x120:r=$fps:d=$d"
    # Click scenes flash white on every whole second.
    [[ $2 == clicks* ]] && video="$video,drawbox=x=0:y=0:w=iw:h=ih:color=white:t=fill:enable='eq(mod(n\,$fps)\,0)'"
    "${FF[@]}" -f lavfi -i "$video" -i "$src" \
        -f lavfi -i "anoisesrc=seed=$seed:sample_rate=$RATE:d=$d:color=pink:amplitude=$noise" \
        -filter_complex "[1]atrim=start_sample=$((LEAD * RATE)):end_sample=$(((LEAD + d) * RATE)),asetpts=N/SR/TB,pan=mono|c0=c0,highpass=f=250,lowpass=f=5000,volume=0.7[m];[m][2]amix=inputs=2:normalize=0[a]" \
        -map 0:v -map "[a]" "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" "$f"
    mv -f "$f" "$OUTDIR/$1_video.mp4"
}

# recorder NAME SCENE OFFSET_SAMPLES P Q SECONDS SEED [RATE] [NOISE]: AUDIO on a
# clock P/Q times the true one, starting at true time OFFSET_SAMPLES/48000.
recorder() {
    local name=$1 src="$WORK/$2.wav" off=$3 p=$4 q=$5 d=$6 seed=$7 outrate=${8:-$RATE} noise=${9:-0.01}
    local f="$OUTDIR/.partial.$1_audio.m4a" chain
    chain="atrim=start_sample=$((LEAD * RATE + off)),asetpts=N/SR/TB"
    [[ $p != "$q" ]] && chain="$chain,asetrate=$q,aresample=$p:filter_size=64,asetrate=$RATE"
    chain="$chain,atrim=end_sample=$((d * RATE)),asetpts=N/SR/TB"
    # The truth, checked: the markers through the same chain. silencedetect
    # prints 6 significant digits, so markers are read below 100 s: in the
    # first 90 s and in the last 90 s (cut and restarted at 0).
    local tailstart=$(((d > 90 ? d - 90 : 0) * RATE))
    : >"$WORK/$name.markers"
    for base in 0 "$tailstart"; do
        "${FF[@]}" -v info -i "$src" -af "$chain,atrim=start_sample=$base,asetpts=PTS-STARTPTS,atrim=end=90,pan=mono|c0=c1,silencedetect=noise=-30dB:d=0.5" -f null - 2>&1 \
            | sed -n 's/.*silence_end: \([0-9.]*\).*/\1/p' \
            | awk -v b="$base" -v r="$RATE" '$1 < 89.9 { printf "%.6f\n", $1 + b / r }' >>"$WORK/$name.markers"
    done
    "${FF[@]}" -i "$src" -f lavfi -i "anoisesrc=seed=$seed:sample_rate=$outrate:d=$((d + 1)):color=white:amplitude=$noise" \
        -filter_complex "[0]$chain,pan=mono|c0=c0,equalizer=f=2500:t=q:w=1:g=6,lowpass=f=12000,aresample=$outrate[m];[m][1]amix=inputs=2:normalize=0:duration=first[a]" \
        -map "[a]" "${AAC[@]}" -ar "$outrate" "${BITEXACT[@]}" "$f"
    mv -f "$f" "$OUTDIR/$1_audio.m4a"
    # offset in seconds, drift in ppm
    awk -v n="$name" -v off="$off" -v p="$p" -v q="$q" -v r="$RATE" \
        'BEGIN { printf "%s %.10f %.4f\n", n, off / r, (p / q - 1) * 1e6 }' >>"$TRUTH.partial"
}

rm -f "$TRUTH.partial"
log "generating sync scenes into $OUTDIR"
scene talk 130 0 11
#        name                 scene offset(samples)  P      Q      seconds seed [rate]
camera   scene_a              talk  60 21
recorder scene_a              talk  592593           1      1      75      31
camera   scene_b              talk  60 22
recorder scene_b              talk  -231423          50001  50000  75      32
camera   scene_c              talk  60 23
recorder scene_c              talk  1425939          49999  50000  75      33
camera   scene_d              talk  60 24
recorder scene_d              talk  24601            12501  12500  75      34
camera   scene_e              talk  60 25
recorder scene_e              talk  -108003          12499  12500  75      35 44100

# Ten minutes of click track (a white frame at every whole true second, a
# beep on some) with the scene's bursts, quieter, and quieter microphones: a recorder started 3.5 s early on a clock
# 80 ppm fast, and one started 1.23 s late on an exact clock.
scene clicks 620 1 12
camera   clicks10m            clicks 600 26 5 0.003
recorder clicks10m_drift80    clicks -168001         12501  12500  606     36 48000 0.003
recorder clicks10m_nodrift    clicks 59259           1      1      598     37 48000 0.003

# For refusals: another scene (other noise, other events), an AUDIO too
# short to overlap enough, and digital silence.
scene other 40 0 13
recorder unrelated            other 0                1      1      30      38
recorder short                talk  240000           1      1      2       39
"${FF[@]}" -f lavfi -i "anullsrc=r=$RATE:cl=mono:d=20" "${AAC[@]}" "${BITEXACT[@]}" "$OUTDIR/.partial.silence_audio.m4a"
mv -f "$OUTDIR/.partial.silence_audio.m4a" "$OUTDIR/silence_audio.m4a"
mv -f "$TRUTH.partial" "$TRUTH"
printf '%s\n' "$SHA" >"$STAMP"
log "done in $((SECONDS - START_SECONDS)) s"
