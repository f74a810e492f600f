// System calls Swift cannot reach directly: prctl is variadic, memfd_create needs
// _GNU_SOURCE, and sigaction's handler is a union. Each returns what the call returns, with errno set by it.
#define _GNU_SOURCE
#include "csystem_shims.h"
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* sigaction(signal, SIG_IGN). */
static int blurfarm_ignore(int signal) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_IGN;
    sigemptyset(&action.sa_mask);
    return sigaction(signal, &action, NULL);
}

/* The descriptor the forwarding handler writes a signal's number to. */
static volatile int blurfarm_forward_fd = -1;

/* Async-signal-safe: one byte, the signal's number, to the pipe; errno kept. A full pipe
   (a flood of signals) drops the byte: the signal has been said already. */
static void blurfarm_forward(int signal) {
    int saved = errno;
    unsigned char byte = (unsigned char)signal;
    ssize_t written = write(blurfarm_forward_fd, &byte, 1);
    (void)written;
    errno = saved;
}

int blurfarm_forward_signals(int write_fd, int first, int second) {
    blurfarm_forward_fd = write_fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = blurfarm_forward;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(first, &action, NULL) != 0) return -1;
    return sigaction(second, &action, NULL);
}

int blurfarm_ignore_signals(int first, int second) {
    if (blurfarm_ignore(first) != 0) return -1;
    return blurfarm_ignore(second);
}

int blurfarm_ignore_sigpipe(void) {
    return blurfarm_ignore(SIGPIPE);
}

int blurfarm_thread_id(void) {
    return (int)gettid();
}

int blurfarm_ignore_sigxfsz(void) {
    return blurfarm_ignore(SIGXFSZ);
}

#if defined(__linux__)
#include <sys/mman.h>
#include <sys/prctl.h>

int blurfarm_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}

int blurfarm_memfd_create(const char *name) {
    return memfd_create(name, MFD_CLOEXEC);
}
#else
int blurfarm_set_parent_death_signal(int signal) {
    (void)signal;
    errno = ENOSYS;
    return -1;
}

int blurfarm_memfd_create(const char *name) {
    (void)name;
    errno = ENOSYS;
    return -1;
}
#endif

#include <spawn.h>

int blurfarm_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
#else
    (void)actions;
    (void)lowest;
    return ENOSYS;
#endif
}

#if defined(__GLIBC__)
#include <malloc.h>

int blurfarm_reuse_freed_memory(long bytes, int arenas) {
    /* mallopt returns 1 on success, 0 on error. One arena for a worker: a thread's own arena
       grows by heaps of at most 64 MiB, so an image's buffers made on the task thread would be
       mapped afresh whatever the thresholds. */
    return (arenas <= 0 || mallopt(M_ARENA_MAX, arenas)) && mallopt(M_MMAP_THRESHOLD, (int)bytes)
            && mallopt(M_TRIM_THRESHOLD, (int)bytes)
        ? 0 : -1;
}
#else
int blurfarm_reuse_freed_memory(long bytes, int arenas) {
    (void)bytes;
    (void)arenas;
    return 0;
}
#endif
