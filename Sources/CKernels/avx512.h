// What the AVX-512 passes of fixed_gaussian.c, wide_gaussian.c and lanczos.c share: the target
// attribute their functions are compiled with (the files are built for AVX2; these run only
// where bf_has_avx512bw says the processor can) and the unaligned 32-lane loads.
#ifndef BLURFARM_CKERNELS_AVX512_H
#define BLURFARM_CKERNELS_AVX512_H

#if defined(__AVX2__)
#include <immintrin.h>
#include <stdint.h>

#define BF_AVX512 __attribute__((target("avx512f,avx512bw")))

BF_AVX512 static inline __m512i load512(const uint16_t *p) { return _mm512_loadu_si512((const void *)p); }

// 32 samples of 8 bits from `p` as 32 lanes of 16 (the rows passes read the tile's 8-bit rows).
BF_AVX512 static inline __m512i load512_u8(const uint8_t *p) {
    return _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)p));
}
#endif

#endif
