// The two passes of the Lanczos resampler declared in ckernels.h, in Float32. Every output
// element is one fixed sequence of IEEE operations (a product, then sums in tap order; no
// fused multiply-add: contraction is off below), so the vector code and the scalar code give
// the same bits.
//
// Between the passes the sums of a group of 8 output rows are interleaved, sample i of row m
// at sums[i * 8 + m]: the rows pass then computes one output pixel of all 8 rows at once, a row
// a lane, with the weights every row of the group shares, from consecutive floats (kept row by
// row, 4 pixels of one row a register needed 4 scattered loads and 3 inserts a tap). The
// columns pass sums 64 samples of a row at a time (16-lane AVX-512 registers where the
// processor has it, else the compiler's AVX2 lanes) into a small tile, which 8 × 8 transposes
// interleave; the rows pass stores its levels the same way round, [pixel][channel][row], and
// 8 × 8 byte transposes turn them into the rows.
#include "ckernels.h"
#include "avx512.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#pragma clang fp contract(off)

enum { rows_together = BF_LANCZOS_ROWS_TOGETHER, block = 64 };

// Samples `start ..< start + n` of output row `m`, summed in `acc` (registers where `n` is a
// constant: the function is inlined into each call), stored at `out`.
static inline __attribute__((always_inline)) void column_block(const uint8_t *const *rows, const int32_t *offsets,
                                                               const float *w, int taps, float *out, int m,
                                                               ptrdiff_t start, int n) {
    const uint8_t *const *r = rows + offsets[m];
    const float *c = w + (ptrdiff_t)m * taps;
    float acc[block];
    for (int i = 0; i < n; i++) acc[i] = c[0] * (float)r[0][start + i];
    for (int t = 1; t < taps; t++) {
        const uint8_t *row = r[t] + start;
        const float ct = c[t];
        for (int i = 0; i < n; i++) {
            const float p = ct * (float)row[i];
            acc[i] = acc[i] + p;
        }
    }
    for (int i = 0; i < n; i++) out[i] = acc[i];
}

#if defined(__AVX2__)
// 16 samples from `row` made floats (exactly).
BF_AVX512 static inline __m512 floats16(const uint8_t *row) {
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)row)));
}

// A whole block of 64 samples of output row `m` in four 16-lane registers (AVX-512), as
// column_block sums them, stored at `out`.
BF_AVX512 static void column_block512(const uint8_t *const *rows, const int32_t *offsets, const float *w, int taps,
                                      float *out, int m, ptrdiff_t start) {
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
    _mm512_storeu_ps(out, a0); _mm512_storeu_ps(out + 16, a1);
    _mm512_storeu_ps(out + 32, a2); _mm512_storeu_ps(out + 48, a3);
}

// The 8 × 8 floats of `tile` from column `i` (row m at tile + m * block) to `dst`, column by
// column: dst[k * 8 + m] = tile[m * block + i + k].
static inline void transpose8x8(const float *tile, ptrdiff_t i, float *dst) {
    __m256 r0 = _mm256_loadu_ps(tile + 0 * block + i), r1 = _mm256_loadu_ps(tile + 1 * block + i);
    __m256 r2 = _mm256_loadu_ps(tile + 2 * block + i), r3 = _mm256_loadu_ps(tile + 3 * block + i);
    __m256 r4 = _mm256_loadu_ps(tile + 4 * block + i), r5 = _mm256_loadu_ps(tile + 5 * block + i);
    __m256 r6 = _mm256_loadu_ps(tile + 6 * block + i), r7 = _mm256_loadu_ps(tile + 7 * block + i);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(dst + 0 * 8, _mm256_permute2f128_ps(s0, s4, 0x20));
    _mm256_storeu_ps(dst + 1 * 8, _mm256_permute2f128_ps(s1, s5, 0x20));
    _mm256_storeu_ps(dst + 2 * 8, _mm256_permute2f128_ps(s2, s6, 0x20));
    _mm256_storeu_ps(dst + 3 * 8, _mm256_permute2f128_ps(s3, s7, 0x20));
    _mm256_storeu_ps(dst + 4 * 8, _mm256_permute2f128_ps(s0, s4, 0x31));
    _mm256_storeu_ps(dst + 5 * 8, _mm256_permute2f128_ps(s1, s5, 0x31));
    _mm256_storeu_ps(dst + 6 * 8, _mm256_permute2f128_ps(s2, s6, 0x31));
    _mm256_storeu_ps(dst + 7 * 8, _mm256_permute2f128_ps(s3, s7, 0x31));
}
#endif

