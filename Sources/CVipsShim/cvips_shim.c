// Fixed-argument wrappers around variadic libvips calls; see include/cvips_shim.h.
#define _GNU_SOURCE
#include "cvips_shim.h"
#include "cvips_lazy.h"

#include <dlfcn.h>
#include <gmodule.h>
#include <string.h>

/* How strict every load is: a decoder's warning (libjpeg's "Corrupt JPEG data: ...", a
 * truncated file) fails the load, as sharp does by default. Decoders that only warn would
 * otherwise give a partly grey image and success. */
#define CVIPS_FAIL_ON VIPS_FAIL_ON_WARNING

/* The prefix libvips is started with when the user set none: a folder that does not exist,
 * so that vips_init finds no modules to load. */
#define CVIPS_NO_MODULES_PREFIX "/nonexistent/blurfarm-vips-modules-on-demand"

static GOnce cvips_modules_once = G_ONCE_INIT;
/* Whether vips_init loaded the modules itself (the user's VIPSHOME). */
static gboolean cvips_modules_at_start = FALSE;

int cvips_start(const char *argv0) {
    if (g_getenv("VIPSHOME")) {
        cvips_modules_at_start = TRUE;
        return vips_init(argv0);
    }
    g_setenv("VIPSHOME", CVIPS_NO_MODULES_PREFIX, TRUE);
    int result = vips_init(argv0);
    g_unsetenv("VIPSHOME");
    return result;
}

