/*
 * invert: a plugin written from Plugins/include/blurfarm_plugin.h and docs/plugins.md only,
 * compiled by the tests outside the repository (cc -shared -fPIC) to show that the header and
 * the guide are enough. Mixes each pixel with its inverse: in premultiplied RGBA the inverse
 * of (r, g, b, a) is (a - r, a - g, a - b, a).
 */
#include "blurfarm_plugin.h"

static const blurfarm_parameter parameters[] = {
    {
        .name = "amount",
        .description = "0 keeps the image, 1 inverts it",
        .type = BLURFARM_PARAMETER_NUMBER,
        .default_value = 1,
        .minimum = 0,
        .maximum = 1,
    },
};

static int32_t run(
    const double *values, const blurfarm_buffer *input, const blurfarm_buffer *output, const blurfarm_rect *image,
    char *message, size_t message_size) {
    (void)image, (void)message, (void)message_size;
    const float amount = (float)values[0];
    const blurfarm_rect out = output->rect;
    for (int64_t y = 0; y < out.height; y++) {
        const float *src = input->data + (out.y + y - input->rect.y) * input->row_stride + (out.x - input->rect.x) * 4;
        float *dst = output->data + y * output->row_stride;
        for (int64_t x = 0; x < out.width * 4; x += 4) {
            for (int c = 0; c < 3; c++) dst[x + c] = src[x + c] + amount * (src[x + 3] - 2 * src[x + c]);
            dst[x + 3] = src[x + 3];
        }
    }
    return BLURFARM_OK;
}

static const blurfarm_plugin table = {
    .abi_version = BLURFARM_PLUGIN_ABI_VERSION,
    .name = "invert",
    .description = "inverts the colours",
    .parameters = parameters,
    .parameter_count = 1,
    .run = run,
};

const blurfarm_plugin *blurfarm_plugin_entry(void) { return &table; }
