// The two passes of the Lanczos resampler declared in ckernels.h, in Float32. Every output
// element is one fixed sequence of IEEE operations (a product, then sums in tap order; no
// fused multiply-add: contraction is off below), so the vector code (16 lanes of AVX-512 where
// the processor has it, else the compiler's AVX2 lanes for the columns and SSE lanes for the
// rows) and the scalar code give the same bits.
#include "ckernels.h"
#include "avx512.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__SSSE3__)
#include <tmmintrin.h>
#endif
#include <string.h>

#pragma clang fp contract(off)

// Samples `start ..< start + n` of output row `m`, summed in `acc` (registers when `n` is the
// constant block size: the function is inlined into both calls).
static inline __attribute__((always_inline)) void column_block(const uint8_t *const *rows, const int32_t *offsets,
                                                               const float *w, int taps, float *const *dst, int m,
                                                               ptrdiff_t start, int n) {
    enum { most = 64 };
    const uint8_t *const *r = rows + offsets[m];
    const float *c = w + (ptrdiff_t)m * taps;
    float acc[most];
    for (int i = 0; i < n; i++) acc[i] = c[0] * (float)r[0][start + i];
    for (int t = 1; t < taps; t++) {
        const uint8_t *row = r[t] + start;
        const float ct = c[t];
        for (int i = 0; i < n; i++) {
            const float p = ct * (float)row[i];
            acc[i] = acc[i] + p;
        }
    }
    for (int i = 0; i < n; i++) dst[m][start + i] = acc[i];
}

#if defined(__AVX2__)
// Whole blocks of 64 samples of the columns pass in four 16-lane registers (AVX-512), each
// output row in turn, as column_block sums them; returns where it stopped.
// 16 samples from `row` made floats (exactly).
BF_AVX512 static inline __m512 floats16(const uint8_t *row) {
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)row)));
}

BF_AVX512 static ptrdiff_t columns512(const uint8_t *const *rows, const int32_t *offsets, const float *w, int taps,
                                      float *const *dst, int outputs, ptrdiff_t count) {
    ptrdiff_t start = 0;
    // Each block reads as many rows as the outputs' windows span, more streams than the
    // processor's prefetcher follows: the memory is asked for each row four blocks ahead.
    const int held = offsets[outputs - 1] + taps;
    for (; start + 64 <= count; start += 64) {
        for (int t = 0; t < held; t++) __builtin_prefetch(rows[t] + start + 256, 0, 3);
        for (int m = 0; m < outputs; m++) {
            const uint8_t *const *r = rows + offsets[m];
            const float *c = w + (ptrdiff_t)m * taps;
            const __m512 c0 = _mm512_set1_ps(c[0]);
            const uint8_t *row = r[0] + start;
            __m512 a0 = _mm512_mul_ps(c0, floats16(row)), a1 = _mm512_mul_ps(c0, floats16(row + 16));
            __m512 a2 = _mm512_mul_ps(c0, floats16(row + 32)), a3 = _mm512_mul_ps(c0, floats16(row + 48));
            for (int t = 1; t < taps; t++) {
                const __m512 ct = _mm512_set1_ps(c[t]);
                row = r[t] + start;
                a0 = _mm512_add_ps(a0, _mm512_mul_ps(ct, floats16(row)));
                a1 = _mm512_add_ps(a1, _mm512_mul_ps(ct, floats16(row + 16)));
                a2 = _mm512_add_ps(a2, _mm512_mul_ps(ct, floats16(row + 32)));
                a3 = _mm512_add_ps(a3, _mm512_mul_ps(ct, floats16(row + 48)));
            }
            float *d = dst[m] + start;
            _mm512_storeu_ps(d, a0); _mm512_storeu_ps(d + 16, a1);
            _mm512_storeu_ps(d + 32, a2); _mm512_storeu_ps(d + 48, a3);
        }
    }
    return start;
}
#endif

