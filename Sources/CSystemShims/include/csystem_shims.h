#ifndef BLURFARM_CSYSTEM_SHIMS_H
#define BLURFARM_CSYSTEM_SHIMS_H

// fsetxattr and fgetxattr (the marker of blurfarm's temporary files), which Glibc's module
// does not export.
#include <sys/xattr.h>

// malloc_trim (the server gives freed memory back when a job ends), which Glibc's module does
// not export either.
#include <malloc.h>

/// 1 when this CPU runs the instruction set blurfarm's kernels were built for, else 0.
/// On x86-64 the kernels use AVX2 (x86-64-v3); a constructor in this library checks it before
/// any Swift code runs and exits with a clear message instead of dying of SIGILL.
int blurfarm_cpu_supported(void);

/// The CPU the kernels were built for: "x86-64-v3", or "baseline" (built with
/// BLURFARM_BASELINE_CPU, or not on x86-64). A static string.
const char *blurfarm_cpu_target(void);

/// Asks the kernel to send `signal` to this process when its parent thread exits
/// (`prctl(PR_SET_PDEATHSIG, signal)`; prctl is variadic, which Swift cannot call).
/// Returns 0, or -1 with errno set (ENOSYS off Linux).
int blurfarm_set_parent_death_signal(int signal);

/// Installs one handler for the signals `first` and `second` (`sigaction`, `SA_RESTART`) that
/// writes the signal's number, one byte, to `write_fd` (a non-blocking pipe's write end): a
/// thread reading the pipe then answers the signal outside the handler. Nothing is
/// allocated when a signal comes: no descriptor, no registration that can fail later.
/// Returns 0, or -1 with errno set.
int blurfarm_forward_signals(int write_fd, int first, int second);

/// `sigaction(first, SIG_IGN)` and `sigaction(second, SIG_IGN)`. Returns 0, or -1 with errno set.
int blurfarm_ignore_signals(int first, int second);

/// `sigaction(SIGPIPE, SIG_IGN)`: a write to a closed pipe fails with EPIPE instead of killing
/// the process. Returns 0, or -1 with errno set.
int blurfarm_ignore_sigpipe(void);

/// `gettid()`: the calling thread's id (glibc declares it only with _GNU_SOURCE). Never fails.
int blurfarm_thread_id(void);

/// `sigaction(SIGXFSZ, SIG_IGN)`: a write past the file-size limit (`ulimit -f`,
/// `RLIMIT_FSIZE`) fails with EFBIG ("File too large") instead of killing the process, so the
/// error is reported and the temporary file removed. Returns 0, or -1 with errno set.
int blurfarm_ignore_sigxfsz(void);

/// Makes malloc serve allocations up to `bytes` from its heaps and keep up to `bytes` freed at
/// their tops (mallopt M_MMAP_THRESHOLD and M_TRIM_THRESHOLD; glibc), instead of mapping each
/// large block afresh: the pages of one image's buffers serve the next without being faulted
/// in and zeroed again. `arenas` > 0 also caps the heaps (M_ARENA_MAX: 1 for a process whose
/// images are made on one thread, so that they share one heap); 0 leaves them to malloc (a
/// process of many threads). 0, or -1 when malloc refused.
int blurfarm_reuse_freed_memory(long bytes, int arenas);

/// The `bytes` both executables give ``blurfarm_reuse_freed_memory``: 256 MiB, a 16-megapixel
/// image's decode in `Float32` RGBA.
#define BLURFARM_REUSED_MEMORY (256L << 20)

/// `memfd_create(name, MFD_CLOEXEC)`: an anonymous file in memory, closed on exec.
/// Returns the descriptor, or -1 with errno set (ENOSYS off Linux).
int blurfarm_memfd_create(const char *name);

#include <spawn.h>

/// Adds to `actions` the closing of every descriptor from `lowest` up in the child
/// (`posix_spawn_file_actions_addclosefrom_np`, glibc 2.34): a worker inherits only the
/// descriptors dup2'd below `lowest`, never a listening socket, a queue database or a file
/// being written that was opened without close-on-exec. Returns 0, or an errno value (ENOSYS
/// where the C library lacks it).
int blurfarm_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

/// `openat2(folder, path, {flags, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS})` (Linux 5.6 on):
/// opens `path` relative to the open folder `folder` (O_CLOEXEC added to `flags`), failing with
/// EXDEV when resolving it would leave that folder (`..` above it, an absolute symbolic link, a
/// link leading outside) and ELOOP at a magic link (`/proc/self/fd/N`). Returns the descriptor,
/// or -1 with errno set (ENOSYS on an older kernel or off Linux).
int blurfarm_open_beneath(int folder, const char *path, int flags);

/// `openat(folder, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0666)`: a new file without a name in
/// the open folder `folder`, which `linkat` can give one later. Returns the descriptor, or -1
/// with errno set (EOPNOTSUPP, EISDIR or EINVAL where the file system has no such files).
int blurfarm_open_unnamed_file(int folder);

/// The folders the dynamic loader searches, in order, for a library this program loads by
/// name (dlinfo RTLD_DI_SERINFO: LD_LIBRARY_PATH's, the program's run path, the system's; the
/// loader's cache, /etc/ld.so.cache, is asked between the last two), each followed by a
/// newline; NULL when the loader cannot say. The caller frees it.
char *blurfarm_library_search_path(void);

#endif
