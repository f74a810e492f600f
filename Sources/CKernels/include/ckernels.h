// The 16-bit fixed-point passes of the 8-bit gaussian (BlurfarmKernels' FixedPointConvolution,
// which plans the rows, edges and tiles and is the only caller). Each function computes, for
// every element, exactly the integer formula given, in AVX2 lanes where the build has them and
// in scalar code for the rest: the same bits either way, so any split of the work gives the
// same output. All values are unsigned 16-bit; `mulhi(a, b)` is `(a * b) >> 16` on 32 bits.
// The caller keeps every sum below 2^16 (docs/filters.md gives the bounds).
#ifndef BLURFARM_CKERNELS_H
#define BLURFARM_CKERNELS_H

#include <stddef.h>
#include <stdint.h>

/// `dst[i] = src[i] << 7` for `i < count`: 8-bit samples as values with 7 fraction bits.
void bf_fixed_widen(const uint8_t *src, uint16_t *dst, ptrdiff_t count);

/// The pass along rows: for `i < count`,
/// `dst[i] = bias + mulhi(c[i], w[0]) + sum_{k=1..radius} mulhi(c[i - k*step] + c[i + k*step], w[k])`
/// with `c = centre`; `step` is the distance between neighbouring pixels (the channel count).
void bf_fixed_rows(const uint16_t *centre, ptrdiff_t step, const uint16_t *w, int radius, uint16_t bias,
                   uint16_t *dst, ptrdiff_t count);

/// The pass along columns for `outputs` (1 to 4) consecutive output rows, `count` elements from
/// element `offset`: output row `m` sums the rows `rows[m] ... rows[m + 2*radius]` (centred on
/// `rows[m + radius]`) as `bf_fixed_rows` sums a row's neighbours, then stores
/// `min((sum + 64) >> 7, 255)`: the value rounded to a level, at `dst[m] + offset`.
void bf_fixed_columns(const uint16_t *const *rows, int radius, const uint16_t *w, uint16_t bias, uint8_t *const *dst,
                      int outputs, ptrdiff_t offset, ptrdiff_t count);

#endif
