import BlurfarmCore

/// Convolution with a symmetric 1-D mask along columns, then along rows: the schedule of the
/// gaussian filter. Pointer code lives here and nowhere else in the filter.
///
/// For every output value the arithmetic is `w0·c + Σ_{k=1…R} w_k·(a_{-k} + a_{+k})`, summed in
/// increasing `k`, in `Float`, with no fused multiply-add: every schedule and every tile
/// position computes the same bits. Both passes work on floats, whatever the channels: a
/// neighbour along a row lies `channels` floats away, along a column `rowStride` floats.
enum SeparableConvolution {
    /// Convolves `input` (holding at least `output.rect` grown by the mask radius, with the
    /// same channels) into `output`.
    static func apply(
        weights: [Float], input: PixelBuffer, output: PixelBuffer, schedule: KernelSchedule
    ) {
        let radius = weights.count - 1
        let out = output.rect
        let n = output.channels
        precondition(input.rect.contains(out.grown(dx: radius, dy: radius)), "input misses the halo")
        precondition(input.channels == n, "input and output channels differ")
        if out.isEmpty { return }
        let stripRows = schedule == .reference ? out.height : RenderSchedule.floatStripRows
        let pass = schedule == .reference ? reference : blocked
        // The intermediate: the strip's rows, columns out.x - R ..< out.maxX + R.
        let wide = (out.width + 2 * radius) * n
        let scratch = PixelStorage.uninitialized(byteCount: wide * stripRows * MemoryLayout<Float>.stride)
        weights.withUnsafeBufferPointer { w in
            input.withUnsafePixels { inBase in
                output.withUnsafePixels { outBase in
                    scratch.withUnsafeFloats { tmp in
                        var y0 = out.y
                        while y0 < out.maxY {
                            let rows = min(stripRows, out.maxY - y0)
                            for r in 0..<rows {
                                let src = inBase + (y0 + r - input.rect.y) * input.rowStride
                                    + (out.x - radius - input.rect.x) * n
                                let dst = tmp + r * wide
                                pass(w, src, input.rowStride, dst, wide)
                            }
                            for r in 0..<rows {
                                let src = tmp + r * wide + radius * n
                                let dst = outBase + (y0 + r - out.y) * output.rowStride
                                pass(w, src, n, dst, out.width * n)
                            }
                            y0 += rows
                        }
                    }
                }
            }
        }
    }

    /// The symmetric sum, one float at a time: `dst[i] = w0·src[i] + Σ w_k·(src[i − k·step] +
    /// src[i + k·step])` (`step` is the row stride for the columns pass, the channel count for
    /// the rows pass).
    private static func reference(
        _ w: UnsafeBufferPointer<Float>, _ src: UnsafeMutablePointer<Float>, _ step: Int,
        _ dst: UnsafeMutablePointer<Float>, _ count: Int
    ) {
        for i in 0..<count {
            var acc = w[0] * src[i]
            for k in 1..<w.count {
                acc += w[k] * (src[i - k * step] + src[i + k * step])
            }
            dst[i] = acc
        }
    }

    /// The symmetric sum over `count` consecutive floats whose neighbours lie `step` floats
    /// away: 64 floats at a time in eight 8-lane accumulators, then 8, then one by one. Each
    /// lane computes exactly what the reference computes for its float.
    private static func blocked(
        _ w: UnsafeBufferPointer<Float>, _ src: UnsafeMutablePointer<Float>, _ step: Int,
        _ dst: UnsafeMutablePointer<Float>, _ count: Int
    ) {
        symmetricSum(w, src, step, dst, count, fused: false)
    }

    /// The symmetric sum over `count` consecutive floats whose neighbours lie `step` floats
    /// away, `w0·c` then each tap `k = 1…R` in increasing order: 64 floats at a time in eight
    /// 8-lane accumulators, then 8, then one by one; each lane computes what scalar code
    /// computes for its float. `fused`: each tap is one fused multiply-add
    /// (`acc.addingProduct(w_k, l + r)`, the file-depth gaussian's arithmetic), else a multiply
    /// and an add (the `Float32` kernels').
    @inline(__always)
    static func symmetricSum(
        _ w: UnsafeBufferPointer<Float>, _ src: UnsafeMutablePointer<Float>, _ step: Int,
        _ dst: UnsafeMutablePointer<Float>, _ count: Int, fused: Bool
    ) {
        @inline(__always) func tap(_ a: SIMD8<Float>, _ wk: Float, _ pair: SIMD8<Float>) -> SIMD8<Float> {
            fused ? a.addingProduct(wk, pair) : a + wk * pair
        }
        let taps = w.count
        var i = 0
        while i + 64 <= count {
            let c = src + i
            let w0 = w[0]
            var a0 = w0 * load8(c), a1 = w0 * load8(c + 8), a2 = w0 * load8(c + 16), a3 = w0 * load8(c + 24)
            var a4 = w0 * load8(c + 32), a5 = w0 * load8(c + 40), a6 = w0 * load8(c + 48), a7 = w0 * load8(c + 56)
            var l = c, r = c
            for k in 1..<taps {
                l -= step
                r += step
                let wk = w[k]
                a0 = tap(a0, wk, load8(l) + load8(r)); a1 = tap(a1, wk, load8(l + 8) + load8(r + 8))
                a2 = tap(a2, wk, load8(l + 16) + load8(r + 16)); a3 = tap(a3, wk, load8(l + 24) + load8(r + 24))
                a4 = tap(a4, wk, load8(l + 32) + load8(r + 32)); a5 = tap(a5, wk, load8(l + 40) + load8(r + 40))
                a6 = tap(a6, wk, load8(l + 48) + load8(r + 48)); a7 = tap(a7, wk, load8(l + 56) + load8(r + 56))
            }
            let o = dst + i
            store8(a0, o); store8(a1, o + 8); store8(a2, o + 16); store8(a3, o + 24)
            store8(a4, o + 32); store8(a5, o + 40); store8(a6, o + 48); store8(a7, o + 56)
            i += 64
        }
        while i + 8 <= count {
            let c = src + i
            var a = w[0] * load8(c)
            var l = c, r = c
            for k in 1..<taps {
                l -= step
                r += step
                a = tap(a, w[k], load8(l) + load8(r))
            }
            store8(a, dst + i)
            i += 8
        }
        while i < count {
            var a = w[0] * src[i]
            for k in 1..<taps {
                let pair = src[i - k * step] + src[i + k * step]
                a = fused ? a.addingProduct(w[k], pair) : a + w[k] * pair
            }
            dst[i] = a
            i += 1
        }
    }
}
