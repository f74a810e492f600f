/*
 * blurfarm_plugin.h: the whole plugin ABI of blurfarm (docs/plugins.md).
 *
 * A plugin is a shared library `lib<name>.so` in one of the farm's plugin folders. It exports
 * one function, `blurfarm_plugin_entry`, that returns a pointer to a constant
 * `blurfarm_plugin` table: the ABI version it was built for, its name, its parameters, and its
 * functions. blurfarm loads it with dlopen, calls the entry point once, checks the table and
 * never unloads the library.
 *
 * Pixels are Float32, four channels, premultiplied RGBA (red first), nominally 0...1, in image
 * coordinates: x to the right, y down, (0, 0) the source image's top-left pixel. Rectangles
 * may start at negative coordinates (pixels beyond the image, supplied by the job's edge rule).
 *
 * Rules a plugin keeps, so that tiled output is bit-identical to untiled output:
 *   - the value written at a pixel depends only on the parameters, the image rectangle, the
 *     pixel's coordinates and the input pixels inside the region of interest, computed by the
 *     same arithmetic in the same order wherever the pixel lies in a tile;
 *   - `run` writes every pixel of the output buffer and nothing else, and keeps no state
 *     between calls (it may be called from several threads and processes at once).
 *
 * Versioning: `abi_version` is the table's first field in every version. blurfarm refuses a
 * table whose version it does not know, and a table with a flag bit it does not know. Fields
 * named `reserved` must be zero; later versions give them a meaning with a new flag bit.
 */
#ifndef BLURFARM_PLUGIN_H
#define BLURFARM_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The ABI version this header describes. */
#define BLURFARM_PLUGIN_ABI_VERSION 1u

/** The name of the one function a plugin exports. */
#define BLURFARM_PLUGIN_ENTRY_POINT "blurfarm_plugin_entry"

/** Return codes of the plugin's functions: 0 for success, a negative code otherwise. */
#define BLURFARM_OK 0
/** The parameters, rectangles or buffers are ones the plugin cannot work with. */
#define BLURFARM_ERROR_INVALID_ARGUMENT (-1)
/** The plugin could not allocate the memory it needs. */
#define BLURFARM_ERROR_OUT_OF_MEMORY (-2)
/** The plugin failed for a reason of its own; the message says which. */
#define BLURFARM_ERROR_FAILED (-3)
/** A buffer or call uses a flag or layout the plugin does not support. */
#define BLURFARM_ERROR_UNSUPPORTED (-4)

/** A rectangle of whole pixels: columns x ..< x + width, rows y ..< y + height. */
typedef struct blurfarm_rect {
    int64_t x;
    int64_t y;
    int64_t width;
    int64_t height;
} blurfarm_rect;

/** The type of a parameter's value. Every value reaches the plugin as a double. */
typedef enum blurfarm_parameter_type {
    /** A decimal number (a manifest may write an integer). */
    BLURFARM_PARAMETER_NUMBER = 1,
    /** A whole number, passed as an exact double. */
    BLURFARM_PARAMETER_INTEGER = 2,
    /** true or false, passed as 1.0 or 0.0; minimum and maximum are ignored. */
    BLURFARM_PARAMETER_BOOLEAN = 3
} blurfarm_parameter_type;

/** `blurfarm_parameter.flags`: the value must be greater than `minimum`, not equal to it. */
#define BLURFARM_PARAMETER_MINIMUM_EXCLUSIVE 0x1u

/** One parameter the plugin takes. */
typedef struct blurfarm_parameter {
    /** Lower-case letters, digits and '-', starting with a letter, e.g. "strength". */
    const char *name;
    /** One line: what the parameter means, with its unit. */
    const char *description;
    /** A blurfarm_parameter_type. */
    uint32_t type;
    /** BLURFARM_PARAMETER_* flag bits. */
    uint32_t flags;
    /** The value used when a manifest does not give one; inside the range. */
    double default_value;
    /** The smallest allowed value (inclusive unless BLURFARM_PARAMETER_MINIMUM_EXCLUSIVE). */
    double minimum;
    /** The largest allowed value (inclusive). */
    double maximum;
    uint64_t reserved[4];
} blurfarm_parameter;

/** Pixels in memory: `data` points at the pixel at (rect.x, rect.y). */
typedef struct blurfarm_buffer {
    float *data;
    /** The pixels the buffer holds, in image coordinates. */
    blurfarm_rect rect;
    /** Floats from the start of one row to the start of the next (at least rect.width * 4). */
    int64_t row_stride;
    /** Floats per pixel: 4 (premultiplied RGBA) in this version. */
    uint32_t channels;
    /** Zero in this version. */
    uint32_t flags;
    uint64_t reserved[4];
} blurfarm_buffer;

/**
 * Region of interest: the input rectangle needed to compute `output`. `values` holds one
 * double per declared parameter, in declaration order, already checked against the
 * declaration; `image` is the source image's rectangle. Writes `*input` and returns
 * BLURFARM_OK, or a negative code. NULL in the table: the filter reads only the pixel it
 * writes (the input rectangle is the output rectangle).
 */
typedef int32_t (*blurfarm_region_of_interest_fn)(
    const double *values, const blurfarm_rect *output, const blurfarm_rect *image, blurfarm_rect *input);

/**
 * Domain of definition: the rectangle where the output can differ from transparent black,
 * when the input is transparent outside `input` (what the `grow` edge rule makes the output).
 * NULL in the table: the output covers the input rectangle.
 */
