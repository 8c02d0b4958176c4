// Every function FFmpeg's libraries export (symbols.h) defined here as a
// trampoline: a jump through a slot that holds the library function's
// address once it is known. The first call of a function loads its library
// (dlopen, by soname: the libraries it needs come with it), looks the
// function up (dlsym) and stores it in the slot; later calls are one
// indirect jump. No signature is needed: the arguments (registers and
// stack, variadic ones too) are passed on as they came.
//
// The trampolines are hidden: the program's own calls reach them, the
// libraries' calls to one another do not. x86-64 only; elsewhere the
// libraries are linked as usual (Package.swift) and this file is empty.
#if defined(__x86_64__) && defined(__linux__)

#include "CFFmpegLazy.h"

#include <dlfcn.h>
#include <libavcodec/version.h>
#include <libavformat/version.h>
#include <libavutil/version.h>
#include <libswresample/version.h>
#include <libswscale/version.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct avtool_symbol {
    void *address;  // the slot: 0 until resolved (first, the trampolines read it)
    const char *name;
    int library;
};

static const char *const sonames[] = {
    "libavformat.so." AV_STRINGIFY(LIBAVFORMAT_VERSION_MAJOR),
    "libavcodec.so." AV_STRINGIFY(LIBAVCODEC_VERSION_MAJOR),
    "libavutil.so." AV_STRINGIFY(LIBAVUTIL_VERSION_MAJOR),
    "libswresample.so." AV_STRINGIFY(LIBSWRESAMPLE_VERSION_MAJOR),
    "libswscale.so." AV_STRINGIFY(LIBSWSCALE_VERSION_MAJOR),
};
static void *handles[5];
static int anyLoaded;
static pthread_mutex_t loading = PTHREAD_MUTEX_INITIALIZER;
// The log level asked before the libraries were loaded (INT32_MIN: none).
static int pendingLogLevel = INT32_MIN;

int avtool_ffmpeg_loaded(void) { return __atomic_load_n(&anyLoaded, __ATOMIC_ACQUIRE); }

// libavutil's av_log_set_level, found without a trampoline (the caller may hold `loading`).
static void setLogLevel(int level) {
    void *avutil = dlopen(sonames[2], RTLD_NOW | RTLD_GLOBAL);
    void (*set)(int) = avutil ? (void (*)(int))dlsym(avutil, "av_log_set_level") : NULL;
    if (set) set(level);
}

void avtool_ffmpeg_set_log_level(int level) {
    pthread_mutex_lock(&loading);
    if (anyLoaded) {
        setLogLevel(level);
    } else {
        pendingLogLevel = level;
    }
    pthread_mutex_unlock(&loading);
}

// Called by the slow path with the symbol's record; returns the address.
__attribute__((used, visibility("hidden"))) void *avtool_ffmpeg_resolve(struct avtool_symbol *symbol) {
    void *address = __atomic_load_n(&symbol->address, __ATOMIC_ACQUIRE);
    if (address) return address;
    pthread_mutex_lock(&loading);
    void *handle = handles[symbol->library];
    if (!handle) {
        handle = dlopen(sonames[symbol->library], RTLD_NOW | RTLD_GLOBAL);
        if (!handle) {
            fprintf(stderr, "avtool: could not load %s: %s\n", sonames[symbol->library], dlerror());
            exit(70);
        }
        handles[symbol->library] = handle;
        // Every library loads libavutil: the log level asked so far applies from the first call on.
        if (!anyLoaded && pendingLogLevel != INT32_MIN) setLogLevel(pendingLogLevel);
        __atomic_store_n(&anyLoaded, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&loading);
    address = dlsym(handle, symbol->name);
    if (!address) {
        fprintf(stderr, "avtool: %s has no function %s\n", sonames[symbol->library], symbol->name);
        exit(70);
    }
    __atomic_store_n(&symbol->address, address, __ATOMIC_RELEASE);
    return address;
}

// The slow path: %r11 holds the symbol's record. The argument registers
// (and %rax, the vector count of a variadic call) are kept across the
// lookup; the stack stays 16-byte aligned for the call.
__asm__(
    ".text\n"
    ".p2align 4\n"
    "avtool_ffmpeg_slow:\n"
    "    pushq %rdi\n pushq %rsi\n pushq %rdx\n pushq %rcx\n pushq %r8\n pushq %r9\n pushq %rax\n"
    "    subq $128, %rsp\n"
    "    movdqu %xmm0, 0(%rsp)\n movdqu %xmm1, 16(%rsp)\n movdqu %xmm2, 32(%rsp)\n movdqu %xmm3, 48(%rsp)\n"
    "    movdqu %xmm4, 64(%rsp)\n movdqu %xmm5, 80(%rsp)\n movdqu %xmm6, 96(%rsp)\n movdqu %xmm7, 112(%rsp)\n"
    "    movq %r11, %rdi\n"
    "    call avtool_ffmpeg_resolve\n"
    "    movq %rax, %r11\n"
    "    movdqu 0(%rsp), %xmm0\n movdqu 16(%rsp), %xmm1\n movdqu 32(%rsp), %xmm2\n movdqu 48(%rsp), %xmm3\n"
    "    movdqu 64(%rsp), %xmm4\n movdqu 80(%rsp), %xmm5\n movdqu 96(%rsp), %xmm6\n movdqu 112(%rsp), %xmm7\n"
    "    addq $128, %rsp\n"
    "    popq %rax\n popq %r9\n popq %r8\n popq %rcx\n popq %rdx\n popq %rsi\n popq %rdi\n"
    "    jmp *%r11\n");

#define SYMBOL(library, name)                                                                         \
    __attribute__((used)) static struct avtool_symbol avtool_symbol_##name = {0, #name, library};    \
    __asm__(".text\n"                                                                                 \
            ".globl " #name "\n"                                                                      \
            ".hidden " #name "\n"                                                                     \
            ".type " #name ", @function\n"                                                            \
            #name ":\n"                                                                               \
            "    movq avtool_symbol_" #name "(%rip), %r11\n"                                          \
            "    testq %r11, %r11\n"                                                                  \
            "    jz 1f\n"                                                                             \
            "    jmp *%r11\n"                                                                         \
            "1:  leaq avtool_symbol_" #name "(%rip), %r11\n"                                          \
            "    jmp avtool_ffmpeg_slow\n"                                                            \
            ".size " #name ", .-" #name "\n");
#include "symbols.h"

#else

#include "CFFmpegLazy.h"

#include <libavutil/log.h>

int avtool_ffmpeg_loaded(void) { return 1; }
void avtool_ffmpeg_set_log_level(int level) { av_log_set_level(level); }

#endif
