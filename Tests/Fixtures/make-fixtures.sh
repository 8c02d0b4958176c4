#!/usr/bin/env bash
# make-fixtures.sh — generate deterministic sample media for avtool tests.
#
# Usage: Tests/Fixtures/make-fixtures.sh [OUTDIR]
#   OUTDIR defaults to <repo>/.fixtures (repo = two levels above this script).
#
# Properties:
#   * Deterministic: every media file is produced by the `ffmpeg` program from
#     lavfi sources (testsrc2 / aevalsrc / sine / anoisesrc with a fixed seed)
#     with bitexact flags, single-threaded x264/x265 and fixed encoder
#     settings, so two runs with the same FFmpeg build give bit-identical files.
#   * Cached: OUTDIR/.stamp holds the sha256 of this script. If it matches
#     (and every fixture listed in MANIFEST.txt exists) the script exits 0
#     immediately. Editing this script invalidates the cache.
#   * Crash-safe: each file is written to OUTDIR/.partial.<name> and renamed
#     into place only when complete and verified; the stamp is written last.
#   * Self-checking: every media fixture is read back with ffprobe and the
#     property it exists for (VFR, rotation, late audio, gap, PTS wrap, ...)
#     is asserted; any failure aborts with a non-zero exit status.
set -euo pipefail

SCRIPT_PATH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
REPO_ROOT="$(cd "$(dirname "$SCRIPT_PATH")/../.." && pwd)"
OUTDIR="${1:-$REPO_ROOT/.fixtures}"

die() { echo "make-fixtures: ERROR: $*" >&2; exit 1; }
log() { echo "make-fixtures: $*" >&2; }

for tool in ffmpeg ffprobe sha256sum awk openssl; do
    command -v "$tool" >/dev/null 2>&1 || die "required program '$tool' not found"
done

mkdir -p "$OUTDIR"
OUTDIR="$(cd "$OUTDIR" && pwd)"

# Serialise concurrent invocations on the same OUTDIR (e.g. parallel tests).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$OUTDIR/.lock"
    flock 9
fi

SCRIPT_SHA="$(sha256sum "$SCRIPT_PATH" | awk '{print $1}')"
STAMP="$OUTDIR/.stamp"
MANIFEST="$OUTDIR/MANIFEST.txt"

cache_valid() {
    [[ -f "$STAMP" && -f "$MANIFEST" ]] || return 1
    [[ "$(cat "$STAMP")" == "$SCRIPT_SHA" ]] || return 1
    local name
    while read -r name _; do
        [[ -n "$name" && -e "$OUTDIR/$name" ]] || return 1
    done <"$MANIFEST"
    return 0
}

# Scenes for waveform auto-sync (own cache, own stamp).
"$(dirname "$SCRIPT_PATH")/make-sync-scenes.sh" "$OUTDIR"
# Audio from other encoders than libavcodec's (GStreamer, LAME, …; own cache, own stamp).
"$(dirname "$SCRIPT_PATH")/make-encoder-audio.sh" "$OUTDIR"

if cache_valid; then
    exit 0
fi

START_SECONDS=$SECONDS
rm -f "$STAMP"
rm -f "$OUTDIR"/.partial.*
WORK="$(mktemp -d "${TMPDIR:-/tmp}/avtool-fixtures.XXXXXX")"
trap 'rm -rf "$WORK"; rm -f "$OUTDIR"/.partial.*' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------------------
# Common ffmpeg settings
# ---------------------------------------------------------------------------
FF=(ffmpeg -hide_banner -loglevel error -nostdin -y)
# Output-side determinism flags (placed right before each output file).
BITEXACT=(-fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1 -map_chapters -1)
X264_PARAMS="keyint=60:min-keyint=60:scenecut=0:bframes=3:b-adapt=0:b-pyramid=normal:ref=3:threads=1:lookahead-threads=1:sliced-threads=0"
X264=(-c:v libx264 -preset veryfast -crf 26 -pix_fmt yuv420p -threads 1 -x264-params "$X264_PARAMS")
X265_PARAMS="log-level=error:pools=1:frame-threads=1:wpp=0:keyint=60:min-keyint=60:scenecut=0:bframes=3:b-adapt=0"
X265=(-c:v libx265 -preset veryfast -crf 30 -pix_fmt yuv420p -threads 1 -x265-params "$X265_PARAMS")
AAC=(-c:a aac -b:a 96k)
CREATION_TIME="2024-05-01T12:00:00.000000Z"

