// Fixed-argument wrappers around variadic libvips calls; see include/cvips_shim.h.
#include "cvips_shim.h"

/* How strict every load is: a decoder's warning (libjpeg's "Corrupt JPEG data: ...", a
 * truncated file) fails the load, as sharp does by default. Decoders that only warn would
 * otherwise give a partly grey image and success. */
#define CVIPS_FAIL_ON VIPS_FAIL_ON_WARNING

int cvips_load_file(const char *path, int sequential, VipsImage **out) {
    VipsAccess access = sequential ? VIPS_ACCESS_SEQUENTIAL : VIPS_ACCESS_RANDOM;
    *out = vips_image_new_from_file(path, "access", access, "fail_on", CVIPS_FAIL_ON, NULL);
    return *out ? 0 : -1;
}

int cvips_load_buffer(const void *buf, size_t len, VipsImage **out) {
    *out = vips_image_new_from_buffer(buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL,
                                      "fail_on", CVIPS_FAIL_ON, NULL);
    return *out ? 0 : -1;
}

int cvips_autorot(VipsImage *in, VipsImage **out) {
    return vips_autorot(in, out, NULL);
}

int cvips_thumbnail_file(const char *path, int width, int height, VipsImage **out) {
    return vips_thumbnail(path, out, width, "height", height, "size", VIPS_SIZE_FORCE,
                          "fail_on", CVIPS_FAIL_ON, NULL);
}

int cvips_thumbnail_file_smartcrop(const char *path, int width, int height, VipsInteresting interesting,
                                   VipsImage **out) {
    return vips_thumbnail(path, out, width, "height", height, "crop", interesting,
                          "fail_on", CVIPS_FAIL_ON, NULL);
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
                          VipsForeignSubsample subsample) {
    return vips_jpegsave_target(in, target, "Q", quality, "interlace", interlace ? TRUE : FALSE,
                                "subsample_mode", subsample, NULL);
}

int cvips_pngsave_target(VipsImage *in, VipsTarget *target) {
    return vips_pngsave_target(in, target, NULL);
}

int cvips_webpsave_target(VipsImage *in, VipsTarget *target, int quality, int lossless) {
    return vips_webpsave_target(in, target, "Q", quality, "lossless", lossless ? TRUE : FALSE, NULL);
}

int cvips_tiffsave_target(VipsImage *in, VipsTarget *target) {
    return vips_tiffsave_target(in, target, "compression", VIPS_FOREIGN_TIFF_COMPRESSION_DEFLATE,
                                "predictor", VIPS_FOREIGN_TIFF_PREDICTOR_HORIZONTAL, NULL);
}

int cvips_avifsave_target(VipsImage *in, VipsTarget *target, int quality) {
    return vips_heifsave_target(in, target, "Q", quality, "compression", VIPS_FOREIGN_HEIF_COMPRESSION_AV1,
                                "bitdepth", 8, NULL);
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
