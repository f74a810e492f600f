// The fixed-point passes of the 8-bit gaussian (BlurfarmKernels' FixedPointConvolution, which
// plans the rows, edges and tiles and is their caller): 16-bit sums (`bf_fixed_*`) and, for
// masks too wide for them, 32-bit sums of exact products (`bf_wide_*`); and the motion blur's
// 32-bit sum (`bf_sparse_sum`). Each function computes,
// for every element, exactly the integer formula given, in AVX2 lanes where the build has them
// and `vector` is not 0 (and AVX-512BW lanes first where the processor has them and `vector` is
// 2), and in scalar code for the rest: the same bits every way, so any split of the work gives
// the same output (`vector` 0 and 1 let tests check that). Values between passes
// are unsigned 16-bit; `mulhi(a, b)` is `(a * b) >> 16` on 32 bits. The caller keeps every
// 16-bit sum below 2^16 and every 32-bit sum below 2^31 (docs/filters.md gives the bounds).
#ifndef BLURFARM_CKERNELS_H
#define BLURFARM_CKERNELS_H

#include <stddef.h>
#include <stdint.h>

/// Whether this processor has AVX-512BW, where the passes below run 32 lanes at a time when
/// `vector` is 2 (the same integers as the AVX2 lanes); asked once.
int bf_has_avx512bw(void);

/// Asks the memory for the `bytes` bytes from `p` ahead of their use (each 64-byte line
/// prefetched into the first-level cache): a tile's coming input rows, a whole image row apart,
/// where the processor's own prefetcher does not look. Changes nothing any pass computes.
void bf_prefetch(const void *p, ptrdiff_t bytes);

/// The pass along rows of 8-bit samples, each taken as a value with `shift` (0 to 7) fraction
/// bits, `v(j) = c[j] << shift` with `c = centre`: for `i < count`,
/// `dst[i] = bias + mulhi(v(i), w[0]) + sum_{k=1..radius} mulhi(v(i - k*step) + v(i + k*step), w[k])`;
/// `step` is the distance between neighbouring pixels (the channel count).
void bf_fixed_rows(const uint8_t *centre, ptrdiff_t step, const uint16_t *w, int radius, uint16_t bias, int shift,
                   uint16_t *dst, ptrdiff_t count, int vector);

/// The pass along columns for `outputs` (1 to 4) consecutive output rows, `count` elements from
/// element `offset`: output row `m` sums the rows `rows[m] ... rows[m + 2*radius]` (centred on
/// `rows[m + radius]`) as `bf_fixed_rows` sums a row's neighbours, then stores
/// `min((sum + 64) >> 7, 255)`: the value rounded to a level, at `dst[m] + offset`.
void bf_fixed_columns(const uint16_t *const *rows, int radius, const uint16_t *w, uint16_t bias, uint8_t *const *dst,
                      int outputs, ptrdiff_t offset, ptrdiff_t count, int vector);

/// The pass along rows of 8-bit samples in 32 bits: for `i < count`, with `c = centre`,
/// `dst[i] = (w[0]*c[i] + sum_{k=1..radius} w[k]*(c[i - k*step] + c[i + k*step]) + 2^(shift-1)) >> shift`.
/// `w` holds `radius + 2` weights, the last 0 (the vector code pairs `w[k]` with `w[k + 1]`);
/// every weight not negative.
void bf_wide_rows(const uint8_t *centre, ptrdiff_t step, const int16_t *w, int radius, int shift, uint16_t *dst,
                  ptrdiff_t count, int vector);

/// The pass along columns in 32 bits for `outputs` (1 to 4) consecutive output rows, `count`
/// elements from element `offset`: output row `m` sums the rows `rows[m] ... rows[m + 2*radius]`
/// (centred on `rows[m + radius]`) as `bf_wide_rows` sums a row's neighbours, then stores
/// `min((sum + 2^(shift-1)) >> shift, 255)` at `dst[m] + offset`.
void bf_wide_columns(const uint16_t *const *rows, int radius, const int16_t *w, int shift, uint8_t *const *dst,
                     int outputs, ptrdiff_t offset, ptrdiff_t count, int vector);