# lavfi sources: video_src WxH RATE DURATION ; stereo_src RATE DURATION ; mono_src RATE DURATION
video_src() { echo "testsrc2=size=$1:rate=$2:duration=$3"; }
# Two different tones L/R plus a little seeded noise (anoisesrc) mixed in.
stereo_src() {
    echo "aevalsrc=exprs='0.25*sin(2*PI*440*t)|0.25*sin(2*PI*660*t)':sample_rate=$1:duration=$2:nb_samples=1024[t];anoisesrc=sample_rate=$1:duration=$2:amplitude=0.02:color=pink:seed=42:nb_samples=1024,aformat=channel_layouts=stereo[n];[t][n]amix=inputs=2:duration=first:normalize=0"
}
mono_src() { echo "sine=frequency=1000:sample_rate=$1:duration=$2:samples_per_frame=1024"; }

partial() { echo "$OUTDIR/.partial.$1"; }
# finish NAME: move the partial file into place.
finish() { mv -f "$(partial "$1")" "$OUTDIR/$1"; }

# ---------------------------------------------------------------------------
# ffprobe helpers (all run on the partial file before it is moved into place)
# ---------------------------------------------------------------------------
probe_ok() { # FILE -> fails loudly if ffprobe cannot read it
    ffprobe -v error -show_entries stream=codec_name -of csv=p=0 "$1" >/dev/null 2>"$WORK/probe.err" \
        || { cat "$WORK/probe.err" >&2; die "ffprobe cannot read $1"; }
    [[ -z "$(ffprobe -v error -show_entries stream=codec_name -of csv=p=0 "$1")" ]] && die "no streams in $1"
    return 0
}
sval() { # FILE SELECT ENTRY -> value of stream entry for the first matching stream
    ffprobe -v error -select_streams "$2" -show_entries "stream=$3" -of default=nw=1:nk=1 "$1" | head -n1
}
stag() { # FILE SELECT TAG
    ffprobe -v error -select_streams "$2" -show_entries "stream_tags=$3" -of default=nw=1:nk=1 "$1" | head -n1
}
stream_list() { # FILE -> "index,codec_name,codec_type" per stream (MPEG-TS program entries de-duplicated)
    ffprobe -v error -show_entries stream=index,codec_name,codec_type -of csv=p=0 "$1" \
        | grep -E '^[0-9]+,' | sort -t, -k1,1n -u
}
codecs() { # FILE -> "h264,aac,..."
    stream_list "$1" | cut -d, -f2 | paste -sd, -
}
expect_eq() { # WHAT GOT WANT
    [[ "$2" == "$3" ]] || die "$1: got '$2', expected '$3'"
}
expect_range() { # WHAT VALUE MIN MAX
    awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN{exit !(v!="" && v+0>=lo && v+0<=hi)}' \
        || die "$1: got '$2', expected within [$3, $4]"
}
# Largest gap (seconds) between consecutive packet timestamps of a stream, sorted.
max_pts_gap() { # FILE SELECT
    ffprobe -v error -select_streams "$2" -show_entries packet=pts_time -of csv=p=0 "$1" \
        | grep -E '^-?[0-9]' | tr -d ',' | sort -g | awk 'NR>1{d=$1-p; if(d>m)m=d} {p=$1} END{printf "%.6f\n", m+0}'
}
# Number of distinct frame durations (from sorted pts) of a stream.
distinct_durations() { # FILE SELECT
    ffprobe -v error -select_streams "$2" -show_entries packet=pts_time -of csv=p=0 "$1" \
        | grep -E '^-?[0-9]' | tr -d ',' | sort -g | awk 'NR>1{d[sprintf("%.3f",$1-p)]=1} {p=$1} END{n=0; for(k in d)n++; print n}'
}

# ---------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------

# 1. H.264 with B-frames at exactly 30000/1001 + AAC 48 kHz stereo (priming
#    edit list), language/title/creation_time tags.
make_main_mp4() { # OUTFILE [extra output options...]
    local out="$1"; shift
    "${FF[@]}" \
        -f lavfi -i "$(video_src 640x360 30000/1001 10)" \
        -f lavfi -i "$(stereo_src 48000 10)" \
        -map 0:v -map 1:a "${X264[@]}" "${AAC[@]}" -ar 48000 -ac 2 \
        "${BITEXACT[@]}" \
        -metadata title="avtool fixture: H.264 B-frames 29.97 + AAC" \
        -metadata creation_time="$CREATION_TIME" \
        -metadata:s:v:0 language=eng -metadata:s:a:0 language=eng \
        "$@" "$out"
}
gen_main() {
    local n=h264_bframes_2997_aac48_stereo.mp4 f
    f="$(partial $n)"
    make_main_mp4 "$f" -movflags +faststart
    probe_ok "$f"
    expect_eq "$n codecs" "$(codecs "$f")" "h264,aac"
    expect_eq "$n r_frame_rate" "$(sval "$f" v:0 r_frame_rate)" "30000/1001"
    expect_eq "$n size" "$(sval "$f" v:0 width)x$(sval "$f" v:0 height)" "640x360"
    expect_range "$n has_b_frames" "$(sval "$f" v:0 has_b_frames)" 1 16
    expect_eq "$n audio rate" "$(sval "$f" a:0 sample_rate)" "48000"
    expect_eq "$n audio channels" "$(sval "$f" a:0 channels)" "2"
    expect_eq "$n v lang" "$(stag "$f" v:0 language)" "eng"
    expect_eq "$n a lang" "$(stag "$f" a:0 language)" "eng"
    expect_eq "$n creation_time" \
        "$(ffprobe -v error -show_entries format_tags=creation_time -of default=nw=1:nk=1 "$f")" "$CREATION_TIME"
    expect_range "$n duration" "$(sval "$f" v:0 duration)" 9.9 10.1
    finish $n
}

