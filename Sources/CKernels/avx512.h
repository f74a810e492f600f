// What the AVX-512 passes of fixed_gaussian.c, wide_gaussian.c and lanczos.c share: the target
// attribute their functions are compiled with (the files are built for AVX2; these run only
// where bf_has_avx512bw says the processor can) and the unaligned 32-lane load.
#ifndef BLURFARM_CKERNELS_AVX512_H
#define BLURFARM_CKERNELS_AVX512_H

#if defined(__AVX2__)
#include <immintrin.h>
#include <stdint.h>

#define BF_AVX512 __attribute__((target("avx512f,avx512bw")))

BF_AVX512 static inline __m512i load512(const uint16_t *p) { return _mm512_loadu_si512((const void *)p); }
#endif

#endif
