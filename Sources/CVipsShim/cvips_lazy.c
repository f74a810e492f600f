// libvips loaded on first use (dlopen), not linked: a process that reads or writes no image
// through libvips (a client, a coordinator of JPEGs, a worker of JPEGs) never pays for loading
// Debian's libvips and the hundred libraries it links (about 25 ms a process), and one that
// only names its version (`blurfarm-worker --libvips-version`) maps it without starting it.
// glib and gobject stay linked (about 1 ms). The shim's own calls go through cvips_lazy.h;
// the functions Swift calls are defined below, hidden (never exported, so never taking the
// place of libvips's own for libvips or its modules), each forwarding to libvips's.
#define _GNU_SOURCE
#define CVIPS_LAZY_DEFINITIONS
#include "cvips_lazy.h"
#include "cvips_shim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* The soname Debian's libvips-dev links against (libvips 8.x). */
#define CVIPS_LIBRARY "libvips.so.42"

static pthread_once_t cvips_open_once = PTHREAD_ONCE_INIT;
static pthread_once_t cvips_load_once = PTHREAD_ONCE_INIT;
/* The mapped library (cvips_open_now), and the one whose symbols are handed out: the mapped
 * one from its start on, NULL again if it did not start (cvips_load_now). */
static void *cvips_mapped;
static void *cvips_library;
static char cvips_open_failure[512];
static char cvips_load_failure[512];
/* Set on the thread loading libvips while it starts it: its calls look symbols up directly. */
static _Thread_local int cvips_starting;

static void cvips_open_now(void) {
    /* Global, as when linked: libvips's modules (HEIF, ...) resolve against it. */
    void *library = dlopen(CVIPS_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
    if (!library) {
        const char *reason = dlerror();
        snprintf(cvips_open_failure, sizeof cvips_open_failure, "cannot load %s: %s", CVIPS_LIBRARY,
                 reason ? reason : "dlopen failed");
        return;
    }
    cvips_mapped = library;
}

const char *cvips_version(void) {
    pthread_once(&cvips_open_once, cvips_open_now);
    const char *(*version)(void) =
        cvips_mapped ? (const char *(*)(void))dlsym(cvips_mapped, "vips_version_string") : NULL;
    return version ? version() : NULL;
}

const char *cvips_library_file(void) {
    pthread_once(&cvips_open_once, cvips_open_now);
    void *symbol = cvips_mapped ? dlsym(cvips_mapped, "vips_version_string") : NULL;
    Dl_info found;
    if (!symbol || !dladdr(symbol, &found) || !found.dli_fname) return NULL;
    return found.dli_fname;
}

static void cvips_load_now(void) {
    pthread_once(&cvips_open_once, cvips_open_now);
    if (!cvips_mapped) {
        snprintf(cvips_load_failure, sizeof cvips_load_failure, "%s", cvips_open_failure);
        return;
    }
    cvips_library = cvips_mapped;
    /* Started here, once, whichever call comes first: no libvips call runs before vips_init. */
    cvips_starting = 1;
    int started = cvips_start("blurfarm");
    if (started == 0) {
        /* Batch jobs must not hold memory between images: no operation cache. */
        vips_cache_set_max(0);
        cvips_silence_warnings();
    } else {
        const char *error = vips_error_buffer();
        snprintf(cvips_load_failure, sizeof cvips_load_failure, "libvips did not start: %s",
                 error && *error ? error : "vips_init failed");
        cvips_library = NULL;
    }
    cvips_starting = 0;
}

const char *cvips_load(void) {
    if (cvips_starting) return NULL;
    pthread_once(&cvips_load_once, cvips_load_now);
    return cvips_library ? NULL : cvips_load_failure;
}

void *cvips_symbol(const char *name) {
    const char *failure = cvips_load();
    if (failure) {
        fprintf(stderr, "blurfarm: %s\n", failure);
        abort();
    }
    void *found = dlsym(cvips_library, name);
    if (!found) {
        fprintf(stderr, "blurfarm: %s has no %s\n", CVIPS_LIBRARY, name);
        abort();
    }
    return found;
}

/* The libvips functions Swift calls, and vips_cache_set_max, which cvips_load_now calls (none is
 * variadic: Swift cannot call those). */
#define CVIPS_FORWARD(type, name, parameters, arguments) \
    __attribute__((visibility("hidden"))) type name parameters { return CVIPS_LAZY(name) arguments; }

CVIPS_FORWARD(void, vips_area_unref, (VipsArea *area), (area))
CVIPS_FORWARD(const void *, vips_blob_get, (VipsBlob *blob, size_t *length), (blob, length))
CVIPS_FORWARD(void, vips_cache_set_max, (int max), (max))
CVIPS_FORWARD(void, vips_concurrency_set, (int concurrency), (concurrency))
CVIPS_FORWARD(const char *, vips_error_buffer, (void), ())
CVIPS_FORWARD(char *, vips_error_buffer_copy, (void), ())
CVIPS_FORWARD(void, vips_error_clear, (void), ())
CVIPS_FORWARD(guint64, vips_format_sizeof, (VipsBandFormat format), (format))
CVIPS_FORWARD(VipsImage *, vips_image_copy_memory, (VipsImage *image), (image))
CVIPS_FORWARD(int, vips_image_get_bands, (const VipsImage *image), (image))
CVIPS_FORWARD(int, vips_image_get_blob, (const VipsImage *image, const char *name, const void **data, size_t *length),
              (image, name, data, length))
CVIPS_FORWARD(VipsBandFormat, vips_image_get_format, (const VipsImage *image), (image))
CVIPS_FORWARD(int, vips_image_get_height, (const VipsImage *image), (image))
CVIPS_FORWARD(int, vips_image_get_orientation, (VipsImage *image), (image))
CVIPS_FORWARD(int, vips_image_get_string, (const VipsImage *image, const char *name, const char **out), (image, name, out))
CVIPS_FORWARD(GType, vips_image_get_typeof, (const VipsImage *image, const char *name), (image, name))
CVIPS_FORWARD(int, vips_image_get_width, (const VipsImage *image), (image))
CVIPS_FORWARD(VipsInterpretation, vips_image_guess_interpretation, (const VipsImage *image), (image))
CVIPS_FORWARD(gboolean, vips_image_hasalpha, (VipsImage *image), (image))
CVIPS_FORWARD(VipsImage *, vips_image_new_from_memory,
              (const void *data, size_t size, int width, int height, int bands, VipsBandFormat format),
              (data, size, width, height, bands, format))
CVIPS_FORWARD(VipsImage *, vips_image_new_from_memory_copy,
              (const void *data, size_t size, int width, int height, int bands, VipsBandFormat format),
              (data, size, width, height, bands, format))
CVIPS_FORWARD(VipsImage *, vips_image_new_matrix_from_array, (int width, int height, const double *array, int size),
              (width, height, array, size))
CVIPS_FORWARD(void, vips_image_set_blob_copy, (VipsImage *image, const char *name, const void *data, size_t length),
              (image, name, data, length))
CVIPS_FORWARD(void, vips_image_set_int, (VipsImage *image, const char *name, int i), (image, name, i))
CVIPS_FORWARD(void *, vips_image_write_to_memory, (VipsImage *in, size_t *size), (in, size))
CVIPS_FORWARD(VipsRegion *, vips_region_new, (VipsImage *image), (image))
CVIPS_FORWARD(VipsTarget *, vips_target_new_to_memory, (void), ())
