/*
 * vignette: darkens towards the corners. An example plugin in C, a template to copy
 * (docs/plugins.md): one constant table, one entry point, a run function.
 *
 * For the pixel whose centre is p, r = |p - c| / h, where c is the image's centre and h half
 * its diagonal (r is 0 at the centre, 1 at the corners). With t = (r - radius) / (1 - radius)
 * clamped to 0...1, the pixel is multiplied by 1 - strength * t * t. Alpha is kept: the pixels
 * are premultiplied, so scaling red, green and blue darkens the colour at any opacity.
 * The filter reads only the pixel it writes, so it needs no region of interest function.
 */
#include "blurfarm_plugin.h"

#include <math.h>
#include <stdio.h>

enum { STRENGTH, RADIUS };

static const blurfarm_parameter parameters[] = {
    [STRENGTH] = {
        .name = "strength",
        .description = "how much the corners darken: 0 not at all, 1 to black",
        .type = BLURFARM_PARAMETER_NUMBER,
        .default_value = 0.5,
        .minimum = 0,
        .maximum = 1,
    },
    [RADIUS] = {
        .name = "radius",
        .description = "where darkening starts, as a fraction of the half diagonal from the centre",
        .type = BLURFARM_PARAMETER_NUMBER,
        .default_value = 0.5,
        .minimum = 0,
        .maximum = 1,
    },
};

static int32_t run(
    const double *values, const blurfarm_buffer *input, const blurfarm_buffer *output, const blurfarm_rect *image,
    char *message, size_t message_size) {
    if (input->channels != 4 || output->channels != 4) {
        snprintf(message, message_size, "vignette works on 4 channels, not %u", (unsigned)input->channels);
        return BLURFARM_ERROR_UNSUPPORTED;
    }
    const double strength = values[STRENGTH], radius = values[RADIUS];
    const double cx = (double)image->x + (double)image->width / 2, cy = (double)image->y + (double)image->height / 2;
    const double half_diagonal = sqrt((double)image->width * image->width + (double)image->height * image->height) / 2;
    const blurfarm_rect out = output->rect;
    for (int64_t y = out.y; y < out.y + out.height; y++) {
        const float *src = input->data + (y - input->rect.y) * input->row_stride + (out.x - input->rect.x) * 4;
        float *dst = output->data + (y - out.y) * output->row_stride;
        for (int64_t x = out.x; x < out.x + out.width; x++, src += 4, dst += 4) {
            const double dx = (double)x + 0.5 - cx, dy = (double)y + 0.5 - cy;
            const double r = half_diagonal > 0 ? sqrt(dx * dx + dy * dy) / half_diagonal : 0;
            double t = radius < 1 ? (r - radius) / (1 - radius) : 0;
            t = t < 0 ? 0 : t > 1 ? 1 : t;
            const float factor = (float)(1 - strength * t * t);
            dst[0] = src[0] * factor;
            dst[1] = src[1] * factor;
            dst[2] = src[2] * factor;
            dst[3] = src[3];
        }
    }
    return BLURFARM_OK;
}

static const blurfarm_plugin table = {
    .abi_version = BLURFARM_PLUGIN_ABI_VERSION,
    .name = "vignette",
    .description = "darkens towards the corners (strength, radius)",
    .parameters = parameters,
    .parameter_count = sizeof parameters / sizeof parameters[0],
    .run = run,
};

const blurfarm_plugin *blurfarm_plugin_entry(void) { return &table; }
