// A libvips target that writes to an open file and keeps the errno of the call that failed;
// see include/cvips_shim.h.
#include "cvips_shim.h"

#include <errno.h>
#include <unistd.h>

/* The file behind a target and the first errno a call on it failed with (0: none). */
typedef struct {
    int fd;
    int failed_errno;
} CvipsFile;

static const char *const cvips_file_key = "cvips-file";

static gint64 cvips_file_write(VipsTargetCustom *target, const void *data, gint64 length, CvipsFile *file) {
    (void)target;
    for (;;) {
        ssize_t written = write(file->fd, data, (size_t)length);
        if (written >= 0) return written;
        if (errno != EINTR) {
            if (!file->failed_errno) file->failed_errno = errno;
            return -1;
        }
    }
}

static gint64 cvips_file_read(VipsTargetCustom *target, void *buffer, gint64 length, CvipsFile *file) {
    (void)target;
    for (;;) {
        ssize_t got = read(file->fd, buffer, (size_t)length);
        if (got >= 0) return got;
        if (errno != EINTR) {
            if (!file->failed_errno) file->failed_errno = errno;
            return -1;
        }
    }
}

static gint64 cvips_file_seek(VipsTargetCustom *target, gint64 offset, int whence, CvipsFile *file) {
    (void)target;
    off_t at = lseek(file->fd, (off_t)offset, whence);
    if (at < 0 && !file->failed_errno) file->failed_errno = errno;
    return at;
}

static int cvips_file_end(VipsTargetCustom *target, CvipsFile *file) {
    (void)target;
    (void)file;
    return 0;
}

VipsTarget *cvips_target_new_to_file(int fd) {
    VipsTargetCustom *target = vips_target_custom_new();
    CvipsFile *file = g_new0(CvipsFile, 1);
    file->fd = fd;
    g_object_set_data_full(G_OBJECT(target), cvips_file_key, file, g_free);
    g_signal_connect(target, "write", G_CALLBACK(cvips_file_write), file);
    g_signal_connect(target, "read", G_CALLBACK(cvips_file_read), file);
    g_signal_connect(target, "seek", G_CALLBACK(cvips_file_seek), file);
    g_signal_connect(target, "end", G_CALLBACK(cvips_file_end), file);
    return VIPS_TARGET(target);
}

int cvips_target_file_errno(VipsTarget *target) {
    CvipsFile *file = g_object_get_data(G_OBJECT(target), cvips_file_key);
    return file ? file->failed_errno : 0;
}
