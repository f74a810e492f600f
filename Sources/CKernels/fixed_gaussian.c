// The 16-bit fixed-point gaussian passes declared in ckernels.h. Vector code for AVX2 (16 lanes),
// scalar code for what is left, for builds without AVX2 and when `vector` is 0: both compute the
// same integers.
#include "ckernels.h"
#include "avx512.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

static inline uint16_t mulhi(uint16_t a, uint16_t b) { return (uint16_t)(((uint32_t)a * b) >> 16); }

int bf_has_avx512bw(void) {
#if defined(__AVX2__) && (defined(__x86_64__) || defined(__i386__))
    static int known = -1;
    int has = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (has < 0) {
        __builtin_cpu_init();
        has = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512f") ? 1 : 0;
        __atomic_store_n(&known, has, __ATOMIC_RELAXED);
    }
    return has;
#else
    return 0;
#endif
}

// The rows pass at one element of 8-bit samples `c`, each a value with `shift` fraction bits:
// (a << shift) + (b << shift) is (a + b) << shift, below 2^16 for a shift up to 7.
static inline uint16_t row_value(const uint8_t *c, ptrdiff_t step, const uint16_t *w, int radius, uint16_t bias,
                                 int shift) {
    uint16_t acc = (uint16_t)(bias + mulhi((uint16_t)(c[0] << shift), w[0]));
    for (int k = 1; k <= radius; k++)
        acc = (uint16_t)(acc + mulhi((uint16_t)((c[-k * step] + c[k * step]) << shift), w[k]));
    return acc;
}

#if defined(__AVX2__)
// 16 samples of 8 bits from `p` as 16 lanes of 16.
static inline __m256i load_u8(const uint8_t *p) { return _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p)); }

// The same passes in 32 lanes (AVX-512BW) where the processor has it (bf_has_avx512bw): the
// same integers as the AVX2 lanes, lane for lane.

// Whole blocks of 32 elements of the rows pass from `i`; returns where it stopped.
BF_AVX512 static ptrdiff_t fixed_rows512(const uint8_t *centre, ptrdiff_t step, const uint16_t *w, int radius,
                                         uint16_t bias, int shift, uint16_t *dst, ptrdiff_t i, ptrdiff_t count) {
    const __m512i b = _mm512_set1_epi16((short)bias), w0 = _mm512_set1_epi16((short)w[0]);
    const __m128i s = _mm_cvtsi32_si128(shift);
    for (; i + 32 <= count; i += 32) {
        const uint8_t *c = centre + i;
        __m512i a = _mm512_add_epi16(b, _mm512_mulhi_epu16(_mm512_sll_epi16(load512_u8(c), s), w0));
        for (int k = 1; k <= radius; k++) {
            __m512i p = _mm512_sll_epi16(_mm512_add_epi16(load512_u8(c - k * step), load512_u8(c + k * step)), s);
            a = _mm512_add_epi16(a, _mm512_mulhi_epu16(p, _mm512_set1_epi16((short)w[k])));
        }
        _mm512_storeu_si512((void *)(dst + i), a);
    }
    return i;
}

// min((sum + 64) >> 7, 255) of 32 lanes, stored as 32 bytes.
BF_AVX512 static inline void store_levels512(uint8_t *d, __m512i sum) {
    __m512i v = _mm512_srli_epi16(_mm512_add_epi16(sum, _mm512_set1_epi16(64)), 7);
    _mm256_storeu_si256((__m256i *)d, _mm512_cvtusepi16_epi8(v));
}