# 2. Truly variable frame rate H.264 (irregular ms timestamps) + AAC.
gen_vfr() {
    local ext n f
    for ext in mp4 mkv; do
        n=h264_vfr.$ext
        f="$(partial $n)"
        local -a extra=()
        [[ $ext == mp4 ]] && extra=(-video_track_timescale 1000)
        "${FF[@]}" \
            -f lavfi -i "testsrc2=size=640x360:rate=30,settb=1/1000,setpts='round((N/30+0.008*sin(N))*1000)'" \
            -f lavfi -i "$(stereo_src 48000 6)" \
            -map 0:v -map 1:a -t 6 -fps_mode passthrough -enc_time_base -1 \
            "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" \
            "${extra[@]}" "$f"
        probe_ok "$f"
        expect_eq "$n codecs" "$(codecs "$f")" "h264,aac"
        local nd; nd="$(distinct_durations "$f" v:0)"
        [[ "$nd" -ge 5 ]] || die "$n: expected variable frame durations, found only $nd distinct"
        finish $n
    done
}

# 3. 90° rotation display matrix.
#    In FFmpeg 5.1 the `rotate` stream metadata is only turned into a display
#    matrix (tkhd matrix) on the *stream-copy* path of the ffmpeg program, and
#    libavformat's movenc ignores it otherwise — so encode first, then remux.
gen_rotated() {
    local n=rotated90.mp4 f
    f="$(partial $n)"
    "${FF[@]}" \
        -f lavfi -i "$(video_src 640x360 30 5)" \
        -f lavfi -i "$(stereo_src 48000 5)" \
        -map 0:v -map 1:a "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" "$WORK/rot_src.mp4"
    "${FF[@]}" -i "$WORK/rot_src.mp4" -map 0 -c copy "${BITEXACT[@]}" \
        -metadata:s:v:0 rotate=90 "$f"
    probe_ok "$f"
    local rot
    rot="$(ffprobe -v error -select_streams v:0 -show_entries stream_side_data=rotation -of default=nw=1:nk=1 "$f" | head -n1)"
    [[ "$rot" == "-90" || "$rot" == "90" ]] || die "$n: expected Display Matrix rotation ±90, got '$rot'"
    ffprobe -v error -select_streams v:0 -show_entries stream_side_data=side_data_type -of default=nw=1:nk=1 "$f" \
        | grep -q "Display Matrix" || die "$n: no Display Matrix side data"
    finish $n
}

# 4. Odd dimensions (yuv444p allows odd width/height in x264). testsrc2 rounds
#    its size down to even numbers, so render 322x242 and crop.
gen_odd() {
    local n=odd_size_321x241.mp4 f
    f="$(partial $n)"
    "${FF[@]}" \
        -f lavfi -i "$(video_src 322x242 25 5),format=yuv444p,crop=321:241:0:0" \
        -f lavfi -i "$(stereo_src 48000 5)" \
        -map 0:v -map 1:a "${X264[@]}" -pix_fmt yuv444p -profile:v high444 "${AAC[@]}" "${BITEXACT[@]}" "$f"
    probe_ok "$f"
    expect_eq "$n size" "$(sval "$f" v:0 width)x$(sval "$f" v:0 height)" "321x241"
    expect_eq "$n pix_fmt" "$(sval "$f" v:0 pix_fmt)" "yuv444p"
    finish $n
}

# 5. Audio-only m4a.
gen_m4a() {
    local n f
    n=aac44_mono.m4a; f="$(partial $n)"
    "${FF[@]}" -f lavfi -i "$(mono_src 44100 6)" -c:a aac -b:a 64k -ar 44100 -ac 1 "${BITEXACT[@]}" "$f"
    probe_ok "$f"
    expect_eq "$n" "$(codecs "$f") $(sval "$f" a:0 sample_rate) $(sval "$f" a:0 channels)" "aac 44100 1"
    finish $n
    n=aac48_stereo.m4a; f="$(partial $n)"
    "${FF[@]}" -f lavfi -i "$(stereo_src 48000 6)" "${AAC[@]}" -ar 48000 -ac 2 "${BITEXACT[@]}" "$f"
    probe_ok "$f"
    expect_eq "$n" "$(codecs "$f") $(sval "$f" a:0 sample_rate) $(sval "$f" a:0 channels)" "aac 48000 2"
    finish $n
}

