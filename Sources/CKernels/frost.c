// Frost's pointwise step (declared in ckernels.h; BlurfarmKernels' SaturateAndTint is the only
// caller). Plain float code with no fused multiply-add, which the compiler vectorises: each output
// is one fixed sequence of IEEE operations, in vector lanes and in scalar code alike.
#include "ckernels.h"

#pragma clang fp contract(off)

void bf_saturate_tint(const uint16_t *values, uint8_t *dst, ptrdiff_t pixels, float saturation, float tr, float tg,
                      float tb, float keep) {
    const float s = saturation;
    for (ptrdiff_t p = 0; p < pixels; p++) {
        const float r = (float)values[3 * p] * (1.0f / 64), g = (float)values[3 * p + 1] * (1.0f / 64),
                    b = (float)values[3 * p + 2] * (1.0f / 64);
        const float l = 0.2126f * r + 0.7152f * g + 0.0722f * b;
        float cr = l + s * (r - l), cg = l + s * (g - l), cb = l + s * (b - l);
        cr = cr < 0 ? 0 : (cr > 255 ? 255 : cr);
        cg = cg < 0 ? 0 : (cg > 255 ? 255 : cg);
        cb = cb < 0 ? 0 : (cb > 255 ? 255 : cb);
        // Never negative, at most 255 (tint + keep * 255 <= 255): + 1/2 and truncation round to nearest.
        dst[3 * p] = (uint8_t)(int32_t)(tr + keep * cr + 0.5f);
        dst[3 * p + 1] = (uint8_t)(int32_t)(tg + keep * cg + 0.5f);
        dst[3 * p + 2] = (uint8_t)(int32_t)(tb + keep * cb + 0.5f);
    }
}
