#ifndef AVTOOL_CFFMPEGFILTER_SHIM_H
#define AVTOOL_CFFMPEGFILTER_SHIM_H

// libavfilter alone, for the one target that runs filter graphs (Loudness):
// every other target links without it.
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersrc.h>
#include <libavfilter/buffersink.h>

#endif