# 6. PCM audio in QuickTime MOV.
gen_pcm_mov() {
    local n=pcm_in_mov.mov f
    f="$(partial $n)"
    "${FF[@]}" \
        -f lavfi -i "$(video_src 640x360 25 5)" \
        -f lavfi -i "$(stereo_src 48000 5)" \
        -map 0:v -map 1:a "${X264[@]}" -c:a pcm_s16le -ar 48000 -ac 2 "${BITEXACT[@]}" "$f"
    probe_ok "$f"
    expect_eq "$n codecs" "$(codecs "$f")" "h264,pcm_s16le"
    expect_eq "$n format" "$(ffprobe -v error -show_entries format=format_name -of default=nw=1:nk=1 "$f")" "mov,mp4,m4a,3gp,3g2,mj2"
    finish $n
}

# 7. Audio track starts 0.5 s after the first video frame (empty edit).
gen_audio_late() {
    local n=audio_starts_late.mp4 f
    f="$(partial $n)"
    "${FF[@]}" \
        -f lavfi -i "$(video_src 640x360 25 6)" \
        -itsoffset 0.5 -f lavfi -i "$(stereo_src 48000 5.5)" \
        -map 0:v -map 1:a "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" "$f"
    probe_ok "$f"
    expect_range "$n video start_time" "$(sval "$f" v:0 start_time)" 0 0.001
    expect_range "$n audio start_time" "$(sval "$f" a:0 start_time)" 0.45 0.55
    finish $n
}

# 8. ~1 s hole in the audio (frames keep their original pts; no asetpts).
gen_audio_gap() {
    local ext n f gap
    for ext in mkv mp4; do
        n=audio_gap.$ext
        f="$(partial $n)"
        "${FF[@]}" \
            -f lavfi -i "$(video_src 640x360 25 6)" \
            -f lavfi -i "$(stereo_src 48000 6),aselect='not(between(t,3,4))'" \
            -map 0:v -map 1:a "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" "$f"
        probe_ok "$f"
        gap="$(max_pts_gap "$f" a:0)"
        expect_range "$n audio pts jump" "$gap" 0.9 1.2
        expect_range "$n video max frame gap" "$(max_pts_gap "$f" v:0)" 0.03 0.05
        finish $n
    done
}

# 9. Matroska with H.264 + AAC + SRT subtitles.
gen_mkv_subs() {
    local n=h264_aac.mkv f srt="$WORK/subs.srt"
    cat >"$srt" <<'EOF'
1
00:00:00,500 --> 00:00:02,000
Hello from avtool fixtures.

2
00:00:02,500 --> 00:00:04,000
Second subtitle line,
spanning two rows.

3
00:00:04,500 --> 00:00:05,500
Goodbye.
EOF
    f="$(partial $n)"
    "${FF[@]}" \
        -f lavfi -i "$(video_src 640x360 25 6)" \
        -f lavfi -i "$(stereo_src 48000 6)" \
        -i "$srt" \
        -map 0:v -map 1:a -map 2:s "${X264[@]}" "${AAC[@]}" -c:s srt "${BITEXACT[@]}" \
        -metadata:s:s:0 language=eng "$f"
    probe_ok "$f"
    expect_eq "$n codecs" "$(codecs "$f")" "h264,aac,subrip"
    finish $n
}

# 10. MPEG-TS whose 33-bit PTS/DTS wrap around ~5 s into a 10 s file.
#     2^33/90000 = 95443.7176 s; the mpegts muxer adds ~1.4 s of mux delay.
gen_ts_wrap() {
    local n=ts_wrap.ts f raw_max raw_min
    f="$(partial $n)"
    "${FF[@]}" \
        -f lavfi -i "$(video_src 640x360 25 10)" \
        -f lavfi -i "$(stereo_src 48000 10)" \
        -map 0:v -map 1:a "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" \
        -output_ts_offset 95437.3 "$f"
    probe_ok "$f"
    # Raw timestamps (libavformat's wrap correction disabled): the video DTS
    # must run up to just below 2^33 = 8589934592 and restart near 0.
    # (DTS rather than PTS: libavformat itself adds 2^33 to a PTS whose DTS is
    # still pre-wrap, so PTS values slightly above 2^33 show up even raw.)
    ffprobe -v error -correct_ts_overflow 0 -select_streams v:0 -show_entries packet=dts \
        -of csv=p=0 "$f" | grep -E '^[0-9]' | tr -d ',' | sort -g >"$WORK/ts_wrap.dts"
    raw_max="$(tail -n1 "$WORK/ts_wrap.dts")"
    raw_min="$(head -n1 "$WORK/ts_wrap.dts")"
    expect_range "$n raw max dts" "$raw_max" 8589000000 8589934591
    expect_range "$n raw min dts (after wrap)" "$raw_min" 0 900000
    # Corrected (unwrapped) timeline must be continuous.
    expect_range "$n unwrapped video max gap" "$(max_pts_gap "$f" v:0)" 0.03 0.05
    expect_range "$n unwrapped audio max gap" "$(max_pts_gap "$f" a:0)" 0.01 0.05
    finish $n
}

