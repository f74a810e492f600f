import BlurfarmCore

/// Convolution with a symmetric 1-D mask along columns, then along rows: the schedule of the
/// gaussian filter. Pointer code lives here and nowhere else in the filter.
///
/// For every output value the arithmetic is `w0·c + Σ_{k=1…R} w_k·(a_{-k} + a_{+k})`, summed in
/// increasing `k`, in `Float`, with no fused multiply-add: every schedule and every tile
/// position computes the same bits.
enum SeparableConvolution {
    /// Convolves `input` (holding at least `output.rect` grown by the mask radius) into `output`.
    static func apply(
        weights: [Float], input: PixelBuffer, output: PixelBuffer, schedule: KernelSchedule
    ) {
        let radius = weights.count - 1
        let out = output.rect
        precondition(input.rect.contains(out.grown(dx: radius, dy: radius)), "input misses the halo")
        if out.isEmpty { return }
        let stripRows = schedule == .reference ? out.height : KernelSchedule.stripRows
        // The intermediate: the strip's rows, columns out.x - R ..< out.maxX + R.
        let wide = out.width + 2 * radius
        let scratch = PixelStorage.uninitialized(byteCount: wide * stripRows * PixelBuffer.channels * 4)
        weights.withUnsafeBufferPointer { w in
            input.withUnsafePixels { inBase in
                output.withUnsafePixels { outBase in
                  scratch.withUnsafeFloats { tmp in
                    var y0 = out.y
                    while y0 < out.maxY {
                        let rows = min(stripRows, out.maxY - y0)
                        for r in 0..<rows {
                            let src = inBase + (y0 + r - input.rect.y) * input.rowStride
                                + (out.x - radius - input.rect.x) * PixelBuffer.channels
                            let dst = tmp + r * wide * PixelBuffer.channels
                            if schedule == .reference {
                                verticalReference(w, src, input.rowStride, dst, wide)
                            } else {
                                verticalBlocked(w, src, input.rowStride, dst, wide)
                            }
                        }
                        for r in 0..<rows {
                            let src = tmp + r * wide * PixelBuffer.channels + radius * PixelBuffer.channels
                            let dst = outBase + (y0 + r - out.y) * output.rowStride
                            if schedule == .reference {
                                horizontalReference(w, src, dst, out.width)
                            } else {
                                horizontalBlocked(w, src, dst, out.width)
                            }
                        }
                        y0 += rows
                    }
                  }
                }
            }
        }
    }

    // MARK: Vertical pass: dst[x] = w0·src[x] + Σ w_k·(src[x - k·stride] + src[x + k·stride])

    private static func verticalReference(
        _ w: UnsafeBufferPointer<Float>, _ src: UnsafeMutablePointer<Float>, _ stride: Int,
        _ dst: UnsafeMutablePointer<Float>, _ pixels: Int
    ) {
        for i in 0..<(pixels * PixelBuffer.channels) {
            var acc = w[0] * src[i]
            for k in 1..<w.count {
                acc += w[k] * (src[i - k * stride] + src[i + k * stride])
            }
            dst[i] = acc
        }
    }