/// `bf_wide_columns` storing each `(sum + 2^(shift-1)) >> shift` as it is, at `dst[m] + offset`
/// (values with fraction bits, for a pointwise step after the blur: frost's).
void bf_wide_column_values(const uint16_t *const *rows, int radius, const int16_t *w, int shift, uint16_t *const *dst,
                           int outputs, ptrdiff_t offset, ptrdiff_t count, int vector);

/// The motion blur's sum of 8-bit samples in 32 bits (BlurfarmKernels' FixedPointMotion is the
/// only caller): for `i < count`, `dst[i] = min((sum_{t<taps} w[t]*src[t][i] + 2^(shift-1)) >> shift, 255)`.
/// `taps` is even (a tap of weight 0 pads an odd list); every weight lies in 0 ... 2^15 - 1,
/// every sum below 2^31.
void bf_sparse_sum(const uint8_t *const *src, const int16_t *w, int taps, int shift, uint8_t *dst, ptrdiff_t count,
                   int vector);

/// Frost's saturation and tint (BlurfarmKernels' SaturateAndTint) over `pixels` blurred RGB
/// values with 6 fraction bits (`level * 64`), in float with no fused multiply-add: for each
/// channel `c` of a pixel, with `l = 0.2126 r + 0.7152 g + 0.0722 b`,
/// `dst = (int)(t + keep * clamp(l + saturation * (c - l), 0, 255) + 0.5)` with `t` the
/// channel's of `tr`, `tg`, `tb` (the tint's colour times its alpha, in levels).
void bf_saturate_tint(const uint16_t *values, uint8_t *dst, ptrdiff_t pixels, float saturation, float tr, float tg,
                      float tb, float keep);

// The Lanczos resampler's passes (BlurfarmKernels' LanczosResampler plans the weights and is
// the only caller), in Float32 with no fused multiply-add: each output is one fixed sequence of
// IEEE operations, so the vector and scalar code give the same bits.

/// Output rows the passes compute together (8: a row a lane of AVX2's 8 floats): the groups the
/// Swift caller plans, and the interleaving of the columns pass's output. One definition for both.
#define BF_LANCZOS_ROWS_TOGETHER 8

/// The pass along columns for a group of `outputs` (1 to 8) output rows of 8-bit source rows:
/// for `m < outputs` and `i < count`, `c[0]*r[0][i] + c[1]*r[1][i] + ...` over `taps` rows, each
/// sample made a float (exactly), summed in that order, where `r = rows + offsets[m]` and
/// `c = w + m*taps` (the rows of consecutive outputs overlap), stored interleaved at
/// `dst[i*8 + m]` (8 floats a sample; the lanes of rows `outputs` to 8 are 0). `vector` 0 runs
/// the scalar code alone, 1 the AVX2 lanes, 2 also AVX-512 where the processor has it
/// (`bf_has_avx512bw`).
void bf_resample_columns(const uint8_t *const *rows, const int32_t *offsets, const float *w, int taps, float *dst,
                         int outputs, ptrdiff_t count, int vector);

/// The pass along the rows of a group of `rows` (1 to 8) output rows of `channels` (1 to 4)
/// interleaved samples, from the columns pass's sums `src` (sample `i` of row `m` at
/// `src[i*8 + m]`): output pixel `x < outputs`, channel `c`, row `m` sums
/// `w[x*taps + t] * src[((first[x] + t)*channels + c)*8 + m]` for `t` in order, then stores the
/// sum clamped to 0...255 and rounded (half up) at `dst[m][x*channels + c]`. `stage` holds
/// `outputs * channels * 8` bytes of scratch. `vector` 0 runs the scalar code alone, else the
/// AVX2 lanes (one output pixel of the 8 rows at once, a row a lane).
void bf_resample_rows(const float *src, int channels, const int32_t *first, const float *w, int taps,
                      uint8_t *const *dst, int rows, ptrdiff_t outputs, uint8_t *stage, int vector);

#endif
