// cvips_shim: fixed-argument wrappers around the variadic libvips calls that Swift cannot call.
//
// Each wrapper passes exactly the options blurfarm uses and the NULL that ends libvips's
// option list. Every function returns 0 on success and -1 on failure, with the reason in
// libvips's error buffer (vips_error_buffer), like the calls it wraps. Output images and
// buffers belong to the caller (g_object_unref / g_free).
#ifndef CVIPS_SHIM_H
#define CVIPS_SHIM_H

#include <stddef.h>
#include <vips/vips.h>

/// Loads and starts libvips (Debian's libvips.so.42: cvips_start, no operation cache, its
/// warnings silenced), once per process, thread-safe: NULL, or why it could not be loaded or
/// started. libvips is not linked: the first libvips call of any kind does this (cvips_lazy.c),
/// so a process that touches no image through libvips never pays for its hundred libraries.
const char *cvips_load(void);

/// The version of the libvips cvips_load loads ("8.14.1"), or NULL when it cannot be loaded
/// (cvips_load then says why). It only maps the library (once, as cvips_load's first
/// step): libvips is not started, so a process that needs the version alone (a worker asked
/// `--libvips-version`) never pays for vips_init.
const char *cvips_version(void);

/// The file of the libvips cvips_version mapped, as the dynamic loader found it
/// ("/lib/x86_64-linux-gnu/libvips.so.42"); NULL when it is not mapped.
const char *cvips_library_file(void);

/// Starts libvips (vips_init) without its loadable modules: the HEIF/AVIF, JPEG XL,
/// ImageMagick, PDF and OpenSlide loaders and savers that Debian's libvips keeps in
/// `vips-modules-8.14/` beside the library. Loading them, and the hundred-odd libraries they
/// pull in, took about 30 ms of every process's start; they are loaded on first need instead
/// (cvips_load_modules): by the loads below when no built-in loader takes the file, and by
/// cvips_avifsave_target. When the user set VIPSHOME, libvips is started as usual (it then
/// loads the modules of that prefix itself). Call once, before any other libvips call.
int cvips_start(const char *argv0);

/// Loads libvips's modules from the folder beside the loaded libvips, once per process,
/// thread-safe: a later call returns at once, a concurrent one when they are loaded. A module
/// that does not load is skipped, as libvips does.
void cvips_load_modules(void);

/// vips_foreign_find_load: the name of the loader that takes the file at `path` (its nickname,
/// "pngload", unless another class shares it), or NULL (the reason in libvips's error buffer),
/// asking the modules too when no built-in loader does.
const char *cvips_find_load(const char *path);

/// Opens `path` with `loader` (the name cvips_find_load gave for it) lazily (only the header is
/// read now), failing on any decoder warning or error (`fail_on` = warning: damaged JPEG data
/// that libjpeg only warns about, truncation) once pixels are read. `sequential` != 0 asks for
/// top-to-bottom access. vips_image_new_from_file, without its second search for the loader
/// (each loader's sniff opens the file) or its reading of a trailing `[...]` as load options.
int cvips_load_file(const char *loader, const char *path, int sequential, VipsImage **out);

/// Opens an encoded image in memory (`buf` must outlive the image), failing on decoder warnings
/// as cvips_load_file does.
int cvips_load_buffer(const void *buf, size_t len, VipsImage **out);

/// vips_autorot: rotates and flips upright by the orientation tag, which it removes.
int cvips_autorot(VipsImage *in, VipsImage **out);

/// vips_thumbnail of the file at `path` to exactly `width` x `height` pixels as displayed
/// (`size` = force: the caller chose the size), with libvips's defaults otherwise: shrink-on-load
/// (JPEG, WebP), lanczos3 reduce with alpha premultiplied, upright by the orientation tag, no
/// `linear`, no import or export profile. Decoding is strict (`fail_on` = warning, as cvips_load_file). In libvips 8.14
/// it first converts to its processing space (sRGB or B_W, 8 bits) by vips_colourspace: callers
/// pass only 8-bit sRGB or B_W files, for which that step does nothing.
int cvips_thumbnail_file(const char *path, int width, int height, VipsImage **out);