typedef int32_t (*blurfarm_domain_of_definition_fn)(
    const double *values, const blurfarm_rect *input, const blurfarm_rect *image, blurfarm_rect *output);

/**
 * Computes every pixel of `output` (a tile's interior) from `input`, which holds at least the
 * region of interest of `output->rect`. Returns BLURFARM_OK, or a negative code after writing
 * a NUL-terminated, one-line message of at most `message_size` bytes (including the NUL) into
 * `message`. Must not write outside `output`, keep pointers after returning, or exit.
 */
typedef int32_t (*blurfarm_run_fn)(
    const double *values, const blurfarm_buffer *input, const blurfarm_buffer *output, const blurfarm_rect *image,
    char *message, size_t message_size);

/** The table a plugin's entry point returns. It must stay valid while the process lives. */
typedef struct blurfarm_plugin {
    /** BLURFARM_PLUGIN_ABI_VERSION of the header the plugin was built with. Always first. */
    uint32_t abi_version;
    /** Zero in this version. */
    uint32_t flags;
    /** The filter's name, as manifests write it, and the `<name>` of `lib<name>.so`. */
    const char *name;
    /** One line: what the filter does. */
    const char *description;
    /** The parameters, `parameter_count` of them (NULL when there are none). */
    const blurfarm_parameter *parameters;
    uint32_t parameter_count;
    uint32_t reserved0;
    blurfarm_region_of_interest_fn region_of_interest;
    blurfarm_domain_of_definition_fn domain_of_definition;
    /** Required. */
    blurfarm_run_fn run;
    void *reserved[8];
} blurfarm_plugin;

/** The entry point every plugin exports (C linkage, default visibility). */
const blurfarm_plugin *blurfarm_plugin_entry(void);

/*
 * Detectors: a plugin may instead (or also) export `blurfarm_detector_entry`, returning a
 * constant `blurfarm_detector` table: a detector that finds objects (faces, licence plates) in
 * an image and returns their boxes with scores. `regions: {detect: <name>}` in a manifest and
 * `apply --redact <name>` use it (docs/manifest.md#regions-a-detector-finds). blurfarm decodes each image as
 * shown (upright) and calls `detect` on the whole image made smaller and on overlapping tiles
 * of it at full size; it merges the boxes, keeps those scoring at least the job's threshold,
 * and caches them by the image's content and the detector's identity.
 *
 * Versioning as the filter table's: `abi_version` first, flags and `reserved` zero.
 */

/** The detector table's ABI version this header describes. */
#define BLURFARM_DETECTOR_ABI_VERSION 2u

/** The name of the function a detector plugin exports. */
#define BLURFARM_DETECTOR_ENTRY_POINT "blurfarm_detector_entry"

/** One object found: its box in the pixels of the buffer given, and the detector's score. */
typedef struct blurfarm_detection {
    /** Left, top, width and height, in image coordinates (fractions allowed). */
    double x;
    double y;
    double width;
    double height;
    /** The detector's confidence, 0...1. */
    double score;
    uint64_t reserved[3];
} blurfarm_detection;

/**
 * Opens the detector's model, a file the plugin finds in `model_folder` (the farm's models
 * folder); stores a state of its own in `*state`. Writes into `identity` (at most
 * `identity_size` bytes with the NUL) a name of the model that changes whenever its boxes
 * could: blurfarm caches boxes under it. Returns BLURFARM_OK, or a negative code after writing
 * a one-line message (a missing model says how to install it). Each thread opens its own state.
 */
typedef int32_t (*blurfarm_detector_open_fn)(
    const char *model_folder, void **state, char *identity, size_t identity_size, char *message, size_t message_size);

/**
 * Finds the objects in `image` (channels 3: RGB, or 4: premultiplied RGBA; Float32, 0...1),
 * each scoring at least `threshold`, after the detector's own suppression of overlapping
 * boxes, on at most `threads` threads (1 or more: blurfarm detects several images at once, each
 * call on its share of the cores; one image alone gets them all). Writes the first `capacity`
 * of them into `boxes` and their number into `*count` (which may exceed `capacity`: blurfarm
 * then calls again with room for all). Returns BLURFARM_OK, or a negative code after writing a
 * message as `run` does.
 */
typedef int32_t (*blurfarm_detect_fn)(
    void *state, const blurfarm_buffer *image, double threshold, int32_t threads, blurfarm_detection *boxes,
    size_t capacity, size_t *count, char *message, size_t message_size);

/** Releases a state `open` made. */
typedef void (*blurfarm_detector_close_fn)(void *state);

/** The table a detector's entry point returns. It must stay valid while the process lives. */
typedef struct blurfarm_detector {
    /** BLURFARM_DETECTOR_ABI_VERSION of the header the plugin was built with. Always first. */
    uint32_t abi_version;
    /** Zero in this version. */
    uint32_t flags;
    /** The detector's name, as `detect:` writes it, and the `<name>` of `lib<name>.so`. */
    const char *name;
    /** One line: what it finds, with which model. */
    const char *description;
    /** What each box is, as region files label it ("face"). */
    const char *label;
    /** The smallest threshold it takes: boxes are cached down to it. In (0, 1]. */
    double lowest_threshold;
    /** All three required. */
    blurfarm_detector_open_fn open;
    blurfarm_detect_fn detect;
    blurfarm_detector_close_fn close;
    void *reserved[8];
} blurfarm_detector;

/** The entry point a detector plugin exports (C linkage, default visibility). */
const blurfarm_detector *blurfarm_detector_entry(void);

#ifdef __cplusplus
}
#endif

#endif /* BLURFARM_PLUGIN_H */
