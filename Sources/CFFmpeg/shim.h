#ifndef AVTOOL_CFFMPEG_SHIM_H
#define AVTOOL_CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/display.h>
#include <libavutil/dovi_meta.h>
#include <libavutil/hdr_dynamic_metadata.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/error.h>
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/mathematics.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libavutil/samplefmt.h>
#include <libavutil/tx.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>
#include <malloc.h>

// Swift cannot import function-like or compound macros; these constants and
// helpers stand in for them.
static const int AVTOOL_AVERROR_EOF = AVERROR_EOF;
static const int AVTOOL_AVERROR_EXIT = AVERROR_EXIT;
static const int AVTOOL_AVERROR_INVALIDDATA = AVERROR_INVALIDDATA;
static const int AVTOOL_AVERROR_EAGAIN = AVERROR(EAGAIN);
static const int AVTOOL_AVERROR_ENOMEM = AVERROR(ENOMEM);
static const int AVTOOL_AVERROR_EINVAL = AVERROR(EINVAL);
static const int AVTOOL_AVERROR_ENOSPC = AVERROR(ENOSPC);
static const int AVTOOL_AVERROR_DECODER_NOT_FOUND = AVERROR_DECODER_NOT_FOUND;
static const int AVTOOL_AVERROR_ENCODER_NOT_FOUND = AVERROR_ENCODER_NOT_FOUND;
static const int AVTOOL_AVERROR_PATCHWELCOME = AVERROR_PATCHWELCOME;
static const int64_t AVTOOL_NOPTS_VALUE = AV_NOPTS_VALUE;
static const int AVTOOL_TIME_BASE = AV_TIME_BASE;
static inline int avtool_averror(int posix_errno) { return AVERROR(posix_errno); }

static inline uint32_t avtool_mktag(char a, char b, char c, char d) {
    return MKTAG(a, b, c, d);
}

#endif