void bf_resample_columns(const uint8_t *const *rows, const int32_t *offsets, const float *w, int taps,
                         float *const *dst, int outputs, ptrdiff_t count, int vector) {
    ptrdiff_t start = 0;
    if (!vector) {
        // One sample a block: the scalar sums.
        for (; start < count; start++) {
            for (int m = 0; m < outputs; m++) column_block(rows, offsets, w, taps, dst, m, start, 1);
        }
        return;
    }
#if defined(__AVX2__)
    if (vector >= 2 && bf_has_avx512bw()) start = columns512(rows, offsets, w, taps, dst, outputs, count);
#endif
    // Blocks of 64 samples summed in registers, each output row in turn: the output rows of
    // one call share most of their source rows, whose blocks stay in the first-level cache.
    enum { block = 64 };
    for (; start + block <= count; start += block) {
        for (int m = 0; m < outputs; m++) column_block(rows, offsets, w, taps, dst, m, start, block);
    }
    if (start < count) {
        for (int m = 0; m < outputs; m++) column_block(rows, offsets, w, taps, dst, m, start, (int)(count - start));
    }
}

static inline uint8_t level(float v) {
    v = v < 0.0f ? 0.0f : v;
    v = v > 255.0f ? 255.0f : v;
    return (uint8_t)(int)(v + 0.5f);
}

// One output pixel of the rows pass, channel by channel.
static inline void row_pixel(const float *src, int channels, int32_t first, const float *w, int taps, uint8_t *dst) {
    for (int c = 0; c < channels; c++) {
        const float *s = src + (ptrdiff_t)first * channels + c;
        float acc = w[0] * s[0];
        for (int t = 1; t < taps; t++) {
            const float p = w[t] * s[(ptrdiff_t)t * channels];
            acc = acc + p;
        }
        dst[c] = level(acc);
    }
}

#if defined(__SSE2__)
// Four output pixels at once, each pixel's channels in the lanes of one register (the fourth
// lane of a 3-channel pixel reads the next pixel's first sample, never stored).
static inline __m128i levels(__m128 v) {
    v = _mm_max_ps(v, _mm_setzero_ps());
    v = _mm_min_ps(v, _mm_set1_ps(255.0f));
    return _mm_cvttps_epi32(_mm_add_ps(v, _mm_set1_ps(0.5f)));
}

static inline void store_pixel(__m128i v, int channels, uint8_t *dst) {
    int32_t lanes[4];
    _mm_storeu_si128((__m128i *)lanes, v);
    for (int c = 0; c < channels; c++) dst[c] = (uint8_t)lanes[c];
}
#endif

#if defined(__AVX2__) && defined(__SSSE3__)
// Whole groups of four output pixels of the rows pass (3 or 4 channels) from `x`, a multiple
// of 4, with AVX-512: each pixel's channels in four lanes of one 16-lane register, as the SSE
// code below has them in one 4-lane register, lane for lane the same products and sums.
// `w16` holds, for each group of four outputs and each tap, each pixel's weight four times.
BF_AVX512 static ptrdiff_t rows512(const float *src, int channels, const int32_t *first, const float *w16, int taps,
                                   uint8_t *dst, ptrdiff_t x, ptrdiff_t outputs) {
    const __m512 zero = _mm512_setzero_ps(), top = _mm512_set1_ps(255.0f), half = _mm512_set1_ps(0.5f);
    // The first three bytes of each 4-byte pixel, for 3 channels.
    const __m128i packed = _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
    for (; x + 4 <= outputs; x += 4) {
        const float *s0 = src + (ptrdiff_t)first[x] * channels, *s1 = src + (ptrdiff_t)first[x + 1] * channels;
        const float *s2 = src + (ptrdiff_t)first[x + 2] * channels, *s3 = src + (ptrdiff_t)first[x + 3] * channels;
        const float *g = w16 + (x / 4) * (ptrdiff_t)taps * 16;
        __m512 v = _mm512_castps128_ps512(_mm_loadu_ps(s0));
        v = _mm512_insertf32x4(v, _mm_loadu_ps(s1), 1);
        v = _mm512_insertf32x4(v, _mm_loadu_ps(s2), 2);
        v = _mm512_insertf32x4(v, _mm_loadu_ps(s3), 3);
        __m512 a = _mm512_mul_ps(_mm512_loadu_ps(g), v);
        for (int t = 1; t < taps; t++) {
            const ptrdiff_t o = (ptrdiff_t)t * channels;
            v = _mm512_castps128_ps512(_mm_loadu_ps(s0 + o));
            v = _mm512_insertf32x4(v, _mm_loadu_ps(s1 + o), 1);
            v = _mm512_insertf32x4(v, _mm_loadu_ps(s2 + o), 2);
            v = _mm512_insertf32x4(v, _mm_loadu_ps(s3 + o), 3);
            a = _mm512_add_ps(a, _mm512_mul_ps(_mm512_loadu_ps(g + t * 16), v));
        }
        const __m512i l = _mm512_cvttps_epi32(_mm512_add_ps(_mm512_min_ps(_mm512_max_ps(a, zero), top), half));
        const __m128i bytes = _mm512_cvtepi32_epi8(l);
        uint8_t *d = dst + x * channels;
        if (channels == 4) {
            _mm_storeu_si128((__m128i *)d, bytes);
        } else {
            uint8_t twelve[16];
            _mm_storeu_si128((__m128i *)twelve, _mm_shuffle_epi8(bytes, packed));
            memcpy(d, twelve, 12);
        }
    }
    return x;
}
#endif