/// vips_thumbnail of the file at `path` covering `width` x `height` and cut to it by
/// vips_smartcrop with `interesting`, exactly as `vipsthumbnail --size WxH --smartcrop S` (its
/// own scale, one factor for both sides), otherwise as cvips_thumbnail_file.
int cvips_thumbnail_file_smartcrop(const char *path, int width, int height, VipsInteresting interesting,
                                   VipsImage **out);

/// cvips_thumbnail_file and cvips_thumbnail_file_smartcrop (`interesting`) of an image opened
/// sequentially (vips_thumbnail_image): the same pixels for a file whose loader has no
/// shrink-on-load (PNG), without vips_thumbnail's three searches for the loader and two
/// openings of the file; of the image opened (a TIFF's first page, a HEIF's primary image),
/// where vips_thumbnail of the file takes a pyramid's smaller page or an embedded thumbnail.
int cvips_thumbnail_image(VipsImage *in, int width, int height, VipsImage **out);
int cvips_thumbnail_image_smartcrop(VipsImage *in, int width, int height, VipsInteresting interesting,
                                    VipsImage **out);

/// vips_resize by `hscale` horizontally and `vscale` vertically with its default kernel
/// (lanczos3), the format kept. Alpha is resized like any band: premultiply first.
int cvips_resize(VipsImage *in, double hscale, double vscale, VipsImage **out);

/// vips_premultiply / vips_unpremultiply with alpha `max_alpha` (255 or 65535) meaning opaque;
/// the output is float.
int cvips_premultiply(VipsImage *in, double max_alpha, VipsImage **out);
int cvips_unpremultiply(VipsImage *in, double max_alpha, VipsImage **out);

/// vips_extract_area: the `width` x `height` rectangle at (`left`, `top`).
int cvips_extract_area(VipsImage *in, int left, int top, int width, int height, VipsImage **out);

/// vips_smartcrop: the `width` x `height` rectangle libvips finds most `interesting` (attention,
/// entropy, ...), as vips_thumbnail's `crop` option chooses it.
int cvips_smartcrop(VipsImage *in, int width, int height, VipsInteresting interesting, VipsImage **out);

/// vips_sharpen with `sigma` and its other defaults (x1 2, y2 10, y3 20, m1 0, m2 3): unsharp
/// masking of the L channel in LabS, the image's interpretation and format kept.
int cvips_sharpen(VipsImage *in, double sigma, VipsImage **out);

/// vips_icc_transform to libvips's built-in sRGB profile from the embedded profile,
/// with `depth` 8 or 16 bits per sample in the output.
int cvips_icc_transform_to_srgb(VipsImage *in, int depth, VipsImage **out);

/// vips_colourspace to `space`, treating the input as `source_space`.
int cvips_colourspace(VipsImage *in, VipsInterpretation space,
                      VipsInterpretation source_space, VipsImage **out);

/// vips_extract_band: `n` bands from `first`.
int cvips_extract_bands(VipsImage *in, int first, int n, VipsImage **out);

/// vips_copy, changing only the interpretation field.
int cvips_set_interpretation(VipsImage *in, VipsInterpretation space, VipsImage **out);

/// vips_cast to `format` (values are clipped, not scaled).
int cvips_cast(VipsImage *in, VipsBandFormat format, VipsImage **out);

/// vips_profile_load: the bytes of a named built-in profile ("srgb", "cmyk", "p3").
int cvips_profile_load(const char *name, VipsBlob **out);

/// Savers to a target (vips_target_new_to_memory, cvips_target_new_to_file), writing the
/// metadata the image carries (libvips's JPEG and WebP savers add an EXIF block of their own;
/// blurfarm strips metadata itself, keeping the ICC profile, which libvips 8.14's `strip`
/// would drop too). The bytes are the same whatever the target.
/// cvips_jpegsave_target: `interlace` != 0 writes a progressive JPEG; `subsample` is
/// `subsample_mode` (auto: 4:2:0 below quality 90; on: 4:2:0; off: 4:4:4);
/// `optimize_coding` != 0 computes Huffman tables for the image; `restart_interval` > 0 puts a
/// restart marker after every that many MCUs (0: none).
int cvips_jpegsave_target(VipsImage *in, VipsTarget *target, int quality, int interlace,
                          VipsForeignSubsample subsample, int optimize_coding, int restart_interval);
