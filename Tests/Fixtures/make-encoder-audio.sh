#!/usr/bin/env bash
# make-encoder-audio.sh — short media files whose AUDIO was made by encoders
# (and mostly muxers) other than libavcodec/libavformat, for tests that check
# that audio stream copy works on real encoders' output.
#
# Usage: Tests/Fixtures/make-encoder-audio.sh OUTDIR
#   Writes OUTDIR/encoders/*.{mp4,m4a,mov} and OUTDIR/encoders/SOURCES.txt
#   (one line per file: name, audio encoder, muxer, notes; then ffprobe facts).
#
# Sources (same for every file): 5 s (PCM files: 4 s) of 1 kHz sine beeps,
# 50 ms long, every 0.5 s starting at 0.25 s (beep k spans
# [0.25+0.5k, 0.30+0.5k) s, starting and ending on zero crossings),
# amplitude 0.5, the same on every channel; made once per rate/layout by
# ffmpeg's aevalsrc as bit-exact WAV and fed to GStreamer through wavparse.
# Video (where there is video): 320x240 at 25 fps for as long as the audio,
# H.264 from x264enc (GStreamer, videotestsrc smpte scrolling) or libx264
# (ffmpeg-made files), no B-frames.
#
# Encoders and muxers:
#   voaacenc (VisualOn AAC, the Android encoder)  -> mp4mux / qtmux
#   lamemp3enc (LAME)                             -> mp4mux
#   twolamemp2enc (TwoLAME)                       -> qtmux
#   avenc_ac3 (libavcodec's AC-3 inside GStreamer)-> mp4mux
#   raw PCM                                       -> qtmux (s16be twos, s24le sowt)
#   raw PCM                                       -> ffmpeg's mov muxer (in24, fl32)
#   voaac_dropout / voaac_oddgap: voaacenc's packets, byte for byte, dropped
#   or re-timed by ffmpeg bitstream filters and re-muxed by ffmpeg (-c copy),
#   so their container (edit list, esds layout) is libavformat's.
# PCM files are 4 s and only s16 is stereo so that each stays under 1 MB.
#
# Determinism: the WAV sources and the ffmpeg-made files are bit-exact
# (-bitexact, single-threaded libx264). GStreamer: x264enc threads=1,
# voaacenc (fixed point), LAME, TwoLAME and avenc_ac3 give the same bytes on
# the same machine and build; qtmux/mp4mux always stamp the wall-clock time
# into mvhd/tkhd/mdhd creation/modification times (no property to set them),
# so fix_qt_times() rewrites those header fields to 2024-05-01T12:00:00Z
# (needs python3; without it the files differ run to run in those 10-30
# bytes only). Tests compare avtool's output with its own input, so
# determinism is convenient, not required.
#
# Notes on what the files contain (see also SOURCES.txt):
#   * voaacenc's AudioSpecificConfig is the bare 2 bytes (1190 for 48 kHz
#     stereo LC, 1208 for 44.1 kHz mono); FFmpeg's aac encoder writes 5 bytes
#     (1190 56e5 00: the same plus an explicit "no SBR" sync extension).
#   * GStreamer's muxers write no priming edit list (elst media_time 0; the
#     first audio packet has pts 0), so decoded beeps come late by the
#     codec delay: voaacenc 1600 samples, LAME 1105 (no Xing/Info frame),
#     TwoLAME 481, AC-3 256 (measured with FFmpeg's decoders). voaacenc drops
#     the last partial frame (234 packets = 4.992 s for 5 s of input).
#   * twolame_mp2_48k.mov: qtmux stores MPEG-1 Layer II under the '.mp3'
#     sample entry, so ffprobe reports codec_name=mp3 although every packet
#     is Layer II (header fffd...). The check asserts exactly that.
#   * PCM in MOV: ffprobe 5.1 has no block_align field; libavformat 5.1's
#     codecpar->block_align (read with a small C probe) is 0 for all of
#     pcm_s16be_twos.mov (qtmux, stereo, sound description v0),
#     pcm_s24le_in24.mov and pcm_f32le.mov (ffmpeg, mono, v1:
#     bytesPerPacket/bytesPerFrame 3/3 and 4/4) and qtmux_pcm_s24le_sowt.mov
#     (mono, v1, 3/3); bits_per_sample is 16/24/32/24, frame_size 0. A copy
#     path must not rely on block_align from the demuxer.
#   * qtmux_pcm_s24le_sowt.mov: qtmux writes 24-bit little-endian PCM as
#     'sowt' with sample size 24 (Apple uses 'in24' + 'enda' for that);
#     FFmpeg reads it as pcm_s24le.
#
# Cached: OUTDIR/encoders/.stamp holds the sha256 of this script; if it
# matches and every file listed in SOURCES.txt exists, exit 0 at once.
# Files are written as OUTDIR/encoders/.partial.<name> and renamed when
# complete and verified; the stamp is written last.
set -euo pipefail

