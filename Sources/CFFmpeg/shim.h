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
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>

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
// An unnamed file in a directory (Linux); 0 where the headers lack it.
#if defined(O_TMPFILE)
static const int AVTOOL_O_TMPFILE = O_TMPFILE;
#elif defined(__O_TMPFILE)
static const int AVTOOL_O_TMPFILE = __O_TMPFILE;
#else
static const int AVTOOL_O_TMPFILE = 0;
#endif
// A descriptor for lookups only (Linux): a directory one may write into but not list.
#if defined(O_PATH)
static const int AVTOOL_O_PATH = O_PATH;
#else
static const int AVTOOL_O_PATH = 010000000;
#endif

static inline int avtool_averror(int posix_errno) { return AVERROR(posix_errno); }

// copy_file_range(2), which glibc declares only under _GNU_SOURCE: the
// system call itself (-1 and errno on failure).
static inline long avtool_copy_file_range(int fd_in, long long *off_in, int fd_out, long long *off_out,
                                          size_t len) {
    return syscall(SYS_copy_file_range, fd_in, off_in, fd_out, off_out, len, 0u);
}

// fallocate(2) with FALLOC_FL_KEEP_SIZE: blocks reserved for `len` bytes
// from `offset` without changing the file's size (-1 and errno on failure,
// EOPNOTSUPP where the filesystem cannot).
static inline int avtool_reserve_blocks(int fd, long long offset, long long len) {
    return (int)syscall(SYS_fallocate, fd, 1 /* FALLOC_FL_KEEP_SIZE */, offset, len);
}

static inline uint32_t avtool_mktag(char a, char b, char c, char d) {
    return MKTAG(a, b, c, d);
}

#endif