// The `n` samples of the tile's `outputs` rows from column 0, interleaved at `dst`; the lanes
// of rows from `outputs` to 8 are 0.
static void interleave(const float *tile, int outputs, int n, float *dst, int vector) {
    int i = 0;
#if defined(__AVX2__)
    if (vector && outputs == rows_together) {
        for (; i + 8 <= n; i += 8) transpose8x8(tile, i, dst + (ptrdiff_t)i * rows_together);
    }
#endif
    for (; i < n; i++) {
        for (int m = 0; m < rows_together; m++) dst[(ptrdiff_t)i * rows_together + m] = m < outputs ? tile[m * block + i] : 0.0f;
    }
}

void bf_resample_columns(const uint8_t *const *rows, const int32_t *offsets, const float *w, int taps, float *dst,
                         int outputs, ptrdiff_t count, int vector) {
    float tile[rows_together * block];
    // Each block reads as many rows as the outputs' windows span, more streams than the
    // processor's prefetcher follows: the memory is asked for each row four blocks ahead.
    const int held = offsets[outputs - 1] + taps;
    int wide = 0;
#if defined(__AVX2__)
    wide = vector >= 2 && bf_has_avx512bw();
#endif
    for (ptrdiff_t start = 0; start < count; start += block) {
        const int n = count - start < block ? (int)(count - start) : block;
        if (vector && start + 4 * block < count) {
            for (int t = 0; t < held; t++) bf_prefetch(rows[t] + start + 4 * block, 1);
        }
        for (int m = 0; m < outputs; m++) {
            if (!vector) {
                // One sample a block: the scalar sums.
                for (int i = 0; i < n; i++) column_block(rows, offsets, w, taps, tile + m * block + i, m, start + i, 1);
#if defined(__AVX2__)
            } else if (wide && n == block) {
                column_block512(rows, offsets, w, taps, tile + m * block, m, start);
#endif
            } else if (n == block) {
                column_block(rows, offsets, w, taps, tile + m * block, m, start, block);
            } else {
                column_block(rows, offsets, w, taps, tile + m * block, m, start, n);
            }
        }
        interleave(tile, outputs, n, dst + start * rows_together, vector);
    }
}

static inline uint8_t level(float v) {
    v = v < 0.0f ? 0.0f : v;
    v = v > 255.0f ? 255.0f : v;
    return (uint8_t)(int)(v + 0.5f);
}

// One output pixel of the rows pass for the 8 rows, channel by channel and row by row; its
// levels at stage[(c * 8) + m].
static inline void row_pixel(const float *src, int channels, int32_t first, const float *w, int taps, uint8_t *stage) {
    for (int c = 0; c < channels; c++) {
        for (int m = 0; m < rows_together; m++) {
            const float *s = src + ((ptrdiff_t)first * channels + c) * rows_together + m;
            float acc = w[0] * s[0];
            for (int t = 1; t < taps; t++) {
                const float p = w[t] * s[(ptrdiff_t)t * channels * rows_together];
                acc = acc + p;
            }
            stage[c * rows_together + m] = level(acc);
        }
    }
}

#if defined(__AVX2__)
// The levels of 8 sums (clamped to 0...255, rounded half up), as 8 bytes.
static inline void store_levels8(__m256 v, uint8_t *d) {
    v = _mm256_max_ps(v, _mm256_setzero_ps());
    v = _mm256_min_ps(v, _mm256_set1_ps(255.0f));
    const __m256i l = _mm256_cvttps_epi32(_mm256_add_ps(v, _mm256_set1_ps(0.5f)));
    const __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(l), _mm256_extracti128_si256(l, 1));
    _mm_storel_epi64((__m128i *)d, _mm_packus_epi16(words, words));
}