# 11. HEVC in MP4 (hvc1) and Matroska.
gen_hevc() {
    local n f
    n=hevc_aac.mp4; f="$(partial $n)"
    "${FF[@]}" \
        -f lavfi -i "$(video_src 640x360 25 5)" \
        -f lavfi -i "$(stereo_src 48000 5)" \
        -map 0:v -map 1:a "${X265[@]}" -tag:v hvc1 "${AAC[@]}" "${BITEXACT[@]}" "$f"
    probe_ok "$f"
    expect_eq "$n codecs" "$(codecs "$f")" "hevc,aac"
    expect_eq "$n tag" "$(sval "$f" v:0 codec_tag_string)" "hvc1"
    finish $n
    n=hevc.mkv; f="$(partial $n)"
    "${FF[@]}" -f lavfi -i "$(video_src 640x360 25 5)" "${X265[@]}" "${BITEXACT[@]}" "$f"
    probe_ok "$f"
    expect_eq "$n codecs" "$(codecs "$f")" "hevc"
    finish $n
}

# 11b. HDR10: 10-bit HEVC, BT.2020 / PQ, with mastering-display and
#      content-light SEI (as HDR cameras and grading tools write it) and
#      PCM audio, in MOV.
gen_hdr10() {
    local n=hdr10_pcm.mov f
    f="$(partial $n)"
    "${FF[@]}" \
        -f lavfi -i "$(video_src 640x360 25 2)" \
        -f lavfi -i "$(stereo_src 48000 2)" \
        -map 0:v -map 1:a -c:v libx265 -preset veryfast -crf 28 -pix_fmt yuv420p10le -threads 1 \
        -x265-params "$X265_PARAMS:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,50):max-cll=1000,400:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc" \
        -color_primaries bt2020 -color_trc smpte2084 -colorspace bt2020nc -tag:v hvc1 \
        -c:a pcm_s16le "${BITEXACT[@]}" "$f"
    probe_ok "$f"
    expect_eq "$n codecs" "$(codecs "$f")" "hevc,pcm_s16le"
    expect_eq "$n transfer" "$(sval "$f" v:0 color_transfer)" "smpte2084"
    expect_eq "$n pix_fmt" "$(sval "$f" v:0 pix_fmt)" "yuv420p10le"
    finish $n
}