void bf_resample_rows(const float *src, int channels, const int32_t *first, const float *w, const float *w16, int taps,
                      uint8_t *dst, ptrdiff_t outputs, int vector) {
    ptrdiff_t x = 0;
#if defined(__AVX2__) && defined(__SSSE3__)
    if (vector >= 2 && w16 && (channels == 3 || channels == 4) && bf_has_avx512bw()) {
        x = rows512(src, channels, first, w16, taps, dst, x, outputs);
    }
#endif
#if defined(__SSE2__)
    if (vector && (channels == 3 || channels == 4)) {
        for (; x + 4 <= outputs; x += 4) {
            const float *s0 = src + (ptrdiff_t)first[x] * channels, *s1 = src + (ptrdiff_t)first[x + 1] * channels;
            const float *s2 = src + (ptrdiff_t)first[x + 2] * channels, *s3 = src + (ptrdiff_t)first[x + 3] * channels;
            const float *w0 = w + x * taps, *w1 = w0 + taps, *w2 = w1 + taps, *w3 = w2 + taps;
            __m128 a0 = _mm_mul_ps(_mm_set1_ps(w0[0]), _mm_loadu_ps(s0));
            __m128 a1 = _mm_mul_ps(_mm_set1_ps(w1[0]), _mm_loadu_ps(s1));
            __m128 a2 = _mm_mul_ps(_mm_set1_ps(w2[0]), _mm_loadu_ps(s2));
            __m128 a3 = _mm_mul_ps(_mm_set1_ps(w3[0]), _mm_loadu_ps(s3));
            for (int t = 1; t < taps; t++) {
                const ptrdiff_t o = (ptrdiff_t)t * channels;
                a0 = _mm_add_ps(a0, _mm_mul_ps(_mm_set1_ps(w0[t]), _mm_loadu_ps(s0 + o)));
                a1 = _mm_add_ps(a1, _mm_mul_ps(_mm_set1_ps(w1[t]), _mm_loadu_ps(s1 + o)));
                a2 = _mm_add_ps(a2, _mm_mul_ps(_mm_set1_ps(w2[t]), _mm_loadu_ps(s2 + o)));
                a3 = _mm_add_ps(a3, _mm_mul_ps(_mm_set1_ps(w3[t]), _mm_loadu_ps(s3 + o)));
            }
            uint8_t *d = dst + x * channels;
            store_pixel(levels(a0), channels, d);
            store_pixel(levels(a1), channels, d + channels);
            store_pixel(levels(a2), channels, d + 2 * channels);
            store_pixel(levels(a3), channels, d + 3 * channels);
        }
    }
#endif
    for (; x < outputs; x++) row_pixel(src, channels, first[x], w + x * taps, taps, dst + x * channels);
}