// row_pixel with each channel's 8 rows in the lanes of one register: the same products and
// sums lane for lane. `channels` is a constant where it is inlined.
static inline __attribute__((always_inline)) void row_pixel8(const float *src, int channels, int32_t first, const float *w,
                                                             int taps, uint8_t *stage) {
    const float *s = src + (ptrdiff_t)first * channels * rows_together;
    const __m256 w0 = _mm256_set1_ps(w[0]);
    __m256 acc[4];
    for (int c = 0; c < channels; c++) acc[c] = _mm256_mul_ps(w0, _mm256_loadu_ps(s + c * rows_together));
    for (int t = 1; t < taps; t++) {
        const __m256 wt = _mm256_set1_ps(w[t]);
        const float *st = s + (ptrdiff_t)t * channels * rows_together;
        for (int c = 0; c < channels; c++) acc[c] = _mm256_add_ps(acc[c], _mm256_mul_ps(wt, _mm256_loadu_ps(st + c * rows_together)));
    }
    for (int c = 0; c < channels; c++) store_levels8(acc[c], stage + c * rows_together);
}

static void rows8(const float *src, int channels, const int32_t *first, const float *w, int taps, uint8_t *stage,
                  ptrdiff_t outputs) {
    for (ptrdiff_t x = 0; x < outputs; x++) {
        uint8_t *d = stage + x * channels * rows_together;
        const float *wx = w + x * taps;
        switch (channels) {
        case 1: row_pixel8(src, 1, first[x], wx, taps, d); break;
        case 2: row_pixel8(src, 2, first[x], wx, taps, d); break;
        case 3: row_pixel8(src, 3, first[x], wx, taps, d); break;
        default: row_pixel8(src, 4, first[x], wx, taps, d); break;
        }
    }
}
#endif

// The staged levels (element j of row m at stage[j * 8 + m]) to the first `outputs` rows.
static void unstage(const uint8_t *stage, ptrdiff_t count, uint8_t *const *dst, int outputs, int vector) {
    ptrdiff_t j = 0;
#if defined(__SSE2__)
    if (vector && outputs == rows_together) {
        // 8 × 8 bytes: the 8 rows' bytes of 8 elements to 8 bytes of each row.
        for (; j + 8 <= count; j += 8) {
            const __m128i *p = (const __m128i *)(stage + j * rows_together);
            const __m128i a0 = _mm_loadu_si128(p), a1 = _mm_loadu_si128(p + 1);
            const __m128i a2 = _mm_loadu_si128(p + 2), a3 = _mm_loadu_si128(p + 3);
            const __m128i b0 = _mm_unpacklo_epi8(a0, a1), b1 = _mm_unpackhi_epi8(a0, a1);
            const __m128i b2 = _mm_unpacklo_epi8(a2, a3), b3 = _mm_unpackhi_epi8(a2, a3);
            const __m128i c0 = _mm_unpacklo_epi8(b0, b1), c1 = _mm_unpackhi_epi8(b0, b1);
            const __m128i c2 = _mm_unpacklo_epi8(b2, b3), c3 = _mm_unpackhi_epi8(b2, b3);
            const __m128i d0 = _mm_unpacklo_epi32(c0, c2), d1 = _mm_unpackhi_epi32(c0, c2);
            const __m128i d2 = _mm_unpacklo_epi32(c1, c3), d3 = _mm_unpackhi_epi32(c1, c3);
            _mm_storel_epi64((__m128i *)(dst[0] + j), d0); _mm_storel_epi64((__m128i *)(dst[1] + j), _mm_unpackhi_epi64(d0, d0));
            _mm_storel_epi64((__m128i *)(dst[2] + j), d1); _mm_storel_epi64((__m128i *)(dst[3] + j), _mm_unpackhi_epi64(d1, d1));
            _mm_storel_epi64((__m128i *)(dst[4] + j), d2); _mm_storel_epi64((__m128i *)(dst[5] + j), _mm_unpackhi_epi64(d2, d2));
            _mm_storel_epi64((__m128i *)(dst[6] + j), d3); _mm_storel_epi64((__m128i *)(dst[7] + j), _mm_unpackhi_epi64(d3, d3));
        }
    }
#endif
    for (; j < count; j++) {
        for (int m = 0; m < outputs; m++) dst[m][j] = stage[j * rows_together + m];
    }
}

void bf_resample_rows(const float *src, int channels, const int32_t *first, const float *w, int taps,
                      uint8_t *const *dst, int rows, ptrdiff_t outputs, uint8_t *stage, int vector) {
    ptrdiff_t x = 0;
#if defined(__AVX2__)
    if (vector) {
        rows8(src, channels, first, w, taps, stage, outputs);
        x = outputs;
    }
#endif
    for (; x < outputs; x++) {
        row_pixel(src, channels, first[x], w + x * taps, taps, stage + x * channels * rows_together);
    }
    unstage(stage, outputs * channels, dst, rows, vector);
}
