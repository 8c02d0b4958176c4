#ifndef AVTOOL_CFFMPEG_LAZY_H
#define AVTOOL_CFFMPEG_LAZY_H

// FFmpeg's libraries loaded when one of their functions is first called
// (Trampolines.c), not when the program starts: a run that needs none of
// them (a bulk copy of an MP4's boxes) does not map them and the hundred
// libraries they need.

/// Whether any FFmpeg library has been loaded so far (tests, diagnostics).
int avtool_ffmpeg_loaded(void);

/// `av_log_set_level(level)` now if the libraries are loaded, else as soon
/// as they are: setting it does not load them.
void avtool_ffmpeg_set_log_level(int level);

#endif
