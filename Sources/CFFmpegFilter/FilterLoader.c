#include "CFFmpegFilter.h"

#include <dlfcn.h>
#include <pthread.h>

static void *library;
static const char *failure;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    library = dlopen("libavfilter.so." AV_STRINGIFY(LIBAVFILTER_VERSION_MAJOR), RTLD_NOW | RTLD_LOCAL);
    if (!library) failure = dlerror();
}

int avtool_filters_load(void) {
    pthread_once(&once, load);
    return library ? 0 : -1;
}

const char *avtool_filters_load_error(void) { return failure ? failure : "libavfilter could not be loaded"; }

// Each function's address looked up once (after avtool_filters_load succeeded);
// its type is the library function's own, from the header.
#define SYMBOL(name) \
    static __typeof__(&name) resolved_##name; \
    if (!resolved_##name) resolved_##name = (__typeof__(&name))dlsym(library, #name)

const AVFilter *avtool_avfilter_get_by_name(const char *name) {
    SYMBOL(avfilter_get_by_name);
    return resolved_avfilter_get_by_name(name);
}
AVFilterGraph *avtool_avfilter_graph_alloc(void) {
    SYMBOL(avfilter_graph_alloc);
    return resolved_avfilter_graph_alloc();
}
void avtool_avfilter_graph_free(AVFilterGraph **graph) {
    SYMBOL(avfilter_graph_free);
    resolved_avfilter_graph_free(graph);
}
AVFilterContext *avtool_avfilter_graph_alloc_filter(AVFilterGraph *graph, const AVFilter *filter, const char *name) {
    SYMBOL(avfilter_graph_alloc_filter);
    return resolved_avfilter_graph_alloc_filter(graph, filter, name);
}
int avtool_avfilter_init_str(AVFilterContext *ctx, const char *args) {
    SYMBOL(avfilter_init_str);
    return resolved_avfilter_init_str(ctx, args);
}
int avtool_avfilter_graph_create_filter(AVFilterContext **filt_ctx, const AVFilter *filt, const char *name,
                                        const char *args, void *opaque, AVFilterGraph *graph_ctx) {
    SYMBOL(avfilter_graph_create_filter);
    return resolved_avfilter_graph_create_filter(filt_ctx, filt, name, args, opaque, graph_ctx);
}
AVFilterInOut *avtool_avfilter_inout_alloc(void) {
    SYMBOL(avfilter_inout_alloc);
    return resolved_avfilter_inout_alloc();
}
void avtool_avfilter_inout_free(AVFilterInOut **inout) {
    SYMBOL(avfilter_inout_free);
    resolved_avfilter_inout_free(inout);
}
int avtool_avfilter_graph_parse_ptr(AVFilterGraph *graph, const char *filters, AVFilterInOut **inputs,
                                    AVFilterInOut **outputs, void *log_ctx) {
    SYMBOL(avfilter_graph_parse_ptr);
    return resolved_avfilter_graph_parse_ptr(graph, filters, inputs, outputs, log_ctx);
}
int avtool_avfilter_graph_config(AVFilterGraph *graph, void *log_ctx) {
    SYMBOL(avfilter_graph_config);
    return resolved_avfilter_graph_config(graph, log_ctx);
}
AVBufferSrcParameters *avtool_av_buffersrc_parameters_alloc(void) {
    SYMBOL(av_buffersrc_parameters_alloc);
    return resolved_av_buffersrc_parameters_alloc();
}
int avtool_av_buffersrc_parameters_set(AVFilterContext *ctx, AVBufferSrcParameters *param) {
    SYMBOL(av_buffersrc_parameters_set);
    return resolved_av_buffersrc_parameters_set(ctx, param);
}
int avtool_av_buffersrc_write_frame(AVFilterContext *ctx, const AVFrame *frame) {
    SYMBOL(av_buffersrc_write_frame);
    return resolved_av_buffersrc_write_frame(ctx, frame);
}
int avtool_av_buffersrc_add_frame(AVFilterContext *ctx, AVFrame *frame) {
    SYMBOL(av_buffersrc_add_frame);
    return resolved_av_buffersrc_add_frame(ctx, frame);
}
int avtool_av_buffersink_get_frame(AVFilterContext *ctx, AVFrame *frame) {
    SYMBOL(av_buffersink_get_frame);
    return resolved_av_buffersink_get_frame(ctx, frame);
}
AVRational avtool_av_buffersink_get_time_base(const AVFilterContext *ctx) {
    SYMBOL(av_buffersink_get_time_base);
    return resolved_av_buffersink_get_time_base(ctx);
}