# 11c. Click tracks for sync tests: video with a white frame at every whole
#      second, audio with a 10 ms 1 kHz beep at every whole second of the same
#      clock, recorded separately (VIDEO + AUDIO) with known offsets, gaps and
#      tails, and as segments. Tests find flashes and beep onsets in the
#      decoded output and compare them.
click_video_src() { # DURATION [START_SECONDS]
    local start=${2:-0}
    echo "color=c=black:s=320x240:r=25:d=$1,drawbox=x=0:y=0:w=iw:h=ih:color=white:t=fill:enable='eq(mod(n+$((start * 25))\,25)\,0)'"
}
click_audio_src() { # DURATION [CONTENT_START_SECONDS]
    local c=${2:-0}
    echo "aevalsrc='if(lt(mod(t+$c\,1)\,0.01)\,0.5*sin(2*PI*1000*(t+$c))\,0)':s=48000:d=$1:n=1024,aformat=channel_layouts=stereo"
}
gen_clicks() {
    local n f
    n=clicks_video.mp4; f="$(partial $n)"
    "${FF[@]}" -f lavfi -i "$(click_video_src 10)" "${X264[@]}" "${BITEXACT[@]}" "$f"
    probe_ok "$f"; expect_eq "$n codecs" "$(codecs "$f")" "h264"; finish $n

    n=clicks_audio.m4a; f="$(partial $n)"
    "${FF[@]}" -f lavfi -i "$(click_audio_src 10)" "${AAC[@]}" "${BITEXACT[@]}" "$f"
    probe_ok "$f"; finish $n

    # Started 0.25 s after the video: its t=0 is the video's 0.25 s.
    n=clicks_audio_late250.m4a; f="$(partial $n)"
    "${FF[@]}" -f lavfi -i "$(click_audio_src 9.75 0.25)" "${AAC[@]}" "${BITEXACT[@]}" "$f"
    probe_ok "$f"; finish $n

    # The microphone stopped for ~0.5 s (4.3 → 4.8 s), cut in 1000-sample
    # frames so the hole is not a whole number of AAC frames.
    n=clicks_audio_gap.m4a; f="$(partial $n)"
    "${FF[@]}" -f lavfi -i "$(click_audio_src 10),asetnsamples=n=1000,aselect='not(between(t,4.3,4.8))'" \
        "${AAC[@]}" "${BITEXACT[@]}" "$f"
    probe_ok "$f"
    expect_range "$n audio pts jump" "$(max_pts_gap "$f" a:0)" 0.45 0.6
    finish $n

    # The same as 16-bit PCM WAV (a field recorder).
    n=clicks_audio.wav; f="$(partial $n)"
    "${FF[@]}" -f lavfi -i "$(click_audio_src 10)" -c:a pcm_s16le "${BITEXACT[@]}" -f wav "$f"
    probe_ok "$f"; finish $n

    # Ends 1.5 s before the video.
    n=clicks_audio_short.m4a; f="$(partial $n)"
    "${FF[@]}" -f lavfi -i "$(click_audio_src 8.5)" "${AAC[@]}" "${BITEXACT[@]}" "$f"
    probe_ok "$f"; finish $n

    # One file with a hole of whole AAC frames in its audio (fill-silence can copy).
    n=clicks_av_gap.mp4; f="$(partial $n)"
    "${FF[@]}" -f lavfi -i "$(click_video_src 10)" \
        -f lavfi -i "$(click_audio_src 10),aselect='not(between(t,4.2,5.2))'" \
        -map 0:v -map 1:a "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" "$f"
    probe_ok "$f"
    expect_range "$n audio pts jump" "$(max_pts_gap "$f" a:0)" 0.9 1.1
    finish $n

    # Three segments of one recording (0–4 s, 4–7 s, 7–10 s): the second's
    # audio starts 0.1 s after its video, the third's timestamps start at 100 s.
    n=clicks_seg1.mp4; f="$(partial $n)"
    "${FF[@]}" -f lavfi -i "$(click_video_src 4 0)" -f lavfi -i "$(click_audio_src 4 0)" \
        -map 0:v -map 1:a "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" "$f"
    probe_ok "$f"; finish $n
    n=clicks_seg2.mp4; f="$(partial $n)"
    "${FF[@]}" -f lavfi -i "$(click_video_src 3 4)" -itsoffset 0.1 -f lavfi -i "$(click_audio_src 2.9 4.1)" \
        -map 0:v -map 1:a "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" "$f"
    probe_ok "$f"
    # Priming before a late start is kept as audio (FFmpeg's MP4 edit lists
    # skip it only at a track's start), so the stream starts 1024 samples early.
    expect_range "$n audio start_time" "$(sval "$f" a:0 start_time)" 0.07 0.11
    finish $n
    n=clicks_seg3.mkv; f="$(partial $n)"
    "${FF[@]}" -f lavfi -i "$(click_video_src 3 7)" -f lavfi -i "$(click_audio_src 3 7)" \
        -map 0:v -map 1:a "${X264[@]}" "${AAC[@]}" -output_ts_offset 100 "${BITEXACT[@]}" "$f"
    probe_ok "$f"
    expect_range "$n video start_time" "$(sval "$f" v:0 start_time)" 99.9 100.2
    finish $n
}

# 12. Ordinary MPEG-TS.
gen_ts() {
    local n=h264_aac.ts f
    f="$(partial $n)"
    "${FF[@]}" \
        -f lavfi -i "$(video_src 640x360 25 6)" \
        -f lavfi -i "$(stereo_src 48000 6)" \
        -map 0:v -map 1:a "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" "$f"
    probe_ok "$f"
    expect_eq "$n codecs" "$(codecs "$f")" "h264,aac"
    expect_range "$n start_time" "$(ffprobe -v error -show_entries format=start_time -of default=nw=1:nk=1 "$f")" 1.3 1.5
    finish $n
}

# 13. Garbage / broken inputs.
gen_broken() {
    local n f size
    n=text.mp4; f="$(partial $n)"
    printf '%s\n' "This is not a video file." "It is plain text with an .mp4 extension," \
        "used to test that avtool rejects non-media input cleanly." >"$f"
    finish $n

    n=random.mp4; f="$(partial $n)"
    # AES-256-CTR keystream with a fixed key/IV: deterministic pseudo-random bytes.
    head -c 65536 /dev/zero \
        | openssl enc -aes-256-ctr -nosalt \
            -K 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f \
            -iv 00000000000000000000000000000000 >"$f"
    [[ "$(stat -c %s "$f")" == 65536 ]] || die "$n: wrong size"
    finish $n

    n=empty.mp4; f="$(partial $n)"
    : >"$f"
    finish $n

    # Same encode as fixture 1 but moov at the end (x264/aac are deterministic,
    # so the media data is identical); cut it in half -> no moov at all.
    make_main_mp4 "$WORK/main_nofaststart.mp4"
    probe_ok "$WORK/main_nofaststart.mp4"
    n=truncated.mp4; f="$(partial $n)"
    size=$(stat -c %s "$WORK/main_nofaststart.mp4")
    head -c $((size / 2)) "$WORK/main_nofaststart.mp4" >"$f"
    if ffprobe -v error -show_entries stream=codec_name -of csv=p=0 "$f" >/dev/null 2>&1; then
        die "$n: ffprobe unexpectedly opened the truncated non-faststart file"
    fi
    finish $n

    n=truncated_faststart.mp4; f="$(partial $n)"
    size=$(stat -c %s "$OUTDIR/h264_bframes_2997_aac48_stereo.mp4")
    head -c $((size / 2)) "$OUTDIR/h264_bframes_2997_aac48_stereo.mp4" >"$f"
    probe_ok "$f"   # moov is present, so the header must still parse
    finish $n
}

