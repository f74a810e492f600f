// The 32-bit fixed-point passes declared in ckernels.h: the gaussian's (masks too wide for 16-bit sums) and the motion blur's sum.
// Vector code for AVX2 (16 lanes: `vpmaddwd` multiplies 16-bit pairs exactly and adds each pair
// into 32 bits), scalar code for what is left, for builds without AVX2 and when `vector` is 0.
// Every product and sum is exact (the caller keeps the sums below 2^31), so the order of the
// additions does not matter: both compute the same integers.
#include "ckernels.h"
#include "avx512.h"

#include <string.h>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

// W0 * c[0] + sum_{k=1..radius} Wk * (c[-k*step] + c[k*step]), exactly, of 8-bit samples.
static inline int32_t wide_sum(const uint8_t *c, ptrdiff_t step, const int16_t *w, int radius) {
    int32_t acc = (int32_t)w[0] * c[0];
    for (int k = 1; k <= radius; k++) acc += (int32_t)w[k] * (int32_t)(c[-k * step] + c[k * step]);
    return acc;
}

#if defined(__AVX2__)
static inline __m256i load(const uint16_t *p) { return _mm256_loadu_si256((const __m256i *)p); }
static inline __m256i load_u8(const uint8_t *p) { return _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p)); }

// The weights w[k] and w[k + 1] in both halves of every 32-bit lane, as vpmaddwd pairs them.
static inline __m256i weight_pair(const int16_t *w, int k) {
    int32_t pair;
    memcpy(&pair, w + k, sizeof pair);
    return _mm256_set1_epi32(pair);
}

// Adds w[k] * a + w[k + 1] * b to the sums of the 16 lanes, the lanes 0-3 and 8-11 in `lo`
// and 4-7 and 12-15 in `hi` (the order `vpunpck*wd` leaves and `vpackusdw` undoes).
static inline void add_pair(__m256i *lo, __m256i *hi, __m256i a, __m256i b, __m256i w) {
    *lo = _mm256_add_epi32(*lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), w));
    *hi = _mm256_add_epi32(*hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), w));
}

// (sum + 2^(shift-1)) >> shift for the 16 lanes, back in their order as 16-bit values.
static inline __m256i rounded(__m256i lo, __m256i hi, int shift) {
    const __m256i half = _mm256_set1_epi32(1 << (shift - 1));
    const __m128i s = _mm_cvtsi32_si128(shift);
    return _mm256_packus_epi32(_mm256_srl_epi32(_mm256_add_epi32(lo, half), s),
                               _mm256_srl_epi32(_mm256_add_epi32(hi, half), s));
}
#endif