    private static func verticalBlocked(
        _ w: UnsafeBufferPointer<Float>, _ src: UnsafeMutablePointer<Float>, _ stride: Int,
        _ dst: UnsafeMutablePointer<Float>, _ pixels: Int
    ) {
        let taps = w.count
        let count = pixels * PixelBuffer.channels
        var i = 0
        // 64 floats (16 pixels) at a time in eight 8-lane accumulators.
        while i + 64 <= count {
            let c = src + i
            let w0 = w[0]
            var a0 = w0 * load8(c), a1 = w0 * load8(c + 8), a2 = w0 * load8(c + 16), a3 = w0 * load8(c + 24)
            var a4 = w0 * load8(c + 32), a5 = w0 * load8(c + 40), a6 = w0 * load8(c + 48), a7 = w0 * load8(c + 56)
            var up = c, down = c
            for k in 1..<taps {
                up -= stride
                down += stride
                let wk = w[k]
                a0 += wk * (load8(up) + load8(down)); a1 += wk * (load8(up + 8) + load8(down + 8))
                a2 += wk * (load8(up + 16) + load8(down + 16)); a3 += wk * (load8(up + 24) + load8(down + 24))
                a4 += wk * (load8(up + 32) + load8(down + 32)); a5 += wk * (load8(up + 40) + load8(down + 40))
                a6 += wk * (load8(up + 48) + load8(down + 48)); a7 += wk * (load8(up + 56) + load8(down + 56))
            }
            let o = dst + i
            store8(a0, o); store8(a1, o + 8); store8(a2, o + 16); store8(a3, o + 24)
            store8(a4, o + 32); store8(a5, o + 40); store8(a6, o + 48); store8(a7, o + 56)
            i += 64
        }
        while i + 8 <= count {
            let c = src + i
            var a = w[0] * load8(c)
            var up = c, down = c
            for k in 1..<taps {
                up -= stride
                down += stride
                a += w[k] * (load8(up) + load8(down))
            }
            store8(a, dst + i)
            i += 8
        }
        while i < count {
            var a = w[0] * src[i]
            for k in 1..<taps { a += w[k] * (src[i - k * stride] + src[i + k * stride]) }
            dst[i] = a
            i += 1
        }
    }

    // MARK: Horizontal pass: dst[x] = w0·src[x] + Σ w_k·(src[x - k] + src[x + k]), in pixels

    private static func horizontalReference(
        _ w: UnsafeBufferPointer<Float>, _ src: UnsafeMutablePointer<Float>,
        _ dst: UnsafeMutablePointer<Float>, _ pixels: Int
    ) {
        let n = PixelBuffer.channels
        for x in 0..<pixels {
            for ch in 0..<n {
                var acc = w[0] * src[x * n + ch]
                for k in 1..<w.count {
                    acc += w[k] * (src[(x - k) * n + ch] + src[(x + k) * n + ch])
                }
                dst[x * n + ch] = acc
            }
        }
    }

    private static func horizontalBlocked(
        _ w: UnsafeBufferPointer<Float>, _ src: UnsafeMutablePointer<Float>,
        _ dst: UnsafeMutablePointer<Float>, _ pixels: Int
    ) {
        let taps = w.count
        let n = PixelBuffer.channels
        var x = 0
        // 16 pixels at a time: each 8-lane accumulator holds two neighbouring pixels.
        while x + 16 <= pixels {
            let c = src + x * n
            let w0 = w[0]
            var a0 = w0 * load8(c), a1 = w0 * load8(c + 8), a2 = w0 * load8(c + 16), a3 = w0 * load8(c + 24)
            var a4 = w0 * load8(c + 32), a5 = w0 * load8(c + 40), a6 = w0 * load8(c + 48), a7 = w0 * load8(c + 56)
            for k in 1..<taps {
                let wk = w[k]
                let l = c - k * n, r = c + k * n
                a0 += wk * (load8(l) + load8(r)); a1 += wk * (load8(l + 8) + load8(r + 8))
                a2 += wk * (load8(l + 16) + load8(r + 16)); a3 += wk * (load8(l + 24) + load8(r + 24))
                a4 += wk * (load8(l + 32) + load8(r + 32)); a5 += wk * (load8(l + 40) + load8(r + 40))
                a6 += wk * (load8(l + 48) + load8(r + 48)); a7 += wk * (load8(l + 56) + load8(r + 56))
            }
            let o = dst + x * n
            store8(a0, o); store8(a1, o + 8); store8(a2, o + 16); store8(a3, o + 24)
            store8(a4, o + 32); store8(a5, o + 40); store8(a6, o + 48); store8(a7, o + 56)
            x += 16
        }
        while x + 2 <= pixels {
            let c = src + x * n
            var a = w[0] * load8(c)
            for k in 1..<taps { a += w[k] * (load8(c - k * n) + load8(c + k * n)) }
            store8(a, dst + x * n)
            x += 2
        }
        while x < pixels {
            let c = src + x * n
            var a = w[0] * load4(c)
            for k in 1..<taps { a += w[k] * (load4(c - k * n) + load4(c + k * n)) }
            store4(a, dst + x * n)
            x += 1
        }
    }
}