# 14. Tags a recording carries: an iPhone-like MOV with QuickTime metadata keys
#     (mdta: location, make, model, software, creation date with its time
#     zone, the Live Photo content identifier) beside creation_time, handler
#     names and a language; an Android-like MP4 with com.android.version; a
#     Matroska file with a font attachment.
gen_tagged() {
    local n f
    n=iphone_tags.mov; f="$(partial $n)"
    "${FF[@]}" \
        -f lavfi -i "$(video_src 320x240 30 3)" \
        -f lavfi -i "$(stereo_src 48000 3)" \
        -map 0:v -map 1:a "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" -movflags use_metadata_tags \
        -metadata com.apple.quicktime.location.ISO6709="+37.3349-122.0090+030.000/" \
        -metadata com.apple.quicktime.make=Apple -metadata com.apple.quicktime.model="iPhone 15 Pro" \
        -metadata com.apple.quicktime.software=17.1.2 \
        -metadata com.apple.quicktime.creationdate="2024-05-01T14:00:00+0200" \
        -metadata com.apple.quicktime.content.identifier="6A1F1C2E-4B5D-4E6F-8A9B-0C1D2E3F4A5B" \
        -metadata creation_time="$CREATION_TIME" \
        -metadata:s:v:0 handler_name="Core Media Video" -metadata:s:a:0 handler_name="Core Media Audio" \
        -metadata:s:a:0 language=eng "$f"
    probe_ok "$f"
    expect_eq "$n model" "$(ffprobe -v error -show_entries format_tags=com.apple.quicktime.model -of default=nw=1:nk=1 "$f")" "iPhone 15 Pro"
    finish $n

    n=android_tags.mp4; f="$(partial $n)"
    "${FF[@]}" \
        -f lavfi -i "$(video_src 320x240 30 3)" \
        -f lavfi -i "$(stereo_src 48000 3)" \
        -map 0:v -map 1:a "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" -movflags use_metadata_tags \
        -metadata com.android.version=14 -metadata com.android.capture.fps=30.000000 \
        -metadata location="+48.8584+002.2945/" -metadata creation_time="$CREATION_TIME" "$f"
    probe_ok "$f"
    expect_eq "$n version" "$(ffprobe -v error -show_entries format_tags=com.android.version -of default=nw=1:nk=1 "$f")" "14"
    finish $n

    n=attachment.mkv; f="$(partial $n)"
    # A stand-in font file: fixed bytes, attached with a font MIME type.
    head -c 4096 /dev/zero | openssl enc -aes-256-ctr -nosalt \
        -K 1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100 \
        -iv 00000000000000000000000000000000 >"$WORK/font.ttf"
    "${FF[@]}" \
        -f lavfi -i "$(video_src 320x240 25 3)" \
        -f lavfi -i "$(stereo_src 48000 3)" \
        -map 0:v -map 1:a "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" \
        -attach "$WORK/font.ttf" -metadata:s:t:0 mimetype=application/x-truetype-font \
        -metadata:s:t:0 filename=font.ttf -metadata title="With a font" "$f"
    probe_ok "$f"
    expect_eq "$n streams" "$(ffprobe -v error -show_entries stream=codec_type -of csv=p=0 "$f" | paste -sd, -)" "video,audio,attachment"
    finish $n

    n=timecode.mov; f="$(partial $n)"
    "${FF[@]}" \
        -f lavfi -i "$(video_src 320x240 25 3)" \
        -f lavfi -i "$(stereo_src 48000 3)" \
        -map 0:v -map 1:a "${X264[@]}" "${AAC[@]}" "${BITEXACT[@]}" -timecode 10:00:00:00 "$f"
    probe_ok "$f"
    expect_eq "$n streams" "$(ffprobe -v error -show_entries stream=codec_type,codec_tag_string -of csv=p=0 "$f" | paste -sd, -)" "video,avc1,audio,mp4a,data,tmcd"
    finish $n
}

