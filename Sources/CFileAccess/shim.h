#ifndef AVTOOL_CFILEACCESS_SHIM_H
#define AVTOOL_CFILEACCESS_SHIM_H

// The Linux file calls Swift cannot reach through Glibc: compound macros, and
// system calls glibc declares only under _GNU_SOURCE (`syscall` is variadic,
// which Swift cannot call). FileAccess wraps each once.
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>

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

// copy_file_range(2): the system call itself (-1 and errno on failure).
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

#endif
