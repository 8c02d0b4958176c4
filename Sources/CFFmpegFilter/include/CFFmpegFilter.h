#ifndef AVTOOL_CFFMPEGFILTER_H
#define AVTOOL_CFFMPEGFILTER_H

// libavfilter for the one target that runs filter graphs (Loudness), loaded
// when first needed (dlopen) rather than linked: the program would otherwise
// map it, and the libraries it pulls in, in every run (11 MiB more resident
// for a remux). Each avtool_ function forwards to libavfilter's function of
// the same name after the prefix.
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersrc.h>
#include <libavfilter/buffersink.h>

// Loads libavfilter (of the major version these headers are); 0 on success.
// Safe to call again. On failure, the loader's message.
int avtool_filters_load(void);
const char *avtool_filters_load_error(void);

const AVFilter *avtool_avfilter_get_by_name(const char *name);
AVFilterGraph *avtool_avfilter_graph_alloc(void);
void avtool_avfilter_graph_free(AVFilterGraph **graph);
AVFilterContext *avtool_avfilter_graph_alloc_filter(AVFilterGraph *graph, const AVFilter *filter, const char *name);
int avtool_avfilter_init_str(AVFilterContext *ctx, const char *args);
int avtool_avfilter_graph_create_filter(AVFilterContext **filt_ctx, const AVFilter *filt, const char *name,
                                        const char *args, void *opaque, AVFilterGraph *graph_ctx);
AVFilterInOut *avtool_avfilter_inout_alloc(void);
void avtool_avfilter_inout_free(AVFilterInOut **inout);
int avtool_avfilter_graph_parse_ptr(AVFilterGraph *graph, const char *filters, AVFilterInOut **inputs,
                                    AVFilterInOut **outputs, void *log_ctx);
int avtool_avfilter_graph_config(AVFilterGraph *graph, void *log_ctx);
AVBufferSrcParameters *avtool_av_buffersrc_parameters_alloc(void);
int avtool_av_buffersrc_parameters_set(AVFilterContext *ctx, AVBufferSrcParameters *param);
int avtool_av_buffersrc_write_frame(AVFilterContext *ctx, const AVFrame *frame);
int avtool_av_buffersrc_add_frame(AVFilterContext *ctx, AVFrame *frame);
int avtool_av_buffersink_get_frame(AVFilterContext *ctx, AVFrame *frame);
AVRational avtool_av_buffersink_get_time_base(const AVFilterContext *ctx);

#endif
