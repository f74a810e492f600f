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
        let scratch = PixelStorage(floatCount: wide * stripRows * PixelBuffer.channels)
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
        let s = UnsafeMutableRawPointer(src).assumingMemoryBound(to: SIMD4<Float>.self)
        let d = UnsafeMutableRawPointer(dst).assumingMemoryBound(to: SIMD4<Float>.self)
        let rowStep = stride / PixelBuffer.channels
        var x = 0
        while x + 8 <= pixels {
            let c = s + x
            let w0 = w[0]
            var a0 = w0 * c[0], a1 = w0 * c[1], a2 = w0 * c[2], a3 = w0 * c[3]
            var a4 = w0 * c[4], a5 = w0 * c[5], a6 = w0 * c[6], a7 = w0 * c[7]
            var up = c, down = c
            for k in 1..<taps {
                up -= rowStep
                down += rowStep
                let wk = w[k]
                a0 += wk * (up[0] + down[0]); a1 += wk * (up[1] + down[1])
                a2 += wk * (up[2] + down[2]); a3 += wk * (up[3] + down[3])
                a4 += wk * (up[4] + down[4]); a5 += wk * (up[5] + down[5])
                a6 += wk * (up[6] + down[6]); a7 += wk * (up[7] + down[7])
            }
            let o = d + x
            o[0] = a0; o[1] = a1; o[2] = a2; o[3] = a3; o[4] = a4; o[5] = a5; o[6] = a6; o[7] = a7
            x += 8
        }
        while x < pixels {
            let c = s + x
            var a = w[0] * c[0]
            var up = c, down = c
            for k in 1..<taps {
                up -= rowStep
                down += rowStep
                a += w[k] * (up[0] + down[0])
            }
            d[x] = a
            x += 1
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
        let s = UnsafeMutableRawPointer(src).assumingMemoryBound(to: SIMD4<Float>.self)
        let d = UnsafeMutableRawPointer(dst).assumingMemoryBound(to: SIMD4<Float>.self)
        var x = 0
        while x + 8 <= pixels {
            let c = s + x
            let w0 = w[0]
            var a0 = w0 * c[0], a1 = w0 * c[1], a2 = w0 * c[2], a3 = w0 * c[3]
            var a4 = w0 * c[4], a5 = w0 * c[5], a6 = w0 * c[6], a7 = w0 * c[7]
            for k in 1..<taps {
                let wk = w[k]
                let l = c - k, r = c + k
                a0 += wk * (l[0] + r[0]); a1 += wk * (l[1] + r[1])
                a2 += wk * (l[2] + r[2]); a3 += wk * (l[3] + r[3])
                a4 += wk * (l[4] + r[4]); a5 += wk * (l[5] + r[5])
                a6 += wk * (l[6] + r[6]); a7 += wk * (l[7] + r[7])
            }
            let o = d + x
            o[0] = a0; o[1] = a1; o[2] = a2; o[3] = a3; o[4] = a4; o[5] = a5; o[6] = a6; o[7] = a7
            x += 8
        }
        while x < pixels {
            let c = s + x
            var a = w[0] * c[0]
            for k in 1..<taps { a += w[k] * ((c - k)[0] + (c + k)[0]) }
            d[x] = a
            x += 1
        }
    }
}

