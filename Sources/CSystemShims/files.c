// File calls Swift cannot reach directly: openat2 has no C library wrapper, and O_TMPFILE needs
// _GNU_SOURCE. Each returns what the call returns, with errno set by it.
#define _GNU_SOURCE
#include "csystem_shims.h"
#include <errno.h>
#include <string.h>

#if defined(__linux__)
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

int blurfarm_open_beneath(int folder, const char *path, int flags) {
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)(flags | O_CLOEXEC);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    return (int)syscall(SYS_openat2, folder, path, &how, sizeof how);
}

int blurfarm_open_unnamed_file(int folder) {
    return openat(folder, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
}
#else
int blurfarm_open_beneath(int folder, const char *path, int flags) {
    (void)folder; (void)path; (void)flags;
    errno = ENOSYS;
    return -1;
}

int blurfarm_open_unnamed_file(int folder) {
    (void)folder;
    errno = EOPNOTSUPP;
    return -1;
}
#endif