// Whole blocks of 32 elements of the columns pass for four output rows from `i` (as the AVX2
// block below: the loaded rows slide from tap to tap); returns where it stopped.
BF_AVX512 static ptrdiff_t fixed_columns4_512(const uint16_t *const *rows, int radius, const uint16_t *w, uint16_t bias,
                                              uint8_t *const *dst, ptrdiff_t offset, ptrdiff_t i, ptrdiff_t count) {
    const __m512i b = _mm512_set1_epi16((short)bias), w0 = _mm512_set1_epi16((short)w[0]);
    for (; i + 32 <= count; i += 32) {
        const ptrdiff_t o = offset + i;
        __m512i r0 = load512(rows[radius] + o), r1 = load512(rows[radius + 1] + o);
        __m512i r2 = load512(rows[radius + 2] + o), r3 = load512(rows[radius + 3] + o);
        __m512i a0 = _mm512_add_epi16(b, _mm512_mulhi_epu16(r0, w0));
        __m512i a1 = _mm512_add_epi16(b, _mm512_mulhi_epu16(r1, w0));
        __m512i a2 = _mm512_add_epi16(b, _mm512_mulhi_epu16(r2, w0));
        __m512i a3 = _mm512_add_epi16(b, _mm512_mulhi_epu16(r3, w0));
        __m512i l0 = r0, l1 = r1, l2 = r2, l3 = r3;
        for (int k = 1; k <= radius; k++) {
            const __m512i wk = _mm512_set1_epi16((short)w[k]);
            l3 = l2; l2 = l1; l1 = l0;
            l0 = load512(rows[radius - k] + o);
            r0 = r1; r1 = r2; r2 = r3;
            r3 = load512(rows[radius + 3 + k] + o);
            a0 = _mm512_add_epi16(a0, _mm512_mulhi_epu16(_mm512_add_epi16(l0, r0), wk));
            a1 = _mm512_add_epi16(a1, _mm512_mulhi_epu16(_mm512_add_epi16(l1, r1), wk));
            a2 = _mm512_add_epi16(a2, _mm512_mulhi_epu16(_mm512_add_epi16(l2, r2), wk));
            a3 = _mm512_add_epi16(a3, _mm512_mulhi_epu16(_mm512_add_epi16(l3, r3), wk));
        }
        store_levels512(dst[0] + o, a0); store_levels512(dst[1] + o, a1);
        store_levels512(dst[2] + o, a2); store_levels512(dst[3] + o, a3);
    }
    return i;
}
#endif

void bf_fixed_rows(const uint8_t *centre, ptrdiff_t step, const uint16_t *w, int radius, uint16_t bias, int shift,
                   uint16_t *dst, ptrdiff_t count, int vector) {
    ptrdiff_t i = 0;
#if defined(__AVX2__)
    if (vector >= 2 && bf_has_avx512bw()) i = fixed_rows512(centre, step, w, radius, bias, shift, dst, i, count);
    const __m256i b = _mm256_set1_epi16((short)bias), w0 = _mm256_set1_epi16((short)w[0]);
    const __m128i s = _mm_cvtsi32_si128(shift);
    for (; vector && i + 32 <= count; i += 32) {
        const uint8_t *c = centre + i;
        __m256i a0 = _mm256_add_epi16(b, _mm256_mulhi_epu16(_mm256_sll_epi16(load_u8(c), s), w0));
        __m256i a1 = _mm256_add_epi16(b, _mm256_mulhi_epu16(_mm256_sll_epi16(load_u8(c + 16), s), w0));
        for (int k = 1; k <= radius; k++) {
            const __m256i wk = _mm256_set1_epi16((short)w[k]);
            const uint8_t *l = c - k * step, *r = c + k * step;
            __m256i p0 = _mm256_sll_epi16(_mm256_add_epi16(load_u8(l), load_u8(r)), s);
            __m256i p1 = _mm256_sll_epi16(_mm256_add_epi16(load_u8(l + 16), load_u8(r + 16)), s);
            a0 = _mm256_add_epi16(a0, _mm256_mulhi_epu16(p0, wk));
            a1 = _mm256_add_epi16(a1, _mm256_mulhi_epu16(p1, wk));
        }
        _mm256_storeu_si256((__m256i *)(dst + i), a0);
        _mm256_storeu_si256((__m256i *)(dst + i + 16), a1);
    }
    for (; vector && i + 16 <= count; i += 16) {
        const uint8_t *c = centre + i;
        __m256i a = _mm256_add_epi16(b, _mm256_mulhi_epu16(_mm256_sll_epi16(load_u8(c), s), w0));
        for (int k = 1; k <= radius; k++) {
            __m256i p = _mm256_sll_epi16(_mm256_add_epi16(load_u8(c - k * step), load_u8(c + k * step)), s);
            a = _mm256_add_epi16(a, _mm256_mulhi_epu16(p, _mm256_set1_epi16((short)w[k])));
        }
        _mm256_storeu_si256((__m256i *)(dst + i), a);
    }
#endif
    for (; i < count; i++) dst[i] = row_value(centre + i, step, w, radius, bias, shift);
}