static gint cvips_compare_names(gconstpointer a, gconstpointer b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static gpointer cvips_load_modules_now(gpointer unused) {
    (void)unused;
    if (cvips_modules_at_start) return NULL;
    Dl_info library;
    // vips_init is libvips's own function here (cvips_lazy.h's lookup), so this names its file.
    if (!dladdr((void *)vips_init, &library) || !library.dli_fname) return NULL;
    char *folder = g_path_get_dirname(library.dli_fname);
    char *modules = g_strdup_printf("%s/vips-modules-%d.%d", folder, vips_version(0), vips_version(1));
    g_free(folder);
    GDir *dir = g_dir_open(modules, 0, NULL);
    if (dir) {
        GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
        const char *name;
        while ((name = g_dir_read_name(dir)))
            if (g_str_has_suffix(name, "." G_MODULE_SUFFIX)) g_ptr_array_add(names, g_strdup(name));
        g_dir_close(dir);
        g_ptr_array_sort(names, cvips_compare_names);
        for (guint i = 0; i < names->len; i++) {
            char *path = g_build_filename(modules, (const char *)g_ptr_array_index(names, i), NULL);
            /* The module registers its types in g_module_check_init and makes itself resident:
             * never unloaded, as libvips does. */
            g_module_open(path, G_MODULE_BIND_LAZY);
            g_free(path);
        }
        g_ptr_array_free(names, TRUE);
    }
    g_free(modules);
    return NULL;
}

void cvips_load_modules(void) {
    g_once(&cvips_modules_once, cvips_load_modules_now, NULL);
}

/* Whether the modules are (being) loaded: a load that fails before they are is tried again
 * after loading them. */
static gboolean cvips_modules_loaded(void) {
    return cvips_modules_at_start || g_atomic_int_get((gint *)&cvips_modules_once.status) != G_ONCE_STATUS_NOTCALLED;
}

/* Returns `attempt` (of `type`) and, when it failed (`failed`, an expression of `result`) while
 * the modules were not loaded, loads them and returns it tried again: the error then is what
 * libvips with every module says. */
#define CVIPS_WITH_MODULES(type, attempt, failed)                                               \
    do {                                                                                        \
        gboolean had_modules = cvips_modules_loaded();                                          \
        type result = (attempt);                                                                \
        if ((failed) && !had_modules) {                                                         \
            cvips_load_modules();                                                               \
            vips_error_clear();                                                                 \
            result = (attempt);                                                                 \
        }                                                                                       \
        return result;                                                                          \
    } while (0)

static const char *cvips_find_load_class(const char *path) {
    CVIPS_WITH_MODULES(const char *, vips_foreign_find_load(path), result == NULL);
}

const char *cvips_find_load(const char *path) {
    const char *name = cvips_find_load_class(path);
    if (name == NULL) return NULL;
    /* The search answers with the class's name, which vips_call looks for among every class
     * (vips_type_find); its nickname is one look-up in libvips's table of nicknames, unless it is
     * shared, when the class's name stays. */
    GType type = g_type_from_name(name);
    const char *nickname = type ? vips_nickname_find(type) : NULL;
    return nickname != NULL && vips_type_find("VipsOperation", nickname) == type ? nickname : name;
}

int cvips_load_file(const char *loader, const char *path, int sequential, VipsImage **out) {
    VipsAccess access = sequential ? VIPS_ACCESS_SEQUENTIAL : VIPS_ACCESS_RANDOM;
    return vips_call(loader, path, out, "access", access, "fail_on", CVIPS_FAIL_ON, NULL);
}

static int cvips_load_buffer_once(const void *buf, size_t len, VipsImage **out) {
    *out = vips_image_new_from_buffer(buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL,
                                      "fail_on", CVIPS_FAIL_ON, NULL);
    return *out ? 0 : -1;
}

int cvips_load_buffer(const void *buf, size_t len, VipsImage **out) {
    CVIPS_WITH_MODULES(int, cvips_load_buffer_once(buf, len, out), result != 0);
}

int cvips_autorot(VipsImage *in, VipsImage **out) {
    return vips_autorot(in, out, NULL);
}

int cvips_thumbnail_file(const char *path, int width, int height, VipsImage **out) {
    CVIPS_WITH_MODULES(int, vips_thumbnail(path, out, width, "height", height, "size", VIPS_SIZE_FORCE,
                                           "fail_on", CVIPS_FAIL_ON, NULL), result != 0);
}

int cvips_thumbnail_image(VipsImage *in, int width, int height, VipsImage **out) {
    return vips_thumbnail_image(in, out, width, "height", height, "size", VIPS_SIZE_FORCE, NULL);
}

int cvips_thumbnail_image_smartcrop(VipsImage *in, int width, int height, VipsInteresting interesting,
                                    VipsImage **out) {
    return vips_thumbnail_image(in, out, width, "height", height, "crop", interesting, NULL);
}

int cvips_thumbnail_file_smartcrop(const char *path, int width, int height, VipsInteresting interesting,
                                   VipsImage **out) {
    CVIPS_WITH_MODULES(int, vips_thumbnail(path, out, width, "height", height, "crop", interesting,
                                           "fail_on", CVIPS_FAIL_ON, NULL), result != 0);
}

int cvips_resize(VipsImage *in, double hscale, double vscale, VipsImage **out) {
    return vips_resize(in, out, hscale, "vscale", vscale, NULL);
}

int cvips_premultiply(VipsImage *in, double max_alpha, VipsImage **out) {
    return vips_premultiply(in, out, "max_alpha", max_alpha, NULL);
}

int cvips_unpremultiply(VipsImage *in, double max_alpha, VipsImage **out) {
    return vips_unpremultiply(in, out, "max_alpha", max_alpha, NULL);
}

int cvips_extract_area(VipsImage *in, int left, int top, int width, int height, VipsImage **out) {
    return vips_extract_area(in, out, left, top, width, height, NULL);
}

int cvips_smartcrop(VipsImage *in, int width, int height, VipsInteresting interesting, VipsImage **out) {
    return vips_smartcrop(in, out, width, height, "interesting", interesting, NULL);
}

int cvips_sharpen(VipsImage *in, double sigma, VipsImage **out) {
    return vips_sharpen(in, out, "sigma", sigma, NULL);
}

int cvips_icc_transform_to_srgb(VipsImage *in, int depth, VipsImage **out) {
    return vips_icc_transform(in, out, "srgb", "embedded", TRUE, "depth", depth,
                              "intent", VIPS_INTENT_RELATIVE, NULL);
}

int cvips_colourspace(VipsImage *in, VipsInterpretation space,
                      VipsInterpretation source_space, VipsImage **out) {
    return vips_colourspace(in, out, space, "source_space", source_space, NULL);
}

int cvips_extract_bands(VipsImage *in, int first, int n, VipsImage **out) {
    return vips_extract_band(in, out, first, "n", n, NULL);
}

int cvips_set_interpretation(VipsImage *in, VipsInterpretation space, VipsImage **out) {
    return vips_copy(in, out, "interpretation", space, NULL);
}

int cvips_cast(VipsImage *in, VipsBandFormat format, VipsImage **out) {
    return vips_cast(in, out, format, NULL);
}

int cvips_profile_load(const char *name, VipsBlob **out) {
    return vips_profile_load(name, out, NULL);
}

int cvips_jpegsave_target(VipsImage *in, VipsTarget *target, int quality, int interlace,
                          VipsForeignSubsample subsample, int optimize_coding, int restart_interval) {
    return vips_jpegsave_target(in, target, "Q", quality, "interlace", interlace ? TRUE : FALSE,
                                "subsample_mode", subsample, "optimize_coding", optimize_coding ? TRUE : FALSE,
                                "restart_interval", restart_interval, NULL);
}

int cvips_pngsave_target(VipsImage *in, VipsTarget *target) {
    return vips_pngsave_target(in, target, NULL);
}

int cvips_webpsave_target(VipsImage *in, VipsTarget *target, int quality, int lossless, int effort) {
    return vips_webpsave_target(in, target, "Q", quality, "lossless", lossless ? TRUE : FALSE, "effort", effort,
                                NULL);
}

int cvips_tiffsave_target(VipsImage *in, VipsTarget *target) {
    return vips_tiffsave_target(in, target, "compression", VIPS_FOREIGN_TIFF_COMPRESSION_DEFLATE,
                                "predictor", VIPS_FOREIGN_TIFF_PREDICTOR_HORIZONTAL, NULL);
}

int cvips_avifsave_target(VipsImage *in, VipsTarget *target, int quality, int effort) {
    cvips_load_modules(); /* heifsave is a module's */
    return vips_heifsave_target(in, target, "Q", quality, "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1,
                                "bitdepth", 8, "effort", effort, NULL);
}

int cvips_target_blob(VipsTarget *target, VipsBlob **out) {
    *out = NULL;
    g_object_get(target, "blob", out, NULL);
    return *out ? 0 : -1;
}

int cvips_gaussblur(VipsImage *in, double sigma, VipsPrecision precision, VipsImage **out) {
    return vips_gaussblur(in, out, sigma, "precision", precision, NULL);
}

int cvips_conv(VipsImage *in, VipsImage *mask, VipsPrecision precision, VipsImage **out) {
    return vips_conv(in, out, mask, "precision", precision, NULL);
}

static void cvips_drop_message(const gchar *domain, GLogLevelFlags level, const gchar *message,
                               gpointer data) {
    (void)domain; (void)level; (void)message; (void)data;
}

void cvips_silence_warnings(void) {
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO,
                      cvips_drop_message, NULL);
}