int cvips_pngsave_target(VipsImage *in, VipsTarget *target);
/// cvips_webpsave_target: `effort` 0–6 (libvips's default 4).
int cvips_webpsave_target(VipsImage *in, VipsTarget *target, int quality, int lossless, int effort);
int cvips_tiffsave_target(VipsImage *in, VipsTarget *target);
/// vips_heifsave_target with AV1 compression (AVIF), 8 bits per sample, quality `quality`;
/// fails when libvips was built without libheif or libheif has no AV1 encoder. Like the JPEG
/// and WebP savers it writes an EXIF item of its own. `effort` 0–9 (libvips's default 4).
int cvips_avifsave_target(VipsImage *in, VipsTarget *target, int quality, int effort);

/// A target that writes to the open file `fd` (the caller still owns and closes it): writes,
/// reads and seeks (libtiff's) are the file's own, retried on EINTR, and the first that failed
/// is kept for cvips_target_file_failure (libvips's own message says only "write error"). A new
/// reference (g_object_unref).
VipsTarget *cvips_target_new_to_file(int fd);

/// The first call on the file of a cvips_target_new_to_file target that failed ("write",
/// "read" or "lseek", a static string) with its errno in `*error` (ENOSPC, EFBIG, EIO...), or
/// NULL when none did (the saver failed otherwise).
const char *cvips_target_file_failure(VipsTarget *target, int *error);

/// The bytes a memory target (vips_target_new_to_memory) holds after a save: a new reference
/// (vips_area_unref).
int cvips_target_blob(VipsTarget *target, VipsBlob **out);

/// vips_gaussblur with the default min_ampl and the given precision.
int cvips_gaussblur(VipsImage *in, double sigma, VipsPrecision precision, VipsImage **out);

/// vips_conv with `mask` (a matrix image with its own scale and offset).
int cvips_conv(VipsImage *in, VipsImage *mask, VipsPrecision precision, VipsImage **out);

/// Routes libvips's own GLib warnings (domain "VIPS", e.g. "read gave 2 warnings" for a
/// damaged JPEG) away from stderr: blurfarm reports every failure itself, one line each.
void cvips_silence_warnings(void);

// Band by band (cvips_bands.c).

/// vips_region_new: a region of `image` to compute rectangles of it one after another. A region
/// belongs to the thread that made it: only that thread may compute with it (libvips checks).
int cvips_region_new(VipsImage *image, VipsRegion **out);

/// Computes rows `top` ..< `top + count` of the region's image (all its columns) and copies
/// them to `out`, row after row without padding (`count` * VIPS_IMAGE_SIZEOF_LINE bytes).
int cvips_region_read_rows(VipsRegion *region, int top, int count, void *out);

/// The rows behind an image made by cvips_rows_image.
typedef struct CvipsRows CvipsRows;

/// A `width` x `height` image of `bands` samples of `format` a pixel, with `interpretation`
/// and resolution 1 (as vips_image_new_from_memory makes), whose pixels are the rows given to
/// cvips_rows_supply: computing a row waits until it has been supplied, and copies it from the
/// supplier's samples. A ring of `capacity` slots holds where the rows supplied and not yet
/// copied out are; each row may be computed once (what a saver does). `rows_out` lives as long
/// as the image.
int cvips_rows_image(int width, int height, int bands, VipsBandFormat format, VipsInterpretation interpretation,
                     int capacity, VipsImage **out, CvipsRows **rows_out);

/// Supplies the next `count` rows (row after row without padding) and waits until they have
/// been copied out (the samples are read in place, so they must stay until it returns, and may
/// be reused after). -1 when the rows are closed before all of them were taken (nothing more is
/// read) or they pass the image's height.
int cvips_rows_supply(CvipsRows *rows, const void *samples, int count);

/// No more rows come or are wanted: computing a row fails, and a supplier waiting returns -1
/// once no copy from its samples is under way.
void cvips_rows_close(CvipsRows *rows);

#endif