static inline uint8_t level(uint16_t sum) {
    uint16_t v = (uint16_t)((uint16_t)(sum + 64) >> 7);
    return (uint8_t)(v > 255 ? 255 : v);
}

#if defined(__AVX2__)
static inline __m256i load(const uint16_t *p) { return _mm256_loadu_si256((const __m256i *)p); }

static inline void store_levels(uint8_t *d, __m256i sum) {
    __m256i v = _mm256_srli_epi16(_mm256_add_epi16(sum, _mm256_set1_epi16(64)), 7);
    _mm_storeu_si128((__m128i *)d, _mm_packus_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}
#endif

void bf_fixed_columns(const uint16_t *const *rows, int radius, const uint16_t *w, uint16_t bias, uint8_t *const *dst,
                      int outputs, ptrdiff_t offset, ptrdiff_t count, int vector) {
    ptrdiff_t i = 0;
#if defined(__AVX2__)
    const __m256i b = _mm256_set1_epi16((short)bias), w0 = _mm256_set1_epi16((short)w[0]);
    if (vector && outputs == 4) {
        if (vector >= 2 && bf_has_avx512bw()) i = fixed_columns4_512(rows, radius, w, bias, dst, offset, i, count);
        // Four output rows share each loaded vector: for tap k, output m pairs the rows
        // m + R - k and m + R + k, so the left rows slide down and the right rows up by one.
        for (; i + 16 <= count; i += 16) {
            const ptrdiff_t o = offset + i;
            __m256i r0 = load(rows[radius] + o), r1 = load(rows[radius + 1] + o);
            __m256i r2 = load(rows[radius + 2] + o), r3 = load(rows[radius + 3] + o);
            __m256i a0 = _mm256_add_epi16(b, _mm256_mulhi_epu16(r0, w0));
            __m256i a1 = _mm256_add_epi16(b, _mm256_mulhi_epu16(r1, w0));
            __m256i a2 = _mm256_add_epi16(b, _mm256_mulhi_epu16(r2, w0));
            __m256i a3 = _mm256_add_epi16(b, _mm256_mulhi_epu16(r3, w0));
            __m256i l0 = r0, l1 = r1, l2 = r2, l3 = r3;
            for (int k = 1; k <= radius; k++) {
                const __m256i wk = _mm256_set1_epi16((short)w[k]);
                l3 = l2; l2 = l1; l1 = l0;
                l0 = load(rows[radius - k] + o);
                r0 = r1; r1 = r2; r2 = r3;
                r3 = load(rows[radius + 3 + k] + o);
                a0 = _mm256_add_epi16(a0, _mm256_mulhi_epu16(_mm256_add_epi16(l0, r0), wk));
                a1 = _mm256_add_epi16(a1, _mm256_mulhi_epu16(_mm256_add_epi16(l1, r1), wk));
                a2 = _mm256_add_epi16(a2, _mm256_mulhi_epu16(_mm256_add_epi16(l2, r2), wk));
                a3 = _mm256_add_epi16(a3, _mm256_mulhi_epu16(_mm256_add_epi16(l3, r3), wk));
            }
            store_levels(dst[0] + o, a0); store_levels(dst[1] + o, a1);
            store_levels(dst[2] + o, a2); store_levels(dst[3] + o, a3);
        }
    } else if (vector) {
        for (; i + 16 <= count; i += 16) {
            const ptrdiff_t o = offset + i;
            for (int m = 0; m < outputs; m++) {
                __m256i a = _mm256_add_epi16(b, _mm256_mulhi_epu16(load(rows[m + radius] + o), w0));
                for (int k = 1; k <= radius; k++) {
                    __m256i p = _mm256_add_epi16(load(rows[m + radius - k] + o), load(rows[m + radius + k] + o));
                    a = _mm256_add_epi16(a, _mm256_mulhi_epu16(p, _mm256_set1_epi16((short)w[k])));
                }
                store_levels(dst[m] + o, a);
            }
        }
    }
#endif
    for (; i < count; i++) {
        const ptrdiff_t o = offset + i;
        for (int m = 0; m < outputs; m++) {
            uint16_t acc = (uint16_t)(bias + mulhi(rows[m + radius][o], w[0]));
            for (int k = 1; k <= radius; k++)
                acc = (uint16_t)(acc + mulhi((uint16_t)(rows[m + radius - k][o] + rows[m + radius + k][o]), w[k]));
            dst[m][o] = level(acc);
        }
    }
}