#if defined(__AVX2__)
// The columns pass for four output rows at once over whole blocks of 16 elements from `i`, as
// `wide_columns4_512` below does it in 32 lanes (its comment says how the four share their
// loaded rows); returns where it stopped.
static ptrdiff_t wide_columns4(const uint16_t *const *c, int radius, const int16_t *w, int shift, uint8_t *const *dst8,
                               uint16_t *const *dst16, ptrdiff_t offset, ptrdiff_t i, ptrdiff_t count) {
    const __m256i zero = _mm256_setzero_si256();
    for (; i + 16 <= count; i += 16) {
        const ptrdiff_t o = offset + i;
        __m256i lo[4], hi[4], L[5], R[5];
        for (int j = 0; j < 5; j++) L[j] = load(c[j - 1] + o);
        R[0] = load(c[4] + o);
        for (int m = 0; m < 4; m++) {
            lo[m] = hi[m] = zero;
            add_pair(&lo[m], &hi[m], L[m + 1], _mm256_add_epi16(L[m], m < 3 ? L[m + 2] : R[0]), weight_pair(w, 0));
        }
        int k = 2;
        if (k <= radius) {
            for (int j = 0; j < 5; j++) {
                L[j] = j > 0 || k < radius ? load(c[-k - 1 + j] + o) : zero;
                R[j] = j < 4 || k < radius ? load(c[k + j] + o) : zero;
            }
        }
        for (; k + 1 <= radius; k += 2) {
            const __m256i wk = weight_pair(w, k);
            for (int m = 0; m < 4; m++)
                add_pair(&lo[m], &hi[m], _mm256_add_epi16(L[m + 1], R[m]), _mm256_add_epi16(L[m], R[m + 1]), wk);
            if (k + 2 <= radius) {
                L[4] = L[2]; L[3] = L[1]; L[2] = L[0];
                L[1] = load(c[-k - 2] + o);
                L[0] = k + 3 <= radius ? load(c[-k - 3] + o) : zero;
                R[0] = R[2]; R[1] = R[3]; R[2] = R[4];
                R[3] = load(c[k + 5] + o);
                R[4] = k + 3 <= radius ? load(c[k + 6] + o) : zero;
            }
        }
        if (k == radius)
            for (int m = 0; m < 4; m++) add_pair(&lo[m], &hi[m], _mm256_add_epi16(L[m + 1], R[m]), zero, weight_pair(w, k));
        for (int m = 0; m < 4; m++) {
            const __m256i v = rounded(lo[m], hi[m], shift);
            if (dst8)
                _mm_storeu_si128((__m128i *)(dst8[m] + o),
                                 _mm_packus_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
            else
                _mm256_storeu_si256((__m256i *)(dst16[m] + o), v);
        }
    }
    return i;
}
#endif

#if defined(__AVX2__)
// The same sums in 32 lanes (AVX-512BW), for processors that have it (`bf_has_avx512bw`, asked
// once): `vpmaddwd` and the lane shuffles work within 128-bit lanes as their AVX2 forms do, so
// the order trick is the same and every integer is the AVX2 code's.

BF_AVX512 static inline __m512i weight_pair512(const int16_t *w, int k) {
    int32_t pair;
    memcpy(&pair, w + k, sizeof pair);
    return _mm512_set1_epi32(pair);
}

BF_AVX512 static inline void add_pair512(__m512i *lo, __m512i *hi, __m512i a, __m512i b, __m512i w) {
    *lo = _mm512_add_epi32(*lo, _mm512_madd_epi16(_mm512_unpacklo_epi16(a, b), w));
    *hi = _mm512_add_epi32(*hi, _mm512_madd_epi16(_mm512_unpackhi_epi16(a, b), w));
}

BF_AVX512 static inline __m512i rounded512(__m512i lo, __m512i hi, int shift) {
    const __m512i half = _mm512_set1_epi32(1 << (shift - 1));
    const __m128i s = _mm_cvtsi32_si128(shift);
    return _mm512_packus_epi32(_mm512_srl_epi32(_mm512_add_epi32(lo, half), s),
                               _mm512_srl_epi32(_mm512_add_epi32(hi, half), s));
}

// The rows pass over whole blocks of 32 elements of 8-bit samples from `i`; returns where it
// stopped.
BF_AVX512 static ptrdiff_t wide_rows512(const uint8_t *centre, ptrdiff_t step, const int16_t *w, int radius, int shift,
                                        uint16_t *dst, ptrdiff_t i, ptrdiff_t count) {
    const __m512i zero = _mm512_setzero_si512();
    for (; i + 32 <= count; i += 32) {
        const uint8_t *c = centre + i;
        __m512i lo = zero, hi = zero;
        add_pair512(&lo, &hi, load512_u8(c), _mm512_add_epi16(load512_u8(c - step), load512_u8(c + step)), weight_pair512(w, 0));
        int k = 2;
        for (; k + 1 <= radius; k += 2) {
            __m512i a = _mm512_add_epi16(load512_u8(c - k * step), load512_u8(c + k * step));
            __m512i b = _mm512_add_epi16(load512_u8(c - (k + 1) * step), load512_u8(c + (k + 1) * step));
            add_pair512(&lo, &hi, a, b, weight_pair512(w, k));
        }
        if (k == radius)
            add_pair512(&lo, &hi, _mm512_add_epi16(load512_u8(c - k * step), load512_u8(c + k * step)), zero, weight_pair512(w, k));
        _mm512_storeu_si512((void *)(dst + i), rounded512(lo, hi, shift));
    }
    return i;
}

// The columns pass for four output rows at once over whole blocks of 32 elements from `i`,
// each sum stored as a level at `dst8[m]` or, when that is NULL, as a value at `dst16[m]`;
// returns where it stopped. Output row m sums the rows c[m - radius] ... c[m + radius], and
// the four share their loads: for the taps k and k + 1 they need the rows -k-1 ... 3-k on the
// left (L) and k ... k+4 on the right (R), which the next pair of taps shifts by two, so each
// pair of taps loads four new rows for the four outputs where each output alone loads four
// (the one-row pass waits on its loads: in a C micro-benchmark this one takes 0.39 of its time
// at radius 96, 0.49 at 49). The same exact products and sums as `wide_columns512`, added in
// another order: the same integers.
BF_AVX512 static ptrdiff_t wide_columns4_512(const uint16_t *const *c, int radius, const int16_t *w, int shift,
                                             uint8_t *const *dst8, uint16_t *const *dst16, ptrdiff_t offset, ptrdiff_t i,
                                             ptrdiff_t count) {
    const __m512i zero = _mm512_setzero_si512();
    for (; i + 32 <= count; i += 32) {
        const ptrdiff_t o = offset + i;
        __m512i lo[4], hi[4], L[5], R[5];
        // The centre and the first neighbours: rows -1 ... 4.
        for (int j = 0; j < 5; j++) L[j] = load512(c[j - 1] + o);
        R[0] = load512(c[4] + o);
        for (int m = 0; m < 4; m++) {
            lo[m] = hi[m] = zero;
            add_pair512(&lo[m], &hi[m], L[m + 1], _mm512_add_epi16(L[m], m < 3 ? L[m + 2] : R[0]), weight_pair512(w, 0));
        }
        int k = 2;
        if (k <= radius) {
            // Row -k-1 and row k+4 only when the pair k, k+1 exists (they are beyond the mask otherwise).
            for (int j = 0; j < 5; j++) {
                L[j] = j > 0 || k < radius ? load512(c[-k - 1 + j] + o) : zero;
                R[j] = j < 4 || k < radius ? load512(c[k + j] + o) : zero;
            }
        }
        for (; k + 1 <= radius; k += 2) {
            const __m512i wk = weight_pair512(w, k);
            for (int m = 0; m < 4; m++)
                add_pair512(&lo[m], &hi[m], _mm512_add_epi16(L[m + 1], R[m]), _mm512_add_epi16(L[m], R[m + 1]), wk);
            if (k + 2 <= radius) {
                L[4] = L[2]; L[3] = L[1]; L[2] = L[0];
                L[1] = load512(c[-k - 2] + o);
                L[0] = k + 3 <= radius ? load512(c[-k - 3] + o) : zero;
                R[0] = R[2]; R[1] = R[3]; R[2] = R[4];
                R[3] = load512(c[k + 5] + o);
                R[4] = k + 3 <= radius ? load512(c[k + 6] + o) : zero;
            }
        }
        if (k == radius)
            for (int m = 0; m < 4; m++)
                add_pair512(&lo[m], &hi[m], _mm512_add_epi16(L[m + 1], R[m]), zero, weight_pair512(w, k));
        // Values below 2^15 (the caller's bound): unsigned saturation to 255 is packus's.
        for (int m = 0; m < 4; m++) {
            const __m512i v = rounded512(lo[m], hi[m], shift);
            if (dst8) _mm256_storeu_si256((__m256i *)(dst8[m] + o), _mm512_cvtusepi16_epi8(v));
            else _mm512_storeu_si512((void *)(dst16[m] + o), v);
        }
    }
    return i;
}

// The columns pass over whole blocks of 32 elements from `i`, each sum stored as a level at
// `dst8` or, when that is NULL, as a value at `dst16`; returns where it stopped.
BF_AVX512 static ptrdiff_t wide_columns512(const uint16_t *const *c, int radius, const int16_t *w, int shift, uint8_t *dst8, uint16_t *dst16,
                ptrdiff_t offset, ptrdiff_t i, ptrdiff_t count) {
    const __m512i zero = _mm512_setzero_si512();
    for (; i + 32 <= count; i += 32) {
        const ptrdiff_t o = offset + i;
        __m512i lo = zero, hi = zero;
        add_pair512(&lo, &hi, load512(c[0] + o), _mm512_add_epi16(load512(c[-1] + o), load512(c[1] + o)), weight_pair512(w, 0));
        int k = 2;
        for (; k + 1 <= radius; k += 2) {
            __m512i a = _mm512_add_epi16(load512(c[-k] + o), load512(c[k] + o));
            __m512i b = _mm512_add_epi16(load512(c[-k - 1] + o), load512(c[k + 1] + o));
            add_pair512(&lo, &hi, a, b, weight_pair512(w, k));
        }
        if (k == radius)
            add_pair512(&lo, &hi, _mm512_add_epi16(load512(c[-k] + o), load512(c[k] + o)), zero, weight_pair512(w, k));
        // Values below 2^15 (the caller's bound): unsigned saturation to 255 is packus's.
        if (dst8) _mm256_storeu_si256((__m256i *)(dst8 + o), _mm512_cvtusepi16_epi8(rounded512(lo, hi, shift)));
        else _mm512_storeu_si512((void *)(dst16 + o), rounded512(lo, hi, shift));
    }
    return i;
}
#endif

void bf_wide_rows(const uint8_t *centre, ptrdiff_t step, const int16_t *w, int radius, int shift, uint16_t *dst,
                  ptrdiff_t count, int vector) {
    ptrdiff_t i = 0;
#if defined(__AVX2__)
    if (vector >= 2 && bf_has_avx512bw()) i = wide_rows512(centre, step, w, radius, shift, dst, i, count);
    const __m256i zero = _mm256_setzero_si256();
    for (; vector && i + 16 <= count; i += 16) {
        const uint8_t *c = centre + i;
        __m256i lo = zero, hi = zero;
        add_pair(&lo, &hi, load_u8(c), _mm256_add_epi16(load_u8(c - step), load_u8(c + step)), weight_pair(w, 0));
        int k = 2;
        for (; k + 1 <= radius; k += 2) {
            __m256i a = _mm256_add_epi16(load_u8(c - k * step), load_u8(c + k * step));
            __m256i b = _mm256_add_epi16(load_u8(c - (k + 1) * step), load_u8(c + (k + 1) * step));
            add_pair(&lo, &hi, a, b, weight_pair(w, k));
        }
        if (k == radius) add_pair(&lo, &hi, _mm256_add_epi16(load_u8(c - k * step), load_u8(c + k * step)), zero, weight_pair(w, k));
        _mm256_storeu_si256((__m256i *)(dst + i), rounded(lo, hi, shift));
    }
#endif
    const int32_t half = 1 << (shift - 1);
    for (; i < count; i++) dst[i] = (uint16_t)((wide_sum(centre + i, step, w, radius) + half) >> shift);
}

// The columns pass, each sum stored as a level at `dst8` or, when that is NULL, as a value at
// `dst16` (inlined into each of the two entry points below with its store).
static inline __attribute__((always_inline)) void wide_columns(const uint16_t *const *rows, int radius, const int16_t *w,
                                                               int shift, uint8_t *dst8, uint16_t *dst16,
                                                               ptrdiff_t offset, ptrdiff_t count, int vector) {
    ptrdiff_t i = 0;
    const uint16_t *const *c = rows + radius;
#if defined(__AVX2__)
    if (vector >= 2 && bf_has_avx512bw()) i = wide_columns512(c, radius, w, shift, dst8, dst16, offset, i, count);
    const __m256i zero = _mm256_setzero_si256();
    for (; vector && i + 16 <= count; i += 16) {
        const ptrdiff_t o = offset + i;
        __m256i lo = zero, hi = zero;
        add_pair(&lo, &hi, load(c[0] + o), _mm256_add_epi16(load(c[-1] + o), load(c[1] + o)), weight_pair(w, 0));
        int k = 2;
        for (; k + 1 <= radius; k += 2) {
            __m256i a = _mm256_add_epi16(load(c[-k] + o), load(c[k] + o));
            __m256i b = _mm256_add_epi16(load(c[-k - 1] + o), load(c[k + 1] + o));
            add_pair(&lo, &hi, a, b, weight_pair(w, k));
        }
        if (k == radius) add_pair(&lo, &hi, _mm256_add_epi16(load(c[-k] + o), load(c[k] + o)), zero, weight_pair(w, k));
        __m256i v = rounded(lo, hi, shift);
        if (dst8)
            _mm_storeu_si128((__m128i *)(dst8 + o),
                             _mm_packus_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
        else
            _mm256_storeu_si256((__m256i *)(dst16 + o), v);
    }
#endif
    const int32_t half = 1 << (shift - 1);
    for (; i < count; i++) {
        const ptrdiff_t o = offset + i;
        int32_t acc = (int32_t)w[0] * c[0][o];
        for (int k = 1; k <= radius; k++) acc += (int32_t)w[k] * (int32_t)(c[-k][o] + c[k][o]);
        int32_t v = (acc + half) >> shift;
        if (dst8) dst8[o] = (uint8_t)(v > 255 ? 255 : v);
        else dst16[o] = (uint16_t)v;
    }
}

// `outputs` output rows: four at once where there are four (AVX-512, else AVX2), each alone
// otherwise and for what is left.
static inline __attribute__((always_inline)) void wide_column_rows(const uint16_t *const *rows, int radius,
                                                                   const int16_t *w, int shift, uint8_t *const *dst8,
                                                                   uint16_t *const *dst16, int outputs, ptrdiff_t offset,
                                                                   ptrdiff_t count, int vector) {
    ptrdiff_t i = 0;
#if defined(__AVX2__)
    if (outputs == 4 && vector >= 2 && bf_has_avx512bw())
        i = wide_columns4_512(rows + radius, radius, w, shift, dst8, dst16, offset, i, count);
    if (outputs == 4 && vector) i = wide_columns4(rows + radius, radius, w, shift, dst8, dst16, offset, i, count);
#endif
    for (int m = 0; m < outputs; m++)
        wide_columns(rows + m, radius, w, shift, dst8 ? dst8[m] : NULL, dst8 ? NULL : dst16[m], offset + i, count - i, vector);
}

void bf_wide_columns(const uint16_t *const *rows, int radius, const int16_t *w, int shift, uint8_t *const *dst,
                     int outputs, ptrdiff_t offset, ptrdiff_t count, int vector) {
    wide_column_rows(rows, radius, w, shift, dst, NULL, outputs, offset, count, vector);
}

void bf_wide_column_values(const uint16_t *const *rows, int radius, const int16_t *w, int shift, uint16_t *const *dst,
                           int outputs, ptrdiff_t offset, ptrdiff_t count, int vector) {
    wide_column_rows(rows, radius, w, shift, NULL, dst, outputs, offset, count, vector);
}

// The motion blur's sum (BlurfarmKernels' FixedPointMotion): taps at any offsets, two at a time
// as `vpmaddwd` pairs them.
#if defined(__AVX2__)
BF_AVX512 static ptrdiff_t sparse_sum512(const uint8_t *const *src, const int16_t *w, int taps, int shift, uint8_t *dst,
                                         ptrdiff_t i, ptrdiff_t count) {
    const __m512i zero = _mm512_setzero_si512();
    for (; i + 32 <= count; i += 32) {
        __m512i lo = zero, hi = zero;
        for (int t = 0; t < taps; t += 2) add_pair512(&lo, &hi, load512_u8(src[t] + i), load512_u8(src[t + 1] + i), weight_pair512(w, t));
        _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtusepi16_epi8(rounded512(lo, hi, shift)));
    }
    return i;
}
#endif

void bf_sparse_sum(const uint8_t *const *src, const int16_t *w, int taps, int shift, uint8_t *dst, ptrdiff_t count,
                   int vector) {
    ptrdiff_t i = 0;
#if defined(__AVX2__)
    if (vector >= 2 && bf_has_avx512bw()) i = sparse_sum512(src, w, taps, shift, dst, i, count);
    const __m256i zero = _mm256_setzero_si256();
    for (; vector && i + 16 <= count; i += 16) {
        __m256i lo = zero, hi = zero;
        for (int t = 0; t < taps; t += 2) add_pair(&lo, &hi, load_u8(src[t] + i), load_u8(src[t + 1] + i), weight_pair(w, t));
        __m256i v = rounded(lo, hi, shift);
        _mm_storeu_si128((__m128i *)(dst + i),
                         _mm_packus_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
    }
#endif
    const int32_t half = 1 << (shift - 1);
    for (; i < count; i++) {
        int32_t acc = 0;
        for (int t = 0; t < taps; t++) acc += (int32_t)w[t] * (int32_t)src[t][i];
        int32_t v = (acc + half) >> shift;
        dst[i] = (uint8_t)(v > 255 ? 255 : v);
    }
}