# ---------------------------------------------------------------------------
# Manifest (name + one-line description); also the list of expected files.
# ---------------------------------------------------------------------------
write_manifest() {
    cat >"$(partial MANIFEST.txt)" <<'EOF'
h264_bframes_2997_aac48_stereo.mp4 H.264 (x264, bf=3, keyint 60) 640x360 @ 30000/1001, 10 s + AAC 48 kHz stereo (priming edit list); eng language, title, creation_time; faststart
h264_vfr.mp4 Truly variable frame rate H.264 (irregular ms timestamps, ~30 fps +/- 8 ms jitter) + AAC 48 kHz stereo, 6 s, MP4 (timescale 1000)
h264_vfr.mkv Same VFR H.264 + AAC content in Matroska
rotated90.mp4 H.264 640x360 + AAC with a 90 degree Display Matrix (rotate=90), 5 s
odd_size_321x241.mp4 H.264 High 4:4:4 (yuv444p) 321x241 (odd width and height) + AAC, 5 s
aac44_mono.m4a AAC-LC 44.1 kHz mono (1 kHz sine), 6 s, audio only
aac48_stereo.m4a AAC-LC 48 kHz stereo (440/660 Hz + pink noise), 6 s, audio only
pcm_in_mov.mov H.264 + pcm_s16le 48 kHz stereo in QuickTime MOV, 5 s
audio_starts_late.mp4 H.264 + AAC; audio starts ~0.5 s after the first video frame (empty edit of 0.478 s + 1024 priming samples), 6 s
audio_gap.mkv H.264 + AAC with ~1 s of audio missing (pts jump 3.0 -> 4.0 s), continuous video, 6 s, Matroska
audio_gap.mp4 H.264 + AAC with ~1 s of audio missing (long sample before the hole), continuous video, 6 s, MP4
h264_aac.mkv H.264 + AAC + SRT (subrip, eng) subtitles in Matroska, 6 s
ts_wrap.ts MPEG-TS H.264 + AAC, 10 s; 33-bit PTS/DTS wrap around ~5 s into the file (raw DTS reach 2^33-1 then restart near 0)
hevc_aac.mp4 HEVC (x265, hvc1 tag) 640x360 + AAC in MP4, 5 s
hevc.mkv HEVC (x265) 640x360 video-only in Matroska, 5 s
h264_aac.ts Ordinary MPEG-TS H.264 + AAC, 6 s, starting at the muxer's usual 1.4 s offset
text.mp4 Plain text file with an .mp4 extension (not media)
random.mp4 64 KiB of deterministic pseudo-random bytes (AES-256-CTR keystream, fixed key)
empty.mp4 Zero-byte file
truncated.mp4 First 50% of a non-faststart copy of h264_bframes_2997_aac48_stereo.mp4 (moov missing)
truncated_faststart.mp4 First 50% of h264_bframes_2997_aac48_stereo.mp4 (faststart: moov present, mdat cut)
iphone_tags.mov H.264 + AAC MOV with QuickTime metadata keys as an iPhone writes them (location, make, model, software, creationdate, content.identifier), handler names, eng audio, 3 s
android_tags.mp4 H.264 + AAC MP4 with com.android.version and com.android.capture.fps keys, location, 3 s
attachment.mkv H.264 + AAC Matroska with a 4 KiB font attachment (application/x-truetype-font), 3 s
timecode.mov H.264 + AAC MOV with a QuickTime timecode track (tmcd) starting at 10:00:00:00, 3 s
EOF
}

print_table() {
    local name rest size streams
    printf '%-36s %10s  %s\n' NAME BYTES STREAMS
    while read -r name rest; do
        size=$(stat -c %s "$OUTDIR/$name")
        streams="$(stream_list "$OUTDIR/$name" 2>/dev/null \
            | awk -F, '{printf "%s%s:%s", (NR>1?" ":""), $3, $2}')" || true
        printf '%-36s %10s  %s\n' "$name" "$size" "${streams:--}"
    done <"$MANIFEST"
}

# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------
log "generating fixtures into $OUTDIR"
gen_main
gen_vfr
gen_rotated
gen_odd
gen_m4a
gen_pcm_mov
gen_audio_late
gen_audio_gap
gen_mkv_subs
gen_ts_wrap
gen_hevc
gen_hdr10
gen_clicks
gen_ts
gen_broken
gen_tagged
write_manifest
finish MANIFEST.txt

# Every manifest entry must exist.
while read -r name _; do
    [[ -e "$OUTDIR/$name" ]] || die "missing fixture $name"
done <"$MANIFEST"

print_table
printf '%s\n' "$SCRIPT_SHA" >"$STAMP.tmp"
mv -f "$STAMP.tmp" "$STAMP"
log "done in $((SECONDS - START_SECONDS)) s"