SCRIPT_PATH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
OUTDIR="${1:?usage: make-encoder-audio.sh OUTDIR}"

die() { echo "make-encoder-audio: ERROR: $*" >&2; exit 1; }
log() { echo "make-encoder-audio: $*" >&2; }

mkdir -p "$OUTDIR/encoders"
DIR="$(cd "$OUTDIR/encoders" && pwd)"

# Serialise concurrent invocations on the same OUTDIR.
if command -v flock >/dev/null 2>&1; then
    exec 8>"$DIR/.lock"
    flock 8
fi

SCRIPT_SHA="$(sha256sum "$SCRIPT_PATH" | awk '{print $1}')"
STAMP="$DIR/.stamp"
SOURCES="$DIR/SOURCES.txt"

cache_valid() {
    [[ -f "$STAMP" && -f "$SOURCES" ]] || return 1
    [[ "$(cat "$STAMP")" == "$SCRIPT_SHA" ]] || return 1
    local name
    while IFS=$'\t' read -r name _; do
        [[ -z "$name" || "$name" == \#* ]] && continue
        [[ -e "$DIR/$name" ]] || return 1
    done <"$SOURCES"
    return 0
}
if cache_valid; then
    exit 0
fi

for tool in ffmpeg ffprobe gst-launch-1.0 gst-inspect-1.0 sha256sum awk; do
    command -v "$tool" >/dev/null 2>&1 || die "required program '$tool' not found (run scripts/setup-debian.sh)"
done
for element in filesrc wavparse audioconvert videotestsrc x264enc h264parse voaacenc aacparse \
    lamemp3enc twolamemp2enc mpegaudioparse avenc_ac3 ac3parse mp4mux qtmux filesink; do
    gst-inspect-1.0 "$element" >/dev/null 2>&1 \
        || die "GStreamer element '$element' not found (gstreamer1.0-plugins-{base,good,bad,ugly}, gstreamer1.0-libav)"
done

START_SECONDS=$SECONDS
rm -f "$STAMP" "$DIR"/.partial.*
WORK="$(mktemp -d "${TMPDIR:-/tmp}/avtool-encoders.XXXXXX")"
trap 'rm -rf "$WORK"; rm -f "$DIR"/.partial.*' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

FF=(ffmpeg -hide_banner -loglevel error -nostdin -y)
BITEXACT=(-fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1 -map_chapters -1)
X264=(-c:v libx264 -preset veryfast -b:v 300k -pix_fmt yuv420p -threads 1
      -x264-params "keyint=50:min-keyint=50:scenecut=0:bframes=0:threads=1:lookahead-threads=1:sliced-threads=0")
GST=(gst-launch-1.0 -q -e)
QT_TIME=3797409600   # 2024-05-01T12:00:00Z in seconds since 1904-01-01

partial() { echo "$DIR/.partial.$1"; }
finish() { mv -f "$(partial "$1")" "$DIR/$1"; }

# ---------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------
BEEP="0.5*sin(2*PI*1000*t)*lt(mod(t+0.25\,0.5)\,0.05)"
# wav RATE LAYOUT [SECONDS] -> path of an s16le WAV (default 5 s) with the
# beeps on every channel
wav() {
    local d="${3:-5}" f="$WORK/beeps_$1_$2_${3:-5}.wav"
    if [[ ! -f "$f" ]]; then
        "${FF[@]}" -f lavfi -i "aevalsrc=exprs=$BEEP:channel_layout=$2:sample_rate=$1:duration=$d:nb_samples=1024" \
            -c:a pcm_s16le "${BITEXACT[@]}" "$f"
    fi
    echo "$f"
}
# GStreamer video branch ending in the muxer named "mux": 5 s, 300 kb/s.
GST_VIDEO=(videotestsrc num-buffers=125 is-live=false pattern=smpte horizontal-speed=2
    '!' video/x-raw,format=I420,width=320,height=240,framerate=25/1
    '!' x264enc threads=1 speed-preset=veryfast key-int-max=50 bframes=0 bitrate=300
    '!' h264parse '!' queue '!' mux.video_0)
# The same for 4 s at 100 kb/s, beside PCM (which must stay under 1 MB).
GST_VIDEO_4S=("${GST_VIDEO[@]/num-buffers=125/num-buffers=100}")
GST_VIDEO_4S=("${GST_VIDEO_4S[@]/bitrate=300/bitrate=100}")
# gst_audio RATE LAYOUT [SECONDS]: GST_AUDIO = GStreamer source branch (raw
# S16LE from the WAV). One argv word per element so paths may hold spaces.
GST_AUDIO=()
gst_audio() {
    local w
    w="$(wav "$@")"
    GST_AUDIO=(filesrc "location=$w" '!' wavparse '!' audioconvert)
}

# fix_qt_times FILE: set creation/modification times in mvhd, tkhd and mdhd
# (GStreamer writes the wall clock there) to QT_TIME. Only those fields change.
fix_qt_times() {
    command -v python3 >/dev/null 2>&1 || { log "python3 missing: $1 keeps wall-clock times"; return 0; }
    python3 - "$1" "$QT_TIME" <<'EOF'
import struct, sys
path, t = sys.argv[1], int(sys.argv[2])
d = bytearray(open(path, 'rb').read())
n = 0
def walk(off, end):
    global n
    while off + 8 <= end:
        size, typ = struct.unpack('>I4s', d[off:off + 8]); hdr = 8
        if size == 1:
            size = struct.unpack('>Q', d[off + 8:off + 16])[0]; hdr = 16
        elif size == 0:
            size = end - off
        if size < hdr or off + size > end:
            raise SystemExit('bad box at %d in %s' % (off, path))
        if typ in (b'moov', b'trak', b'mdia'):
            walk(off + hdr, off + size)
        elif typ in (b'mvhd', b'tkhd', b'mdhd'):
            p = off + hdr
            if d[p] == 1:
                struct.pack_into('>QQ', d, p + 4, t, t)
            else:
                struct.pack_into('>II', d, p + 4, t, t)
            n += 1
        off += size
walk(0, len(d))
if n < 3:
    raise SystemExit('no mvhd/tkhd/mdhd found in %s' % path)
open(path, 'wb').write(d)
EOF
}

# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------
expect_eq() { [[ "$2" == "$3" ]] || die "$1: got '$2', expected '$3'"; }
expect_range() {
    awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN{exit !(v!="" && v+0>=lo && v+0<=hi)}' \
        || die "$1: got '$2', expected within [$3, $4]"
}
aval() { # FILE ENTRY -> value of one entry of the first audio stream
    ffprobe -v error -select_streams a:0 -show_entries "stream=$2" -of default=nw=1:nk=1 "$1" | head -n1
}
extradata_hex() { # FILE -> first audio stream's extradata as plain hex
    ffprobe -v error -select_streams a:0 -show_streams -show_data "$1" \
        | awk '/^extradata=/{on=1; next} on && /^[0-9a-f]+: /{print substr($0, 11, 40); next} {on=0}' \
        | tr -d ' \n'
}
audio_pts() { ffprobe -v error -select_streams a:0 -show_entries packet=pts -of csv=p=0 "$1"; }
# pts_jumps FILE FRAME -> "index_before pts_before pts_after step" for each
# audio packet step that is not FRAME samples.
pts_jumps() {
    audio_pts "$1" | awk -F, -v fr="$2" 'NR>1 && $1-p!=fr {print NR-2, p, $1, $1-p} {p=$1}'
}
# check NAME CODEC RATE CHANNELS TAG VIDEO(h264|-) : common assertions
check() {
    local n=$1 f
    f="$(partial "$n")"
    [[ -s "$f" ]] || die "$n was not written"
    ffprobe -v error -show_entries stream=codec_name -of csv=p=0 "$f" >/dev/null 2>"$WORK/probe.err" \
        || { cat "$WORK/probe.err" >&2; die "ffprobe cannot read $n"; }
    expect_eq "$n audio codec/rate/channels/tag" \
        "$(aval "$f" codec_name),$(aval "$f" sample_rate),$(aval "$f" channels),$(aval "$f" codec_tag_string)" \
        "$2,$3,$4,$5"
    expect_eq "$n streams" \
        "$(ffprobe -v error -show_entries stream=codec_name -of default=nw=1:nk=1 "$f" | grep . | sort | paste -sd, -)" \
        "$(printf '%s\n' "$2" "$6" | grep -v '^-$' | sort | paste -sd, -)"
    expect_range "$n size" "$(stat -c %s "$f")" 10000 1000000
    expect_range "$n duration" "$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$f")" 4 6
}

SOURCES_ROWS=()
row() { SOURCES_ROWS+=("$(printf '%s\t%s\t%s\t%s' "$@")"); }

# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------
gen_voaac() { # NAME MUXER
    local n=$1 f
    f="$(partial "$n")"
    gst_audio 48000 stereo
    "${GST[@]}" "${GST_VIDEO[@]}" \
        "${GST_AUDIO[@]}" '!' voaacenc bitrate=128000 '!' aacparse '!' queue '!' mux.audio_0 \
        "$2" name=mux '!' filesink location="$f"
    fix_qt_times "$f"
    check "$n" aac 48000 2 mp4a h264
    expect_eq "$n AudioSpecificConfig" "$(extradata_hex "$f")" "1190"
    expect_eq "$n first audio pts" "$(audio_pts "$f" | head -n1)" "0"
    expect_eq "$n audio steps" "$(pts_jumps "$f" 1024)" ""
    finish "$n"
    row "$n" "voaacenc 128 kb/s (GStreamer, VisualOn AAC-LC)" "$2 (GStreamer)" "video x264enc; ASC 1190 (2 bytes)"
}

gen_voaac_mono() {
    local n=voaac_44k_mono.m4a f
    f="$(partial $n)"
    gst_audio 44100 mono
    "${GST[@]}" "${GST_AUDIO[@]}" '!' voaacenc bitrate=64000 '!' aacparse '!' mp4mux '!' filesink location="$f"
    fix_qt_times "$f"
    check $n aac 44100 1 mp4a -
    expect_eq "$n AudioSpecificConfig" "$(extradata_hex "$f")" "1208"
    expect_eq "$n audio steps" "$(pts_jumps "$f" 1024)" ""
    finish $n
    row $n "voaacenc 64 kb/s (GStreamer)" "mp4mux (GStreamer)" "audio only; ASC 1208 (2 bytes)"
}

gen_lame() {
    # mp4mux accepts MPEG-1 Layer III (object type 0x6B in esds).
    local n=lame_mp3_44k.mp4 f
    f="$(partial $n)"
    gst_audio 44100 stereo
    "${GST[@]}" "${GST_VIDEO[@]}" \
        "${GST_AUDIO[@]}" '!' lamemp3enc target=bitrate bitrate=128 cbr=true '!' mpegaudioparse '!' queue '!' mux.audio_0 \
        mp4mux name=mux '!' filesink location="$f"
    fix_qt_times "$f"
    check $n mp3 44100 2 mp4a h264
    expect_eq "$n audio steps" "$(pts_jumps "$f" 1152)" ""
    finish $n
    row $n "lamemp3enc 128 kb/s CBR (GStreamer, LAME)" "mp4mux (GStreamer)" "video x264enc"
}

gen_twolame() {
    local n=twolame_mp2_48k.mov f hdr
    f="$(partial $n)"
    gst_audio 48000 stereo
    "${GST[@]}" "${GST_VIDEO[@]}" \
        "${GST_AUDIO[@]}" '!' twolamemp2enc bitrate=192 '!' mpegaudioparse '!' queue '!' mux.audio_0 \
        qtmux name=mux '!' filesink location="$f"
    fix_qt_times "$f"
    # qtmux labels Layer II as '.mp3', so FFmpeg says mp3; the data is Layer II.
    check $n mp3 48000 2 .mp3 h264
    hdr="$(ffprobe -v error -select_streams a:0 -read_intervals '%+#1' -show_packets -show_data "$f" \
        | awk '/^00000000: /{print $2; exit}')"
    expect_eq "$n first packet header (fffd = MPEG-1 Layer II)" "$hdr" "fffd"
    expect_eq "$n audio steps" "$(pts_jumps "$f" 1152)" ""
    finish $n
    row $n "twolamemp2enc 192 kb/s (GStreamer, TwoLAME, MPEG-1 Layer II)" "qtmux (GStreamer)" \
        "video x264enc; sample entry '.mp3' so ffprobe says codec mp3"
}

# PCM files are 4 s long and only s16 is stereo, to stay under 1 MB:
# 48 kHz s16 stereo / s24 mono / f32 mono = 768 / 576 / 768 KB of audio.
gen_qtmux_pcm() { # NAME GST_FORMAT LAYOUT CHANNELS CODEC TAG
    local n=$1 f
    f="$(partial "$n")"
    gst_audio 48000 "$3" 4
    "${GST[@]}" "${GST_VIDEO_4S[@]}" \
        "${GST_AUDIO[@]}" '!' "audio/x-raw,format=$2" '!' queue '!' mux.audio_0 \
        qtmux name=mux '!' filesink location="$f"
    fix_qt_times "$f"
    check "$n" "$5" 48000 "$4" "$6" h264
    expect_eq "$n bits_per_sample" "$(aval "$f" bits_per_sample)" "${2//[!0-9]/}"
    finish "$n"
    row "$n" "none (raw $2 $3 from GStreamer audioconvert)" "qtmux (GStreamer)" "video x264enc; 4 s; tag $6"
}

gen_ffmpeg_pcm() { # NAME LAYOUT CHANNELS CODEC TAG
    local n=$1 f
    f="$(partial "$n")"
    "${FF[@]}" -f lavfi -i "testsrc2=size=320x240:rate=25:duration=4" -i "$(wav 48000 "$2" 4)" \
        -map 0:v -map 1:a "${X264[@]}" -b:v 100k -c:a "$4" "${BITEXACT[@]}" "$f"
    check "$n" "$4" 48000 "$3" "$5" h264
    finish "$n"
    row "$n" "none ($4 $2, ffmpeg)" "mov (ffmpeg 5.1 libavformat)" "video libx264; 4 s; tag $5"
}

gen_ac3() {
    local n=ac3_48k_51.mp4 f
    f="$(partial $n)"
    gst_audio 48000 5.1
    "${GST[@]}" "${GST_VIDEO[@]}" \
        "${GST_AUDIO[@]}" '!' avenc_ac3 bitrate=384000 '!' ac3parse '!' queue '!' mux.audio_0 \
        mp4mux name=mux '!' filesink location="$f"
    fix_qt_times "$f"
    check $n ac3 48000 6 ac-3 h264
    expect_eq "$n audio steps" "$(pts_jumps "$f" 1536)" ""
    finish $n
    row $n "avenc_ac3 384 kb/s (libavcodec's AC-3 inside GStreamer)" "mp4mux (GStreamer, dac3)" "video x264enc; 5.1"
}

gen_dropout() {
    # Packets 100..123 (24 whole AAC frames, 512 ms) dropped; survivors keep
    # their timestamps, so packet 99 -> new packet 100 steps by 25*1024.
    local n=voaac_dropout.mp4 f
    f="$(partial $n)"
    "${FF[@]}" -i "$DIR/voaac_48k_stereo.mp4" -map 0 -c copy \
        -bsf:a 'noise=drop=between(n\,100\,123)' "${BITEXACT[@]}" "$f"
    check $n aac 48000 2 mp4a h264
    expect_eq "$n AudioSpecificConfig" "$(extradata_hex "$f")" "1190"
    expect_eq "$n audio steps" "$(pts_jumps "$f" 1024)" "99 101376 126976 25600"
    finish $n
    row $n "voaacenc (packets of voaac_48k_stereo.mp4, 100..123 dropped by noise bsf)" \
        "mov (ffmpeg 5.1, -c copy)" "hole of 24 frames: packet 99 pts 101376 -> 126976"
}

gen_oddgap() {
    # Audio packets from index 94 (pts 96256, just after 2.0 s) delayed by
    # 448 samples with the setts bsf: one step of 1024+448 = 1472 samples.
    local n=voaac_oddgap.mp4 f
    f="$(partial $n)"
    "${FF[@]}" -i "$DIR/voaac_48k_stereo.mp4" -map 0 -c copy \
        -bsf:a 'setts=ts=if(gte(N\,94)\,TS+448\,TS)' "${BITEXACT[@]}" "$f"
    check $n aac 48000 2 mp4a h264
    expect_eq "$n AudioSpecificConfig" "$(extradata_hex "$f")" "1190"
    expect_eq "$n audio steps" "$(pts_jumps "$f" 1024)" "93 95232 96704 1472"
    finish $n
    row $n "voaacenc (packets of voaac_48k_stereo.mp4, from #94 delayed 448 samples by setts bsf)" \
        "mov (ffmpeg 5.1, -c copy)" "gap of 1*1024+448 samples: packet 93 pts 95232 -> 96704"
}

# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------
log "generating encoder fixtures into $DIR"
gen_voaac voaac_48k_stereo.mp4 mp4mux
gen_voaac_mono
gen_voaac voaac_48k_stereo.mov qtmux
gen_lame
gen_twolame
gen_qtmux_pcm pcm_s16be_twos.mov S16BE stereo 2 pcm_s16be twos
gen_ffmpeg_pcm pcm_s24le_in24.mov mono 1 pcm_s24le in24
gen_ffmpeg_pcm pcm_f32le.mov mono 1 pcm_f32le fl32
gen_qtmux_pcm qtmux_pcm_s24le_sowt.mov S24LE mono 1 pcm_s24le sowt
gen_ac3
gen_dropout
gen_oddgap

f="$(partial SOURCES.txt)"
{
    echo "# Generated by Tests/Fixtures/make-encoder-audio.sh — do not edit."
    echo "# file<TAB>audio encoder<TAB>muxer<TAB>notes"
    printf '%s\n' "${SOURCES_ROWS[@]}"
    echo "#"
    echo "# ffprobe facts (first audio stream; extradata as hex)"
    for row in "${SOURCES_ROWS[@]}"; do
        n="${row%%$'\t'*}"
        printf '# %s: %s|extradata=%s\n' "$n" \
            "$(ffprobe -v error -select_streams a:0 -of compact=p=0 -show_entries \
                stream=codec_name,codec_tag_string,profile,sample_rate,channels,channel_layout,bits_per_sample,nb_frames,extradata_size \
                "$DIR/$n" | head -n1 | sed 's/|*$//')" \
            "$(extradata_hex "$DIR/$n")"
    done
} >"$f"
finish SOURCES.txt

printf '%s\n' "$SCRIPT_SHA" >"$STAMP.tmp"
mv -f "$STAMP.tmp" "$STAMP"
log "done in $((SECONDS - START_SECONDS)) s"
