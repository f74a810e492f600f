// A libvips target that writes to an open file and keeps the errno of the call that failed;
// see include/cvips_shim.h.
#include "cvips_shim.h"
#include "cvips_lazy.h"

#include <errno.h>
#include <unistd.h>

/* The file behind a target, and the first call on it that failed: its errno (0: none) and name. */
typedef struct {
    int fd;
    int failed_errno;
    const char *failed_call;
} CvipsFile;

static const char *const cvips_file_key = "cvips-file";

/* Keeps errno as the failure of `call`, unless an earlier call failed. */
static void cvips_file_failed(CvipsFile *file, const char *call) {
    if (file->failed_errno) return;
    file->failed_errno = errno;
    file->failed_call = call;
}

static gint64 cvips_file_write(VipsTargetCustom *target, const void *data, gint64 length, CvipsFile *file) {
    (void)target;
    ssize_t written;
    while ((written = write(file->fd, data, (size_t)length)) < 0 && errno == EINTR) {}
    if (written < 0) cvips_file_failed(file, "write");
    return written;
}

static gint64 cvips_file_read(VipsTargetCustom *target, void *buffer, gint64 length, CvipsFile *file) {
    (void)target;
    ssize_t got;
    while ((got = read(file->fd, buffer, (size_t)length)) < 0 && errno == EINTR) {}
    if (got < 0) cvips_file_failed(file, "read");
    return got;
}

static gint64 cvips_file_seek(VipsTargetCustom *target, gint64 offset, int whence, CvipsFile *file) {
    (void)target;
    off_t at = lseek(file->fd, (off_t)offset, whence);
    if (at < 0) cvips_file_failed(file, "lseek");
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

const char *cvips_target_file_failure(VipsTarget *target, int *error) {
    CvipsFile *file = g_object_get_data(G_OBJECT(target), cvips_file_key);
    if (!file || !file->failed_errno) return NULL;
    *error = file->failed_errno;
    return file->failed_call;
}
